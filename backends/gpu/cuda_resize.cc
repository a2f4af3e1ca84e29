// nn.resize (ONNX Resize and Upsample) on the GPU: nearest, linear and
// cubic modes over any axes, as the CPU op computes them (resize_op.cc):
// one pass per axis whose size or scale changes, each on our kernel
// (cuda_kernels.h, LaunchResizeAxis), through scratch memory in f32
// between passes.
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <vector>

#include "backends/gpu/cuda_device.h"
#include "backends/gpu/cuda_kernels.h"
#include "backends/gpu/op_call.h"

namespace asyncrt::gpu {
namespace {

// The attributes' modes; false (status set) for one the op does not have.
bool ReadModes(OpCall& op, ResizeAxis* axis) {
  const std::string mode = op.String("mode", "nearest");
  if (mode == "nearest") {
    axis->mode = ResizeMode::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    axis->mode = ResizeMode::kLinear;
  } else if (mode == "cubic" || mode == "bicubic") {
    axis->mode = ResizeMode::kCubic;
  } else {
    return op.Invalid("unknown mode '" + mode + "'");
  }
  const std::string transform =
      op.String("coordinate_transformation_mode", "half_pixel");
  if (transform == "half_pixel") {
    axis->transform = ResizeTransform::kHalfPixel;
  } else if (transform == "pytorch_half_pixel") {
    axis->transform = ResizeTransform::kPytorchHalfPixel;
  } else if (transform == "align_corners") {
    axis->transform = ResizeTransform::kAlignCorners;
  } else if (transform == "asymmetric") {
    axis->transform = ResizeTransform::kAsymmetric;
  } else if (transform == "tf_half_pixel_for_nn") {
    axis->transform = ResizeTransform::kTfHalfPixelForNn;
  } else {
    return op.Unsupported("coordinate_transformation_mode '" + transform + "'");
  }
  const std::string rounding = op.String("nearest_mode", "round_prefer_floor");
  if (rounding == "round_prefer_floor") {
    axis->rounding = ResizeRounding::kRoundPreferFloor;
  } else if (rounding == "round_prefer_ceil") {
    axis->rounding = ResizeRounding::kRoundPreferCeil;
  } else if (rounding == "floor") {
    axis->rounding = ResizeRounding::kFloor;
  } else if (rounding == "ceil") {
    axis->rounding = ResizeRounding::kCeil;
  } else {
    return op.Invalid("unknown nearest_mode '" + rounding + "'");
  }
  axis->exclude_outside = op.Int("exclude_outside", 0) != 0;
  axis->cubic_coeff_a = op.Float("cubic_coeff_a", -0.75f);
  return true;
}

void ResizeKernel(AsyncRT_KernelContext* context, void*,
                  AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.Output(0, &y)) return;
  ResizeAxis modes;
  if (!ReadModes(op, &modes)) return;
  const int element_bytes = ElementBytes(x.dtype);
  if (modes.mode != ResizeMode::kNearest ? !IsFloating16or32(x.dtype)
                                         : element_bytes == 0) {
    op.Unsupported(std::string("dtype ") + DTypeName(x.dtype));
    return;
  }
  std::vector<int64_t> sizes;
  std::vector<double> scales;
  const bool sized = op.Ints("sizes", &sizes) && !sizes.empty();
  const bool scaled = op.Floats("scales", &scales) && !scales.empty();
  if (sized == scaled) {
    op.Invalid("needs either 'scales' or 'sizes'");
    return;
  }
  if ((sized ? sizes.size() : scales.size()) != static_cast<size_t>(x.rank)) {
    op.Invalid("needs one scale or size per dimension");
    return;
  }
  if (NumElements(y) == 0) return;
  // The CPU op's axes: those whose size or scale changes, in order, each
  // with the scale and unrounded length its coordinates divide by.
  std::vector<ResizeAxis> passes;
  std::vector<int64_t> current(x.dims, x.dims + x.rank);
  for (int i = 0; i < x.rank; ++i) {
    const int64_t in = x.dims[i], out = y.dims[i];
    const float scale = scaled   ? static_cast<float>(scales[i])
                        : in > 0 ? static_cast<float>(out) / in
                                 : 1.0f;
    if (out == in && scale == 1.0f) continue;
    ResizeAxis axis = modes;
    axis.in = in;
    axis.out = out;
    axis.scale = scale;
    axis.resized_length =
        scaled ? static_cast<double>(in) * scale : static_cast<double>(out);
    axis.outer = 1;
    axis.inner = 1;
    for (int k = 0; k < i; ++k) axis.outer *= current[k];
    for (int k = i + 1; k < x.rank; ++k) axis.inner *= current[k];
    current[i] = out;
    passes.push_back(axis);
  }
  CudaDevice& device = op.device();
  if (passes.empty()) {
    op.Launched(cudaMemcpyAsync(y.data, x.data, y.size_bytes,
                                cudaMemcpyDeviceToDevice, op.stream()),
                "cudaMemcpyAsync");
    return;
  }
  // Between passes: f32 for the blending modes (as the CPU keeps them),
  // the dtype itself for nearest (copies).
  const bool blend = modes.mode != ResizeMode::kNearest;
  const GpuDType scratch_dtype = blend ? GpuDType::kF32 : ToGpu(x.dtype);
  const int scratch_bytes = blend ? 4 : element_bytes;
  const void* source = x.data;
  GpuDType source_dtype = ToGpu(x.dtype);
  void* scratch = nullptr;
  uint64_t scratch_size = 0;
  for (size_t p = 0; p < passes.size(); ++p) {
    const ResizeAxis& axis = passes[p];
    const bool last = p + 1 == passes.size();
    void* target = y.data;
    const uint64_t bytes = static_cast<uint64_t>(axis.outer) * axis.out *
                           axis.inner * scratch_bytes;
    if (!last) {
      target = DeviceAllocate(device, bytes);
      if (target == nullptr) {
        Fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "out of memory for the resize's scratch of " +
                 std::to_string(bytes) + " bytes");
        break;
      }
    }
    const bool ok =
        op.Launched(LaunchResizeAxis(axis, source_dtype, source,
                                     last ? ToGpu(y.dtype) : scratch_dtype,
                                     target, element_bytes, op.stream()),
                    "launching the resize kernel");
    // Stream-ordered: the next user of these bytes runs after this pass.
    if (scratch != nullptr) DeviceDeallocate(device, scratch, scratch_size);
    scratch = last ? nullptr : target;
    scratch_size = bytes;
    if (!ok) break;
    source = target;
    source_dtype = scratch_dtype;
  }
  if (scratch != nullptr) DeviceDeallocate(device, scratch, scratch_size);
}

}  // namespace

bool RegisterResizeKernels(AsyncRT_PluginParams* params,
                           AsyncRT_Status* status) {
  const KernelEntry kernels[] = {{"nn.resize", ResizeKernel, nullptr}};
  return RegisterKernels(params, kernels, std::size(kernels), status);
}

}  // namespace asyncrt::gpu
