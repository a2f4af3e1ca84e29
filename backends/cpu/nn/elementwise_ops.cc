// Elementwise nn.* ops on the CPU: binary arithmetic with numpy
// broadcasting, activations and other unary functions, and softmax.
//
// Loops are written so that GCC vectorizes the contiguous inner dimension;
// broadcasting walks the outer dimensions once per row, not per element.
#include <algorithm>
#include <cmath>
#include <limits>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {
namespace {

//===--- Binary, broadcasting ---------------------------------------------===//

absl::Status BinaryMetadata(absl::string_view op, ArgumentMetadata args,
                            absl::Span<TensorMetadata> results) {
  if (args.size() != 2 || results.size() != 1) {
    return OpError(op, "takes 2 arguments and has 1 result");
  }
  if (absl::Status status = RequireF32(op, args); !status.ok()) return status;
  absl::StatusOr<TensorShape> shape =
      BroadcastShapes(op, args[0].shape, args[1].shape);
  if (!shape.ok()) return shape.status();
  results[0] = TensorMetadata(DType::kF32, *std::move(shape));
  return absl::OkStatus();
}

// out[i] = f(a[i], b[i]) over `out_shape`, a and b read through their
// broadcast strides. `out` may alias an argument of the result's shape.
template <typename F>
void BroadcastLoop(const float* a, const Dims& stride_a, const float* b,
                   const Dims& stride_b, float* out,
                   const TensorShape& out_shape, F f) {
  const int rank = out_shape.GetRank();
  const int64_t count = out_shape.GetNumElements();
  if (count == 0) return;
  if (rank == 0) {
    out[0] = f(a[0], b[0]);
    return;
  }
  const int64_t inner = out_shape.GetDimensionSize(rank - 1);
  const int64_t step_a = stride_a[rank - 1];
  const int64_t step_b = stride_b[rank - 1];
  Dims index(rank - 1, 0);
  int64_t offset_a = 0, offset_b = 0;
  for (int64_t row = 0; row < count / inner; ++row) {
    const float* ra = a + offset_a;
    const float* rb = b + offset_b;
    float* ro = out + row * inner;
    if (step_a == 1 && step_b == 1) {
      for (int64_t j = 0; j < inner; ++j) ro[j] = f(ra[j], rb[j]);
    } else if (step_a == 1) {
      const float vb = rb[0];
      for (int64_t j = 0; j < inner; ++j) ro[j] = f(ra[j], vb);
    } else if (step_b == 1) {
      const float va = ra[0];
      for (int64_t j = 0; j < inner; ++j) ro[j] = f(va, rb[j]);
    } else {
      std::fill_n(ro, inner, f(ra[0], rb[0]));
    }
    // Next row: an odometer over the outer dimensions.
    for (int d = rank - 2; d >= 0; --d) {
      offset_a += stride_a[d];
      offset_b += stride_b[d];
      if (++index[d] < out_shape.GetDimensionSize(d)) break;
      offset_a -= stride_a[d] * index[d];
      offset_b -= stride_b[d] * index[d];
      index[d] = 0;
    }
  }
}

template <typename F>
void Binary(OpInvocation& invocation, absl::string_view op, F f) {
  const auto& a = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const auto& b = static_cast<const DenseHostTensor&>(invocation.argument(1));
  const TensorMetadata& metadata = invocation.result_metadata[0];
  // Either argument of the result's shape may take the result in place.
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, op, metadata, 0b11);
  if (!result) return;
  BroadcastLoop(
      a.elements<float>().data(), BroadcastStrides(a.shape(), metadata.shape),
      b.elements<float>().data(), BroadcastStrides(b.shape(), metadata.shape),
      result->elements<float>().data(), metadata.shape, f);
  invocation.results[0] = std::move(result);
}

//===--- Unary ------------------------------------------------------------===//

absl::Status UnaryMetadata(absl::string_view op, ArgumentMetadata args,
                           absl::Span<TensorMetadata> results) {
  if (args.size() != 1 || results.size() != 1) {
    return OpError(op, "takes 1 argument and has 1 result");
  }
  if (absl::Status status = RequireF32(op, args); !status.ok()) return status;
  results[0] = args[0];
  return absl::OkStatus();
}

template <typename F>
void Unary(OpInvocation& invocation, absl::string_view op, F f) {
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, op, invocation.result_metadata[0], 0b1);
  if (!result) return;
  const float* in = x.elements<float>().data();
  float* out = result->elements<float>().data();
  const int64_t count = x.shape().GetNumElements();
  for (int64_t i = 0; i < count; ++i) out[i] = f(in[i]);
  invocation.results[0] = std::move(result);
}

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

//===--- Softmax ----------------------------------------------------------===//

absl::Status SoftmaxMetadata(absl::string_view op, ArgumentMetadata args,
                             const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  if (absl::Status status = UnaryMetadata(op, args, results); !status.ok()) {
    return status;
  }
  return NormalizeAxis(op, attrs.GetInteger("axis").value_or(-1),
                       args[0].shape.GetRank())
      .status();
}

// Softmax (or log-softmax) along one axis (ONNX opset 13 semantics), on
// oneDNN.
template <bool kLog>
void Softmax(OpInvocation& invocation, absl::string_view op) {
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const TensorShape& shape = x.shape();
  const int axis = *NormalizeAxis(
      op, invocation.attrs.GetInteger("axis").value_or(-1), shape.GetRank());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, op, invocation.result_metadata[0], 0b1);
  if (!result) return;
  int64_t outer = 1, inner = 1;
  for (int d = 0; d < axis; ++d) outer *= shape.GetDimensionSize(d);
  for (int d = axis + 1; d < shape.GetRank(); ++d) {
    inner *= shape.GetDimensionSize(d);
  }
  const int64_t n = shape.GetRank() == 0 ? 1 : shape.GetDimensionSize(axis);
  const float* in = x.elements<float>().data();
  float* out = result->elements<float>().data();
  if (shape.GetRank() > 0 && shape.GetNumElements() > 0) {
    // oneDNN's softmax: vectorized exp, and the whole OpenMP team under the
    // threading policy (one thread's loop was 5% of BERT).
    RunPrimitive(invocation, op, result.CopyRef(), [&] {
      auto dims = shape.GetDimensions();
      const dnnl::memory::desc md =
          PlainF32(dnnl::memory::dims(dims.begin(), dims.end()));
      dnnl::primitive primitive =
          kLog ? dnnl::primitive(dnnl::logsoftmax_forward(
                     dnnl::logsoftmax_forward::primitive_desc(
                         dnnl::logsoftmax_forward::desc(
                             dnnl::prop_kind::forward_inference, md, axis),
                         PrimitiveAttr(), CpuEngine())))
               : dnnl::primitive(dnnl::softmax_forward(
                     dnnl::softmax_forward::primitive_desc(
                         dnnl::softmax_forward::desc(
                             dnnl::prop_kind::forward_inference, md, axis),
                         PrimitiveAttr(), CpuEngine())));
      return PrimitiveStep{primitive,
                           {{DNNL_ARG_SRC, Wrap(md, in)},
                            {DNNL_ARG_DST, Wrap(md, out)}}};
    });
    return;
  }
  // A scalar (a softmax over one element) or an empty tensor.
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t i = 0; i < inner; ++i) {
      const float* row = in + o * n * inner + i;
      float* row_out = out + o * n * inner + i;
      float max = -std::numeric_limits<float>::infinity();
      for (int64_t k = 0; k < n; ++k) max = std::max(max, row[k * inner]);
      float sum = 0;
      for (int64_t k = 0; k < n; ++k) {
        const float shifted = row[k * inner] - max;
        row_out[k * inner] = kLog ? shifted : std::exp(shifted);
        sum += kLog ? std::exp(shifted) : row_out[k * inner];
      }
      if (kLog) {
        const float log_sum = std::log(sum);
        for (int64_t k = 0; k < n; ++k) row_out[k * inner] -= log_sum;
      } else {
        const float scale = 1.0f / sum;
        for (int64_t k = 0; k < n; ++k) row_out[k * inner] *= scale;
      }
    }
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

// Registration: one shape function and one CPU dispatch function per op.
// Lambdas without captures convert to the registry's function pointers.
void RegisterElementwiseOps(OpRegistry& registry) {
#define ASYNCRT_NN_BINARY(NAME, EXPR)                                      \
  registry.AddOp("nn." NAME, [](ArgumentMetadata args, const OpAttrs&,     \
                                absl::Span<TensorMetadata> results) {      \
    return BinaryMetadata("nn." NAME, args, results);                      \
  });                                                                      \
  registry.AddDispatch("nn." NAME, "cpu", [](OpInvocation& invocation) {   \
    Binary(invocation, "nn." NAME, [](float a, float b) { return EXPR; }); \
  })
  ASYNCRT_NN_BINARY("add", a + b);
  ASYNCRT_NN_BINARY("sub", a - b);
  ASYNCRT_NN_BINARY("mul", a * b);
  ASYNCRT_NN_BINARY("div", a / b);
  // x ** 2 (layer norms written out as ops) without powf.
  ASYNCRT_NN_BINARY("pow", b == 2.0f ? a * a : std::pow(a, b));
  ASYNCRT_NN_BINARY("max", std::max(a, b));
  ASYNCRT_NN_BINARY("min", std::min(a, b));
#undef ASYNCRT_NN_BINARY

  // Unary ops: SETUP runs once per call with `attrs` in scope.
#define ASYNCRT_NN_UNARY_WITH(NAME, SETUP, EXPR)                           \
  registry.AddOp("nn." NAME, [](ArgumentMetadata args, const OpAttrs&,     \
                                absl::Span<TensorMetadata> results) {      \
    return UnaryMetadata("nn." NAME, args, results);                       \
  });                                                                      \
  registry.AddDispatch("nn." NAME, "cpu", [](OpInvocation& invocation) {   \
    [[maybe_unused]] const OpAttrs& attrs = invocation.attrs;              \
    SETUP;                                                                 \
    Unary(invocation, "nn." NAME, [&](float x) -> float { return EXPR; }); \
  })
#define ASYNCRT_NN_UNARY(NAME, EXPR) ASYNCRT_NN_UNARY_WITH(NAME, (void)0, EXPR)
  ASYNCRT_NN_UNARY("relu", x > 0 ? x : 0.0f);
  ASYNCRT_NN_UNARY("sigmoid", Sigmoid(x));
  ASYNCRT_NN_UNARY("tanh", std::tanh(x));
  ASYNCRT_NN_UNARY("exp", std::exp(x));
  ASYNCRT_NN_UNARY("log", std::log(x));
  ASYNCRT_NN_UNARY("sqrt", std::sqrt(x));
  ASYNCRT_NN_UNARY("neg", -x);
  ASYNCRT_NN_UNARY("abs", std::fabs(x));
  ASYNCRT_NN_UNARY("erf", std::erf(x));
  // Exact (erf) GELU, as torch.nn.GELU() and ONNX Gelu by default.
  ASYNCRT_NN_UNARY("gelu", 0.5f * x * (1.0f + std::erf(x * 0.70710678f)));
  // Ops with attributes read them once per call, before the loop.
  ASYNCRT_NN_UNARY_WITH("leaky_relu",
                        const float alpha = FloatAttr(attrs, "alpha", 0.01f),
                        x >= 0 ? x : x * alpha);
  // ONNX Clip with its bounds as attributes (the importer folds constant
  // bound inputs); Relu6 is clip(0, 6).
  ASYNCRT_NN_UNARY_WITH(
      "clip", const float low =
                  FloatAttr(attrs, "min", -std::numeric_limits<float>::max());
      const float high =
          FloatAttr(attrs, "max", std::numeric_limits<float>::max()),
      std::min(std::max(x, low), high));
  ASYNCRT_NN_UNARY_WITH("hard_sigmoid",
                        const float alpha = FloatAttr(attrs, "alpha", 0.2f);
                        const float beta = FloatAttr(attrs, "beta", 0.5f),
                        std::min(std::max(alpha * x + beta, 0.0f), 1.0f));
  ASYNCRT_NN_UNARY("hard_swish",
                   x * std::clamp(x * (1.0f / 6.0f) + 0.5f, 0.0f, 1.0f));
  ASYNCRT_NN_UNARY("identity", x);
#undef ASYNCRT_NN_UNARY
#undef ASYNCRT_NN_UNARY_WITH

  registry.AddOp("nn.softmax", [](ArgumentMetadata args, const OpAttrs& attrs,
                                  absl::Span<TensorMetadata> results) {
    return SoftmaxMetadata("nn.softmax", args, attrs, results);
  });
  registry.AddDispatch("nn.softmax", "cpu", [](OpInvocation& invocation) {
    Softmax<false>(invocation, "nn.softmax");
  });
  registry.AddOp(
      "nn.log_softmax", [](ArgumentMetadata args, const OpAttrs& attrs,
                           absl::Span<TensorMetadata> results) {
        return SoftmaxMetadata("nn.log_softmax", args, attrs, results);
      });
  registry.AddDispatch("nn.log_softmax", "cpu", [](OpInvocation& invocation) {
    Softmax<true>(invocation, "nn.log_softmax");
  });
}

}  // namespace asyncrt::nn
