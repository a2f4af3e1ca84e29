// Helpers shared by the CPU implementations of the nn.* ops: result
// allocation, errors that name the op, and numpy-style broadcasting.
//
// Internal to backends/cpu/nn; not installed.
#ifndef ASYNCRT_BACKENDS_CPU_NN_NN_UTIL_H_
#define ASYNCRT_BACKENDS_CPU_NN_NN_UTIL_H_

#include <cstdint>
#include <type_traits>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/dtype.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt::nn {

// f(a, b); integer arithmetic wraps around (two's complement) instead of
// overflowing, as numpy's and PyTorch's do. `f` is a generic function
// object (std::plus<>, ...).
template <typename T, typename F>
T Wrapping(T a, T b, F f) {
  if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(f(static_cast<U>(a), static_cast<U>(b)));
  } else {
    return f(a, b);
  }
}

using Dims = absl::InlinedVector<int64_t, 6>;

// Sets every result of `invocation` to an error "<op>: <message>".
void FailAll(OpInvocation& invocation, absl::string_view op,
             absl::string_view message);

// A new (or, for an argument in the mask `reusable_arguments` that nobody
// else sees, reused) dense tensor for `metadata`; null after FailAll on
// allocation failure.
AsyncValueRef<DenseHostTensor> AllocateResult(OpInvocation& invocation,
                                              absl::string_view op,
                                              const TensorMetadata& metadata,
                                              uint64_t reusable_arguments = 0);

// InvalidArgument "<op>: <message>".
absl::Status OpError(absl::string_view op, absl::string_view message);

// OK if every argument is f32 (the dtype this op library computes in);
// else an error naming the op, the argument and its dtype.
absl::Status RequireF32(absl::string_view op, ArgumentMetadata args);
// Shape functions of ops that devices compute in f16 and bf16 as well: every
// argument f32, f16 or bf16, all the same. The CPU computes these in f32
// only and refuses the others when the op runs (GuardHalfPrecisionOnCpu).
absl::Status RequireFloat(absl::string_view op, ArgumentMetadata args);
bool IsHalf(DType dtype);
// The metadata of an invocation's arguments, for a shape function's plan
// run again in the kernel (ArgumentMetadata views it).
using MetadataPointers = absl::InlinedVector<const TensorMetadata*, 5>;
MetadataPointers ArgumentMetadataOf(const OpInvocation& invocation);

// The `reduction` attribute of nn.scatter_elements and nn.scatter_nd
// (ONNX's): none (the last write wins), add, mul, max or min.
enum class ScatterReduction { kNone, kAdd, kMul, kMax, kMin };
absl::StatusOr<ScatterReduction> ScatterReductionOf(absl::string_view op,
                                                    const OpAttrs& attrs);
// `update` written over, or combined with, `old_value`.
template <typename T>
T ApplyScatterReduction(ScatterReduction reduction, T old_value, T update) {
  switch (reduction) {
    case ScatterReduction::kAdd:
      return old_value + update;
    case ScatterReduction::kMul:
      return old_value * update;
    case ScatterReduction::kMax:
      return old_value < update ? update : old_value;
    case ScatterReduction::kMin:
      return update < old_value ? update : old_value;
    case ScatterReduction::kNone:
      return update;
  }
  return update;
}

// In the CPU implementation of such an op: true, after FailAll with an
// error that says to cast, if an argument is f16 or bf16.
bool RefuseHalf(OpInvocation& invocation, absl::string_view op);

// The numpy broadcast of two shapes, or an error naming both.
absl::StatusOr<TensorShape> BroadcastShapes(absl::string_view op,
                                            const TensorShape& a,
                                            const TensorShape& b);

// Element strides of `shape` seen through `out` (right-aligned, rank of
// `out`): 0 along broadcast dimensions.
Dims BroadcastStrides(const TensorShape& shape, const TensorShape& out);

// A float attribute given as f32 or f64; `fallback` if absent.
float FloatAttr(const OpAttrs& attrs, absl::string_view name, float fallback);

// nn.batch_normalization's (norm_ops.cc) per-channel y = x * s[c] + t[c],
// for its plain kernel and the one in oneDNN's layouts, from its f32
// scale, B, mean and var (arguments 1-4, [C] each, as its shape function
// checked) and `epsilon`, into `s` and `t` (resized to at least C; entries
// past C are left as they are: a blocked layout's padding).
void BatchNormCoefficients(const OpInvocation& invocation,
                           std::vector<float>& s, std::vector<float>& t);

// True for the dtypes that ops computing in more than f32 accept: the
// signed and unsigned integers (not bool), f32 and f64.
bool IsRealNumber(DType dtype);

// Calls f(TypeTag<T>{}) for the C++ type of a dtype IsRealNumber accepts
// (only those are instantiated); `dtype` must be one.
template <typename F>
decltype(auto) DispatchRealNumber(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kI8:
      return f(TypeTag<int8_t>{});
    case DType::kI16:
      return f(TypeTag<int16_t>{});
    case DType::kI32:
      return f(TypeTag<int32_t>{});
    case DType::kI64:
      return f(TypeTag<int64_t>{});
    case DType::kUI8:
      return f(TypeTag<uint8_t>{});
    case DType::kUI16:
      return f(TypeTag<uint16_t>{});
    case DType::kUI32:
      return f(TypeTag<uint32_t>{});
    case DType::kUI64:
      return f(TypeTag<uint64_t>{});
    case DType::kF64:
      return f(TypeTag<double>{});
    default:
      return f(TypeTag<float>{});
  }
}

// Normalizes an axis in [-rank, rank) to [0, rank); error otherwise.
absl::StatusOr<int> NormalizeAxis(absl::string_view op, int64_t axis, int rank);

// Applies the process's denormals policy (nn::SetDenormals) to the calling
// thread for the scope's life, restoring the thread's mode after.
class ScopedDenormals {
 public:
  ScopedDenormals();
  ~ScopedDenormals();
  ScopedDenormals(const ScopedDenormals&) = delete;
  ScopedDenormals& operator=(const ScopedDenormals&) = delete;

 private:
  unsigned saved_ = 0;
};

// Runs body(begin, end) over contiguous parts of [0, n) that together cover
// it, each of at least `grain` items: on the calling thread's OpenMP team
// in latency mode (one full team at a time, as oneDNN's primitives run:
// nn::SetThreading), on the calling thread alone in throughput mode or
// when n < 2 * grain; every part under the denormals policy. For the ops
// outside oneDNN (copies, normalization, elementwise), which otherwise run
// on one thread while the team waits.
// `body` must not throw or run oneDNN primitives. Blocks until done.
void ParallelRanges(int64_t n, int64_t grain,
                    absl::FunctionRef<void(int64_t, int64_t)> body);

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_CPU_NN_NN_UTIL_H_
