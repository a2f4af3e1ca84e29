// What the CUDA plug-in's kernel files share: launch sizes, the element
// types of a dtype, f16/bf16 <-> f32 conversions and warp reductions on
// the device.
//
// Internal to backends/gpu (device code: include from .cu files only).
#ifndef ASYNCRT_BACKENDS_GPU_CUDA_DEVICE_UTIL_CUH_
#define ASYNCRT_BACKENDS_GPU_CUDA_DEVICE_UTIL_CUH_

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>

#include "backends/gpu/cuda_kernels.h"

namespace asyncrt::gpu {

constexpr int kThreads = 256;

// Blocks for `n` elements, `kThreads` each, a grid-stride loop beyond.
inline unsigned BlocksFor(int64_t n) {
  int64_t blocks = (n + kThreads - 1) / kThreads;
  if (blocks > 65535 * 8) blocks = 65535 * 8;
  return static_cast<unsigned>(blocks < 1 ? 1 : blocks);
}

// f(T{}) for the unsigned type of `element_bytes` (1, 2, 4 or 8): kernels
// that only move elements.
template <typename F>
cudaError_t WithElementType(int element_bytes, F&& f) {
  switch (element_bytes) {
    case 1:
      return f(uint8_t{});
    case 2:
      return f(uint16_t{});
    case 4:
      return f(uint32_t{});
    case 8:
      return f(uint64_t{});
  }
  return cudaErrorInvalidValue;
}

template <typename T>
__device__ __forceinline__ float ToFloat(T v) {
  return static_cast<float>(v);
}
template <>
__device__ __forceinline__ float ToFloat(__half v) {
  return __half2float(v);
}
template <>
__device__ __forceinline__ float ToFloat(__nv_bfloat16 v) {
  return __bfloat162float(v);
}

template <typename T>
__device__ __forceinline__ T FromFloat(float v) {
  return static_cast<T>(v);
}
template <>
__device__ __forceinline__ __half FromFloat(float v) {
  return __float2half(v);
}
template <>
__device__ __forceinline__ __nv_bfloat16 FromFloat(float v) {
  return __float2bfloat16(v);
}

// A warp's sum, maximum and minimum of `v`, in every lane.
__device__ __forceinline__ float WarpSum(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v += __shfl_xor_sync(0xffffffff, v, offset);
  }
  return v;
}
__device__ __forceinline__ float WarpMax(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v = fmaxf(v, __shfl_xor_sync(0xffffffff, v, offset));
  }
  return v;
}
__device__ __forceinline__ float WarpMin(float v) {
  for (int offset = 16; offset > 0; offset /= 2) {
    v = fminf(v, __shfl_xor_sync(0xffffffff, v, offset));
  }
  return v;
}

// Calls `f` with a value of the C++ type of floating `dtype`.
template <typename F>
cudaError_t WithFloatType(GpuDType dtype, F&& f) {
  switch (dtype) {
    case GpuDType::kF32:
      return f(float{});
    case GpuDType::kF16:
      return f(__half{});
    case GpuDType::kBF16:
      return f(__nv_bfloat16{});
    default:
      return cudaErrorInvalidValue;
  }
}

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_CUDA_DEVICE_UTIL_CUH_
