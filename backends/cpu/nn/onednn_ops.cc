// The heavy nn.* ops on oneDNN: nn.matmul and nn.conv (pooling is in
// onednn_pool.cc, nn.conv_transpose in onednn_conv_transpose.cc).
//
// Primitives are made once per configuration (ConfigCache) and constant
// weights reordered once into the layouts they prefer; a program's
// convolution site keeps its plan, primitives and constant operands for
// its next calls (PreparedConv, OpSiteCache). Results may stay in oneDNN's
// layouts between consecutive ops (OneDnnTensor, docs/nn_ops.md).
//
// Threading: Debian's oneDNN runs its primitives on OpenMP; see
// docs/nn_ops.md for how the runtime keeps its workers and OpenMP teams
// from oversubscribing the machine.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/base/casts.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/tensor/conversion_registry.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_tensor.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {
namespace {

using dnnl::memory;

memory::dims ToDnnl(absl::Span<const int64_t> dims) {
  return memory::dims(dims.begin(), dims.end());
}

// What the model compiler fuses after a convolution or a matmul, run as
// oneDNN post-ops in this order: `sum` (the op's last operand, of the
// result's shape: a residual connection) is added to the result, then
// `activation` is applied: "relu", "leaky_relu" (slope
// `activation_alpha`), "clip" (between `activation_alpha` and
// `activation_beta`), "gelu" (with erf), "hard_swish", "sigmoid", "tanh",
// "swish" (x * sigmoid(x), SiLU) or "linear" (`activation_alpha` * x +
// `activation_beta`, a division by a constant).
struct PostOps {
  bool has_sum = false;
  std::optional<dnnl::algorithm> activation;
  float alpha = 0, beta = 0;

  // PrimitiveAttr() with these post-ops.
  dnnl::primitive_attr Attr() const {
    dnnl::primitive_attr attr = PrimitiveAttr();
    dnnl::post_ops post_ops;
    if (has_sum) post_ops.append_sum(1.0f);
    if (activation) post_ops.append_eltwise(1.0f, *activation, alpha, beta);
    attr.set_post_ops(post_ops);
    return attr;
  }
  // Tells configurations apart in a primitive cache key (the parameters
  // by their bits: printed, nearby values would share an entry).
  std::string Key() const {
    return absl::StrCat(has_sum, "|",
                        activation ? static_cast<int>(*activation) : -1, "|",
                        absl::bit_cast<uint32_t>(alpha), "|",
                        absl::bit_cast<uint32_t>(beta));
  }
};

// The fused activation of `attrs` into `post_ops`, or an error for an
// unknown one.
absl::Status PlanActivation(absl::string_view op, const OpAttrs& attrs,
                            PostOps& post_ops) {
  std::optional<absl::string_view> name = attrs.GetString("activation");
  if (!name) return absl::OkStatus();
  if (*name == "relu") {
    post_ops.activation = dnnl::algorithm::eltwise_relu;
  } else if (*name == "leaky_relu") {
    post_ops.activation = dnnl::algorithm::eltwise_relu;
    post_ops.alpha = FloatAttr(attrs, "activation_alpha", 0.01f);
  } else if (*name == "clip") {
    post_ops.activation = dnnl::algorithm::eltwise_clip;
    post_ops.alpha = FloatAttr(attrs, "activation_alpha",
                               -std::numeric_limits<float>::max());
    post_ops.beta =
        FloatAttr(attrs, "activation_beta", std::numeric_limits<float>::max());
  } else if (*name == "gelu") {
    post_ops.activation = dnnl::algorithm::eltwise_gelu_erf;
  } else if (*name == "hard_swish") {  // x * clip(x / 6 + 1/2, 0, 1)
    post_ops.activation = dnnl::algorithm::eltwise_hardswish;
  } else if (*name == "sigmoid") {
    post_ops.activation = dnnl::algorithm::eltwise_logistic;
  } else if (*name == "tanh") {
    post_ops.activation = dnnl::algorithm::eltwise_tanh;
  } else if (*name == "swish") {  // x * sigmoid(alpha * x), alpha 1
    post_ops.activation = dnnl::algorithm::eltwise_swish;
    post_ops.alpha = 1.0f;
  } else if (*name == "linear") {
    post_ops.activation = dnnl::algorithm::eltwise_linear;
    post_ops.alpha = FloatAttr(attrs, "activation_alpha", 1.0f);
    post_ops.beta = FloatAttr(attrs, "activation_beta", 0.0f);
  } else {
    return OpError(op, absl::StrCat("unknown activation '", *name, "'"));
  }
  return absl::OkStatus();
}

//===--- nn.matmul --------------------------------------------------------===//

// numpy matmul: [..., M, K] x [..., K, N] -> [..., M, N], batch dimensions
// broadcast; a rank-1 operand is a row (left) or a column (right) vector
// whose dimension is dropped from the result.
struct MatmulDims {
  memory::dims a, b, out;  // Equal rank >= 2, as oneDNN takes them.
  Dims result;             // The op's result shape.
};

absl::StatusOr<MatmulDims> MatmulShape(absl::string_view op,
                                       const TensorShape& a,
                                       const TensorShape& b) {
  if (a.GetRank() == 0 || b.GetRank() == 0) {
    return OpError(op, "operands must have rank >= 1");
  }
  memory::dims da = ToDnnl(a.GetDimensions());
  memory::dims db = ToDnnl(b.GetDimensions());
  const bool a_vector = da.size() == 1, b_vector = db.size() == 1;
  if (a_vector) da.insert(da.begin(), 1);
  if (b_vector) db.push_back(1);
  if (da.back() != db[db.size() - 2]) {
    return OpError(op, absl::StrCat("inner dimensions differ: ",
                                    a.DebugString(), " x ", b.DebugString()));
  }
  const size_t rank = std::max(da.size(), db.size());
  if (rank > DNNL_MAX_NDIMS) return OpError(op, "rank is too large");
  da.insert(da.begin(), rank - da.size(), 1);
  db.insert(db.begin(), rank - db.size(), 1);
  MatmulDims dims{da, db, memory::dims(rank), {}};
  for (size_t i = 0; i + 2 < rank; ++i) {
    if (da[i] != db[i] && da[i] != 1 && db[i] != 1) {
      return OpError(op, absl::StrCat("batch dimensions do not broadcast: ",
                                      a.DebugString(), " x ", b.DebugString()));
    }
    dims.out[i] = da[i] == 1 ? db[i] : da[i];
  }
  dims.out[rank - 2] = da[rank - 2];
  dims.out[rank - 1] = db[rank - 1];
  // The padded rank is 2 + the larger batch rank, so every batch dimension
  // of `out` is a result dimension; a vector operand's 1 is not.
  dims.result.assign(dims.out.begin(), dims.out.end() - 2);
  if (!a_vector) dims.result.push_back(dims.out[rank - 2]);
  if (!b_vector) dims.result.push_back(dims.out[rank - 1]);
  return dims;
}

absl::Status MatmulMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.matmul";
  if (args.size() < 2 || args.size() > 4 || results.size() != 1) {
    return OpError(kOp,
                   "takes a, b, an optional bias and an optional sum, and has "
                   "1 result");
  }
  if (absl::Status status = RequireFloat(kOp, args); !status.ok()) {
    return status;
  }
  absl::StatusOr<MatmulDims> dims =
      MatmulShape(kOp, args[0].shape, args[1].shape);
  if (!dims.ok()) return dims.status();
  // A fused bias (the model compiler's -nn-fuse): one value per column.
  if (args.size() >= 3 &&
      (args[2].shape.GetRank() != 1 ||
       args[2].shape.GetDimensionSize(0) != dims->out.back())) {
    return OpError(kOp, absl::StrCat("bias ", args[2].shape.DebugString(),
                                     " is not [", dims->out.back(), "]"));
  }
  // A fused sum (a residual connection) has the result's shape.
  if (args.size() == 4 &&
      args[3].shape.GetDimensions() != absl::MakeConstSpan(dims->result)) {
    return OpError(kOp, absl::StrCat("sum ", args[3].shape.DebugString(),
                                     " is not the result's shape [",
                                     absl::StrJoin(dims->result, ", "), "]"));
  }
  PostOps post_ops;
  if (absl::Status status = PlanActivation(kOp, attrs, post_ops);
      !status.ok()) {
    return status;
  }
  results[0] = TensorMetadata(args[0].dtype, dims->result);
  return absl::OkStatus();
}

// A matmul by constant weights [K, N] (a linear layer): the batch
// dimensions of `a` fold into its rows (ConstantWeightsMatmul).
void MatmulConstantWeights(OpInvocation& invocation, const DenseHostTensor& a,
                           const DenseHostTensor& b, const MatmulDims& dims,
                           const PostOps& post_ops,
                           AsyncValueRef<DenseHostTensor> result) {
  const int64_t k = dims.b[dims.b.size() - 2], n = dims.b.back();
  const int64_t rows = a.shape().GetNumElements() / k;
  RunPrimitive(invocation, "nn.matmul", result.CopyRef(), [&] {
    const bool has_bias = invocation.arguments.size() >= 3;
    return ConstantWeightsMatmul(
        absl::StrCat("matmul|", rows, "x", k, "x", n, "|", has_bias, "|",
                     post_ops.Key()),
        PlainF32({rows, k}), PlainF32({k, n}), PlainF32({rows, n}),
        post_ops.Attr(), a.data(), b,
        has_bias ? static_cast<const DenseHostTensor&>(invocation.argument(2))
                       .data()
                 : nullptr,
        result->data());
  });
}

// K == 0: a sum over nothing, plus the bias and the fused post-ops. The
// result already holds the fused sum, if any (Matmul put it there).
void MatmulOverNothing(OpInvocation& invocation, const PostOps& post_ops,
                       AsyncValueRef<DenseHostTensor> result) {
  float* out = result->elements<float>().data();
  const int64_t count = result->shape().GetNumElements();
  if (!post_ops.has_sum) std::fill_n(out, count, 0.0f);
  if (count == 0) {
    invocation.results[0] = std::move(result);
    return;
  }
  if (invocation.arguments.size() >= 3) {
    const auto& bias =
        static_cast<const DenseHostTensor&>(invocation.argument(2));
    const float* values = bias.elements<float>().data();
    const int64_t columns = bias.shape().GetNumElements();
    for (int64_t i = 0; i < count; ++i) out[i] += values[i % columns];
  }
  RunPrimitive(invocation, "nn.matmul", result.CopyRef(), [&] {
    std::vector<PrimitiveStep> steps;
    if (post_ops.activation) {
      memory::desc md = PlainF32({count});
      steps.push_back(
          {dnnl::eltwise_forward(dnnl::eltwise_forward::primitive_desc(
               dnnl::eltwise_forward::desc(dnnl::prop_kind::forward_inference,
                                           *post_ops.activation, md,
                                           post_ops.alpha, post_ops.beta),
               PrimitiveAttr(), CpuEngine())),
           {{DNNL_ARG_SRC, Wrap(md, out)}, {DNNL_ARG_DST, Wrap(md, out)}}});
    }
    return steps;
  });
}

void Matmul(OpInvocation& invocation) {
  if (RefuseHalf(invocation, "nn.matmul")) return;
  constexpr absl::string_view kOp = "nn.matmul";
  const auto& a = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const auto& b = static_cast<const DenseHostTensor&>(invocation.argument(1));
  MatmulDims dims = *MatmulShape(kOp, a.shape(), b.shape());
  PostOps post_ops;
  post_ops.has_sum = invocation.arguments.size() == 4;
  if (absl::Status status = PlanActivation(kOp, invocation.attrs, post_ops);
      !status.ok()) {
    return FailAll(invocation, kOp, status.message());
  }
  // A fused sum nobody else holds becomes the result in place; else the
  // sum post-op adds what the result holds before: a copy of the sum.
  AsyncValueRef<DenseHostTensor> result =
      PrimitiveResult(invocation, kOp, post_ops.has_sum ? 0b1000 : 0);
  if (!result) return;
  if (post_ops.has_sum) {
    const auto& sum =
        static_cast<const DenseHostTensor&>(invocation.argument(3));
    if (sum.data() != result->data()) {
      std::memcpy(result->data(), sum.data(), sum.DataSizeInBytes());
    }
  }
  if (a.shape().GetNumElements() == 0 || b.shape().GetNumElements() == 0) {
    return MatmulOverNothing(invocation, post_ops, std::move(result));
  }
  if (b.buffer() && b.buffer()->IsReadOnly() && dims.b.size() >= 2 &&
      std::all_of(dims.b.begin(), dims.b.end() - 2,
                  [](int64_t d) { return d == 1; })) {
    return MatmulConstantWeights(invocation, a, b, dims, post_ops,
                                 std::move(result));
  }
  RunPrimitive(invocation, kOp, result.CopyRef(), [&] {
    memory::desc a_md = PlainF32(dims.a), b_md = PlainF32(dims.b),
                 out_md = PlainF32(dims.out);
    const bool has_bias = invocation.arguments.size() >= 3;
    // The bias broadcasts over every dimension but the last.
    memory::dims bias_dims(dims.out.size(), 1);
    bias_dims.back() = dims.out.back();
    memory::desc bias_md = PlainF32(bias_dims);
    dnnl::primitive matmul = CachedPrimitive(
        absl::StrCat(DimsKey(dims.a), "|", DimsKey(dims.b), "|", has_bias,
                     "|", post_ops.Key()),
        [&] {
          return dnnl::primitive(dnnl::matmul(dnnl::matmul::primitive_desc(
              has_bias ? dnnl::matmul::desc(a_md, b_md, bias_md, out_md)
                       : dnnl::matmul::desc(a_md, b_md, out_md),
              post_ops.Attr(), CpuEngine())));
        });
    PrimitiveArgs args = {{DNNL_ARG_SRC, Wrap(a_md, a.data())},
                          {DNNL_ARG_WEIGHTS, Wrap(b_md, b.data())},
                          {DNNL_ARG_DST, Wrap(out_md, result->data())}};
    if (has_bias) {
      args.emplace_back(DNNL_ARG_BIAS,
                        Wrap(bias_md, static_cast<const DenseHostTensor&>(
                                          invocation.argument(2))
                                          .data()));
    }
    return PrimitiveStep{matmul, std::move(args)};
  });
}

// nn.conv(x, w[, bias[, sum]]): ONNX Conv. w is M x C/group x kernel...
// Fused post-ops as PostOps says.
// `algorithm` is "auto" (the default: Winograd where ConvAlgorithm finds
// it faster) or "direct"; `compute_layout = "blocked"` (set by
// -nn-assign-layouts) asks for channel-blocked layouts (ConvLayout).
struct ConvPlan : PostOps {
  Window window;
  int64_t group;
  Dims result;
  bool allow_winograd = true;
  bool blocked_layout = false;
};

// Whether the string attribute `name` is `value`: false when it is "auto"
// or absent, an error naming `op` when it is anything else.
absl::StatusOr<bool> AutoOr(absl::string_view op, const OpAttrs& attrs,
                            absl::string_view name, absl::string_view value) {
  std::optional<absl::string_view> given = attrs.GetString(name);
  if (!given || *given == "auto") return false;
  if (*given == value) return true;
  return OpError(op, absl::StrCat("unknown ", name, " \"", *given,
                                  "\" (auto, ", value, ")"));
}

absl::StatusOr<ConvPlan> PlanConv(ArgumentMetadata args, const OpAttrs& attrs) {
  constexpr absl::string_view kOp = "nn.conv";
  if (args.size() < 2 || args.size() > 4) {
    return OpError(kOp, "takes x, w, an optional bias and an optional sum");
  }
  if (absl::Status status = CheckConvOperands(kOp, args); !status.ok()) {
    return status;
  }
  const TensorShape& x = args[0].shape;
  const TensorShape& w = args[1].shape;
  const int64_t group = attrs.GetInteger("group").value_or(1);
  const int64_t channels = x.GetDimensionSize(1);
  const int64_t filters = w.GetDimensionSize(0);
  if (group < 1 || channels % group != 0 || filters % group != 0 ||
      w.GetDimensionSize(1) * group != channels) {
    return OpError(kOp, absl::StrCat("input channels ", channels, ", weights ",
                                     w.DebugString(), " and group ", group,
                                     " do not agree"));
  }
  if (args.size() >= 3 && (args[2].shape.GetRank() != 1 ||
                           args[2].shape.GetDimensionSize(0) != filters)) {
    return OpError(kOp, absl::StrCat("bias ", args[2].shape.DebugString(),
                                     " is not [", filters, "]"));
  }
  const auto spatial = x.GetDimensions().subspan(2);
  Dims kernel(w.GetDimensions().begin() + 2, w.GetDimensions().end());
  if (auto shape = attrs.GetIntegerArray("kernel_shape");
      shape && Dims(shape->begin(), shape->end()) != kernel) {
    return OpError(kOp, "kernel_shape does not match the weights");
  }
  absl::StatusOr<Window> window = MakeWindow(kOp, attrs, spatial, kernel);
  if (!window.ok()) return window.status();
  Dims result = {x.GetDimensionSize(0), filters};
  // A 1-D window carries a leading spatial 1 that is not in the result.
  const size_t skip = spatial.size() == 1 ? 1 : 0;
  for (size_t i = skip; i < window->output.size(); ++i) {
    result.push_back(window->output[i]);
  }
  ConvPlan plan;
  plan.window = *std::move(window);
  plan.group = group;
  plan.result = std::move(result);
  if (args.size() == 4) {
    if (args[3].shape.GetDimensions() != absl::MakeConstSpan(plan.result)) {
      return OpError(kOp, absl::StrCat("sum ", args[3].shape.DebugString(),
                                       " is not the result's shape [",
                                       absl::StrJoin(plan.result, ", "), "]"));
    }
    plan.has_sum = true;
  }
  if (absl::Status status = PlanActivation(kOp, attrs, plan); !status.ok()) {
    return status;
  }
  absl::StatusOr<bool> direct = AutoOr(kOp, attrs, "algorithm", "direct");
  if (!direct.ok()) return direct.status();
  plan.allow_winograd = !*direct;
  absl::StatusOr<bool> blocked =
      AutoOr(kOp, attrs, "compute_layout", "blocked");
  if (!blocked.ok()) return blocked.status();
  plan.blocked_layout = *blocked;
  return plan;
}

absl::Status ConvMetadataChannelsFirst(ArgumentMetadata args,
                                       const OpAttrs& attrs,
                                       absl::Span<TensorMetadata> results) {
  if (results.size() != 1) return OpError("nn.conv", "has 1 result");
  absl::StatusOr<ConvPlan> plan = PlanConv(args, attrs);
  if (!plan.ok()) return plan.status();
  if (auto layout = WantsOneDnnResult("nn.conv", attrs); !layout.ok()) {
    return layout.status();
  }
  results[0] = TensorMetadata(args[0].dtype, plan->result);
  return absl::OkStatus();
}

absl::Status ConvMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                          absl::Span<TensorMetadata> results) {
  return ChannelsLastOrFirstMetadata("nn.conv", args, attrs, results,
                                     ConvMetadataChannelsFirst);
}

// A convolution's primitives for one configuration. oneDNN chooses the
// layouts it computes fastest in (blocked by 8 or 16 channels); operands
// in plain layouts are reordered into them and the result back, which
// costs far less than oneDNN's generic code for plain layouts (4x slower
// for depthwise).
struct ConvPrimitives {
  memory::desc x_md, w_md, bias_md, out_md;  // Plain, as the tensors are.
  dnnl::convolution_forward::primitive_desc pd;
  // pd's layouts, queried once (each query copies a descriptor).
  memory::desc src_md, weights_md, dst_md;
  dnnl::convolution_forward primitive;
  std::optional<dnnl::reorder> src_reorder, weights_reorder, dst_reorder;
  // A fused sum in a plain result's layout into the primitive's dst.
  std::optional<dnnl::reorder> sum_reorder;
};

ConfigCache<ConvPrimitives>& ConvCache() {
  static auto* cache = new ConfigCache<ConvPrimitives>(1024);
  return *cache;
}

// The layout a convolution computes `dims` (N x C x H x W) in: nChw16c
// when `blocked` on AVX-512 for 16 channels or more (padded up to a
// multiple of 16); else oneDNN's choice. oneDNN alone picks nhwc;
// but its Winograd kernels take only nChw16c, its blocked depthwise and
// few-channel 1x1 kernels are faster (nn_layout.cc), and a chain held in
// one layout needs no reorder between its ops.
memory::desc ConvLayout(const memory::dims& dims, bool blocked) {
  if (blocked && OneDnnHasAvx512() && dims.size() == 4 && dims[1] >= 16) {
    return memory::desc(dims, memory::data_type::f32,
                        memory::format_tag::nChw16c);
  }
  return memory::desc(dims, memory::data_type::f32, memory::format_tag::any);
}

// The algorithm of a convolution: Winograd (F(2x2, 3x3) or F(4x4, 3x3),
// oneDNN picks: 2.25-4x fewer multiplications; about twice as fast as the
// direct kernels for ResNet's 3x3 layers at batch 1 on AVX-512, within
// 1e-6 of them on its outputs) for
// an ungrouped, undilated 3x3 convolution with stride 1 over channels in
// multiples of 16, where this machine's oneDNN has the kernels; else direct.
dnnl::algorithm ConvAlgorithm(const memory::dims& x_dims,
                              const memory::dims& w_dims,
                              const ConvPlan& plan) {
  const bool winograd =
      plan.allow_winograd && OneDnnHasAvx512() && plan.group == 1 &&
      w_dims.size() == 4 && w_dims[2] == 3 && w_dims[3] == 3 &&
      x_dims[1] % 16 == 0 && w_dims[0] % 16 == 0 &&
      absl::c_all_of(plan.window.strides, [](int64_t s) { return s == 1; }) &&
      absl::c_all_of(plan.window.dilations, [](int64_t d) { return d == 0; });
  return winograd ? dnnl::algorithm::convolution_winograd
                  : dnnl::algorithm::convolution_direct;
}

ConvPrimitives MakeConvPrimitives(const memory::dims& x_dims,
                                  const memory::dims& w_logical_dims,
                                  const memory::dims& out_dims,
                                  const ConvPlan& plan, bool has_bias) {
  ConvPrimitives conv;
  conv.x_md = PlainF32(x_dims);
  memory::dims w_dims = w_logical_dims;
  const int64_t filters = w_dims[0];
  if (plan.group > 1) {
    // oneDNN's grouped weights: G x M/G x C/G x kernel.
    w_dims[0] /= plan.group;
    w_dims.insert(w_dims.begin(), plan.group);
  }
  conv.w_md = PlainF32(w_dims);
  conv.out_md = PlainF32(out_dims);
  if (has_bias) conv.bias_md = PlainF32({filters});
  auto any = [](const memory::desc& md) {
    return memory::desc(md.dims(), memory::data_type::f32,
                        memory::format_tag::any);
  };
  dnnl::primitive_attr attr = plan.Attr();
  // Blocked layouts as the plan asks, for ungrouped and depthwise
  // convolutions (other groups may not fill whole 16-channel blocks).
  const bool blocked =
      plan.blocked_layout && (plan.group == 1 || plan.group == x_dims[1]);
  auto describe = [&](dnnl::algorithm algorithm, bool blocked) {
    return dnnl::convolution_forward::primitive_desc(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference, algorithm,
            ConvLayout(x_dims, blocked), any(conv.w_md), conv.bias_md,
            ConvLayout(out_dims, blocked), plan.window.strides,
            plan.window.dilations, plan.window.pad_begin, plan.window.pad_end),
        attr, CpuEngine());
  };
  // In order of preference; the next when oneDNN has no kernel for one
  // (Winograd: some paddings and post-ops) or only its reference code
  // (blocked layouts for some shapes: many times slower than nhwc).
  const dnnl::algorithm algorithm = ConvAlgorithm(x_dims, w_dims, plan);
  const std::pair<dnnl::algorithm, bool> choices[] = {
      {algorithm, blocked},
      {dnnl::algorithm::convolution_direct, blocked},
      {dnnl::algorithm::convolution_direct, false}};
  for (size_t i = 0; i < std::size(choices); ++i) {
    const bool last = i + 1 == std::size(choices);
    try {
      conv.pd = describe(choices[i].first, choices[i].second);
    } catch (const dnnl::error&) {
      if (last) throw;
      continue;
    }
    if (last || !absl::StartsWith(conv.pd.impl_info_str(), "ref")) break;
  }
  conv.primitive = dnnl::convolution_forward(conv.pd);
  conv.src_md = conv.pd.src_desc();
  conv.weights_md = conv.pd.weights_desc();
  conv.dst_md = conv.pd.dst_desc();
  conv.src_reorder = ReorderIfNeeded(conv.x_md, conv.src_md);
  conv.weights_reorder = ReorderIfNeeded(conv.w_md, conv.weights_md);
  conv.dst_reorder = ReorderIfNeeded(conv.dst_md, conv.out_md);
  if (plan.has_sum) {
    conv.sum_reorder = ReorderIfNeeded(conv.out_md, conv.dst_md);
  }
  return conv;
}

// Steps that bring `given` into the layout `wanted`: none when it is
// already there, else a reorder into a new buffer (`cached` when the
// layouts are the ones it was made for).
memory InLayout(std::vector<PrimitiveStep>& steps, const OneDnnOperand& given,
                const memory::desc& wanted, const memory::desc& cached_from,
                const std::optional<dnnl::reorder>& cached) {
  memory source = Wrap(given.desc, given.data);
  if (given.desc == wanted) return source;
  memory copy(wanted, CpuEngine());
  dnnl::reorder reorder = cached && given.desc == cached_from
                              ? *cached
                              : *ReorderIfNeeded(given.desc, wanted);
  steps.push_back({reorder, {{DNNL_ARG_FROM, source}, {DNNL_ARG_TO, copy}}});
  return copy;
}

// Puts `sum` into `dst` (the sum post-op adds dst's contents): nothing if
// dst already holds it, a copy in the same layout, else a reorder.
void PlaceSum(std::vector<PrimitiveStep>& steps, const OneDnnOperand& sum,
              const memory& dst, const ConvPrimitives& conv) {
  void* dst_data = dst.get_data_handle();
  if (sum.data == dst_data) return;
  if (sum.desc == dst.get_desc()) {
    std::memcpy(dst_data, sum.data, dst.get_desc().get_size());
    return;
  }
  dnnl::reorder reorder = conv.sum_reorder && sum.desc == conv.out_md
                              ? *conv.sum_reorder
                              : *ReorderIfNeeded(sum.desc, dst.get_desc());
  steps.push_back(
      {reorder, {{DNNL_ARG_FROM, Wrap(sum.desc, sum.data)}, {DNNL_ARG_TO, dst}}});
}

// What a convolution needs besides its call's arguments: the plan, the
// primitives and, when the weights and bias are read-only buffers (a
// model's constants), those operands in the primitive's layouts. Made per
// call by PrepareConv; a program's op site keeps the one of its first call
// (OpSiteCache) and takes it again for calls whose input has the same
// layout and whose weights and bias are the same buffers, without the
// plan, the cache keys and their lookups.
struct PreparedConv {
  ConvPlan plan;
  bool onednn_result = false;
  std::shared_ptr<const ConvPrimitives> conv;
  // What the site's calls must match.
  memory::desc x_desc;  // The input's layout and dimensions.
  Dims w_dims;
  // Set only for read-only weights and bias: held, so that their addresses
  // name them while the site lives, and the operands made from them.
  RCReference<HostBuffer> weights_buffer, bias_buffer;
  std::shared_ptr<const ReorderedWeights> reordered;  // If reordered.
  memory weights;  // In conv->weights_md (over `reordered` if reordered).
  memory bias;     // conv->bias_md over bias_buffer, if any.

  bool constant_operands() const { return static_cast<bool>(weights_buffer); }
};

// The tag of PreparedConv entries in an OpSiteCache.
constexpr char kConvSiteTag = 0;

// The dense tensor argument `index` if it has a read-only buffer.
const DenseHostTensor* ReadOnlyDense(const OpInvocation& invocation,
                                     size_t index) {
  const Tensor& tensor = invocation.argument(index);
  if (tensor.tensor_type() != DenseHostTensorType()) return nullptr;
  const auto& dense = static_cast<const DenseHostTensor&>(tensor);
  return dense.buffer() && dense.buffer()->IsReadOnly() ? &dense : nullptr;
}

// The site's prepared convolution if this call may take it: the same input
// layout and dimensions, the same weights and bias buffers.
const PreparedConv* SitePreparedConv(const OpInvocation& invocation,
                                     const OneDnnOperand& src) {
  if (invocation.site_cache == nullptr) return nullptr;
  const PreparedConv* site =
      invocation.site_cache->Find<PreparedConv>(&kConvSiteTag);
  if (site == nullptr || !(site->x_desc == src.desc)) return nullptr;
  const DenseHostTensor* w = ReadOnlyDense(invocation, 1);
  if (w == nullptr || w->buffer().get() != site->weights_buffer.get() ||
      w->shape().GetDimensions() != absl::MakeConstSpan(site->w_dims)) {
    return nullptr;
  }
  const bool has_bias = invocation.arguments.size() >= 3;
  if (has_bias != static_cast<bool>(site->bias_buffer)) return nullptr;
  if (has_bias) {
    const DenseHostTensor* bias = ReadOnlyDense(invocation, 2);
    if (bias == nullptr || bias->buffer().get() != site->bias_buffer.get()) {
      return nullptr;
    }
  }
  return site;
}

// Prepares `prepared` for this call, and gives the site a copy when it may
// keep it (read-only weights and bias); false after FailAll.
bool PrepareConv(OpInvocation& invocation, const OneDnnOperand& src,
                 const memory::dims& x_dims, const DenseHostTensor& w,
                 const DenseHostTensor* bias, PreparedConv* prepared) {
  constexpr absl::string_view kOp = "nn.conv";
  const size_t num_args = invocation.arguments.size();
  const bool has_bias = bias != nullptr;
  const TensorMetadata* arg_metadata[4] = {};
  for (size_t i = 0; i < num_args; ++i) {
    arg_metadata[i] = &invocation.argument(i).metadata();
  }
  prepared->plan =
      *PlanConv(ArgumentMetadata(absl::MakeConstSpan(arg_metadata, num_args)),
                invocation.attrs);
  const ConvPlan& plan = prepared->plan;
  absl::StatusOr<bool> onednn_result = WantsOneDnnResult(kOp, invocation.attrs);
  if (!onednn_result.ok()) {
    FailAll(invocation, kOp, onednn_result.status().message());
    return false;
  }
  prepared->onednn_result = *onednn_result;
  const memory::dims out_dims = Spatial2d(plan.result);
  const std::string key = absl::StrCat(
      DimsKey(invocation.argument(0).shape().GetDimensions()), "|",
      DimsKey(w.shape().GetDimensions()), "|", has_bias, "|", plan.group, "|",
      DimsKey(plan.window.strides), "|", DimsKey(plan.window.dilations), "|",
      DimsKey(plan.window.pad_begin), "|", DimsKey(plan.window.pad_end), "|",
      plan.Key(), "|", plan.allow_winograd, "|", plan.blocked_layout);
  prepared->conv = ConvCache().GetOrCreate(key, [&] {
    return MakeConvPrimitives(x_dims, Spatial2d(w.shape().GetDimensions()),
                              out_dims, plan, has_bias);
  });
  // Constant weights are reordered into the primitive's layout once, not
  // per call; a site keeps them with the bias.
  const ConvPrimitives& conv = *prepared->conv;
  const bool constant =
      w.buffer() && w.buffer()->IsReadOnly() &&
      (!has_bias || (bias->buffer() && bias->buffer()->IsReadOnly()));
  if (!constant) return true;
  prepared->x_desc = src.desc;
  const auto w_dims = w.shape().GetDimensions();
  prepared->w_dims.assign(w_dims.begin(), w_dims.end());
  prepared->weights_buffer = w.buffer();
  if (conv.weights_reorder) {
    prepared->reordered = CachedReorderedWeights(
        key, *w.buffer(), w.buffer(), Wrap(conv.w_md, w.data()),
        conv.weights_md, *conv.weights_reorder);
    prepared->weights = prepared->reordered->weights;
  } else {
    prepared->weights = Wrap(conv.w_md, w.data());
  }
  if (has_bias) {
    prepared->bias_buffer = bias->buffer();
    prepared->bias = Wrap(conv.bias_md, bias->data());
  }
  if (invocation.site_cache != nullptr && invocation.site_cache->empty()) {
    invocation.site_cache->Set<PreparedConv>(
        &kConvSiteTag, std::make_shared<const PreparedConv>(*prepared));
  }
  return true;
}

void Conv(OpInvocation& invocation) {
  if (RefuseHalf(invocation, "nn.conv") ||
      CpuRefusesChannelsLast(invocation, "nn.conv")) {
    return;
  }
  constexpr absl::string_view kOp = "nn.conv";
  const size_t num_args = invocation.arguments.size();
  const bool has_bias = num_args >= 3;
  const bool has_sum = num_args == 4;
  const Tensor& x = invocation.argument(0);
  const memory::dims x_dims = Spatial2d(x.shape().GetDimensions());
  absl::StatusOr<OneDnnOperand> src_operand = GetOneDnnOperand(kOp, x, x_dims);
  if (!src_operand.ok()) {
    return FailAll(invocation, kOp, src_operand.status().message());
  }
  try {
    // The site's preparation, or this call's. Weights and bias are read as
    // plain tensors (converted if they are not dense); x and the sum may
    // come in oneDNN's layouts.
    std::vector<RCReference<AsyncValue>> converted;
    std::optional<PreparedConv> made;  // This call's, if not the site's.
    const PreparedConv* prepared = SitePreparedConv(invocation, *src_operand);
    const DenseHostTensor* w = nullptr;
    const DenseHostTensor* bias = nullptr;
    if (prepared == nullptr) {
      w = PlainArgument(invocation, kOp, 1, converted);
      if (!w) return;
      bias = has_bias ? PlainArgument(invocation, kOp, 2, converted) : nullptr;
      if (has_bias && !bias) return;
      if (!PrepareConv(invocation, *src_operand, x_dims, *w, bias,
                       &made.emplace())) {
        return;
      }
      prepared = &*made;
    }
    const ConvPlan& plan = prepared->plan;
    const ConvPrimitives& conv = *prepared->conv;
    const memory::dims out_dims = Spatial2d(plan.result);
    absl::StatusOr<OneDnnOperand> sum_operand =
        has_sum ? GetOneDnnOperand(kOp, invocation.argument(3), out_dims)
                : OneDnnOperand{};
    if (!sum_operand.ok()) {
      return FailAll(invocation, kOp, sum_operand.status().message());
    }
    // A plain result (also for an empty one: oneDNN takes no zero-sized
    // memory): a fused sum nobody else holds becomes it in place.
    AsyncValueRef<DenseHostTensor> plain_result;
    if (!prepared->onednn_result ||
        invocation.result_metadata[0].shape.GetNumElements() == 0) {
      plain_result =
          PrimitiveResult(invocation, kOp,
                          has_sum && invocation.argument(3).tensor_type() ==
                                         DenseHostTensorType()
                              ? 0b1000
                              : 0);
      if (!plain_result) return;
    }
    std::vector<PrimitiveStep> steps;
    memory src =
        InLayout(steps, *src_operand, conv.src_md, conv.x_md, conv.src_reorder);
    memory weights =
        prepared->constant_operands()
            ? prepared->weights
            : InLayout(steps, OneDnnOperand{conv.w_md, w->data()},
                       conv.weights_md, conv.w_md, conv.weights_reorder);
    RCReference<HostBuffer> onednn_buffer;
    memory dst, out;
    if (plain_result && has_sum && !conv.dst_reorder &&
        sum_operand->data == plain_result->data() &&
        sum_operand->desc != conv.out_md) {
      // The plan put the result over a sum in another layout.
      plain_result = DenseHostTensor::MakeUninitializedAsyncValue(
          invocation.result_metadata[0], *invocation.host()->allocator());
      if (!plain_result) {
        return FailAll(invocation, kOp, "cannot allocate the result");
      }
    }
    if (plain_result) {
      out = Wrap(conv.out_md, plain_result->data());
      dst = conv.dst_reorder ? memory(conv.dst_md, CpuEngine()) : out;
    } else {
      onednn_buffer =
          OneDnnResultBuffer(invocation, kOp, conv.dst_md, has_sum ? 3 : -1,
                             has_sum ? &*sum_operand : nullptr);
      if (!onednn_buffer) return;
      dst = Wrap(conv.dst_md, onednn_buffer->data());
    }
    if (has_sum) PlaceSum(steps, *sum_operand, dst, conv);
    PrimitiveArgs args = {
        {DNNL_ARG_SRC, src}, {DNNL_ARG_WEIGHTS, weights}, {DNNL_ARG_DST, dst}};
    if (has_bias) {
      args.emplace_back(DNNL_ARG_BIAS, prepared->constant_operands()
                                           ? prepared->bias
                                           : Wrap(conv.bias_md, bias->data()));
    }
    steps.push_back({conv.primitive, std::move(args)});
    if (plain_result && conv.dst_reorder) {
      steps.push_back(
          {*conv.dst_reorder, {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, out}}});
    }
    ExecutePrimitives(steps);
    SetResult(invocation, std::move(plain_result), conv.dst_md,
              std::move(onednn_buffer));
  } catch (const dnnl::error& error) {
    FailAll(invocation, kOp, absl::StrCat("oneDNN: ", error.what()));
  }
}

}  // namespace

void RegisterOneDnnOps(OpRegistry& registry) {
  registry.AddOp("nn.matmul", MatmulMetadata);
  registry.AddDispatch("nn.matmul", "cpu", Matmul);
  registry.AddOp("nn.conv", ConvMetadata);
  // Convolutions and pooling take and give OneDnnTensors too.
  RegisterOneDnnTensor();
  registry.AddDispatch("nn.conv", "cpu", Conv, kOpAcceptsRegisteredHost);
  RegisterConvTransposeOp(registry);
  RegisterPoolOps(registry);
  RegisterOneDnnMul(registry);
}

}  // namespace asyncrt::nn
