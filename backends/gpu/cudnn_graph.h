// cuDNN 9's graph (backend) API for the CUDA plug-in: a convolution, with
// its bias, residual sum and relu or clip as pointwise operations of the
// same graph where an engine fuses them, and nn.attention as cuDNN's fused
// attention (cudnn_attention.cc); each planned once per configuration (the
// heuristics' engines timed on the first call's buffers) and executed on
// the device's cuDNN handle.
//
// Thread-safety: a plan is made and executed under the caller's lock on
// the device's cuDNN state (cudnn_ops.cc); nothing here is shared.
#ifndef ASYNCRT_BACKENDS_GPU_CUDNN_GRAPH_H_
#define ASYNCRT_BACKENDS_GPU_CUDNN_GRAPH_H_

#include <cudnn.h>

#include <cstdint>
#include <functional>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>
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

//===--- What every graph shares ------------------------------------------===//

bool SetInt64s(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
               const std::vector<int64_t>& values);

// A tensor of a graph, 16-byte aligned: `is_virtual`, an intermediate value
// of a fused graph, never in memory; `by_value`, a scalar passed from the
// host in the variant pack. Null where cuDNN refuses it.
cudnnBackendDescriptor_t BackendTensor(BackendDescriptors& descriptors,
                                       cudnnDataType_t type,
                                       const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& strides,
                                       int64_t uid, bool is_virtual = false,
                                       bool by_value = false);

// A finalized descriptor of `type` whose `attributes` are descriptors
// (those given null are left unset); null where cuDNN refuses one.
cudnnBackendDescriptor_t DescriptorOf(
    BackendDescriptors& descriptors, cudnnBackendDescriptorType_t type,
    std::initializer_list<
        std::pair<cudnnBackendAttributeName_t, cudnnBackendDescriptor_t>>
        attributes);

struct ConvEpilogue;

// A pointwise operation `mode` of a graph, computed in f32: y = x (op b);
// b may be null; `relu` gives a RELU_FWD's clips.
cudnnBackendDescriptor_t PointwiseOperation(BackendDescriptors& descriptors,
                                            cudnnPointwiseMode_t mode,
                                            cudnnBackendDescriptor_t x,
                                            cudnnBackendDescriptor_t b,
                                            cudnnBackendDescriptor_t y,
                                            const ConvEpilogue* relu);

// A plan of the graph API, with the descriptors it keeps.
struct BackendPlan {
  cudnnBackendDescriptor_t plan = nullptr;  // Owned by `descriptors`.
  std::unique_ptr<BackendDescriptors> descriptors;
  size_t workspace_bytes = 0;
};

// The plan of the graph of `operations` (their descriptors in `owned`):
// of the engines cuDNN's heuristics propose, the fastest of the first few
// that build, each launched twice by `run(plan, workspace)` on `stream` and
// the second run timed (the host waits for the GPU, as cudnnFind does).
// Engines that compile at run time are tried only where no other builds,
// one at most; with `f32_operands`, engines that narrow f32 only where the
// settings allow TF32. Nothing where any step fails; then `why` (if not
// null) says which step and cuDNN's status.
std::optional<BackendPlan> FastestPlan(
    cudnnHandle_t handle,
    const std::vector<cudnnBackendDescriptor_t>& operations,
    std::unique_ptr<BackendDescriptors> owned, bool f32_operands,
    CudaDevice& device, cudaStream_t stream,
    const std::function<bool(cudnnBackendDescriptor_t, void*)>& run,
    std::string* why = nullptr);

// Runs `plan` once on the `count` buffers `pointers` of tensors `uids`.
cudnnStatus_t ExecutePlan(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                          const int64_t* uids, void* const* pointers,
                          int64_t count, void* workspace);

//===--- Convolutions -----------------------------------------------------===//

// A convolution's window per spatial dimension: `spatial` of them, 2 (a
// 1-D window raised to 2-D by a leading 1 x 1) or 3.
struct ConvWindow {
  int spatial = 2;
  int stride[3] = {1, 1, 1};
  int dilation[3] = {1, 1, 1};
  int pad[3] = {0, 0, 0};
};

// Element strides of N, C, spatial... `dims` in channels-first memory or,
// `channels_last`, N, spatial..., C memory.
std::vector<int64_t> ChannelStrides(const std::vector<int64_t>& dims,
                                    bool channels_last);

// A convolution's shapes: x, w and y as N, C, spatial... (w as M, C/group,
// kernel...) whatever the memory's order, which `channels_last` gives
// (N x spatial... x C; w M x kernel... x C/group).
struct ConvGeometry {
  std::vector<int64_t> x, w, y;
  bool channels_last = false;
  ConvWindow window;
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

// A convolution's plan of the graph API.
struct BackendConvPlan : BackendPlan {
  bool fused = false;  // It computes the epilogue: bias and sum in buffers.
};

// The plan of the convolution x * w -> y as a graph (with
// `epilogue`'s operations after it where that is not empty, else + beta y
// for a sum): FastestPlan's, timed on the call's buffers (y as given
// survives the timing). Nothing where any step fails: the caller falls
// back.
std::optional<BackendConvPlan> MakeBackendPlan(
    cudnnHandle_t handle, cudnnDataType_t type, const ConvGeometry& geometry,
    const ConvEpilogue& epilogue, bool beta, const ConvBuffers& buffers,
    CudaDevice& device, cudaStream_t stream);

// Runs `plan` once on `buffers` (bias and sum where not null) with
// `workspace`.
cudnnStatus_t ExecuteBackendPlan(cudnnHandle_t handle,
                                 cudnnBackendDescriptor_t plan,
                                 const ConvBuffers& buffers, void* workspace);

//===--- Attention (cudnn_attention.cc) -----------------------------------===//

// The buffers of one execution of an attention plan.
struct AttentionBuffers {
  const void* q = nullptr;
  const void* k = nullptr;
  const void* v = nullptr;
  void* y = nullptr;
  float scale = 1.f;  // Passed by value.
};

// The operations of softmax(scale q k^T) v as one graph of cuDNN's (their
// descriptors in `descriptors`), finalized; none where a dimension is not
// positive or cuDNN refuses one (heads not dividing into groups). Needs no
// GPU (the plan does).
std::vector<cudnnBackendDescriptor_t> AttentionOperations(
    BackendDescriptors& descriptors, cudnnDataType_t type,
    const StridedAttentionShape& geometry);

// The plan of softmax(scale q k^T) v as one graph of cuDNN's operations
// (two products, the scale and the softmax with its statistics between:
// the pattern of cuDNN's fused flash attention), f32 within, `type` (half
// or bfloat16) outside: FastestPlan's on the call's buffers. Nothing where
// cuDNN has no engine for it; then `why` says what refused.
std::optional<BackendPlan> MakeAttentionPlan(
    cudnnHandle_t handle, cudnnDataType_t type,
    const StridedAttentionShape& geometry, const AttentionBuffers& buffers,
    CudaDevice& device, cudaStream_t stream, std::string* why);

cudnnStatus_t ExecuteAttentionPlan(cudnnHandle_t handle,
                                   cudnnBackendDescriptor_t plan,
                                   const AttentionBuffers& buffers,
                                   void* workspace);

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_CUDNN_GRAPH_H_
