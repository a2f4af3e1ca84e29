// Normalizations, reductions and Gemm on the CPU: nn.batch_normalization
// (inference), nn.layer_normalization, nn.reduce_{mean,sum,max,min,prod,
// l1,l2,sum_square,log_sum,log_sum_exp} and nn.gemm (its product on oneDNN
// matmul).
//
// Loops are written so that GCC vectorizes the contiguous inner dimension:
// per-channel and per-row constants are computed outside it, and row sums
// keep several independent partial sums, since strict IEEE semantics forbid
// the compiler from reassociating a single accumulator.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/base/casts.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {
namespace {

using dnnl::memory;

// The metadata of the invocation's arguments, so that a dispatch function
// can rebuild the plan its shape function validated.
const float* Data(const OpInvocation& invocation, size_t index) {
  return static_cast<const DenseHostTensor&>(invocation.argument(index))
      .elements<float>()
      .data();
}

absl::Status CheckCounts(absl::string_view op, ArgumentMetadata args,
                         absl::Span<TensorMetadata> results, size_t min_args,
                         size_t max_args) {
  if (args.size() < min_args || args.size() > max_args || results.size() != 1) {
    return OpError(op, min_args == max_args
                           ? absl::StrCat("takes ", min_args,
                                          " arguments and has 1 result")
                           : absl::StrCat("takes ", min_args, " or ", max_args,
                                          " arguments and has 1 result"));
  }
  return RequireFloat(op, args);
}

// out[j] = f(j) for j in [0, n), in blocks of eight, which GCC vectorizes
// under any cost model (at plain -O2 it takes only loops whose trip count
// is a multiple of the vector width). Each block is computed before it is
// stored, so `out` may alias what `f` reads at the same index.
template <typename T, typename F>
inline void ForRow(T* out, int64_t n, F f) {
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    T block[8];
    for (int l = 0; l < 8; ++l) block[l] = f(j + l);
    for (int l = 0; l < 8; ++l) out[j + l] = block[l];
  }
  for (; j < n; ++j) out[j] = f(j);
}

// Sum and sum of squares of x[0, n) in double. Eight partial sums: a loop
// the compiler can vectorize, and accurate for long rows.
void RowMoments(const float* x, int64_t n, double& sum, double& sum_sq) {
  double s[8] = {}, q[8] = {};
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int l = 0; l < 8; ++l) {
      const double v = x[j + l];
      s[l] += v;
      q[l] += v * v;
    }
  }
  sum = sum_sq = 0;
  for (; j < n; ++j) {
    sum += x[j];
    sum_sq += static_cast<double>(x[j]) * x[j];
  }
  for (int l = 0; l < 8; ++l) {
    sum += s[l];
    sum_sq += q[l];
  }
}

//===--- Per-channel normalizations ---------------------------------------===//

// x = args[0] is N x C x ... (at least `min_rank` dimensions) and
// args[1...] are [C], named `names` in errors.
absl::Status CheckChannelOperands(absl::string_view op, ArgumentMetadata args,
                                  int min_rank,
                                  absl::Span<const char* const> names) {
  const TensorShape& x = args[0].shape;
  if (x.GetRank() < min_rank) {
    return OpError(
        op, absl::StrCat("input must be N x C x ", min_rank > 2 ? "D1 x " : "",
                         "..., got ", x.DebugString()));
  }
  const int64_t channels = x.GetDimensionSize(1);
  for (size_t i = 0; i < names.size(); ++i) {
    const TensorShape& param = args[i + 1].shape;
    if (param.GetRank() != 1 || param.GetDimensionSize(0) != channels) {
      return OpError(op, absl::StrCat(names[i], " ", param.DebugString(),
                                      " is not [", channels, "]"));
    }
  }
  return absl::OkStatus();
}

// y = x * s + t over each (n, c) plane of x (argument 0), with
// {s, t} = coefficients(c, plane), `plane` pointing at the plane's `inner`
// elements; max(y, 0) where `relu`. Each plane's coefficients are computed
// before it is written: x's buffer may be the result's.
template <typename Coefficients>
void ScaleShiftPlanes(OpInvocation& invocation, absl::string_view op,
                      Coefficients coefficients, bool relu = false) {
  const TensorShape& shape = invocation.argument(0).metadata().shape;
  const int64_t batch = shape.GetDimensionSize(0);
  const int64_t channels = shape.GetDimensionSize(1);
  const int64_t inner = channels == 0 || batch == 0
                            ? 0
                            : shape.GetNumElements() / (batch * channels);
  const float* x = Data(invocation, 0);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, op, invocation.result_metadata[0], 0b1);
  if (!result) return;
  float* y = result->elements<float>().data();
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t offset = (n * channels + c) * inner;
      const float* in = x + offset;
      const auto [sc, sh] = coefficients(c, in, inner);
      float* out = y + offset;
      if (relu) {
        ForRow(out, inner, [&](int64_t j) {
          const float v = in[j] * sc + sh;
          return v > 0 ? v : 0.0f;  // nn.relu's.
        });
      } else {
        ForRow(out, inner, [&](int64_t j) { return in[j] * sc + sh; });
      }
    }
  }
  invocation.results[0] = std::move(result);
}

//===--- nn.batch_normalization -------------------------------------------===//

// ONNX BatchNormalization in inference mode: x [N, C, spatial...]; scale,
// B, mean and var [C]; y = (x - mean) / sqrt(var + epsilon) * scale + B,
// rectified (max(y, 0)) with `activation = "relu"` (-nn-fuse-elementwise
// folds a relu after it in).
absl::Status BatchNormMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                               absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.batch_normalization";
  if (absl::Status status = CheckCounts(kOp, args, results, 5, 5);
      !status.ok()) {
    return status;
  }
  if (attrs.GetInteger("training_mode").value_or(0) != 0) {
    return OpError(kOp, "training_mode = 1 is not supported");
  }
  if (std::optional<absl::string_view> activation =
          attrs.GetString("activation");
      activation && *activation != "relu") {
    return OpError(kOp, absl::StrCat("activation \"", *activation,
                                     "\" is not supported (only relu)"));
  }
  static constexpr const char* kNames[] = {"scale", "B", "mean", "var"};
  if (absl::Status status = CheckChannelOperands(kOp, args, 2, kNames);
      !status.ok()) {
    return status;
  }
  results[0] = args[0];
  return absl::OkStatus();
}

}  // namespace

void BatchNormCoefficients(const OpInvocation& invocation,
                           std::vector<float>& s, std::vector<float>& t) {
  const int64_t channels =
      invocation.argument(0).metadata().shape.GetDimensionSize(1);
  const float epsilon = FloatAttr(invocation.attrs, "epsilon", 1e-5f);
  if (static_cast<int64_t>(s.size()) < channels) s.resize(channels);
  if (static_cast<int64_t>(t.size()) < channels) t.resize(channels);
  const float *scale = Data(invocation, 1), *bias = Data(invocation, 2),
              *mean = Data(invocation, 3), *var = Data(invocation, 4);
  for (int64_t c = 0; c < channels; ++c) {
    const double factor =
        scale[c] / std::sqrt(static_cast<double>(var[c]) + epsilon);
    s[c] = static_cast<float>(factor);
    t[c] = static_cast<float>(bias[c] - mean[c] * factor);
  }
}

namespace {

void BatchNorm(OpInvocation& invocation) {
  if (RefuseHalf(invocation, "nn.batch_normalization")) return;
  // Per channel, once: y = x * s + t.
  std::vector<float> s, t;
  BatchNormCoefficients(invocation, s, t);
  ScaleShiftPlanes(
      invocation, "nn.batch_normalization",
      [&](int64_t c, const float*, int64_t) {
        return std::pair<float, float>(s[c], t[c]);
      },
      invocation.attrs.GetString("activation").has_value());
}

//===--- nn.instance_normalization ----------------------------------------===//

// ONNX InstanceNormalization: x [N, C, spatial...], scale and B [C]; each
// (n, c) plane normalized to mean 0 and variance 1 (plus epsilon), then
// y = normalized * scale[c] + B[c].
absl::Status InstanceNormMetadata(ArgumentMetadata args, const OpAttrs&,
                                  absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.instance_normalization";
  if (absl::Status status = CheckCounts(kOp, args, results, 3, 3);
      !status.ok()) {
    return status;
  }
  static constexpr const char* kNames[] = {"scale", "B"};
  if (absl::Status status = CheckChannelOperands(kOp, args, 3, kNames);
      !status.ok()) {
    return status;
  }
  results[0] = args[0];
  return absl::OkStatus();
}

void InstanceNorm(OpInvocation& invocation) {
  if (RefuseHalf(invocation, "nn.instance_normalization")) return;
  const float epsilon = FloatAttr(invocation.attrs, "epsilon", 1e-5f);
  const float *scale = Data(invocation, 1), *bias = Data(invocation, 2);
  ScaleShiftPlanes(
      invocation, "nn.instance_normalization",
      [&](int64_t c, const float* plane, int64_t inner) {
        double sum = 0, sum_sq = 0;
        RowMoments(plane, inner, sum, sum_sq);
        const double mean = inner == 0 ? 0 : sum / inner;
        const double variance =
            inner == 0 ? 0 : std::max(0.0, sum_sq / inner - mean * mean);
        const double factor = scale[c] / std::sqrt(variance + epsilon);
        return std::pair<float, float>(
            static_cast<float>(factor),
            static_cast<float>(bias[c] - mean * factor));
      });
}

//===--- nn.layer_normalization -------------------------------------------===//

// ONNX LayerNormalization: each row (dims [axis, rank)) normalized to mean
// 0 and variance 1, times scale, plus the optional bias; scale and bias
// broadcast to the normalized dims.
struct LayerNormPlan {
  int axis;
  int64_t rows, size;
};

absl::StatusOr<LayerNormPlan> PlanLayerNorm(ArgumentMetadata args,
                                            const OpAttrs& attrs) {
  constexpr absl::string_view kOp = "nn.layer_normalization";
  const TensorShape& x = args[0].shape;
  absl::StatusOr<int> axis =
      NormalizeAxis(kOp, attrs.GetInteger("axis").value_or(-1), x.GetRank());
  if (!axis.ok()) return axis.status();
  const auto dims = x.GetDimensions();
  const TensorShape normalized(dims.subspan(*axis));
  for (size_t i = 1; i < args.size(); ++i) {
    const TensorShape& param = args[i].shape;
    absl::StatusOr<TensorShape> shape = BroadcastShapes(kOp, param, normalized);
    if (!shape.ok() || *shape != normalized) {
      return OpError(
          kOp, absl::StrCat(i == 1 ? "scale " : "bias ", param.DebugString(),
                            " does not broadcast to the "
                            "normalized dimensions ",
                            normalized.DebugString()));
    }
  }
  LayerNormPlan plan{*axis, 1, normalized.GetNumElements()};
  for (int d = 0; d < *axis; ++d) plan.rows *= dims[d];
  return plan;
}

// Results: y, and optionally each row's mean and inverse standard
// deviation (x's shape with the normalized dimensions 1).
absl::Status LayerNormMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                               absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.layer_normalization";
  if (args.size() < 2 || args.size() > 3 ||
      (results.size() != 1 && results.size() != 3)) {
    return OpError(kOp, "takes 2 or 3 arguments and has 1 or 3 results");
  }
  if (absl::Status status = RequireFloat(kOp, args); !status.ok()) {
    return status;
  }
  absl::StatusOr<LayerNormPlan> plan = PlanLayerNorm(args, attrs);
  if (!plan.ok()) return plan.status();
  results[0] = args[0];
  if (results.size() == 3) {
    Dims dims(args[0].shape.GetDimensions().begin(),
              args[0].shape.GetDimensions().end());
    for (size_t d = plan->axis; d < dims.size(); ++d) dims[d] = 1;
    results[1] = results[2] = TensorMetadata(DType::kF32, TensorShape(dims));
  }
  return absl::OkStatus();
}

// `param`'s elements broadcast to `normalized` (row-major, all of them):
// the inner loop then reads one contiguous row of parameters.
const float* ExpandParam(const DenseHostTensor& param,
                         const TensorShape& normalized,
                         std::vector<float>& storage) {
  const float* data = param.elements<float>().data();
  if (param.shape() == normalized) return data;
  const Dims strides = BroadcastStrides(param.shape(), normalized);
  const int rank = normalized.GetRank();
  storage.resize(normalized.GetNumElements());
  for (int64_t i = 0; i < static_cast<int64_t>(storage.size()); ++i) {
    int64_t rest = i, offset = 0;
    for (int d = rank - 1; d >= 0; --d) {
      const int64_t size = normalized.GetDimensionSize(d);
      offset += rest % size * strides[d];
      rest /= size;
    }
    storage[i] = data[offset];
  }
  return storage.data();
}

void LayerNorm(OpInvocation& invocation) {
  if (RefuseHalf(invocation, "nn.layer_normalization")) return;
  constexpr absl::string_view kOp = "nn.layer_normalization";
  const MetadataPointers metadata = ArgumentMetadataOf(invocation);
  absl::StatusOr<LayerNormPlan> plan =
      PlanLayerNorm(ArgumentMetadata(metadata), invocation.attrs);
  if (!plan.ok()) return FailAll(invocation, kOp, plan.status().message());
  const float epsilon = FloatAttr(invocation.attrs, "epsilon", 1e-5f);
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const TensorShape normalized(x.shape().GetDimensions().subspan(plan->axis));
  std::vector<float> scale_storage, bias_storage;
  const float* scale =
      ExpandParam(static_cast<const DenseHostTensor&>(invocation.argument(1)),
                  normalized, scale_storage);
  const bool has_bias = invocation.arguments.size() == 3;
  const float* bias =
      has_bias
          ? ExpandParam(
                static_cast<const DenseHostTensor&>(invocation.argument(2)),
                normalized, bias_storage)
          : nullptr;
  // Each row is read in full (its moments) before it is written.
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kOp, invocation.result_metadata[0], 0b1);
  if (!result) return;
  // The rows' mean and inverse deviation, when asked for.
  AsyncValueRef<DenseHostTensor> means, inverses;
  if (invocation.results.size() == 3) {
    means = AllocateResult(invocation, kOp, invocation.result_metadata[1]);
    inverses = AllocateResult(invocation, kOp, invocation.result_metadata[2]);
    if (!means || !inverses) return;
    if (plan->size == 0) {  // Rows of nothing have no moments.
      std::fill_n(means->elements<float>().data(), plan->rows,
                  std::numeric_limits<float>::quiet_NaN());
      std::fill_n(inverses->elements<float>().data(), plan->rows,
                  std::numeric_limits<float>::quiet_NaN());
    }
  }
  const float* in_data = x.elements<float>().data();
  float* out_data = result->elements<float>().data();
  const int64_t size = plan->size;
  float* row_means = means ? means->elements<float>().data() : nullptr;
  float* row_inverses = means ? inverses->elements<float>().data() : nullptr;
  // Rows split over the team: 16K elements a part at least.
  ParallelRanges(
      size > 0 ? plan->rows : 0,
      std::max<int64_t>(1, 16384 / std::max<int64_t>(size, 1)),
      [&](int64_t begin, int64_t end) {
        for (int64_t r = begin; r < end; ++r) {
          const float* in = in_data + r * size;
          float* out = out_data + r * size;
          // One pass in double: sum and sum of squares.
          double sum, sum_sq;
          RowMoments(in, size, sum, sum_sq);
          const double mean = sum / size;
          const double variance = std::max(0.0, sum_sq / size - mean * mean);
          const float m = static_cast<float>(mean);
          const float inv =
              static_cast<float>(1.0 / std::sqrt(variance + epsilon));
          if (row_means) {
            row_means[r] = m;
            row_inverses[r] = inv;
          }
          if (has_bias) {
            ForRow(out, size, [&](int64_t j) {
              return (in[j] - m) * inv * scale[j] + bias[j];
            });
          } else {
            ForRow(out, size,
                   [&](int64_t j) { return (in[j] - m) * inv * scale[j]; });
          }
        }
      });
  invocation.results[0] = std::move(result);
  if (means) {
    invocation.results[1] = std::move(means);
    invocation.results[2] = std::move(inverses);
  }
}

//===--- Reductions -------------------------------------------------------===//

enum class ReduceKind {
  kMean,
  kSum,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kSumSquare,
  kLogSum,
  kLogSumExp,
};

absl::string_view ReduceName(ReduceKind kind) {
  switch (kind) {
    case ReduceKind::kMean:
      return "nn.reduce_mean";
    case ReduceKind::kSum:
      return "nn.reduce_sum";
    case ReduceKind::kMax:
      return "nn.reduce_max";
    case ReduceKind::kMin:
      return "nn.reduce_min";
    case ReduceKind::kProd:
      return "nn.reduce_prod";
    case ReduceKind::kL1:
      return "nn.reduce_l1";
    case ReduceKind::kL2:
      return "nn.reduce_l2";
    case ReduceKind::kSumSquare:
      return "nn.reduce_sum_square";
    case ReduceKind::kLogSum:
      return "nn.reduce_log_sum";
    case ReduceKind::kLogSumExp:
      return "nn.reduce_log_sum_exp";
  }
  return "";
}

// Each kind is map (per element), combine (an associative operation with
// an identity) and finish (per result). Max and min accumulate in f32 (in
// the result itself); the others in double.
template <ReduceKind kKind>
constexpr bool kReduceInFloat =
    kKind == ReduceKind::kMax || kKind == ReduceKind::kMin;

template <ReduceKind kKind>
using ReduceAcc = std::conditional_t<kReduceInFloat<kKind>, float, double>;

template <ReduceKind kKind>
constexpr ReduceAcc<kKind> ReduceIdentity() {
  if constexpr (kKind == ReduceKind::kMax) {
    return -std::numeric_limits<float>::infinity();
  } else if constexpr (kKind == ReduceKind::kMin) {
    return std::numeric_limits<float>::infinity();
  } else if constexpr (kKind == ReduceKind::kProd) {
    return 1.0;
  } else {
    return 0.0;
  }
}

// What element x contributes; `shift` is log_sum_exp's max (else 0).
template <ReduceKind kKind>
inline ReduceAcc<kKind> ReduceMap(float x, float shift) {
  if constexpr (kKind == ReduceKind::kL1) {
    return std::fabs(static_cast<double>(x));
  } else if constexpr (kKind == ReduceKind::kL2 ||
                       kKind == ReduceKind::kSumSquare) {
    return static_cast<double>(x) * x;
  } else if constexpr (kKind == ReduceKind::kLogSumExp) {
    return std::exp(static_cast<double>(x) - shift);
  } else {
    return x;
  }
}

template <ReduceKind kKind>
inline ReduceAcc<kKind> ReduceCombine(ReduceAcc<kKind> a, ReduceAcc<kKind> b) {
  if constexpr (kKind == ReduceKind::kMax) {
    return std::max(a, b);
  } else if constexpr (kKind == ReduceKind::kMin) {
    return std::min(a, b);
  } else if constexpr (kKind == ReduceKind::kProd) {
    return a * b;
  } else {
    return a + b;
  }
}

// The result from the accumulator; `factor` scales a mean.
template <ReduceKind kKind>
inline float ReduceFinish(ReduceAcc<kKind> acc, double factor, float shift) {
  if constexpr (kKind == ReduceKind::kMean) {
    return static_cast<float>(acc * factor);
  } else if constexpr (kKind == ReduceKind::kL2) {
    return static_cast<float>(std::sqrt(acc));
  } else if constexpr (kKind == ReduceKind::kLogSum) {
    return static_cast<float>(std::log(acc));
  } else if constexpr (kKind == ReduceKind::kLogSumExp) {
    return static_cast<float>(std::log(acc) + shift);
  } else {
    return static_cast<float>(acc);
  }
}

// The reduction of x[0, n). Eight partial accumulators: a loop the
// compiler can vectorize, and accurate for long rows.
template <ReduceKind kKind>
ReduceAcc<kKind> RowReduce(const float* x, int64_t n, float shift) {
  using Acc = ReduceAcc<kKind>;
  Acc partial[8];
  std::fill_n(partial, 8, ReduceIdentity<kKind>());
  int64_t j = 0;
  for (; j + 8 <= n; j += 8) {
    for (int l = 0; l < 8; ++l) {
      partial[l] =
          ReduceCombine<kKind>(partial[l], ReduceMap<kKind>(x[j + l], shift));
    }
  }
  Acc acc = ReduceIdentity<kKind>();
  for (; j < n; ++j) {
    acc = ReduceCombine<kKind>(acc, ReduceMap<kKind>(x[j], shift));
  }
  for (int l = 0; l < 8; ++l) acc = ReduceCombine<kKind>(acc, partial[l]);
  return acc;
}

// ONNX Reduce*: `axes` (negative allowed; absent or empty: all of them,
// or none with noop_with_empty_axes = 1), `keepdims` (default 1).
struct ReducePlan {
  absl::InlinedVector<bool, 6> reduced;  // Per input dimension.
  Dims result;
  bool noop = false;
};

absl::StatusOr<ReducePlan> PlanReduce(absl::string_view op,
                                      const TensorShape& x,
                                      const OpAttrs& attrs) {
  const int rank = x.GetRank();
  absl::InlinedVector<int64_t, 4> axes;
  if (auto array = attrs.GetIntegerArray("axes")) {
    axes = *std::move(array);
  } else if (auto axis = attrs.GetInteger("axes")) {
    axes = {*axis};
  }
  ReducePlan plan;
  plan.reduced.assign(rank, axes.empty());
  if (axes.empty() && attrs.GetInteger("noop_with_empty_axes").value_or(0)) {
    plan.noop = true;
    plan.result.assign(x.GetDimensions().begin(), x.GetDimensions().end());
    return plan;
  }
  for (int64_t axis : axes) {
    if (axis < -rank || axis >= rank) {
      return OpError(
          op, absl::StrCat("axis ", axis, " is out of range for rank ", rank));
    }
    const int64_t d = axis < 0 ? axis + rank : axis;
    if (plan.reduced[d]) {
      return OpError(op, absl::StrCat("axis ", axis, " is repeated"));
    }
    plan.reduced[d] = true;
  }
  const bool keepdims = attrs.GetInteger("keepdims").value_or(1) != 0;
  for (int d = 0; d < rank; ++d) {
    if (!plan.reduced[d]) {
      plan.result.push_back(x.GetDimensionSize(d));
    } else if (keepdims) {
      plan.result.push_back(1);
    }
  }
  return plan;
}

template <ReduceKind kKind>
absl::Status ReduceMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  const absl::string_view op = ReduceName(kKind);
  if (absl::Status status = CheckCounts(op, args, results, 1, 1);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<ReducePlan> plan = PlanReduce(op, args[0].shape, attrs);
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(args[0].dtype, plan->result);
  return absl::OkStatus();
}

// The input collapsed into alternating runs of kept and reduced dimensions
// (size-1 dimensions are either), e.g. [K, R, K]; the last run is the
// contiguous inner loop. out_strides: each run's stride in the result (0
// for reduced runs).
struct ReduceLayout {
  Dims sizes, out_strides;
  absl::InlinedVector<bool, 6> reduced;
  int64_t rows;
};

ReduceLayout LayOutReduce(const TensorShape& x, const ReducePlan& plan) {
  ReduceLayout layout;
  for (int d = 0; d < x.GetRank(); ++d) {
    const int64_t size = x.GetDimensionSize(d);
    if (size == 1) continue;
    if (!layout.reduced.empty() && layout.reduced.back() == plan.reduced[d]) {
      layout.sizes.back() *= size;
    } else {
      layout.sizes.push_back(size);
      layout.reduced.push_back(plan.reduced[d]);
    }
  }
  if (layout.sizes.empty()) {
    layout.sizes.push_back(1);
    layout.reduced.push_back(false);
  }
  const int rank = layout.sizes.size();
  layout.out_strides.assign(rank, 0);
  int64_t stride = 1;
  for (int d = rank - 1; d >= 0; --d) {
    if (!layout.reduced[d]) {
      layout.out_strides[d] = stride;
      stride *= layout.sizes[d];
    }
  }
  layout.rows = x.GetNumElements() / layout.sizes.back();
  return layout;
}

// Combines every element of `in` into its result's accumulator in `acc`
// (which holds the identity); `shift`: log_sum_exp's per-result max.
template <ReduceKind kKind>
void ReduceInto(const float* in, const ReduceLayout& layout,
                ReduceAcc<kKind>* acc, const float* shift) {
  using Acc = ReduceAcc<kKind>;
  constexpr bool kShifted = kKind == ReduceKind::kLogSumExp;
  const int rank = layout.sizes.size();
  const int64_t inner = layout.sizes[rank - 1];
  const bool inner_reduced = layout.reduced[rank - 1];
  Dims index(rank - 1, 0);
  int64_t out_offset = 0;
  for (int64_t row = 0; row < layout.rows; ++row) {
    const float* src = in + row * inner;
    Acc* dst = acc + out_offset;
    if (inner_reduced) {
      const float s = kShifted ? shift[out_offset] : 0.0f;
      dst[0] = ReduceCombine<kKind>(dst[0], RowReduce<kKind>(src, inner, s));
    } else if constexpr (kShifted) {
      const float* s = shift + out_offset;
      ForRow(dst, inner, [&](int64_t j) {
        return ReduceCombine<kKind>(dst[j], ReduceMap<kKind>(src[j], s[j]));
      });
    } else {
      ForRow(dst, inner, [&](int64_t j) {
        return ReduceCombine<kKind>(dst[j], ReduceMap<kKind>(src[j], 0.0f));
      });
    }
    // Next row: an odometer over the outer runs.
    for (int d = rank - 2; d >= 0; --d) {
      out_offset += layout.out_strides[d];
      if (++index[d] < layout.sizes[d]) break;
      out_offset -= layout.out_strides[d] * index[d];
      index[d] = 0;
    }
  }
}

template <ReduceKind kKind>
void Reduce(OpInvocation& invocation) {
  if (RefuseHalf(invocation, ReduceName(kKind))) return;
  const absl::string_view op = ReduceName(kKind);
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  absl::StatusOr<ReducePlan> plan = PlanReduce(op, x.shape(), invocation.attrs);
  if (!plan.ok()) return FailAll(invocation, op, plan.status().message());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, op, invocation.result_metadata[0]);
  if (!result) return;
  const float* in = x.elements<float>().data();
  float* out = result->elements<float>().data();
  const int64_t in_count = x.shape().GetNumElements();
  const int64_t out_count = result->shape().GetNumElements();
  if (plan->noop) {
    // Reducing each element alone: itself, mapped and finished (|x| for
    // l1 and l2, x * x for sum_square, log x for log_sum), as ONNX's
    // reference reduces over no axes.
    constexpr bool kItself =
        kKind == ReduceKind::kMean || kKind == ReduceKind::kSum ||
        kKind == ReduceKind::kMax || kKind == ReduceKind::kMin ||
        kKind == ReduceKind::kProd || kKind == ReduceKind::kLogSumExp;
    if constexpr (kItself) {
      if (in_count > 0) std::memcpy(out, in, in_count * sizeof(float));
    } else {
      ForRow(out, in_count, [&](int64_t i) {
        return ReduceFinish<kKind>(ReduceMap<kKind>(in[i], 0.0f), 1.0, 0.0f);
      });
    }
    invocation.results[0] = std::move(result);
    return;
  }
  if (in_count == 0) {
    // Reducing nothing: the identity, finished (0; 1 for prod, +inf for
    // min, -inf for max, log_sum and log_sum_exp), and NaN for a mean.
    std::fill_n(out, out_count,
                kKind == ReduceKind::kMean
                    ? std::numeric_limits<float>::quiet_NaN()
                    : ReduceFinish<kKind>(ReduceIdentity<kKind>(), 1.0, 0.0f));
    invocation.results[0] = std::move(result);
    return;
  }
  const ReduceLayout layout = LayOutReduce(x.shape(), *plan);
  // log_sum_exp subtracts each result's max (0 where it is not finite:
  // all -inf, or an inf), so exp neither overflows nor underflows to 0.
  std::vector<float> shifts;
  if constexpr (kKind == ReduceKind::kLogSumExp) {
    shifts.assign(out_count, ReduceIdentity<ReduceKind::kMax>());
    ReduceInto<ReduceKind::kMax>(in, layout, shifts.data(), nullptr);
    for (float& shift : shifts) {
      if (!std::isfinite(shift)) shift = 0.0f;
    }
  }
  if constexpr (kReduceInFloat<kKind>) {
    std::fill_n(out, out_count, ReduceIdentity<kKind>());
    ReduceInto<kKind>(in, layout, out, nullptr);
  } else {
    std::vector<double> acc(out_count, ReduceIdentity<kKind>());
    ReduceInto<kKind>(in, layout, acc.data(), shifts.data());
    const double factor = kKind == ReduceKind::kMean
                              ? static_cast<double>(out_count) / in_count
                              : 1.0;
    if constexpr (kKind == ReduceKind::kLogSumExp) {
      ForRow(out, out_count, [&](int64_t i) {
        return ReduceFinish<kKind>(acc[i], factor, shifts[i]);
      });
    } else {
      ForRow(out, out_count, [&](int64_t i) {
        return ReduceFinish<kKind>(acc[i], factor, 0.0f);
      });
    }
  }
  invocation.results[0] = std::move(result);
}

//===--- nn.gemm ----------------------------------------------------------===//

// ONNX Gemm: Y = alpha * A' * B' + beta * C, A' = transA ? A^T : A
// ([M, K]), B' = transB ? B^T : B ([K, N]), C unidirectionally broadcast
// to [M, N].
struct GemmPlan {
  bool trans_a, trans_b;
  int64_t m, k, n;
};

absl::StatusOr<GemmPlan> PlanGemm(ArgumentMetadata args, const OpAttrs& attrs) {
  constexpr absl::string_view kOp = "nn.gemm";
  const TensorShape& a = args[0].shape;
  const TensorShape& b = args[1].shape;
  if (a.GetRank() != 2 || b.GetRank() != 2) {
    return OpError(
        kOp, absl::StrCat("A and B must have rank 2, got ", a.DebugString(),
                          " and ", b.DebugString()));
  }
  const int64_t trans_a = attrs.GetInteger("transA").value_or(0);
  const int64_t trans_b = attrs.GetInteger("transB").value_or(0);
  if ((trans_a != 0 && trans_a != 1) || (trans_b != 0 && trans_b != 1)) {
    return OpError(kOp, "transA and transB must be 0 or 1");
  }
  GemmPlan plan{trans_a == 1, trans_b == 1, a.GetDimensionSize(trans_a),
                a.GetDimensionSize(1 - trans_a),
                b.GetDimensionSize(1 - trans_b)};
  if (b.GetDimensionSize(trans_b) != plan.k) {
    return OpError(kOp,
                   absl::StrCat("inner dimensions differ: A ", a.DebugString(),
                                " (transA ", trans_a, ") x B ", b.DebugString(),
                                " (transB ", trans_b, ")"));
  }
  if (args.size() == 3) {
    const TensorShape& c = args[2].shape;
    const TensorShape out({plan.m, plan.n});
    absl::StatusOr<TensorShape> shape = BroadcastShapes(kOp, c, out);
    if (!shape.ok() || *shape != out) {
      return OpError(
          kOp, absl::StrCat("C ", c.DebugString(), " does not broadcast to ",
                            out.DebugString()));
    }
  }
  return plan;
}

absl::Status GemmMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                          absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.gemm";
  if (absl::Status status = CheckCounts(kOp, args, results, 2, 3);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<GemmPlan> plan = PlanGemm(args, attrs);
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(args[0].dtype, {plan->m, plan->n});
  return absl::OkStatus();
}

// A [rows, cols] operand stored row-major as given (`transposed`: stored as
// [cols, rows]); a transpose is a stride swap, not a copy.
memory::desc MatrixF32(int64_t rows, int64_t cols, bool transposed) {
  const memory::dims strides =
      transposed ? memory::dims{1, rows} : memory::dims{cols, 1};
  return memory::desc({rows, cols}, memory::data_type::f32, strides);
}

// A Gemm by constant weights (a model's fully connected layer, B read-only):
// oneDNN computes from B in the layout it prefers, reordered once, and adds
// a bias C of [N] or [1, N] itself (ConstantWeightsMatmul).
// Whether `invocation` is such a Gemm: alpha 1, B read-only, and no C or a
// C of [N] or [1, N] with beta 1 (a bias).
bool IsConstantGemm(const OpInvocation& invocation, const GemmPlan& plan,
                    float alpha, float beta) {
  const auto& b = static_cast<const DenseHostTensor&>(invocation.argument(1));
  if (alpha != 1.0f || b.buffer() == nullptr || !b.buffer()->IsReadOnly()) {
    return false;
  }
  if (invocation.arguments.size() < 3) return true;
  const TensorShape& c = invocation.argument(2).metadata().shape;
  return beta == 1.0f && ((c.GetRank() == 1 && c.GetDimensionSize(0) ==
                                                   plan.n) ||
                          (c.GetRank() == 2 && c.GetDimensionSize(0) == 1 &&
                           c.GetDimensionSize(1) == plan.n));
}

void GemmByConstantWeights(OpInvocation& invocation, const GemmPlan& plan,
                           AsyncValueRef<DenseHostTensor> result) {
  const auto& b = static_cast<const DenseHostTensor&>(invocation.argument(1));
  const int64_t m = plan.m, k = plan.k, n = plan.n;
  const bool has_bias = invocation.arguments.size() == 3;
  const bool trans_a = plan.trans_a && m > 1 && k > 1;
  const bool trans_b = plan.trans_b && k > 1 && n > 1;
  RunPrimitive(invocation, "nn.gemm", result.CopyRef(), [&] {
    return ConstantWeightsMatmul(
        absl::StrCat("gemm|", m, "x", k, "x", n, "|", trans_a, trans_b,
                     has_bias),
        MatrixF32(m, k, trans_a), MatrixF32(k, n, trans_b),
        MatrixF32(m, n, false), PrimitiveAttr(), Data(invocation, 0), b,
        has_bias ? Data(invocation, 2) : nullptr, result->data());
  });
}

void Gemm(OpInvocation& invocation) {
  if (RefuseHalf(invocation, "nn.gemm")) return;
  constexpr absl::string_view kOp = "nn.gemm";
  const MetadataPointers metadata = ArgumentMetadataOf(invocation);
  absl::StatusOr<GemmPlan> plan =
      PlanGemm(ArgumentMetadata(metadata), invocation.attrs);
  if (!plan.ok()) return FailAll(invocation, kOp, plan.status().message());
  const float alpha = FloatAttr(invocation.attrs, "alpha", 1.0f);
  const float beta = FloatAttr(invocation.attrs, "beta", 1.0f);
  const bool has_c = invocation.arguments.size() == 3;
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kOp, invocation.result_metadata[0]);
  if (!result) return;
  const int64_t m = plan->m, k = plan->k, n = plan->n;
  float* y = result->elements<float>().data();
  if (m * n == 0) {
    invocation.results[0] = std::move(result);
    return;
  }
  if (k > 0 && IsConstantGemm(invocation, *plan, alpha, beta)) {
    return GemmByConstantWeights(invocation, *plan, std::move(result));
  }
  // Y starts as beta * C (broadcast), which oneDNN's sum post-op adds to
  // alpha * A' * B'.
  if (has_c) {
    const TensorShape& c_shape = invocation.argument(2).metadata().shape;
    const Dims strides = BroadcastStrides(c_shape, TensorShape({m, n}));
    const float* c = Data(invocation, 2);
    for (int64_t i = 0; i < m; ++i) {
      const float* c_row = c + i * strides[0];
      float* y_row = y + i * n;
      if (strides[1] == 1) {
        ForRow(y_row, n, [&](int64_t j) { return beta * c_row[j]; });
      } else {
        std::fill_n(y_row, n, beta * c_row[0]);
      }
    }
  } else if (k == 0) {
    std::fill_n(y, m * n, 0.0f);
  }
  if (k == 0) {  // A sum over nothing: Y is beta * C.
    invocation.results[0] = std::move(result);
    return;
  }
  RunPrimitive(invocation, kOp, result.CopyRef(), [&] {
    // A dimension of 1 reads the same memory either way; dense strides
    // keep oneDNN's plain-layout checks simple.
    memory::desc a_md = MatrixF32(m, k, plan->trans_a && m > 1 && k > 1);
    memory::desc b_md = MatrixF32(k, n, plan->trans_b && k > 1 && n > 1);
    memory::desc y_md = MatrixF32(m, n, false);
    dnnl::primitive matmul = CachedPrimitive(
        absl::StrCat(m, "x", k, "x", n, "|", plan->trans_a && m > 1 && k > 1,
                     plan->trans_b && k > 1 && n > 1, "|",
                     absl::bit_cast<uint32_t>(alpha), "|", has_c),
        [&] {
          dnnl::primitive_attr attr = PrimitiveAttr();
          if (alpha != 1.0f) attr.set_output_scales(0, {alpha});
          if (has_c) {
            dnnl::post_ops post_ops;
            post_ops.append_sum(1.0f);
            attr.set_post_ops(post_ops);
          }
          return dnnl::primitive(dnnl::matmul(dnnl::matmul::primitive_desc(
              dnnl::matmul::desc(a_md, b_md, y_md), attr, CpuEngine())));
        });
    PrimitiveArgs args = {{DNNL_ARG_SRC, Wrap(a_md, Data(invocation, 0))},
                          {DNNL_ARG_WEIGHTS, Wrap(b_md, Data(invocation, 1))},
                          {DNNL_ARG_DST, Wrap(y_md, y)}};
    return PrimitiveStep{matmul, std::move(args)};
  });
}

}  // namespace

void RegisterNormalizationOps(OpRegistry& registry) {
  registry.AddOp("nn.batch_normalization", BatchNormMetadata);
  registry.AddDispatch("nn.batch_normalization", "cpu", BatchNorm);
  registry.AddOp("nn.instance_normalization", InstanceNormMetadata);
  registry.AddDispatch("nn.instance_normalization", "cpu", InstanceNorm);
  registry.AddOp("nn.layer_normalization", LayerNormMetadata);
  registry.AddDispatch("nn.layer_normalization", "cpu", LayerNorm);
  registry.AddOp("nn.reduce_mean", ReduceMetadata<ReduceKind::kMean>);
  registry.AddDispatch("nn.reduce_mean", "cpu", Reduce<ReduceKind::kMean>);
  registry.AddOp("nn.reduce_sum", ReduceMetadata<ReduceKind::kSum>);
  registry.AddDispatch("nn.reduce_sum", "cpu", Reduce<ReduceKind::kSum>);
  registry.AddOp("nn.reduce_max", ReduceMetadata<ReduceKind::kMax>);
  registry.AddDispatch("nn.reduce_max", "cpu", Reduce<ReduceKind::kMax>);
#define NORM_OPS_REGISTER_REDUCE(KIND)                    \
  registry.AddOp(ReduceName(KIND), ReduceMetadata<KIND>); \
  registry.AddDispatch(ReduceName(KIND), "cpu", Reduce<KIND>)
  NORM_OPS_REGISTER_REDUCE(ReduceKind::kMin);
  NORM_OPS_REGISTER_REDUCE(ReduceKind::kProd);
  NORM_OPS_REGISTER_REDUCE(ReduceKind::kL1);
  NORM_OPS_REGISTER_REDUCE(ReduceKind::kL2);
  NORM_OPS_REGISTER_REDUCE(ReduceKind::kSumSquare);
  NORM_OPS_REGISTER_REDUCE(ReduceKind::kLogSum);
  NORM_OPS_REGISTER_REDUCE(ReduceKind::kLogSumExp);
#undef NORM_OPS_REGISTER_REDUCE
  registry.AddOp("nn.gemm", GemmMetadata);
  registry.AddDispatch("nn.gemm", "cpu", Gemm);
}

}  // namespace asyncrt::nn
