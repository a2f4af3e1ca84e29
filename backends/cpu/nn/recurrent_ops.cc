// nn.rnn, nn.gru and nn.lstm (ONNX RNN, GRU and LSTM): recurrent layers
// over a sequence, forward, in reverse or both ways, in f32.
//
// Operands in ONNX's order: X, W, R, then optionally B, sequence_lens,
// initial_h and (nn.lstm) initial_c and P. Only trailing operands may be
// left out (the ONNX importer fills a gap ONNX allows in the middle); one
// left out counts as zeros, or as every sequence at full length. Results:
// Y, then Y_h (and Y_c), as many as the caller asks for. Attributes as
// ONNX's: hidden_size, direction, layout, activations, activation_alpha,
// activation_beta, clip, input_forget (nn.lstm), linear_before_reset
// (nn.gru).
//
// Per direction, X's product with W for every step is one GEMM (oneDNN's
// sgemm); each step is then a GEMM of the hidden state by R (two for a GRU
// that resets before its linear map) and the gates' elementwise math. A
// batch entry past its sequence length keeps its state and gets zeros in Y;
// in reverse its first sequence_lens[b] steps run backwards, as ONNX
// Runtime does.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/core_runtime/op_site_cache.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_util.h"
#include "backends/cpu/nn/vector_math.h"
#include "omp.h"
#include "oneapi/dnnl/dnnl.h"

namespace asyncrt::nn {
namespace {

enum class Cell { kRnn, kGru, kLstm };

// What tells the three ops apart.
struct CellInfo {
  Cell cell;
  absl::string_view op;
  int gates;                   // Blocks of hidden_size rows in W and R.
  size_t max_operands;         // X, W, R, B, sequence_lens, initial_h[, c, P].
  size_t max_results;          // Y, Y_h[, Y_c].
  const char* activations[3];  // ONNX's defaults, per direction.
  int num_activations;
};

constexpr CellInfo kRnn{Cell::kRnn, "nn.rnn", 1, 6, 2, {"Tanh"}, 1};
constexpr CellInfo kGru{Cell::kGru, "nn.gru", 3, 6, 2, {"Sigmoid", "Tanh"}, 2};
constexpr CellInfo kLstm{
    Cell::kLstm, "nn.lstm", 4, 8, 3, {"Sigmoid", "Tanh", "Tanh"}, 3};

// Operand positions.
enum Operand { kX, kW, kR, kB, kSequenceLens, kInitialH, kInitialC, kP };

// One of ONNX's activation functions for recurrent cells, with its alpha
// and beta.
struct Activation {
  enum Kind {
    kRelu,
    kTanh,
    kSigmoid,
    kAffine,
    kLeakyRelu,
    kThresholdedRelu,
    kScaledTanh,
    kHardSigmoid,
    kElu,
    kSoftsign,
    kSoftplus,
  } kind = kTanh;
  float alpha = 0.f;
  float beta = 0.f;

  float operator()(float x) const {
    switch (kind) {
      case kRelu:
        return std::max(x, 0.f);
      case kTanh:
        return std::tanh(x);
      case kSigmoid:
        return 1.f / (1.f + std::exp(-x));
      case kAffine:
        return alpha * x + beta;
      case kLeakyRelu:
        return x >= 0.f ? x : alpha * x;
      case kThresholdedRelu:
        return x > alpha ? x : 0.f;
      case kScaledTanh:
        return alpha * std::tanh(beta * x);
      case kHardSigmoid:
        return std::clamp(alpha * x + beta, 0.f, 1.f);
      case kElu:
        return x >= 0.f ? x : alpha * (std::exp(x) - 1.f);
      case kSoftsign:
        return x / (1.f + std::abs(x));
      case kSoftplus:
        return std::log1p(std::exp(x));
    }
    return x;
  }
};

// The activation named `name` (any case), taking its alpha and beta, where
// it has them, from the next unused entries of `alphas` and `betas`, or
// ONNX's defaults when those run out.
absl::StatusOr<Activation> ParseActivation(absl::string_view op,
                                           absl::string_view name,
                                           absl::Span<const float> alphas,
                                           size_t& next_alpha,
                                           absl::Span<const float> betas,
                                           size_t& next_beta) {
  struct Known {
    const char* name;
    Activation::Kind kind;
    bool has_alpha, has_beta;
    float alpha, beta;
  };
  static constexpr Known kKnown[] = {
      {"relu", Activation::kRelu, false, false, 0, 0},
      {"tanh", Activation::kTanh, false, false, 0, 0},
      {"sigmoid", Activation::kSigmoid, false, false, 0, 0},
      {"affine", Activation::kAffine, true, true, 1.f, 0.f},
      {"leakyrelu", Activation::kLeakyRelu, true, false, 0.01f, 0},
      {"thresholdedrelu", Activation::kThresholdedRelu, true, false, 1.f, 0},
      {"scaledtanh", Activation::kScaledTanh, true, true, 1.f, 1.f},
      {"hardsigmoid", Activation::kHardSigmoid, true, true, 0.2f, 0.5f},
      {"elu", Activation::kElu, true, false, 1.f, 0},
      {"softsign", Activation::kSoftsign, false, false, 0, 0},
      {"softplus", Activation::kSoftplus, false, false, 0, 0},
  };
  const std::string lower = absl::AsciiStrToLower(name);
  for (const Known& known : kKnown) {
    if (lower != known.name) continue;
    Activation activation{known.kind, known.alpha, known.beta};
    if (known.has_alpha && next_alpha < alphas.size()) {
      activation.alpha = alphas[next_alpha++];
    }
    if (known.has_beta && next_beta < betas.size()) {
      activation.beta = betas[next_beta++];
    }
    return activation;
  }
  return OpError(op, absl::StrCat("unknown activation '", name, "'"));
}

// out[i] = activation(clip(in[i])) for i < n (`out` defaults to `in`).
// Tanh and sigmoid, nearly every cell's, run on vector_math's packets.
void Activate(const Activation& activation, std::optional<float> clip,
              float* in, int64_t n, float* out = nullptr) {
  if (out == nullptr) out = in;
  if (clip) {
    for (int64_t i = 0; i < n; ++i) in[i] = std::clamp(in[i], -*clip, *clip);
  }
  switch (activation.kind) {
    case Activation::kTanh:
      return ApplyVectorFunction(VectorFunction::kTanh, in, out, n);
    case Activation::kSigmoid:
      // sigmoid(x) = (1 + tanh(x / 2)) / 2.
      for (int64_t i = 0; i < n; ++i) out[i] = 0.5f * in[i];
      ApplyVectorFunction(VectorFunction::kTanh, out, out, n);
      for (int64_t i = 0; i < n; ++i) out[i] = 0.5f + 0.5f * out[i];
      return;
    default:
      for (int64_t i = 0; i < n; ++i) out[i] = activation(in[i]);
  }
}

// The op's attributes, checked.
struct Config {
  int directions = 1;
  bool reverse = false;      // Of a single direction.
  bool batch_major = false;  // layout = 1.
  std::optional<int64_t> hidden_size;
  std::optional<float> clip;
  bool input_forget = false;
  bool linear_before_reset = false;
  // info.num_activations per direction.
  std::vector<Activation> activations;
};

absl::StatusOr<Config> ConfigOf(const CellInfo& info, const OpAttrs& attrs) {
  Config config;
  const std::string direction(attrs.GetString("direction").value_or("forward"));
  if (direction == "bidirectional") {
    config.directions = 2;
  } else if (direction == "reverse") {
    config.reverse = true;
  } else if (direction != "forward") {
    return OpError(info.op,
                   absl::StrCat("direction '", direction,
                                "' is not forward, reverse or bidirectional"));
  }
  const int64_t layout = attrs.GetInteger("layout").value_or(0);
  if (layout != 0 && layout != 1) {
    return OpError(info.op, absl::StrCat("layout ", layout, " is not 0 or 1"));
  }
  config.batch_major = layout == 1;
  config.hidden_size = attrs.GetInteger("hidden_size");
  if (config.hidden_size && *config.hidden_size < 1) {
    return OpError(info.op, "hidden_size must be positive");
  }
  if (attrs.Get<float>("clip") || attrs.Get<double>("clip")) {
    config.clip = FloatAttr(attrs, "clip", 0.f);
    if (!(*config.clip > 0.f)) return OpError(info.op, "clip must be positive");
  }
  config.input_forget = attrs.GetInteger("input_forget").value_or(0) != 0;
  config.linear_before_reset =
      attrs.GetInteger("linear_before_reset").value_or(0) != 0;
  if (config.input_forget && info.cell != Cell::kLstm) {
    return OpError(info.op, "has no input_forget");
  }
  if (config.linear_before_reset && info.cell != Cell::kGru) {
    return OpError(info.op, "has no linear_before_reset");
  }

  // Names: one list for every direction, or one per direction.
  std::vector<std::string> names;
  if (std::optional<OpAttrs> list = attrs.GetAggregate("activations")) {
    for (const OpAttrs::Entry& entry : list->entries()) {
      std::optional<absl::string_view> name = list->GetString(entry.name);
      if (!name) return OpError(info.op, "activations must be strings");
      names.emplace_back(*name);
    }
  } else if (std::optional<absl::string_view> one =
                 attrs.GetString("activations")) {
    names.emplace_back(*one);
  }
  const size_t per_direction = info.num_activations;
  if (names.empty()) {
    for (int d = 0; d < config.directions; ++d) {
      names.insert(names.end(), info.activations,
                   info.activations + per_direction);
    }
  } else if (names.size() == per_direction && config.directions == 2) {
    names.insert(names.end(), names.begin(), names.end());
  } else if (names.size() != per_direction * config.directions) {
    return OpError(info.op, absl::StrCat("needs ", per_direction,
                                         " activations per direction, got ",
                                         names.size()));
  }
  const absl::Span<const float> alphas =
      attrs.GetArray<float>("activation_alpha")
          .value_or(absl::Span<const float>());
  const absl::Span<const float> betas =
      attrs.GetArray<float>("activation_beta")
          .value_or(absl::Span<const float>());
  size_t next_alpha = 0, next_beta = 0;
  for (const std::string& name : names) {
    absl::StatusOr<Activation> activation =
        ParseActivation(info.op, name, alphas, next_alpha, betas, next_beta);
    if (!activation.ok()) return activation.status();
    config.activations.push_back(*activation);
  }
  return config;
}

// The sizes of one call.
struct Sizes {
  int64_t steps = 0, batch = 0, input = 0, hidden = 0;
};

absl::Status ExpectShape(const CellInfo& info, ArgumentMetadata args,
                         Operand operand, const char* name,
                         const std::vector<int64_t>& dims) {
  if (args.size() <= static_cast<size_t>(operand)) return absl::OkStatus();
  const TensorMetadata& arg = args[operand];
  const TensorShape expected{absl::MakeConstSpan(dims)};
  if (arg.dtype != DType::kF32 || arg.shape != expected) {
    return OpError(
        info.op,
        absl::StrCat(name, " must be f32 ", expected.DebugString(), ", not ",
                     DTypeName(arg.dtype), " ", arg.shape.DebugString()));
  }
  return absl::OkStatus();
}

absl::StatusOr<Sizes> SizesOf(const CellInfo& info, const Config& config,
                              ArgumentMetadata args) {
  if (args.size() < 3 || args.size() > info.max_operands) {
    return OpError(
        info.op,
        absl::StrCat("takes X, W, R and up to ", info.max_operands - 3,
                     " optional operands, not ", args.size(), " operands"));
  }
  for (Operand operand : {kX, kW, kR}) {
    if (args[operand].dtype != DType::kF32 ||
        args[operand].shape.GetRank() != 3) {
      static constexpr const char* kNames[] = {"X", "W", "R"};
      return OpError(info.op, absl::StrCat(kNames[operand],
                                           " must be an f32 tensor of rank 3, "
                                           "not ",
                                           DTypeName(args[operand].dtype), " ",
                                           args[operand].shape.DebugString()));
    }
  }
  Sizes sizes;
  const TensorShape& x = args[kX].shape;
  sizes.steps = x.GetDimensionSize(config.batch_major ? 1 : 0);
  sizes.batch = x.GetDimensionSize(config.batch_major ? 0 : 1);
  sizes.input = x.GetDimensionSize(2);
  sizes.hidden =
      config.hidden_size.value_or(args[kR].shape.GetDimensionSize(2));
  const int64_t d = config.directions, h = sizes.hidden, n = sizes.batch;
  const int64_t gates = info.gates * h;
  absl::Status status =
      ExpectShape(info, args, kW, "W", {d, gates, sizes.input});
  if (status.ok()) status = ExpectShape(info, args, kR, "R", {d, gates, h});
  if (status.ok()) status = ExpectShape(info, args, kB, "B", {d, 2 * gates});
  if (status.ok() && args.size() > kSequenceLens) {
    const TensorMetadata& lens = args[kSequenceLens];
    if ((lens.dtype != DType::kI32 && lens.dtype != DType::kI64) ||
        lens.shape != TensorShape({n})) {
      status = OpError(info.op, absl::StrCat("sequence_lens must be ", n,
                                             " integers, one per batch entry"));
    }
  }
  const std::vector<int64_t> state = config.batch_major
                                         ? std::vector<int64_t>{n, d, h}
                                         : std::vector<int64_t>{d, n, h};
  if (status.ok()) {
    status = ExpectShape(info, args, kInitialH, "initial_h", state);
  }
  if (status.ok()) {
    status = ExpectShape(info, args, kInitialC, "initial_c", state);
  }
  if (status.ok()) status = ExpectShape(info, args, kP, "P", {d, 3 * h});
  if (!status.ok()) return status;
  return sizes;
}

absl::Status RecurrentMetadata(const CellInfo& info, ArgumentMetadata args,
                               const OpAttrs& attrs,
                               absl::Span<TensorMetadata> results) {
  if (results.empty() || results.size() > info.max_results) {
    return OpError(info.op, absl::StrCat("has 1 to ", info.max_results,
                                         " results, not ", results.size()));
  }
  absl::StatusOr<Config> config = ConfigOf(info, attrs);
  if (!config.ok()) return config.status();
  absl::StatusOr<Sizes> sizes = SizesOf(info, *config, args);
  if (!sizes.ok()) return sizes.status();
  const int64_t t = sizes->steps, n = sizes->batch, d = config->directions,
                h = sizes->hidden;
  results[0] = TensorMetadata(DType::kF32, config->batch_major
                                               ? TensorShape({n, t, d, h})
                                               : TensorShape({t, d, n, h}));
  for (size_t i = 1; i < results.size(); ++i) {
    results[i] = TensorMetadata(DType::kF32, config->batch_major
                                                 ? TensorShape({n, d, h})
                                                 : TensorShape({d, n, h}));
  }
  return absl::OkStatus();
}

// C = A (rows x inner, row-major) times B^T (B: cols x inner, row-major,
// row stride ldb), written with row stride ldc.
void MultiplyByTransposed(int64_t rows, int64_t cols, int64_t inner,
                          const float* a, int64_t lda, const float* b,
                          int64_t ldb, float* c, int64_t ldc) {
  if (rows == 0 || cols == 0) return;
  if (inner == 0) {
    for (int64_t r = 0; r < rows; ++r) std::fill_n(c + r * ldc, cols, 0.f);
    return;
  }
  dnnl_sgemm('N', 'T', rows, cols, inner, 1.f, a, lda, b, ldb, 0.f, c, ldc);
}

// out (rows x n, row stride ldo) = a (rows x k, row stride lda) times b
// (k x n, row stride ldb): a step's product of the hidden state by R^T.
// For a few rows, blocks of 64 outputs accumulate in registers while k
// runs (oneDNN's sgemm spends about 1.3 us a call on a 1 x 64 by 64 x 256
// product, 2-3x this); a GEMM for more rows. Built for AVX-512, AVX2 and
// the baseline (GCC's vectors of 16 floats become one, two or four
// registers); the CPU's widest runs.
typedef float Floats16 __attribute__((vector_size(64)));

// GCC notes that passing a vector of 16 floats differs between the
// clones' instruction sets: these helpers are inlined within this file.
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpsabi"
// Unaligned: rows of R^T start anywhere.
inline Floats16 Load16(const float* from) {
  Floats16 v;
  std::memcpy(&v, from, sizeof(v));
  return v;
}
inline void Store16(float* to, Floats16 v) { std::memcpy(to, &v, sizeof(v)); }

// The clones' resolver runs while the program is relocated, before a
// sanitizer's runtime starts: sanitized builds keep the baseline alone.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ASYNCRT_CLONES_FOR_WIDER_VECTORS
#else
#define ASYNCRT_CLONES_FOR_WIDER_VECTORS \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

ASYNCRT_CLONES_FOR_WIDER_VECTORS void MultiplyRowsSmall(
    int64_t rows, int64_t n, int64_t k, const float* a, int64_t lda,
    const float* b, int64_t ldb, float* out, int64_t ldo) {
  for (int64_t m = 0; m < rows; ++m) {
    const float* a_row = a + m * lda;
    float* out_row = out + m * ldo;
    int64_t j0 = 0;
    for (; j0 + 64 <= n; j0 += 64) {
      Floats16 acc0 = {}, acc1 = {}, acc2 = {}, acc3 = {};
      for (int64_t i = 0; i < k; ++i) {
        const float scale = a_row[i];
        const float* row = b + i * ldb + j0;
        acc0 += scale * Load16(row);
        acc1 += scale * Load16(row + 16);
        acc2 += scale * Load16(row + 32);
        acc3 += scale * Load16(row + 48);
      }
      Store16(out_row + j0, acc0);
      Store16(out_row + j0 + 16, acc1);
      Store16(out_row + j0 + 32, acc2);
      Store16(out_row + j0 + 48, acc3);
    }
    for (; j0 + 16 <= n; j0 += 16) {
      Floats16 acc = {};
      for (int64_t i = 0; i < k; ++i) {
        acc += a_row[i] * Load16(b + i * ldb + j0);
      }
      Store16(out_row + j0, acc);
    }
    for (; j0 < n; ++j0) {
      float acc = 0.f;
      for (int64_t i = 0; i < k; ++i) acc += a_row[i] * b[i * ldb + j0];
      out_row[j0] = acc;
    }
  }
}

#pragma GCC diagnostic pop

void MultiplyRows(int64_t rows, int64_t n, int64_t k, const float* a,
                  int64_t lda, const float* b, int64_t ldb, float* out,
                  int64_t ldo) {
  if (rows == 0 || n == 0) return;
  if (rows <= 4 || k == 0) {
    return MultiplyRowsSmall(rows, n, k, a, lda, b, ldb, out, ldo);
  }
  dnnl_sgemm('N', 'N', rows, n, k, 1.f, a, lda, b, ldb, 0.f, out, ldo);
}

// R transposed per direction (hidden x gates * hidden, row-major): each
// step multiplies by it. Kept at the op's site while R's buffer is the
// same read-only one (a model's weights), else made per call.
struct TransposedR {
  RCReference<HostBuffer> source;
  std::vector<float> values;
};
constexpr char kTransposedRTag = 0;

std::shared_ptr<const TransposedR> TransposeR(const DenseHostTensor& r,
                                              int directions, int64_t gates,
                                              int64_t hidden,
                                              bool keep_source) {
  auto transposed = std::make_shared<TransposedR>();
  if (keep_source) transposed->source = r.buffer().CopyRef();
  transposed->values.resize(directions * gates * hidden);
  const float* from = r.elements<float>().data();
  for (int d = 0; d < directions; ++d) {
    const float* r_d = from + d * gates * hidden;
    float* to = transposed->values.data() + d * gates * hidden;
    for (int64_t j = 0; j < gates; ++j) {
      for (int64_t i = 0; i < hidden; ++i) {
        to[i * gates + j] = r_d[j * hidden + i];
      }
    }
  }
  return transposed;
}

std::shared_ptr<const TransposedR> SiteTransposedR(OpInvocation& invocation,
                                                   int directions,
                                                   int64_t gates,
                                                   int64_t hidden) {
  const auto& r = static_cast<const DenseHostTensor&>(invocation.argument(kR));
  const bool constant = r.buffer() && r.buffer()->IsReadOnly();
  OpSiteCache* cache = invocation.site_cache;
  if (constant && cache != nullptr) {
    if (const TransposedR* kept = cache->Find<TransposedR>(&kTransposedRTag);
        kept != nullptr && kept->source.get() == r.buffer().get() &&
        kept->values.size() ==
            static_cast<size_t>(directions * gates * hidden)) {
      // The cache holds its entry as long as the site lives.
      return std::shared_ptr<const TransposedR>(std::shared_ptr<void>(), kept);
    }
  }
  const bool keep = constant && cache != nullptr && cache->empty();
  std::shared_ptr<const TransposedR> made =
      TransposeR(r, directions, gates, hidden, keep);
  if (keep) cache->Set<TransposedR>(&kTransposedRTag, made);
  return made;
}

const float* F32Data(const OpInvocation& invocation, Operand operand) {
  if (invocation.arguments.size() <= static_cast<size_t>(operand)) {
    return nullptr;
  }
  return static_cast<const DenseHostTensor&>(invocation.argument(operand))
      .elements<float>()
      .data();
}

void RunRecurrent(const CellInfo& info, OpInvocation& invocation) {
  absl::StatusOr<Config> config = ConfigOf(info, invocation.attrs);
  if (!config.ok()) {
    return FailAll(invocation, info.op, config.status().message());
  }
  const MetadataPointers metadata = ArgumentMetadataOf(invocation);
  absl::StatusOr<Sizes> sizes =
      SizesOf(info, *config, ArgumentMetadata(metadata));
  if (!sizes.ok()) {
    return FailAll(invocation, info.op, sizes.status().message());
  }
  const int64_t steps = sizes->steps, batch = sizes->batch,
                input = sizes->input, hidden = sizes->hidden;
  const int directions = config->directions;
  const bool batch_major = config->batch_major;

  std::vector<int64_t> lengths(batch, steps);
  if (invocation.arguments.size() > kSequenceLens) {
    const auto& lens =
        static_cast<const DenseHostTensor&>(invocation.argument(kSequenceLens));
    for (int64_t b = 0; b < batch; ++b) {
      lengths[b] = lens.dtype() == DType::kI64 ? lens.elements<int64_t>()[b]
                                               : lens.elements<int32_t>()[b];
      if (lengths[b] < 0 || lengths[b] > steps) {
        return FailAll(invocation, info.op,
                       absl::StrCat("sequence_lens[", b, "] is ", lengths[b],
                                    "; there are ", steps, " steps"));
      }
    }
  }

  std::vector<AsyncValueRef<DenseHostTensor>> results;
  for (size_t i = 0; i < invocation.results.size(); ++i) {
    results.push_back(
        AllocateResult(invocation, info.op, invocation.result_metadata[i]));
    if (!results.back()) return;
  }
  float* y = results[0]->elements<float>().data();
  std::fill_n(y, results[0]->NumElements(), 0.f);
  float* y_h =
      results.size() > 1 ? results[1]->elements<float>().data() : nullptr;
  float* y_c =
      results.size() > 2 ? results[2]->elements<float>().data() : nullptr;

  const float* x = F32Data(invocation, kX);
  const float* w = F32Data(invocation, kW);
  const std::shared_ptr<const TransposedR> r_transposed = SiteTransposedR(
      invocation, config->directions, info.gates * hidden, hidden);
  const float* bias = F32Data(invocation, kB);
  const float* initial_h = F32Data(invocation, kInitialH);
  const float* initial_c = F32Data(invocation, kInitialC);
  const float* peepholes = F32Data(invocation, kP);

  const int64_t gates = info.gates * hidden;
  const bool gru_reset_first =
      info.cell == Cell::kGru && !config->linear_before_reset;
  // Row of X (and of its product with W) at step t of batch entry b.
  auto x_row = [&](int64_t t, int64_t b) {
    return batch_major ? b * steps + t : t * batch + b;
  };
  auto y_offset = [&](int64_t t, int d, int64_t b) {
    return (batch_major ? (b * steps + t) * directions + d
                        : (t * directions + d) * batch + b) *
           hidden;
  };
  auto state_offset = [&](int d, int64_t b) {
    return (batch_major ? b * directions + d : d * batch + b) * hidden;
  };
  const std::optional<float> clip = config->clip;

  ScopedDenormals denormals;
  // The team runs products of a few million multiply-adds or more: below
  // that its fork and join cost more than it saves (a step's product
  // nearly always; the input product of short sequences).
  const int team = UseCurrentTeam();
  auto team_for = [&](int64_t multiply_adds) {
    return multiply_adds >= (int64_t{4} << 20) ? team : 1;
  };
  const int input_team = team_for(steps * batch * gates * input);
  const int step_team = team_for(batch * gates * hidden);

  std::vector<float> xw(steps * batch * gates);
  std::vector<float> hr(batch * gates);   // The hidden state times R^T.
  std::vector<float> pre(batch * gates);  // Gate inputs, then gates.
  std::vector<float> h(batch * hidden), c(batch * hidden);
  std::vector<float> scratch(hidden);
  std::vector<float> reset_h, reset_hr;  // A GRU's (r * h) and its product.
  if (gru_reset_first) {
    reset_h.assign(batch * hidden, 0.f);
    reset_hr.resize(batch * hidden);
  }
  for (int d = 0; d < directions; ++d) {
    const bool reverse = directions == 2 ? d == 1 : config->reverse;
    const float* w_d = w + d * gates * input;
    // R^T of this direction: hidden x gates.
    const float* rt_d = r_transposed->values.data() + d * gates * hidden;
    const Activation* f = &config->activations[d * info.num_activations];
    // X times W^T for every step, plus both biases (but a GRU's R bias of
    // its hidden gate, which with linear_before_reset is inside r's
    // product).
    omp_set_num_threads(input_team);
    MultiplyByTransposed(steps * batch, gates, input, x, input, w_d, input,
                         xw.data(), gates);
    omp_set_num_threads(step_team);
    if (bias != nullptr) {
      const float* w_bias = bias + d * 2 * gates;
      const float* r_bias = w_bias + gates;
      std::vector<float> folded(gates);
      for (int64_t j = 0; j < gates; ++j) {
        const bool separate = config->linear_before_reset && j >= 2 * hidden;
        folded[j] = w_bias[j] + (separate ? 0.f : r_bias[j]);
      }
      for (int64_t row = 0; row < steps * batch; ++row) {
        float* out = xw.data() + row * gates;
        for (int64_t j = 0; j < gates; ++j) out[j] += folded[j];
      }
    }
    const float* r_bias_h = bias != nullptr && config->linear_before_reset
                                ? bias + d * 2 * gates + gates + 2 * hidden
                                : nullptr;
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t from = state_offset(d, b);
      for (int64_t j = 0; j < hidden; ++j) {
        h[b * hidden + j] = initial_h ? initial_h[from + j] : 0.f;
        c[b * hidden + j] = initial_c ? initial_c[from + j] : 0.f;
      }
    }
    const float* p_i = peepholes ? peepholes + d * 3 * hidden : nullptr;
    const float* p_o = p_i ? p_i + hidden : nullptr;
    const float* p_f = p_i ? p_i + 2 * hidden : nullptr;

    for (int64_t s = 0; s < steps; ++s) {
      // A GRU resetting first multiplies only its z and r blocks here.
      MultiplyRows(batch, gru_reset_first ? 2 * hidden : gates, hidden,
                   h.data(), hidden, rt_d, gates, hr.data(), gates);
      auto step_of = [&](int64_t b) {
        return reverse ? lengths[b] - 1 - s : s;
      };
      // Gate inputs: X's and the state's products summed (a GRU's hidden
      // gate apart: it needs r first).
      const int64_t summed = info.cell == Cell::kGru ? 2 * hidden : gates;
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= lengths[b]) continue;
        const float* in = xw.data() + x_row(step_of(b), b) * gates;
        const float* rec = hr.data() + b * gates;
        float* g = pre.data() + b * gates;
        for (int64_t j = 0; j < summed; ++j) g[j] = in[j] + rec[j];
        if (info.cell == Cell::kLstm && p_i != nullptr) {
          const float* c_b = c.data() + b * hidden;
          for (int64_t j = 0; j < hidden; ++j) {
            g[j] += p_i[j] * c_b[j];
            g[2 * hidden + j] += p_f[j] * c_b[j];
          }
        }
        if (info.cell == Cell::kGru) {
          // z and r.
          Activate(f[0], clip, g, 2 * hidden);
        } else if (info.cell == Cell::kRnn) {
          Activate(f[0], clip, g, hidden);
        } else {
          // Input, forget (unless coupled to input) and cell gates; the
          // output gate's peephole needs the new cell state.
          Activate(f[0], clip, g, hidden);
          if (config->input_forget) {
            for (int64_t j = 0; j < hidden; ++j) g[2 * hidden + j] = 1 - g[j];
          } else {
            Activate(f[0], clip, g + 2 * hidden, hidden);
          }
          Activate(f[1], clip, g + 3 * hidden, hidden);
        }
        if (gru_reset_first) {
          for (int64_t j = 0; j < hidden; ++j) {
            reset_h[b * hidden + j] = g[hidden + j] * h[b * hidden + j];
          }
        }
      }
      if (gru_reset_first) {
        MultiplyRows(batch, hidden, hidden, reset_h.data(), hidden,
                     rt_d + 2 * hidden, gates, reset_hr.data(), hidden);
      }
      for (int64_t b = 0; b < batch; ++b) {
        if (s >= lengths[b]) continue;
        const int64_t t = step_of(b);
        const float* in = xw.data() + x_row(t, b) * gates;
        const float* rec = hr.data() + b * gates;
        float* g = pre.data() + b * gates;
        float* h_b = h.data() + b * hidden;
        float* c_b = c.data() + b * hidden;
        switch (info.cell) {
          case Cell::kRnn:
            std::copy_n(g, hidden, h_b);
            break;
          case Cell::kGru: {
            // Gates z, r, then the candidate state.
            float* candidate = g + 2 * hidden;
            for (int64_t j = 0; j < hidden; ++j) {
              candidate[j] =
                  in[2 * hidden + j] +
                  (gru_reset_first
                       ? reset_hr[b * hidden + j]
                       : g[hidden + j] *
                             (rec[2 * hidden + j] +
                              (r_bias_h != nullptr ? r_bias_h[j] : 0.f)));
            }
            Activate(f[1], clip, candidate, hidden);
            for (int64_t j = 0; j < hidden; ++j) {
              h_b[j] = (1.f - g[j]) * candidate[j] + g[j] * h_b[j];
            }
            break;
          }
          case Cell::kLstm: {
            // Gate blocks in ONNX's order: input, output, forget, cell.
            float* out_gate = g + hidden;
            for (int64_t j = 0; j < hidden; ++j) {
              c_b[j] = g[2 * hidden + j] * c_b[j] + g[j] * g[3 * hidden + j];
              if (p_o != nullptr) out_gate[j] += p_o[j] * c_b[j];
            }
            Activate(f[0], clip, out_gate, hidden);
            Activate(f[2], std::nullopt, c_b, hidden, scratch.data());
            for (int64_t j = 0; j < hidden; ++j) {
              h_b[j] = out_gate[j] * scratch[j];
            }
            break;
          }
        }
        std::memcpy(y + y_offset(t, d, b), h_b, hidden * sizeof(float));
      }
    }
    for (int64_t b = 0; b < batch; ++b) {
      const int64_t to = state_offset(d, b);
      if (y_h) std::memcpy(y_h + to, &h[b * hidden], hidden * sizeof(float));
      if (y_c) std::memcpy(y_c + to, &c[b * hidden], hidden * sizeof(float));
    }
  }
  omp_set_num_threads(team);
  for (size_t i = 0; i < results.size(); ++i) {
    invocation.results[i] = std::move(results[i]);
  }
}

template <const CellInfo& kInfo>
absl::Status Metadata(ArgumentMetadata args, const OpAttrs& attrs,
                      absl::Span<TensorMetadata> results) {
  return RecurrentMetadata(kInfo, args, attrs, results);
}

template <const CellInfo& kInfo>
void Run(OpInvocation& invocation) {
  RunRecurrent(kInfo, invocation);
}

}  // namespace

void RegisterRecurrentOps(OpRegistry& registry) {
  registry.AddOp("nn.rnn", Metadata<kRnn>);
  registry.AddDispatch("nn.rnn", "cpu", Run<kRnn>);
  registry.AddOp("nn.gru", Metadata<kGru>);
  registry.AddDispatch("nn.gru", "cpu", Run<kGru>);
  registry.AddOp("nn.lstm", Metadata<kLstm>);
  registry.AddDispatch("nn.lstm", "cpu", Run<kLstm>);
}

}  // namespace asyncrt::nn
