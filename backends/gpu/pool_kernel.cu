// Pooling on our kernel (see cuda_kernels.h): the windows cuDNN's pooling
// does not take (rounded-up output sizes, dilations, asymmetric padding).
#include <cmath>
#include <cstdint>

#include "backends/gpu/cuda_device_util.cuh"
#include "backends/gpu/cuda_kernels.h"

namespace asyncrt::gpu {
namespace {

// One output element a thread: its window read straight from x (pooling
// reads each input a few times at most; the caches take the overlap).
template <typename T>
__global__ void PoolWindowKernel(PoolMode mode, const T* __restrict__ x,
                                 T* __restrict__ y, PoolShape s,
                                 int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{blockDim.x} * gridDim.x) {
    int64_t rest = i, n, c, o[3];
    if (s.channels_last) {
      c = rest % s.c;
      rest /= s.c;
    }
    for (int d = 2; d >= 0; --d) {
      o[d] = rest % s.out[d];
      rest /= s.out[d];
    }
    if (s.channels_last) {
      n = rest;
    } else {
      c = rest % s.c;
      n = rest / s.c;
    }
    float best = -INFINITY, sum = 0.f;
    int count = 0, counted_padding = 0;
    for (int k0 = 0; k0 < s.kernel[0]; ++k0) {
      const int64_t p0 =
          o[0] * s.stride[0] - s.pad_begin[0] + int64_t{k0} * s.dilation[0];
      for (int k1 = 0; k1 < s.kernel[1]; ++k1) {
        const int64_t p1 =
            o[1] * s.stride[1] - s.pad_begin[1] + int64_t{k1} * s.dilation[1];
        for (int k2 = 0; k2 < s.kernel[2]; ++k2) {
          const int64_t p[3] = {p0, p1,
                                o[2] * s.stride[2] - s.pad_begin[2] +
                                    int64_t{k2} * s.dilation[2]};
          bool inside = true, in_padding = true;
          for (int d = 0; d < 3; ++d) {
            inside = inside && p[d] >= 0 && p[d] < s.in[d];
            in_padding = in_padding && p[d] >= -s.pad_begin[d] &&
                         p[d] < s.in[d] + s.pad_end[d];
          }
          counted_padding += in_padding;
          if (!inside) continue;
          const int64_t offset =
              s.channels_last
                  ? (((n * s.in[0] + p[0]) * s.in[1] + p[1]) * s.in[2] + p[2]) *
                            s.c +
                        c
                  : (((n * s.c + c) * s.in[0] + p[0]) * s.in[1] + p[1]) *
                            s.in[2] +
                        p[2];
          const float v = ToFloat(x[offset]);
          // NaN stays (as cuDNN's CUDNN_PROPAGATE_NAN).
          if (v > best || v != v) best = v;
          sum += v;
          ++count;
        }
      }
    }
    float result = best;
    if (mode == PoolMode::kAverageExcludingPadding) {
      result = count > 0 ? sum / count : 0.f;
    } else if (mode == PoolMode::kAverageIncludingPadding) {
      result = counted_padding > 0 ? sum / counted_padding : 0.f;
    }
    y[i] = FromFloat<T>(result);
  }
}

}  // namespace

cudaError_t LaunchPool(PoolMode mode, GpuDType dtype, const void* x, void* y,
                       const PoolShape& shape, cudaStream_t stream) {
  const int64_t total =
      shape.n * shape.c * shape.out[0] * shape.out[1] * shape.out[2];
  if (total == 0) return cudaSuccess;
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    PoolWindowKernel<T><<<BlocksFor(total), kThreads, 0, stream>>>(
        mode, static_cast<const T*>(x), static_cast<T*>(y), shape, total);
    return cudaGetLastError();
  });
}

}  // namespace asyncrt::gpu
