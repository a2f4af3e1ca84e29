// Elementwise nn.* ops on the CPU: binary arithmetic with numpy
// broadcasting, activations and other unary functions, and softmax.
//
// Loops are written so that GCC vectorizes the contiguous inner dimension;
// broadcasting walks the outer dimensions once per row, not per element.
#include <algorithm>
#include <array>
#include <cmath>
#include <functional>
#include <limits>
#include <type_traits>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/copy_util.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_util.h"
#include "backends/cpu/nn/vector_math.h"

namespace asyncrt::nn {
namespace {

//===--- Binary, broadcasting ---------------------------------------------===//

// What a binary op computes in: arithmetic keeps its arguments' dtype
// (integers, f32, f64), comparisons give bool, logical ops take bool.
enum class BinaryKind {
  kArithmetic,
  kFloat,
  kComparison,
  kEquality,
  kLogical,
  kUnsigned,  // The unsigned integers only (nn.bit_shift).
  kInteger,   // Signed and unsigned integers (the bitwise ops).
};

// The signed and unsigned integers (not bool).
bool IsInteger(DType dtype) {
  return IsRealNumber(dtype) && dtype != DType::kF32 && dtype != DType::kF64;
}

absl::Status BinaryMetadata(absl::string_view op, BinaryKind kind,
                            ArgumentMetadata args,
                            absl::Span<TensorMetadata> results) {
  if (args.size() != 2 || results.size() != 1) {
    return OpError(op, "takes 2 arguments and has 1 result");
  }
  const DType dtype = args[0].dtype;
  bool accepted = false;
  const char* accepts = "";
  switch (kind) {
    case BinaryKind::kFloat:
      accepted = dtype == DType::kF32;
      accepts = "f32 only";
      break;
    case BinaryKind::kArithmetic:
      // f16 and bf16 on devices that compute in them.
      accepted = IsRealNumber(dtype) || IsHalf(dtype);
      accepts = "integers, f32 and f64";
      break;
    case BinaryKind::kComparison:
      accepted = IsRealNumber(dtype);
      accepts = "integers, f32 and f64";
      break;
    case BinaryKind::kEquality:
      accepted = IsRealNumber(dtype) || dtype == DType::kI1;
      accepts = "bool, integers, f32 and f64";
      break;
    case BinaryKind::kLogical:
      accepted = dtype == DType::kI1;
      accepts = "bool only";
      break;
    case BinaryKind::kUnsigned:
      accepted = dtype == DType::kUI8 || dtype == DType::kUI16 ||
                 dtype == DType::kUI32 || dtype == DType::kUI64;
      accepts = "unsigned integers only";
      break;
    case BinaryKind::kInteger:
      accepted = IsInteger(dtype);
      accepts = "integers only";
      break;
  }
  if (!accepted) {
    return OpError(op, absl::StrCat("argument 0 is ", DTypeName(dtype),
                                    "; this op computes in ", accepts));
  }
  if (args[1].dtype != dtype) {
    return OpError(op, absl::StrCat("arguments are ", DTypeName(dtype), " and ",
                                    DTypeName(args[1].dtype),
                                    "; they must have one dtype"));
  }
  absl::StatusOr<TensorShape> shape =
      BroadcastShapes(op, args[0].shape, args[1].shape);
  if (!shape.ok()) return shape.status();
  const bool keeps_dtype =
      kind == BinaryKind::kArithmetic || kind == BinaryKind::kFloat ||
      kind == BinaryKind::kLogical || kind == BinaryKind::kUnsigned ||
      kind == BinaryKind::kInteger;
  results[0] =
      TensorMetadata(keeps_dtype ? dtype : DType::kI1, *std::move(shape));
  return absl::OkStatus();
}

// Elementwise ops over this many elements or more split them over the
// OpenMP team (ParallelRanges); smaller ones run inline.
constexpr int64_t kElementwiseGrain = 32 * 1024;

// out[j] = f(a[j * step_a], b[j * step_b]) for j < n: one row, each
// operand stepping by 1 or, broadcast, by 0.
template <typename T, typename R, typename F>
inline void BroadcastRow(const T* a, int64_t step_a, const T* b, int64_t step_b,
                         R* out, int64_t n, F f) {
  if (step_a == 1 && step_b == 1) {
    for (int64_t j = 0; j < n; ++j) out[j] = f(a[j], b[j]);
  } else if (step_a == 1) {
    const T vb = b[0];
    for (int64_t j = 0; j < n; ++j) out[j] = f(a[j], vb);
  } else if (step_b == 1) {
    const T va = a[0];
    for (int64_t j = 0; j < n; ++j) out[j] = f(va, b[j]);
  } else {
    std::fill_n(out, n, f(a[0], b[0]));
  }
}

// BroadcastLoop on one thread: the many small tensors of eager code take
// this loop, as it was before large ones were split (going through a row
// callback per part cost 12% on 1,024 floats).
template <typename T, typename R, typename F>
void BroadcastLoopSerial(const T* a, const Dims& stride_a, const T* b,
                         const Dims& stride_b, R* out,
                         const TensorShape& out_shape, F f) {
  const int rank = out_shape.GetRank();
  const int64_t count = out_shape.GetNumElements();
  const int64_t inner = out_shape.GetDimensionSize(rank - 1);
  const int64_t step_a = stride_a[rank - 1];
  const int64_t step_b = stride_b[rank - 1];
  Dims index(rank - 1, 0);
  int64_t offset_a = 0, offset_b = 0;
  for (int64_t row = 0; row < count / inner; ++row) {
    BroadcastRow(a + offset_a, step_a, b + offset_b, step_b, out + row * inner,
                 inner, f);
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

// out[i] = f(a[i], b[i]) over `out_shape`, a and b read through their
// broadcast strides. `out` may alias an argument of the result's shape.
template <typename T, typename R, typename F>
void BroadcastLoop(const T* a, const Dims& stride_a, const T* b,
                   const Dims& stride_b, R* out, const TensorShape& out_shape,
                   F f) {
  const int rank = out_shape.GetRank();
  const int64_t count = out_shape.GetNumElements();
  if (count == 0) return;
  if (rank == 0) {
    out[0] = f(a[0], b[0]);
    return;
  }
  if (count < 2 * kElementwiseGrain) {
    return BroadcastLoopSerial(a, stride_a, b, stride_b, out, out_shape, f);
  }
  const int64_t inner = out_shape.GetDimensionSize(rank - 1);
  const int64_t step_a = stride_a[rank - 1];
  const int64_t step_b = stride_b[rank - 1];
  const int64_t rows = count / inner;
  if (rows == 1) {  // One row: split it.
    ParallelRanges(inner, kElementwiseGrain, [&](int64_t j0, int64_t j1) {
      BroadcastRow(a + j0 * step_a, step_a, b + j0 * step_b, step_b, out + j0,
                   j1 - j0, f);
    });
    return;
  }
  const auto shape = out_shape.GetDimensions();
  const Dims dims(shape.begin(), shape.end());
  const std::array<Dims, 3> strides = {stride_a, stride_b, DenseStrides(dims)};
  ParallelRanges(rows, std::max<int64_t>(1, kElementwiseGrain / inner),
                 [&](int64_t begin, int64_t end) {
                   ForEachRowIn<3>(dims, strides, begin, end,
                                   [&](const std::array<int64_t, 3>& offset) {
                                     BroadcastRow(a + offset[0], step_a,
                                                  b + offset[1], step_b,
                                                  out + offset[2], inner, f);
                                   });
                 });
}

// The op `f` (a generic lambda) on arguments of type T, giving R.
template <typename T, typename R, typename F>
void BinaryAs(OpInvocation& invocation, absl::string_view op, F f) {
  const auto& a = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const auto& b = static_cast<const DenseHostTensor&>(invocation.argument(1));
  const TensorMetadata& metadata = invocation.result_metadata[0];
  // Either argument of the result's shape and dtype may take the result in
  // place.
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, op, metadata, 0b11);
  if (!result) return;
  BroadcastLoop(
      a.elements<T>().data(), BroadcastStrides(a.shape(), metadata.shape),
      b.elements<T>().data(), BroadcastStrides(b.shape(), metadata.shape),
      result->elements<R>().data(), metadata.shape, f);
  invocation.results[0] = std::move(result);
}

// -x; the most negative integer wraps to itself. Floats keep IEEE
// semantics (-(+0) is -0, which 0 - x would not give).
template <typename T>
T Negate(T x) {
  if constexpr (std::is_integral_v<T>) {
    return Wrapping(T{0}, x, std::minus<>());
  } else {
    return -x;
  }
}

// |x|, wrapping as Negate; |-0.0| is +0.
template <typename T>
T AbsoluteValue(T x) {
  if constexpr (std::is_integral_v<T>) {
    return x < 0 ? Negate(x) : x;
  } else {
    return std::fabs(x);
  }
}

// Integer division truncates toward zero (C, ONNX's reference); division
// by zero gives 0 and the one overflowing quotient wraps, instead of
// trapping.
template <typename T>
T Divide(T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return Wrapping(T{0}, a, std::minus<>());
    }
  }
  return a / b;
}

// ONNX Mod: with fmod = 0 the result takes the divisor's sign (Python's
// %), with fmod = 1 the dividend's (C's fmod). x mod 0 is 0 for integers,
// NaN for floats.
template <typename T>
T Modulo(T a, T b, bool fmod) {
  if constexpr (std::is_floating_point_v<T>) {
    const T r = std::fmod(a, b);
    if (fmod || r == 0 || (r < 0) == (b < 0)) return r;
    return r + b;
  } else {
    if (b == 0) return 0;
    if constexpr (std::is_signed_v<T>) {
      if (b == -1) return 0;
      const T r = a % b;
      if (fmod || r == 0 || (r < 0) == (b < 0)) return r;
      return r + b;
    } else {
      return a % b;
    }
  }
}

// Integer powers by squaring (wrapping); a negative exponent gives the
// integer part of the reciprocal. x ** 2 (layer norms written out as ops)
// without powf.
template <typename T>
T Power(T base, T exponent) {
  if constexpr (std::is_floating_point_v<T>) {
    return exponent == 2 ? base * base : std::pow(base, exponent);
  } else {
    if constexpr (std::is_signed_v<T>) {
      if (exponent < 0) {
        if (base == 1) return 1;
        if (base == -1) return (exponent & 1) ? -1 : 1;
        return 0;
      }
    }
    T result = 1;
    for (; exponent != 0; exponent >>= 1) {
      if (exponent & 1) result = Wrapping(result, base, std::multiplies<>());
      base = Wrapping(base, base, std::multiplies<>());
    }
    return result;
  }
}

// Arithmetic in the arguments' dtype; `f` is a generic lambda (T, T) -> T.
template <typename F>
void Arithmetic(OpInvocation& invocation, absl::string_view op, F f) {
  DispatchRealNumber(invocation.argument(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BinaryAs<T, T>(invocation, op, [&](T a, T b) -> T { return f(a, b); });
  });
}

// Arithmetic in an unsigned integer dtype; `f` is a generic lambda.
template <typename F>
void UnsignedArithmetic(OpInvocation& invocation, absl::string_view op, F f) {
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    BinaryAs<T, T>(invocation, op,
                   [&](T a, T b) -> T { return static_cast<T>(f(a, b)); });
  };
  switch (invocation.argument(0).dtype()) {
    case DType::kUI8:
      return run(TypeTag<uint8_t>{});
    case DType::kUI16:
      return run(TypeTag<uint16_t>{});
    case DType::kUI32:
      return run(TypeTag<uint32_t>{});
    default:
      return run(TypeTag<uint64_t>{});
  }
}

// Arithmetic in an integer dtype (signed or unsigned); `f` is a generic
// lambda (T, T) -> T.
template <typename F>
void IntegerArithmetic(OpInvocation& invocation, absl::string_view op, F f) {
  DispatchRealNumber(invocation.argument(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      BinaryAs<T, T>(invocation, op,
                     [&](T a, T b) -> T { return static_cast<T>(f(a, b)); });
    }
  });
}

// ONNX BitShift: a shifted by b bits (LEFT or RIGHT); by the type's width or
// more gives 0, as numpy's and ONNX's reference do for unsigned types.
template <typename T>
T Shift(T a, T b, bool left) {
  if (b >= static_cast<T>(sizeof(T) * 8)) return 0;
  return left ? static_cast<T>(a << b) : static_cast<T>(a >> b);
}

// A comparison of any real dtype (and bool for equality), giving bool.
template <typename F>
void Comparison(OpInvocation& invocation, absl::string_view op, F f) {
  if (invocation.argument(0).dtype() == DType::kI1) {
    BinaryAs<bool, bool>(invocation, op, f);
    return;
  }
  DispatchRealNumber(invocation.argument(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    BinaryAs<T, bool>(invocation, op, [&](T a, T b) { return f(a, b); });
  });
}

// x where x >= 0, else slope * x; the slope broadcasts to x (ONNX PRelu).
absl::Status PReluMetadata(ArgumentMetadata args,
                           absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.prelu";
  if (absl::Status status =
          BinaryMetadata(kOp, BinaryKind::kFloat, args, results);
      !status.ok()) {
    return status;
  }
  if (results[0].shape != args[0].shape) {
    return OpError(kOp, absl::StrCat("the slope ", args[1].shape.DebugString(),
                                     " does not broadcast to x ",
                                     args[0].shape.DebugString()));
  }
  return absl::OkStatus();
}

//===--- Unary ------------------------------------------------------------===//

// What a unary op takes and gives.
enum class UnaryKind {
  kFloat,      // f32 -> f32.
  kReal,       // integers, f32, f64 -> the same dtype.
  kLogical,    // bool -> bool.
  kPredicate,  // f32 -> bool.
  kInteger,    // integers -> the same dtype.
};

absl::Status UnaryMetadata(absl::string_view op, ArgumentMetadata args,
                           absl::Span<TensorMetadata> results,
                           UnaryKind kind = UnaryKind::kFloat) {
  if (args.size() != 1 || results.size() != 1) {
    return OpError(op, "takes 1 argument and has 1 result");
  }
  const DType dtype = args[0].dtype;
  if (kind == UnaryKind::kReal && !IsRealNumber(dtype) && !IsHalf(dtype)) {
    return OpError(op, absl::StrCat("argument 0 is ", DTypeName(dtype),
                                    "; this op computes in integers, f32 "
                                    "and f64"));
  }
  if (kind == UnaryKind::kInteger && !IsInteger(dtype)) {
    return OpError(op, absl::StrCat("argument 0 is ", DTypeName(dtype),
                                    "; this op computes in integers only"));
  }
  if (kind == UnaryKind::kLogical && dtype != DType::kI1) {
    return OpError(op, absl::StrCat("argument 0 is ", DTypeName(dtype),
                                    "; this op computes in bool only"));
  }
  if (kind == UnaryKind::kFloat) {
    if (absl::Status status = RequireFloat(op, args); !status.ok()) {
      return status;
    }
  }
  if (kind == UnaryKind::kPredicate) {
    if (absl::Status status = RequireF32(op, args); !status.ok()) {
      return status;
    }
  }
  results[0] = args[0];
  if (kind == UnaryKind::kPredicate) results[0].dtype = DType::kI1;
  return absl::OkStatus();
}

// x's elements through `ranges(in, out, begin, end)` into a new result: in
// one call when small (inlined: the plain loop), split over the team when
// large.
template <typename T, typename R, typename Ranges>
void UnaryOverRanges(OpInvocation& invocation, absl::string_view op,
                     Ranges ranges) {
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, op, invocation.result_metadata[0], 0b1);
  if (!result) return;
  const T* in = x.elements<T>().data();
  R* out = result->elements<R>().data();
  const int64_t count = x.shape().GetNumElements();
  if (count < 2 * kElementwiseGrain) {
    ranges(in, out, 0, count);
  } else {
    ParallelRanges(count, kElementwiseGrain, [&](int64_t begin, int64_t end) {
      ranges(in, out, begin, end);
    });
  }
  invocation.results[0] = std::move(result);
}

template <typename T, typename R, typename F>
void UnaryAs(OpInvocation& invocation, absl::string_view op, F f) {
  UnaryOverRanges<T, R>(invocation, op,
                        [&](const T* in, R* out, int64_t begin, int64_t end) {
                          for (int64_t i = begin; i < end; ++i)
                            out[i] = f(in[i]);
                        });
}

template <typename F>
void Unary(OpInvocation& invocation, absl::string_view op, F f) {
  UnaryAs<float, float>(invocation, op, f);
}

// A f32 op computed by vector_math.h's `kFunction`. `definition`, the
// op's per-element form (what the registration shows), is not called.
template <VectorFunction kFunction, typename F>
void UnaryVector(OpInvocation& invocation, absl::string_view op,
                 F /*definition*/) {
  UnaryOverRanges<float, float>(
      invocation, op,
      [&](const float* in, float* out, int64_t begin, int64_t end) {
        ApplyVectorFunction(kFunction, in + begin, out + begin, end - begin);
      });
}

// A unary op of an integer dtype; `f` is a generic lambda.
template <typename F>
void IntegerUnary(OpInvocation& invocation, absl::string_view op, F f) {
  DispatchRealNumber(invocation.argument(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_integral_v<T>) {
      UnaryAs<T, T>(invocation, op,
                    [&](T x) -> T { return static_cast<T>(f(x)); });
    }
  });
}

// A unary op of any real dtype; `f` is a generic lambda.
template <typename F>
void UnaryReal(OpInvocation& invocation, absl::string_view op, F f) {
  DispatchRealNumber(invocation.argument(0).dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    UnaryAs<T, T>(invocation, op, [&](T x) -> T { return f(x); });
  });
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
      dnnl::primitive primitive = CachedPrimitive(
          absl::StrCat(kLog, "|", absl::StrJoin(dims, "x"), "|", axis), [&] {
            return kLog ? dnnl::primitive(dnnl::logsoftmax_forward(
                              dnnl::logsoftmax_forward::primitive_desc(
                                  dnnl::logsoftmax_forward::desc(
                                      dnnl::prop_kind::forward_inference, md,
                                      axis),
                                  PrimitiveAttr(), CpuEngine())))
                        : dnnl::primitive(dnnl::softmax_forward(
                              dnnl::softmax_forward::primitive_desc(
                                  dnnl::softmax_forward::desc(
                                      dnnl::prop_kind::forward_inference, md,
                                      axis),
                                  PrimitiveAttr(), CpuEngine())));
          });
      return PrimitiveStep{
          primitive,
          {{DNNL_ARG_SRC, Wrap(md, in)}, {DNNL_ARG_DST, Wrap(md, out)}}};
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
  // Binary ops: SETUP runs once per call with `attrs` in scope; EXPR is
  // the body of a generic lambda of (a, b) and KIND's dispatcher picks
  // the element types.
#define ASYNCRT_NN_BINARY_WITH(NAME, KIND, DISPATCH, SETUP, EXPR)           \
  registry.AddOp("nn." NAME, [](ArgumentMetadata args, const OpAttrs&,      \
                                absl::Span<TensorMetadata> results) {       \
    return BinaryMetadata("nn." NAME, KIND, args, results);                 \
  });                                                                       \
  registry.AddDispatch("nn." NAME, "cpu", [](OpInvocation& invocation) {    \
    if (RefuseHalf(invocation, "nn." NAME)) return;                         \
    [[maybe_unused]] const OpAttrs& attrs = invocation.attrs;               \
    SETUP;                                                                  \
    DISPATCH(invocation, "nn." NAME, [&](auto a, auto b) { return EXPR; }); \
  })
#define ASYNCRT_NN_ARITHMETIC(NAME, EXPR)                                    \
  ASYNCRT_NN_BINARY_WITH(NAME, BinaryKind::kArithmetic, Arithmetic, (void)0, \
                         EXPR)
#define ASYNCRT_NN_COMPARISON(NAME, KIND, EXPR) \
  ASYNCRT_NN_BINARY_WITH(NAME, KIND, Comparison, (void)0, EXPR)
  // Integer arithmetic wraps; integer division truncates and gives 0 for
  // a zero divisor.
  ASYNCRT_NN_ARITHMETIC("add", Wrapping(a, b, std::plus<>()));
  ASYNCRT_NN_ARITHMETIC("sub", Wrapping(a, b, std::minus<>()));
  ASYNCRT_NN_ARITHMETIC("mul", Wrapping(a, b, std::multiplies<>()));
  ASYNCRT_NN_ARITHMETIC("div", Divide(a, b));
  ASYNCRT_NN_ARITHMETIC("pow", Power(a, b));
  ASYNCRT_NN_ARITHMETIC("max", std::max(a, b));
  ASYNCRT_NN_ARITHMETIC("min", std::min(a, b));
  ASYNCRT_NN_BINARY_WITH("mod", BinaryKind::kArithmetic, Arithmetic,
                         const bool fmod = attrs.GetInteger("fmod").value_or(0),
                         Modulo(a, b, fmod));
  ASYNCRT_NN_COMPARISON("equal", BinaryKind::kEquality, a == b);
  ASYNCRT_NN_COMPARISON("less", BinaryKind::kComparison, a < b);
  ASYNCRT_NN_COMPARISON("less_or_equal", BinaryKind::kComparison, a <= b);
  ASYNCRT_NN_COMPARISON("greater", BinaryKind::kComparison, a > b);
  ASYNCRT_NN_COMPARISON("greater_or_equal", BinaryKind::kComparison, a >= b);
  // `direction` LEFT or RIGHT (ONNX's BitShift); anything else is RIGHT.
  ASYNCRT_NN_BINARY_WITH(
      "bit_shift", BinaryKind::kUnsigned, UnsignedArithmetic,
      const bool left = attrs.GetString("direction").value_or("") == "LEFT",
      Shift(a, b, left));
  // ONNX BitwiseAnd, BitwiseOr, BitwiseXor (opset 18).
  ASYNCRT_NN_BINARY_WITH("bitwise_and", BinaryKind::kInteger, IntegerArithmetic,
                         (void)0, a & b);
  ASYNCRT_NN_BINARY_WITH("bitwise_or", BinaryKind::kInteger, IntegerArithmetic,
                         (void)0, a | b);
  ASYNCRT_NN_BINARY_WITH("bitwise_xor", BinaryKind::kInteger, IntegerArithmetic,
                         (void)0, a ^ b);
  ASYNCRT_NN_BINARY_WITH("and", BinaryKind::kLogical, (BinaryAs<bool, bool>),
                         (void)0, a && b);
  ASYNCRT_NN_BINARY_WITH("or", BinaryKind::kLogical, (BinaryAs<bool, bool>),
                         (void)0, a || b);
  ASYNCRT_NN_BINARY_WITH("xor", BinaryKind::kLogical, (BinaryAs<bool, bool>),
                         (void)0, a != b);
#undef ASYNCRT_NN_COMPARISON
#undef ASYNCRT_NN_ARITHMETIC
#undef ASYNCRT_NN_BINARY_WITH
  registry.AddOp("nn.prelu", [](ArgumentMetadata args, const OpAttrs&,
                                absl::Span<TensorMetadata> results) {
    return PReluMetadata(args, results);
  });
  registry.AddDispatch("nn.prelu", "cpu", [](OpInvocation& invocation) {
    BinaryAs<float, float>(invocation, "nn.prelu", [](float x, float slope) {
      return x >= 0 ? x : x * slope;
    });
  });

  // Unary ops: SETUP runs once per call with `attrs` in scope; KIND says
  // what they take and give (UnaryKind).
#define ASYNCRT_NN_UNARY_OF(NAME, KIND, DISPATCH, SETUP, EXPR)           \
  registry.AddOp("nn." NAME, [](ArgumentMetadata args, const OpAttrs&,   \
                                absl::Span<TensorMetadata> results) {    \
    return UnaryMetadata("nn." NAME, args, results, KIND);               \
  });                                                                    \
  registry.AddDispatch("nn." NAME, "cpu", [](OpInvocation& invocation) { \
    if (RefuseHalf(invocation, "nn." NAME)) return;                      \
    [[maybe_unused]] const OpAttrs& attrs = invocation.attrs;            \
    SETUP;                                                               \
    DISPATCH(invocation, "nn." NAME, [&](auto x) { return EXPR; });      \
  })
#define ASYNCRT_NN_UNARY_WITH(NAME, SETUP, EXPR) \
  ASYNCRT_NN_UNARY_OF(NAME, UnaryKind::kFloat, Unary, SETUP, EXPR)
#define ASYNCRT_NN_UNARY(NAME, EXPR) ASYNCRT_NN_UNARY_WITH(NAME, (void)0, EXPR)
  // f32 ops computed by vector_math.h's FUNCTION; EXPR is their definition.
#define ASYNCRT_NN_UNARY_VECTOR(NAME, FUNCTION, EXPR)                          \
  ASYNCRT_NN_UNARY_OF(NAME, UnaryKind::kFloat, UnaryVector<FUNCTION>, (void)0, \
                      EXPR)
  ASYNCRT_NN_UNARY("relu", x > 0 ? x : 0.0f);
  ASYNCRT_NN_UNARY("sigmoid", Sigmoid(x));
  ASYNCRT_NN_UNARY_VECTOR("tanh", VectorFunction::kTanh, std::tanh(x));
  ASYNCRT_NN_UNARY("exp", std::exp(x));
  ASYNCRT_NN_UNARY("log", std::log(x));
  ASYNCRT_NN_UNARY("sqrt", std::sqrt(x));
  // Neg, Abs and Sign also in integers (shape arithmetic), wrapping.
  ASYNCRT_NN_UNARY_OF("neg", UnaryKind::kReal, UnaryReal, (void)0, Negate(x));
  ASYNCRT_NN_UNARY_OF("abs", UnaryKind::kReal, UnaryReal, (void)0,
                      AbsoluteValue(x));
  ASYNCRT_NN_UNARY_OF("sign", UnaryKind::kReal, UnaryReal, (void)0,
                      static_cast<decltype(x)>((x > 0) - (x < 0)));
  ASYNCRT_NN_UNARY("floor", std::floor(x));
  ASYNCRT_NN_UNARY("ceil", std::ceil(x));
  // Halves to even, as ONNX Round.
  ASYNCRT_NN_UNARY("round", std::nearbyint(x));
  ASYNCRT_NN_UNARY("reciprocal", 1.0f / x);
  ASYNCRT_NN_UNARY("sin", std::sin(x));
  ASYNCRT_NN_UNARY("cos", std::cos(x));
  ASYNCRT_NN_UNARY("tan", std::tan(x));
  ASYNCRT_NN_UNARY("asin", std::asin(x));
  ASYNCRT_NN_UNARY("acos", std::acos(x));
  ASYNCRT_NN_UNARY("atan", std::atan(x));
  ASYNCRT_NN_UNARY("sinh", std::sinh(x));
  ASYNCRT_NN_UNARY("cosh", std::cosh(x));
  ASYNCRT_NN_UNARY("asinh", std::asinh(x));
  ASYNCRT_NN_UNARY("acosh", std::acosh(x));
  ASYNCRT_NN_UNARY("atanh", std::atanh(x));
  // log(1 + exp(x)) without overflow for large x.
  ASYNCRT_NN_UNARY("softplus", x > 20.0f ? x : std::log1p(std::exp(x)));
  ASYNCRT_NN_UNARY("softsign", x / (1.0f + std::fabs(x)));
  ASYNCRT_NN_UNARY("mish",
                   x * std::tanh(x > 20.0f ? x : std::log1p(std::exp(x))));
  ASYNCRT_NN_UNARY_OF("not", UnaryKind::kLogical, (UnaryAs<bool, bool>),
                      (void)0, !x);
  ASYNCRT_NN_UNARY_OF("bitwise_not", UnaryKind::kInteger, IntegerUnary, (void)0,
                      ~x);
  ASYNCRT_NN_UNARY_OF("is_nan", UnaryKind::kPredicate, (UnaryAs<float, bool>),
                      (void)0, std::isnan(x));
  ASYNCRT_NN_UNARY_OF(
      "is_inf", UnaryKind::kPredicate, (UnaryAs<float, bool>),
      const bool negative = attrs.GetInteger("detect_negative").value_or(1);
      const bool positive = attrs.GetInteger("detect_positive").value_or(1),
      std::isinf(x) && (x > 0 ? positive : negative));
  ASYNCRT_NN_UNARY_VECTOR("erf", VectorFunction::kErf, std::erf(x));
  // Exact (erf) GELU, as torch.nn.GELU() and ONNX Gelu by default.
  ASYNCRT_NN_UNARY_VECTOR("gelu", VectorFunction::kGelu,
                          0.5f * x * (1.0f + std::erf(x * 0.70710678f)));
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
  ASYNCRT_NN_UNARY_WITH("elu", const float alpha = FloatAttr(attrs, "alpha", 1),
                        x >= 0 ? x : alpha * std::expm1(x));
  ASYNCRT_NN_UNARY_WITH(
      "celu", const float alpha = FloatAttr(attrs, "alpha", 1),
      std::max(0.0f, x) + std::min(0.0f, alpha * std::expm1(x / alpha)));
  ASYNCRT_NN_UNARY_WITH(
      "selu", const float alpha = FloatAttr(attrs, "alpha", 1.67326319f);
      const float gamma = FloatAttr(attrs, "gamma", 1.05070102f),
      gamma * (x > 0 ? x : alpha * std::expm1(x)));
  ASYNCRT_NN_UNARY_WITH("thresholded_relu",
                        const float alpha = FloatAttr(attrs, "alpha", 1),
                        x > alpha ? x : 0.0f);
  // ONNX Shrink (soft shrinkage with bias = lambd, hard with bias = 0).
  ASYNCRT_NN_UNARY_WITH("shrink",
                        const float lambd = FloatAttr(attrs, "lambd", 0.5f);
                        const float bias = FloatAttr(attrs, "bias", 0.0f),
                        x < -lambd ? x + bias : (x > lambd ? x - bias : 0.0f));
  ASYNCRT_NN_UNARY("identity", x);
#undef ASYNCRT_NN_UNARY_VECTOR
#undef ASYNCRT_NN_UNARY
#undef ASYNCRT_NN_UNARY_WITH
#undef ASYNCRT_NN_UNARY_OF

  registry.AddOp("nn.softmax", [](ArgumentMetadata args, const OpAttrs& attrs,
                                  absl::Span<TensorMetadata> results) {
    return SoftmaxMetadata("nn.softmax", args, attrs, results);
  });
  registry.AddDispatch("nn.softmax", "cpu", [](OpInvocation& invocation) {
    if (RefuseHalf(invocation, "nn.softmax")) return;
    Softmax<false>(invocation, "nn.softmax");
  });
  registry.AddOp(
      "nn.log_softmax", [](ArgumentMetadata args, const OpAttrs& attrs,
                           absl::Span<TensorMetadata> results) {
        return SoftmaxMetadata("nn.log_softmax", args, attrs, results);
      });
  registry.AddDispatch("nn.log_softmax", "cpu", [](OpInvocation& invocation) {
    if (RefuseHalf(invocation, "nn.log_softmax")) return;
    Softmax<true>(invocation, "nn.log_softmax");
  });
}

}  // namespace asyncrt::nn
