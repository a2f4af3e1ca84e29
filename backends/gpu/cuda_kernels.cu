// The CUDA plug-in's own kernels (see cuda_kernels.h). Arithmetic on f16
// and bf16 is done in f32, as PyTorch's elementwise kernels do.
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>
#include <limits>
#include <type_traits>

#include "backends/gpu/cuda_kernels.h"
#include "backends/gpu/cuda_device_util.cuh"

namespace asyncrt::gpu {
namespace {

//===--- Unary ------------------------------------------------------------===//

__device__ __forceinline__ float ApplyUnary(UnaryOp op, float x, float alpha,
                                            float beta) {
  switch (op) {
    case UnaryOp::kRelu:
      return x > 0.f ? x : 0.f;
    case UnaryOp::kSigmoid:
      return 1.f / (1.f + expf(-x));
    case UnaryOp::kTanh:
      return tanhf(x);
    case UnaryOp::kGelu:
      return 0.5f * x * (1.f + erff(x * 0.70710678118654752f));
    case UnaryOp::kExp:
      return expf(x);
    case UnaryOp::kLog:
      return logf(x);
    case UnaryOp::kSqrt:
      return sqrtf(x);
    case UnaryOp::kNeg:
      return -x;
    case UnaryOp::kAbs:
      return fabsf(x);
    case UnaryOp::kErf:
      return erff(x);
    case UnaryOp::kIdentity:
      return x;
    case UnaryOp::kLeakyRelu:
      return x >= 0.f ? x : alpha * x;
    case UnaryOp::kClip:
      return fminf(fmaxf(x, alpha), beta);
    case UnaryOp::kHardSwish:
      return x * fminf(fmaxf(x / 6.f + 0.5f, 0.f), 1.f);
    case UnaryOp::kHardSigmoid:
      return fminf(fmaxf(alpha * x + beta, 0.f), 1.f);
    case UnaryOp::kElu:
      return x >= 0.f ? x : alpha * (expf(x) - 1.f);
    case UnaryOp::kSoftplus:
      return log1pf(expf(x));
    case UnaryOp::kReciprocal:
      return 1.f / x;
    case UnaryOp::kFloor:
      return floorf(x);
    case UnaryOp::kCeil:
      return ceilf(x);
    case UnaryOp::kSin:
      return sinf(x);
    case UnaryOp::kCos:
      return cosf(x);
    case UnaryOp::kLinear:
      return alpha * x + beta;
    case UnaryOp::kSilu:
      return x / (1.f + expf(-x));
  }
  return x;
}

template <typename T>
__global__ void UnaryKernel(UnaryOp op, const T* __restrict__ x,
                            T* __restrict__ y, int64_t n, float alpha,
                            float beta) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = FromFloat<T>(ApplyUnary(op, ToFloat(x[i]), alpha, beta));
  }
}

// 16 bytes of elements per thread and access (8 f16/bf16, 4 f32): the
// 2-byte accesses of UnaryKernel left a transformer's GELU (393,216 f16
// values) far from memory speed. x and y 16-byte aligned, n a multiple.
// (Bit operations on the words, not an array over the vector: that would
// live in local memory.)
template <typename T>
__device__ __forceinline__ T FromBits(uint32_t bits);
template <>
__device__ __forceinline__ float FromBits(uint32_t bits) {
  return __uint_as_float(bits);
}
template <>
__device__ __forceinline__ __half FromBits(uint32_t bits) {
  return __ushort_as_half(static_cast<unsigned short>(bits));
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromBits(uint32_t bits) {
  return __ushort_as_bfloat16(static_cast<unsigned short>(bits));
}
__device__ __forceinline__ uint32_t ToBits(float v) {
  return __float_as_uint(v);
}
__device__ __forceinline__ uint32_t ToBits(__half v) {
  return __half_as_ushort(v);
}
__device__ __forceinline__ uint32_t ToBits(__nv_bfloat16 v) {
  return __bfloat16_as_ushort(v);
}

template <typename T>
__device__ __forceinline__ uint32_t UnaryOfWord(UnaryOp op, uint32_t word,
                                                float alpha, float beta) {
  auto apply = [&](uint32_t bits) {
    return ToBits(
        FromFloat<T>(ApplyUnary(op, ToFloat(FromBits<T>(bits)), alpha, beta)));
  };
  if constexpr (sizeof(T) == 4) {
    return apply(word);
  } else {
    return apply(word & 0xffffu) | (apply(word >> 16) << 16);
  }
}

template <typename T>
__global__ void VectorUnaryKernel(UnaryOp op, const uint4* __restrict__ x,
                                  uint4* __restrict__ y, int64_t vectors,
                                  float alpha, float beta) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < vectors;
       i += int64_t{blockDim.x} * gridDim.x) {
    uint4 v = x[i];
    v.x = UnaryOfWord<T>(op, v.x, alpha, beta);
    v.y = UnaryOfWord<T>(op, v.y, alpha, beta);
    v.z = UnaryOfWord<T>(op, v.z, alpha, beta);
    v.w = UnaryOfWord<T>(op, v.w, alpha, beta);
    y[i] = v;
  }
}

// Relu on f32 alone: the kernel of the per-launch benchmarks, and the most
// common op, without the switch.
__global__ void ReluF32Kernel(const float* __restrict__ x,
                              float* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = fmaxf(x[i], 0.f);
  }
}

template <typename T>
__global__ void BiasActivationKernel(T* __restrict__ y,
                                     const T* __restrict__ bias,
                                     int64_t channels, int64_t inner, int64_t n,
                                     UnaryOp activation, float alpha,
                                     float beta) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    float v = ToFloat(y[i]);
    if (bias != nullptr) v += ToFloat(bias[(i / inner) % channels]);
    y[i] = FromFloat<T>(ApplyUnary(activation, v, alpha, beta));
  }
}

// One output per thread, channels fastest (loads coalesce along C); the
// taps' weights come from the cache. cuDNN's grouped direct kernel took
// 213 of MobileNetV2's 474 us in NHWC. 32-bit index arithmetic (the
// launcher checks the sizes): 64-bit division is emulated.
template <typename T>
__global__ void DepthwiseConvNhwcKernel(const T* __restrict__ x,
                                        const T* __restrict__ w,
                                        const T* __restrict__ bias,
                                        const T* __restrict__ sum,
                                        T* __restrict__ y, DepthwiseShape s,
                                        int n, UnaryOp activation, float alpha,
                                        float beta) {
  const int channels = static_cast<int>(s.c), height = static_cast<int>(s.h),
            width = static_cast<int>(s.w),
            out_h = static_cast<int>(s.out_h),
            out_w = static_cast<int>(s.out_w);
  for (int i = blockIdx.x * blockDim.x + threadIdx.x; i < n;
       i += blockDim.x * gridDim.x) {
    const int c = i % channels;
    int rest = i / channels;
    const int ox = rest % out_w;
    rest /= out_w;
    const int oy = rest % out_h;
    const int image = rest / out_h;
    const T* filter = w + c * s.kernel_h * s.kernel_w;
    float acc = 0.f;
    for (int ky = 0; ky < s.kernel_h; ++ky) {
      const int iy = oy * s.stride_h - s.pad_h + ky * s.dilation_h;
      if (iy < 0 || iy >= height) continue;
      const T* row = x + ((image * height + iy) * width) * channels + c;
      for (int kx = 0; kx < s.kernel_w; ++kx) {
        const int ix = ox * s.stride_w - s.pad_w + kx * s.dilation_w;
        if (ix < 0 || ix >= width) continue;
        acc += ToFloat(row[ix * channels]) *
               ToFloat(filter[ky * s.kernel_w + kx]);
      }
    }
    if (bias != nullptr) acc += ToFloat(bias[c]);
    if (sum != nullptr) acc += ToFloat(sum[i]);
    y[i] = FromFloat<T>(ApplyUnary(activation, acc, alpha, beta));
  }
}

template <typename T>
__global__ void BatchNormKernel(const T* __restrict__ x,
                                const T* __restrict__ scale,
                                const T* __restrict__ bias,
                                const T* __restrict__ mean,
                                const T* __restrict__ var, T* __restrict__ y,
                                int64_t channels, int64_t inner, int64_t n,
                                float epsilon) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t c = (i / inner) % channels;
    const float factor = ToFloat(scale[c]) * rsqrtf(ToFloat(var[c]) + epsilon);
    y[i] = FromFloat<T>((ToFloat(x[i]) - ToFloat(mean[c])) * factor +
                        ToFloat(bias[c]));
  }
}

//===--- Strided views ----------------------------------------------------===//

// The input offset of dense output element `index` under `view`.
__device__ __forceinline__ int64_t ViewOffset(const StridedView& view,
                                              int64_t index) {
  int64_t offset = view.offset;
  for (int k = view.rank - 1; k >= 0; --k) {
    int64_t dim = view.dims[k];
    offset += (index % dim) * view.strides[k];
    index /= dim;
  }
  return offset;
}

//===--- Binary -----------------------------------------------------------===//

template <typename T>
__device__ __forceinline__ T ApplyBinary(BinaryOp op, T a, T b) {
  if constexpr (std::is_integral_v<T>) {
    switch (op) {
      case BinaryOp::kAdd:
        return a + b;
      case BinaryOp::kSub:
        return a - b;
      case BinaryOp::kMul:
        return a * b;
      // Integer division truncates (numpy's floor differs; ONNX's Div on
      // integers truncates, as the CPU op does). Division by zero gives 0.
      case BinaryOp::kDiv:
        return b == 0 ? T{0} : a / b;
      case BinaryOp::kMax:
        return a > b ? a : b;
      case BinaryOp::kMin:
        return a < b ? a : b;
      case BinaryOp::kBitwiseAnd:
        return a & b;
      case BinaryOp::kBitwiseOr:
        return a | b;
      case BinaryOp::kBitwiseXor:
        return a ^ b;
      case BinaryOp::kBitwiseNot:
        return static_cast<T>(~a);
      case BinaryOp::kPow:
        return a;  // Refused on the host.
    }
    return a;
  } else {
    float x = ToFloat(a), y = ToFloat(b), r = x;
    switch (op) {
      case BinaryOp::kAdd:
        r = x + y;
        break;
      case BinaryOp::kSub:
        r = x - y;
        break;
      case BinaryOp::kMul:
        r = x * y;
        break;
      case BinaryOp::kDiv:
        r = x / y;
        break;
      case BinaryOp::kPow:
        r = powf(x, y);
        break;
      case BinaryOp::kMax:
        r = fmaxf(x, y);
        break;
      case BinaryOp::kMin:
        r = fminf(x, y);
        break;
      case BinaryOp::kBitwiseAnd:
      case BinaryOp::kBitwiseOr:
      case BinaryOp::kBitwiseXor:
      case BinaryOp::kBitwiseNot:
        break;  // Refused on the host.
    }
    return FromFloat<T>(r);
  }
}

// Both operands dense with the output's shape.
template <typename T>
__global__ void BinarySameShapeKernel(BinaryOp op, const T* __restrict__ a,
                                      const T* __restrict__ b,
                                      T* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = ApplyBinary<T>(op, a[i], b[i]);
  }
}

template <typename T>
__global__ void BinaryBroadcastKernel(BinaryOp op, const T* __restrict__ a,
                                      StridedView a_view,
                                      const T* __restrict__ b,
                                      StridedView b_view, T* __restrict__ y,
                                      int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] =
        ApplyBinary<T>(op, a[ViewOffset(a_view, i)], b[ViewOffset(b_view, i)]);
  }
}

bool IsDense(const StridedView& view) {
  int64_t expected = 1;
  for (int k = view.rank - 1; k >= 0; --k) {
    if (view.dims[k] != 1 && view.strides[k] != expected) return false;
    expected *= view.dims[k];
  }
  return view.offset == 0;
}

template <typename T>
cudaError_t Binary(BinaryOp op, const void* a, const StridedView& a_view,
                   const void* b, const StridedView& b_view, void* y, int64_t n,
                   cudaStream_t stream) {
  if (IsDense(a_view) && IsDense(b_view)) {
    BinarySameShapeKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
        op, static_cast<const T*>(a), static_cast<const T*>(b),
        static_cast<T*>(y), n);
  } else {
    BinaryBroadcastKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
        op, static_cast<const T*>(a), a_view, static_cast<const T*>(b), b_view,
        static_cast<T*>(y), n);
  }
  return cudaGetLastError();
}

//===--- Casts ------------------------------------------------------------===//

template <typename T>
__device__ __forceinline__ double Load(const void* x, int64_t i) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    return ToFloat(static_cast<const T*>(x)[i]);
  } else {
    return static_cast<double>(static_cast<const T*>(x)[i]);
  }
}

template <typename T>
__device__ __forceinline__ void Store(void* y, int64_t i, double v) {
  if constexpr (std::is_same_v<T, __half> || std::is_same_v<T, __nv_bfloat16>) {
    static_cast<T*>(y)[i] = FromFloat<T>(static_cast<float>(v));
  } else if constexpr (std::is_same_v<T, bool>) {
    static_cast<T*>(y)[i] = v != 0.0;
  } else if constexpr (std::is_integral_v<T>) {
    // As the CPU op: saturating, NaN to 0 (C++ leaves these undefined).
    constexpr double kLowest =
        static_cast<double>(std::numeric_limits<T>::min());
    constexpr double kHighest =
        static_cast<double>(std::numeric_limits<T>::max());
    T value = isnan(v)        ? T{0}
              : v <= kLowest  ? std::numeric_limits<T>::min()
              : v >= kHighest ? std::numeric_limits<T>::max()
                              : static_cast<T>(v);
    static_cast<T*>(y)[i] = value;
  } else {
    static_cast<T*>(y)[i] = static_cast<T>(v);
  }
}

__device__ double LoadAny(GpuDType dtype, const void* x, int64_t i) {
  switch (dtype) {
    case GpuDType::kBool:
      return Load<bool>(x, i);
    case GpuDType::kI8:
      return Load<int8_t>(x, i);
    case GpuDType::kI32:
      return Load<int32_t>(x, i);
    case GpuDType::kI64:
      return Load<int64_t>(x, i);
    case GpuDType::kU8:
      return Load<uint8_t>(x, i);
    case GpuDType::kF16:
      return Load<__half>(x, i);
    case GpuDType::kBF16:
      return Load<__nv_bfloat16>(x, i);
    case GpuDType::kF32:
      return Load<float>(x, i);
    case GpuDType::kF64:
      return Load<double>(x, i);
  }
  return 0.0;
}

template <typename To>
__global__ void CastKernel(GpuDType from, const void* __restrict__ x,
                           void* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    Store<To>(y, i, LoadAny(from, x, i));
  }
}

//===--- Strided copy -----------------------------------------------------===//

template <typename T>
__global__ void StridedCopyKernel(const T* __restrict__ x, StridedView view,
                                  T* __restrict__ y, int64_t n) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    y[i] = x[ViewOffset(view, i)];
  }
}

//===--- Gather -----------------------------------------------------------===//

template <typename T, typename Index>
__global__ void GatherKernel(const T* __restrict__ data,
                             const Index* __restrict__ indices,
                             T* __restrict__ y, int64_t axis, int64_t count,
                             int64_t inner, int64_t n, DeviceFault* fault) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < n;
       i += int64_t{blockDim.x} * gridDim.x) {
    const int64_t column = i % inner;
    const int64_t row = i / inner;
    const int64_t outer = row / count;
    const int64_t given = static_cast<int64_t>(indices[row % count]);
    const int64_t index = given < 0 ? given + axis : given;
    if (index < 0 || index >= axis) {
      y[i] = T{};
      // Plain stores (atomics on host memory need the platform's support):
      // threads that race write one of the bad indices, which is all the
      // host, reading after the work, needs.
      volatile DeviceFault* report = fault;
      if (report->code == kNoFault) {
        report->value = given;
        report->bound = axis;
        __threadfence_system();
        report->code = kGatherIndexFault;
      }
      continue;
    }
    y[i] = data[(outer * axis + index) * inner + column];
  }
}

//===--- Block reductions -------------------------------------------------===//

enum class Combine { kSum, kMax, kMin };

// The block's combined value, in every thread. `scratch`: 32 floats.
template <Combine kCombine>
__device__ float BlockCombine(float v, float* scratch) {
  auto warp = [](float x) {
    if constexpr (kCombine == Combine::kSum) return WarpSum(x);
    if constexpr (kCombine == Combine::kMax) return WarpMax(x);
    return WarpMin(x);
  };
  v = warp(v);
  const int lane = threadIdx.x % 32, warp_id = threadIdx.x / 32;
  __syncthreads();  // scratch may be in use by a previous call.
  if (lane == 0) scratch[warp_id] = v;
  __syncthreads();
  const int warps = (blockDim.x + 31) / 32;
  float identity = kCombine == Combine::kSum   ? 0.f
                   : kCombine == Combine::kMax ? -INFINITY
                                               : INFINITY;
  v = lane < warps ? scratch[lane] : identity;
  return warp(v);
}

//===--- Softmax ----------------------------------------------------------===//

// One block per (outer, inner) pair; threads stride along the axis.
template <typename T>
__global__ void SoftmaxKernel(const T* __restrict__ x, T* __restrict__ y,
                              int64_t axis, int64_t inner, bool log) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const int64_t base = (row / inner) * axis * inner + row % inner;
  float max_value = -INFINITY;
  for (int64_t k = threadIdx.x; k < axis; k += blockDim.x) {
    max_value = fmaxf(max_value, ToFloat(x[base + k * inner]));
  }
  max_value = BlockCombine<Combine::kMax>(max_value, scratch);
  float sum = 0.f;
  for (int64_t k = threadIdx.x; k < axis; k += blockDim.x) {
    sum += expf(ToFloat(x[base + k * inner]) - max_value);
  }
  sum = BlockCombine<Combine::kSum>(sum, scratch);
  const float log_sum = logf(sum);
  for (int64_t k = threadIdx.x; k < axis; k += blockDim.x) {
    float shifted = ToFloat(x[base + k * inner]) - max_value;
    y[base + k * inner] =
        FromFloat<T>(log ? shifted - log_sum : expf(shifted) / sum);
  }
}

//===--- Layer normalization ----------------------------------------------===//

template <typename T>
__global__ void LayerNormKernel(const T* __restrict__ x,
                                const T* __restrict__ scale,
                                const T* __restrict__ bias, T* __restrict__ y,
                                float* __restrict__ mean_out,
                                float* __restrict__ inv_std_out, int64_t cols,
                                float epsilon) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const T* in = x + row * cols;
  float sum = 0.f;
  for (int64_t k = threadIdx.x; k < cols; k += blockDim.x)
    sum += ToFloat(in[k]);
  const float mean = BlockCombine<Combine::kSum>(sum, scratch) / cols;
  float squares = 0.f;
  for (int64_t k = threadIdx.x; k < cols; k += blockDim.x) {
    float d = ToFloat(in[k]) - mean;
    squares += d * d;
  }
  const float variance = BlockCombine<Combine::kSum>(squares, scratch) / cols;
  const float inv_std = rsqrtf(variance + epsilon);
  T* out = y + row * cols;
  for (int64_t k = threadIdx.x; k < cols; k += blockDim.x) {
    float v = (ToFloat(in[k]) - mean) * inv_std * ToFloat(scale[k]);
    if (bias != nullptr) v += ToFloat(bias[k]);
    out[k] = FromFloat<T>(v);
  }
  if (threadIdx.x == 0) {
    if (mean_out != nullptr) mean_out[row] = mean;
    if (inv_std_out != nullptr) inv_std_out[row] = inv_std;
  }
}

//===--- Short rows -------------------------------------------------------===//
// Softmax and layer normalization of contiguous rows short enough for
// registers: each value read from memory once, then reductions in
// registers. Attention's 128-key rows used half of a 256-thread block
// and paid two barriers per reduction; a transformer's 768-wide rows were
// read three times.

// Softmax: a warp per row of at most 32 x kPerLane values, kWarpRows rows
// per block, shuffles only.
constexpr int kWarpRows = 8;

template <typename T, int kPerLane>
__global__ void __launch_bounds__(kWarpRows * 32)
    WarpSoftmaxKernel(const T* __restrict__ x, T* __restrict__ y,
                      int64_t rows, int cols, bool log) {
  const int lane = threadIdx.x % 32;
  const int64_t row = int64_t{blockIdx.x} * kWarpRows + threadIdx.x / 32;
  if (row >= rows) return;
  const T* in = x + row * cols;
  float values[kPerLane];
  float max_value = -INFINITY;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int c = lane + 32 * j;
    values[j] = c < cols ? ToFloat(in[c]) : -INFINITY;
    max_value = fmaxf(max_value, values[j]);
  }
  max_value = WarpMax(max_value);
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    if (lane + 32 * j < cols) {
      values[j] -= max_value;
      sum += expf(values[j]);
    }
  }
  sum = WarpSum(sum);
  const float log_sum = logf(sum);
  T* out = y + row * cols;
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int c = lane + 32 * j;
    if (c < cols) {
      out[c] = FromFloat<T>(log ? values[j] - log_sum : expf(values[j]) / sum);
    }
  }
}

// Layer normalization: a block per row of at most kThreads x
// kRowValuesPerThread values, as few warps as hold it.
constexpr int kRowValuesPerThread = 4;

template <typename T>
__global__ void __launch_bounds__(kThreads)
    RegisterLayerNormKernel(const T* __restrict__ x,
                            const T* __restrict__ scale,
                            const T* __restrict__ bias, T* __restrict__ y,
                            float* __restrict__ mean_out,
                            float* __restrict__ inv_std_out, int cols,
                            float epsilon) {
  __shared__ float scratch[32];
  const int64_t row = blockIdx.x;
  const T* in = x + row * cols;
  float values[kRowValuesPerThread];
  float sum = 0.f;
#pragma unroll
  for (int j = 0; j < kRowValuesPerThread; ++j) {
    const int c = threadIdx.x + blockDim.x * j;
    values[j] = c < cols ? ToFloat(in[c]) : 0.f;
    sum += values[j];
  }
  const float mean = BlockCombine<Combine::kSum>(sum, scratch) / cols;
  float squares = 0.f;
#pragma unroll
  for (int j = 0; j < kRowValuesPerThread; ++j) {
    if (threadIdx.x + blockDim.x * j < cols) {
      const float d = values[j] - mean;
      squares += d * d;
    }
  }
  const float variance = BlockCombine<Combine::kSum>(squares, scratch) / cols;
  const float inv_std = rsqrtf(variance + epsilon);
  T* out = y + row * cols;
#pragma unroll
  for (int j = 0; j < kRowValuesPerThread; ++j) {
    const int c = threadIdx.x + blockDim.x * j;
    if (c < cols) {
      float v = (values[j] - mean) * inv_std * ToFloat(scale[c]);
      if (bias != nullptr) v += ToFloat(bias[c]);
      out[c] = FromFloat<T>(v);
    }
  }
  if (threadIdx.x == 0) {
    if (mean_out != nullptr) mean_out[row] = mean;
    if (inv_std_out != nullptr) inv_std_out[row] = inv_std;
  }
}

//===--- Reductions -------------------------------------------------------===//

// One block per output element.
template <typename T>
__global__ void ReduceKernel(ReduceOp op, const T* __restrict__ x,
                             StridedView kept, StridedView reduced,
                             int64_t reduced_count, T* __restrict__ y) {
  __shared__ float scratch[32];
  const int64_t base = ViewOffset(kept, blockIdx.x);
  float result;
  if (op == ReduceOp::kMax || op == ReduceOp::kMin) {
    const bool is_max = op == ReduceOp::kMax;
    float v = is_max ? -INFINITY : INFINITY;
    for (int64_t k = threadIdx.x; k < reduced_count; k += blockDim.x) {
      float e = ToFloat(x[base + ViewOffset(reduced, k)]);
      v = is_max ? fmaxf(v, e) : fminf(v, e);
    }
    result = is_max ? BlockCombine<Combine::kMax>(v, scratch)
                    : BlockCombine<Combine::kMin>(v, scratch);
  } else {
    const bool squares = op == ReduceOp::kSumSquare || op == ReduceOp::kL2;
    float v = 0.f;
    for (int64_t k = threadIdx.x; k < reduced_count; k += blockDim.x) {
      float e = ToFloat(x[base + ViewOffset(reduced, k)]);
      v += squares ? e * e : e;
    }
    result = BlockCombine<Combine::kSum>(v, scratch);
    if (op == ReduceOp::kMean) result /= reduced_count;
    if (op == ReduceOp::kL2) result = sqrtf(result);
  }
  if (threadIdx.x == 0) y[blockIdx.x] = FromFloat<T>(result);
}

}  // namespace

__global__ void FaultKernel(int* nowhere) { *nowhere = 1; }

cudaError_t LaunchFault(cudaStream_t stream) {
  // Low addresses are never mapped on the device.
  FaultKernel<<<1, 1, 0, stream>>>(reinterpret_cast<int*>(0x10));
  return cudaGetLastError();
}

cudaError_t LaunchUnary(UnaryOp op, GpuDType dtype, const void* x, void* y,
                        int64_t n, float alpha, float beta,
                        cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  if (op == UnaryOp::kRelu && dtype == GpuDType::kF32) {
    ReluF32Kernel<<<BlocksFor(n), kThreads, 0, stream>>>(
        static_cast<const float*>(x), static_cast<float*>(y), n);
    return cudaGetLastError();
  }
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    constexpr int64_t kPerVector = sizeof(uint4) / sizeof(T);
    if (n % kPerVector == 0 &&
        (reinterpret_cast<uintptr_t>(x) | reinterpret_cast<uintptr_t>(y)) %
                sizeof(uint4) ==
            0) {
      const int64_t vectors = n / kPerVector;
      VectorUnaryKernel<T><<<BlocksFor(vectors), kThreads, 0, stream>>>(
          op, static_cast<const uint4*>(x), static_cast<uint4*>(y), vectors,
          alpha, beta);
    } else {
      UnaryKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
          op, static_cast<const T*>(x), static_cast<T*>(y), n, alpha, beta);
    }
    return cudaGetLastError();
  });
}

cudaError_t LaunchDepthwiseConvNhwc(GpuDType dtype, const void* x,
                                    const void* w, const void* bias,
                                    const void* sum, void* y,
                                    const DepthwiseShape& shape,
                                    UnaryOp activation, float alpha,
                                    float beta, cudaStream_t stream) {
  const int64_t n = shape.n * shape.out_h * shape.out_w * shape.c;
  if (n == 0) return cudaSuccess;
  if (n > INT32_MAX || shape.n * shape.h * shape.w * shape.c > INT32_MAX) {
    return cudaErrorInvalidValue;
  }
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    DepthwiseConvNhwcKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(w),
        static_cast<const T*>(bias), static_cast<const T*>(sum),
        static_cast<T*>(y), shape, static_cast<int>(n), activation, alpha,
        beta);
    return cudaGetLastError();
  });
}

cudaError_t LaunchBiasActivation(GpuDType dtype, void* y, const void* bias,
                                 int64_t channels, int64_t inner, int64_t n,
                                 UnaryOp activation, float alpha, float beta,
                                 cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    BiasActivationKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
        static_cast<T*>(y), static_cast<const T*>(bias), channels, inner, n,
        activation, alpha, beta);
    return cudaGetLastError();
  });
}

cudaError_t LaunchBatchNorm(GpuDType dtype, const void* x, const void* scale,
                            const void* bias, const void* mean, const void* var,
                            void* y, int64_t channels, int64_t inner, int64_t n,
                            float epsilon, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    BatchNormKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(scale),
        static_cast<const T*>(bias), static_cast<const T*>(mean),
        static_cast<const T*>(var), static_cast<T*>(y), channels, inner, n,
        epsilon);
    return cudaGetLastError();
  });
}

cudaError_t LaunchBinary(BinaryOp op, GpuDType dtype, const void* a,
                         const StridedView& a_view, const void* b,
                         const StridedView& b_view, void* y, int64_t n,
                         cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  switch (dtype) {
    case GpuDType::kF32:
      return Binary<float>(op, a, a_view, b, b_view, y, n, stream);
    case GpuDType::kF16:
      return Binary<__half>(op, a, a_view, b, b_view, y, n, stream);
    case GpuDType::kBF16:
      return Binary<__nv_bfloat16>(op, a, a_view, b, b_view, y, n, stream);
    case GpuDType::kI32:
      return Binary<int32_t>(op, a, a_view, b, b_view, y, n, stream);
    case GpuDType::kI64:
      return Binary<int64_t>(op, a, a_view, b, b_view, y, n, stream);
    case GpuDType::kI8:
      return Binary<int8_t>(op, a, a_view, b, b_view, y, n, stream);
    case GpuDType::kU8:
      return Binary<uint8_t>(op, a, a_view, b, b_view, y, n, stream);
    default:
      return cudaErrorInvalidValue;
  }
}

cudaError_t LaunchCast(GpuDType from, GpuDType to, const void* x, void* y,
                       int64_t n, cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  auto launch = [&](auto type) {
    using To = decltype(type);
    CastKernel<To><<<BlocksFor(n), kThreads, 0, stream>>>(from, x, y, n);
    return cudaGetLastError();
  };
  switch (to) {
    case GpuDType::kBool:
      return launch(bool{});
    case GpuDType::kI8:
      return launch(int8_t{});
    case GpuDType::kI32:
      return launch(int32_t{});
    case GpuDType::kI64:
      return launch(int64_t{});
    case GpuDType::kU8:
      return launch(uint8_t{});
    case GpuDType::kF16:
      return launch(__half{});
    case GpuDType::kBF16:
      return launch(__nv_bfloat16{});
    case GpuDType::kF32:
      return launch(float{});
    case GpuDType::kF64:
      return launch(double{});
  }
  return cudaErrorInvalidValue;
}

cudaError_t LaunchStridedCopy(int element_bytes, const void* x,
                              const StridedView& view, void* y, int64_t n,
                              cudaStream_t stream) {
  if (n == 0) return cudaSuccess;
  return WithElementType(element_bytes, [&](auto type) {
    using T = decltype(type);
    StridedCopyKernel<T><<<BlocksFor(n), kThreads, 0, stream>>>(
        static_cast<const T*>(x), view, static_cast<T*>(y), n);
    return cudaGetLastError();
  });
}

cudaError_t LaunchSoftmax(GpuDType dtype, const void* x, void* y, int64_t outer,
                          int64_t axis, int64_t inner, bool log,
                          cudaStream_t stream) {
  if (outer * axis * inner == 0) return cudaSuccess;
  if (inner == 1 && axis <= 32 * 32) {
    return WithFloatType(dtype, [&](auto type) {
      using T = decltype(type);
      const auto blocks =
          static_cast<unsigned>((outer + kWarpRows - 1) / kWarpRows);
      const auto launch = [&](auto kernel) {
        kernel<<<blocks, kWarpRows * 32, 0, stream>>>(
            static_cast<const T*>(x), static_cast<T*>(y), outer,
            static_cast<int>(axis), log);
        return cudaGetLastError();
      };
      if (axis <= 32) return launch(WarpSoftmaxKernel<T, 1>);
      if (axis <= 64) return launch(WarpSoftmaxKernel<T, 2>);
      if (axis <= 128) return launch(WarpSoftmaxKernel<T, 4>);
      if (axis <= 256) return launch(WarpSoftmaxKernel<T, 8>);
      if (axis <= 512) return launch(WarpSoftmaxKernel<T, 16>);
      return launch(WarpSoftmaxKernel<T, 32>);
    });
  }
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    SoftmaxKernel<T>
        <<<static_cast<unsigned>(outer * inner), kThreads, 0, stream>>>(
            static_cast<const T*>(x), static_cast<T*>(y), axis, inner, log);
    return cudaGetLastError();
  });
}

cudaError_t LaunchLayerNorm(GpuDType dtype, const void* x, const void* scale,
                            const void* bias, void* y, void* mean,
                            void* inv_std, int64_t rows, int64_t cols,
                            float epsilon, cudaStream_t stream) {
  if (rows * cols == 0) return cudaSuccess;
  if (cols <= kThreads * kRowValuesPerThread) {
    // Whole warps, as few as hold the row.
    const int per_thread = (static_cast<int>(cols) + kRowValuesPerThread - 1) /
                           kRowValuesPerThread;
    const int threads = (per_thread + 31) / 32 * 32;
    return WithFloatType(dtype, [&](auto type) {
      using T = decltype(type);
      RegisterLayerNormKernel<T>
          <<<static_cast<unsigned>(rows), threads, 0, stream>>>(
              static_cast<const T*>(x), static_cast<const T*>(scale),
              static_cast<const T*>(bias), static_cast<T*>(y),
              static_cast<float*>(mean), static_cast<float*>(inv_std),
              static_cast<int>(cols), epsilon);
      return cudaGetLastError();
    });
  }
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    LayerNormKernel<T><<<static_cast<unsigned>(rows), kThreads, 0, stream>>>(
        static_cast<const T*>(x), static_cast<const T*>(scale),
        static_cast<const T*>(bias), static_cast<T*>(y),
        static_cast<float*>(mean), static_cast<float*>(inv_std), cols, epsilon);
    return cudaGetLastError();
  });
}

cudaError_t LaunchReduce(ReduceOp op, GpuDType dtype, const void* x,
                         const StridedView& kept, const StridedView& reduced,
                         void* y, int64_t outputs, cudaStream_t stream) {
  if (outputs == 0) return cudaSuccess;
  int64_t reduced_count = 1;
  for (int k = 0; k < reduced.rank; ++k) reduced_count *= reduced.dims[k];
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    ReduceKernel<T><<<static_cast<unsigned>(outputs), kThreads, 0, stream>>>(
        op, static_cast<const T*>(x), kept, reduced, reduced_count,
        static_cast<T*>(y));
    return cudaGetLastError();
  });
}

cudaError_t LaunchGather(int element_bytes, const void* data, int index_bytes,
                         const void* indices, void* y, int64_t outer,
                         int64_t axis, int64_t count, int64_t inner,
                         DeviceFault* fault, cudaStream_t stream) {
  const int64_t n = outer * count * inner;
  if (n == 0) return cudaSuccess;
  auto launch = [&](auto type, auto index_type) {
    using T = decltype(type);
    using Index = decltype(index_type);
    GatherKernel<T, Index><<<BlocksFor(n), kThreads, 0, stream>>>(
        static_cast<const T*>(data), static_cast<const Index*>(indices),
        static_cast<T*>(y), axis, count, inner, n, fault);
    return cudaGetLastError();
  };
  if (index_bytes != 4 && index_bytes != 8) return cudaErrorInvalidValue;
  return WithElementType(element_bytes, [&](auto type) {
    return index_bytes == 4 ? launch(type, int32_t{}) : launch(type, int64_t{});
  });
}

}  // namespace asyncrt::gpu
