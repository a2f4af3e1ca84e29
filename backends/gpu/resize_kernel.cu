// nn.resize's passes on the GPU (see cuda_kernels.h): one axis at a time,
// as the CPU op, each output element's source taps computed by its thread
// from the axis's coordinate transformation.
#include <cmath>
#include <cstdint>

#include "backends/gpu/cuda_device_util.cuh"
#include "backends/gpu/cuda_kernels.h"

namespace asyncrt::gpu {
namespace {

// The input coordinate of output index `x` (ONNX's
// coordinate_transformation_mode), in double as the CPU op.
__device__ double SourceCoordinate(const ResizeAxis& a, int64_t x) {
  switch (a.transform) {
    case ResizeTransform::kHalfPixel:
      return (x + 0.5) / a.scale - 0.5;
    case ResizeTransform::kPytorchHalfPixel:
      return a.resized_length > 1 ? (x + 0.5) / a.scale - 0.5 : 0.0;
    case ResizeTransform::kAlignCorners:
      return a.resized_length == 1
                 ? 0.0
                 : static_cast<double>(x) * (a.in - 1) / (a.resized_length - 1);
    case ResizeTransform::kAsymmetric:
      return x / a.scale;
    case ResizeTransform::kTfHalfPixelForNn:
      return (x + 0.5) / a.scale;
  }
  return 0.0;
}

__device__ int64_t NearestIndex(const ResizeAxis& a, double value) {
  const double low = floor(value);
  int64_t index;
  switch (a.rounding) {
    case ResizeRounding::kRoundPreferFloor:
      index = value == low + 0.5 ? static_cast<int64_t>(low)
                                 : static_cast<int64_t>(round(value));
      break;
    case ResizeRounding::kRoundPreferCeil:
      index = value == low + 0.5 ? static_cast<int64_t>(ceil(value))
                                 : static_cast<int64_t>(round(value));
      break;
    case ResizeRounding::kFloor:
      index = static_cast<int64_t>(low);
      break;
    default:
      index = static_cast<int64_t>(ceil(value));
  }
  return index < 0 ? 0 : index >= a.in ? a.in - 1 : index;
}

__device__ int64_t Clamp(int64_t index, int64_t size) {
  return index < 0 ? 0 : index >= size ? size - 1 : index;
}

// Output element i of [outer, out, inner]: its o, j (along the axis), k.
struct OutputIndex {
  int64_t o, j, k;
};
__device__ OutputIndex Decompose(const ResizeAxis& a, int64_t i) {
  const int64_t rest = i / a.inner;
  return {rest / a.out, rest % a.out, i % a.inner};
}

// Nearest: a copy of the element `T` (any dtype of its size).
template <typename T>
__global__ void ResizeNearestKernel(ResizeAxis a, const T* __restrict__ x,
                                    T* __restrict__ y, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{blockDim.x} * gridDim.x) {
    const OutputIndex at = Decompose(a, i);
    const int64_t index = NearestIndex(a, SourceCoordinate(a, at.j));
    y[i] = x[(at.o * a.in + index) * a.inner + at.k];
  }
}

// Linear (two taps) and cubic (four, Keys' kernel with coefficient a),
// in f32 from `In` to `Out`.
template <typename In, typename Out>
__global__ void ResizeBlendKernel(ResizeAxis a, const In* __restrict__ x,
                                  Out* __restrict__ y, int64_t total) {
  for (int64_t i = blockIdx.x * int64_t{blockDim.x} + threadIdx.x; i < total;
       i += int64_t{blockDim.x} * gridDim.x) {
    const OutputIndex at = Decompose(a, i);
    const In* column = x + at.o * a.in * a.inner + at.k;
    const double c = SourceCoordinate(a, at.j);
    const double base = floor(c);
    const int64_t first = static_cast<int64_t>(base);
    float value;
    if (a.mode == ResizeMode::kLinear) {
      const float w = static_cast<float>(c - base);
      const float v0 = ToFloat(column[Clamp(first, a.in) * a.inner]);
      const float v1 = ToFloat(column[Clamp(first + 1, a.in) * a.inner]);
      value = v0 + (v1 - v0) * w;
    } else {
      const double t = c - base, coeff = a.cubic_coeff_a;
      auto near = [coeff](double d) {
        return ((coeff + 2) * d - (coeff + 3)) * d * d + 1;
      };
      auto far = [coeff](double d) {
        return ((coeff * d - 5 * coeff) * d + 8 * coeff) * d - 4 * coeff;
      };
      const double weights[4] = {far(t + 1), near(t), near(1 - t), far(2 - t)};
      double total_weight = 0, sum = 0;
      for (int tap = 0; tap < 4; ++tap) {
        const int64_t at = first - 1 + tap;
        const bool outside = at < 0 || at >= a.in;
        const double weight = a.exclude_outside && outside ? 0.0 : weights[tap];
        total_weight += weight;
        sum += weight * ToFloat(column[Clamp(at, a.in) * a.inner]);
      }
      if (a.exclude_outside && total_weight != 0) sum /= total_weight;
      value = static_cast<float>(sum);
    }
    y[i] = FromFloat<Out>(value);
  }
}

}  // namespace

cudaError_t LaunchResizeAxis(const ResizeAxis& axis, GpuDType from,
                             const void* x, GpuDType to, void* y,
                             int element_bytes, cudaStream_t stream) {
  const int64_t total = axis.outer * axis.out * axis.inner;
  if (total == 0) return cudaSuccess;
  if (axis.mode == ResizeMode::kNearest) {
    auto launch = [&](auto element) {
      using T = decltype(element);
      ResizeNearestKernel<T><<<BlocksFor(total), kThreads, 0, stream>>>(
          axis, static_cast<const T*>(x), static_cast<T*>(y), total);
      return cudaGetLastError();
    };
    switch (element_bytes) {
      case 1:
        return launch(uint8_t{});
      case 2:
        return launch(uint16_t{});
      case 4:
        return launch(uint32_t{});
      case 8:
        return launch(uint64_t{});
      default:
        return cudaErrorInvalidValue;
    }
  }
  return WithFloatType(from, [&](auto in) {
    using In = decltype(in);
    return WithFloatType(to, [&](auto out) {
      using Out = decltype(out);
      ResizeBlendKernel<In, Out><<<BlocksFor(total), kThreads, 0, stream>>>(
          axis, static_cast<const In*>(x), static_cast<Out*>(y), total);
      return cudaGetLastError();
    });
  });
}

}  // namespace asyncrt::gpu
