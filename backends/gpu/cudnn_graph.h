// cuDNN 9's graph (backend) API for the CUDA plug-in's convolutions: a
// convolution, with its bias, residual sum and relu or clip as pointwise
// operations of the same graph where an engine fuses them, planned once per
// configuration (the heuristics' engines timed on the first call's
// buffers) and executed on the device's cuDNN handle.
//
// Thread-safety: a plan is made and executed under the caller's lock on
// the device's cuDNN state (cudnn_ops.cc); nothing here is shared.
#ifndef ASYNCRT_BACKENDS_GPU_CUDNN_GRAPH_H_
#define ASYNCRT_BACKENDS_GPU_CUDNN_GRAPH_H_

#include <cudnn.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <vector>

#include "backends/gpu/cuda_device.h"
#include "backends/gpu/cuda_kernels.h"

namespace asyncrt::gpu {

// Owns cuDNN graph API descriptors: those of a convolution plan live as
// long as the plan (its engine configuration and graph with it).
class BackendDescriptors {
 public:
  ~BackendDescriptors() {
    for (auto it = owned_.rbegin(); it != owned_.rend(); ++it) {
      cudnnBackendDestroyDescriptor(*it);
    }
  }
  // A new descriptor of `type`, or null.
  cudnnBackendDescriptor_t Make(cudnnBackendDescriptorType_t type) {
    cudnnBackendDescriptor_t descriptor = nullptr;
    if (cudnnBackendCreateDescriptor(type, &descriptor) !=
        CUDNN_STATUS_SUCCESS) {
      return nullptr;
    }
    owned_.push_back(descriptor);
    return descriptor;
  }

 private:
  std::vector<cudnnBackendDescriptor_t> owned_;
};

// A convolution's window per 2-D dimension (1-D: a leading 1 x 1 window).
struct Window2d {
  int stride[2] = {1, 1};
  int dilation[2] = {1, 1};
  int pad[2] = {0, 0};
};

// Element strides of N, C, H, W `dims` in NCHW or, `channels_last`, NHWC
// memory.
std::vector<int64_t> Strides4d(const std::vector<int64_t>& dims,
                               bool channels_last);

// A convolution's shapes: x, w and y as N, C, H, W (w as M, C/group, kH,
// kW) whatever the memory's order, which `channels_last` gives (NHWC, w
// M x kH x kW x C/group).
struct ConvGeometry {
  std::vector<int64_t> x, w, y;
  bool channels_last = false;
  Window2d window;
};

// The buffers of one execution of a convolution's plan.
struct ConvBuffers {
  const void* x = nullptr;
  const void* w = nullptr;
  void* y = nullptr;
  const void* bias = nullptr;  // Read by a fused plan with a bias.
  const void* sum = nullptr;   // Read by a fused plan with a sum.
};

// What follows a convolution inside its graph when an engine fuses it: the
// bias, the sum, and relu or clip (cuDNN's RELU_FWD with clips).
struct ConvEpilogue {
  bool bias = false;
  bool sum = false;
  bool relu = false;
  double lower_clip = 0;
  std::optional<double> upper_clip;
  bool empty() const { return !bias && !sum && !relu; }
};

// The epilogue of `activation` with a bias and a sum as given, if cuDNN's
// graph has it: identity, relu or clip.
std::optional<ConvEpilogue> FusableEpilogue(bool bias, bool sum,
                                            UnaryOp activation, float alpha,
                                            float beta);

// A convolution's plan of the graph API, with the descriptors it keeps.
struct BackendConvPlan {
  cudnnBackendDescriptor_t plan = nullptr;  // Owned by `descriptors`.
  std::unique_ptr<BackendDescriptors> descriptors;
  size_t workspace_bytes = 0;
  bool fused = false;  // It computes the epilogue: bias and sum in buffers.
};

// The plan of the convolution x * w -> y as a graph (with
// `epilogue`'s operations after it where that is not empty, else + beta y
// for a sum), the engines cuDNN's heuristics propose, the fastest of the
// first few that build, timed on the call's buffers (the first call of a
// shape waits for the GPU, as cudnnFind does). Engines that compile at run
// time are tried only where no other builds; f32 is computed in TF32 only
// where the settings allow it. Nothing where any step
// fails: the caller falls back.
std::optional<BackendConvPlan> MakeBackendPlan(
    cudnnHandle_t handle, cudnnDataType_t type, const ConvGeometry& geometry,
    const ConvEpilogue& epilogue, bool beta, const ConvBuffers& buffers,
    CudaDevice& device, cudaStream_t stream);

// Runs `plan` once on `buffers` (bias and sum where not null) with
// `workspace`.
cudnnStatus_t ExecuteBackendPlan(cudnnHandle_t handle,
                                 cudnnBackendDescriptor_t plan,
                                 const ConvBuffers& buffers, void* workspace);

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_CUDNN_GRAPH_H_
