// The CUDA plug-in's convolution and pooling on cuDNN 9, and inference
// batch normalization on our kernel.
//
// nn.conv (1-D and 2-D, groups, dilations, symmetric padding) runs
// cudnnConvolutionForward with the algorithm cudnnFind picks for the shape
// (once per shape, as PyTorch's cudnn.benchmark does), a fused sum as the
// convolution's beta = 1 over a copy of it, then bias and activation in one
// pass of our kernel. Pooling is cudnnPoolingForward. NCHW throughout.
#include <cudnn.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "backends/gpu/cuda_device.h"
#include "backends/gpu/cuda_kernels.h"
#include "backends/gpu/op_call.h"

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

// The device's cuDNN handle (made on first use, bound to its stream) and
// convolution plans. Guarded by `mutex`: a handle is used by one thread at
// a time, and a plan's descriptors are shared.
struct CudnnState {
  struct ConvPlan {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr, bias = nullptr;
    cudnnActivationDescriptor_t relu = nullptr, identity = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnConvolutionFwdAlgo_t algo = CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_GEMM;
    size_t workspace_bytes = 0;
    // cuDNN's graph API plan, where one could be made: its execution costs
    // the host far less than the legacy call (measured ~100 us per
    // convolution on an H200's host). Null: the legacy API.
    cudnnBackendDescriptor_t backend_plan = nullptr;  // In descriptors.
    std::unique_ptr<BackendDescriptors> backend_descriptors;
    size_t backend_workspace_bytes = 0;
    bool backend_beta = false;  // The plan adds y's prior value (a sum).
    ~ConvPlan() {
      if (identity) cudnnDestroyActivationDescriptor(identity);
      if (relu) cudnnDestroyActivationDescriptor(relu);
      if (bias) cudnnDestroyTensorDescriptor(bias);
      if (conv) cudnnDestroyConvolutionDescriptor(conv);
      if (w) cudnnDestroyFilterDescriptor(w);
      if (y) cudnnDestroyTensorDescriptor(y);
      if (x) cudnnDestroyTensorDescriptor(x);
    }
  };
  std::mutex mutex;
  cudnnHandle_t handle = nullptr;
  std::map<std::vector<int64_t>, std::unique_ptr<ConvPlan>> conv_plans;
  ~CudnnState() {
    conv_plans.clear();
    if (handle) cudnnDestroy(handle);
  }
};

void DestroyCudnnState(CudnnState* state) { delete state; }

namespace {

bool DnnOk(cudnnStatus_t status, const char* what, OpCall& op) {
  if (status == CUDNN_STATUS_SUCCESS) return true;
  Fail(op.status(), ASYNCRT_INTERNAL,
       std::string(what) + ": " + cudnnGetErrorString(status));
  return false;
}

cudnnDataType_t DnnType(AsyncRT_DType dtype) {
  switch (dtype) {
    case ASYNCRT_DTYPE_F16:
      return CUDNN_DATA_HALF;
    case ASYNCRT_DTYPE_BF16:
      return CUDNN_DATA_BFLOAT16;
    default:
      return CUDNN_DATA_FLOAT;
  }
}

// The device's cuDNN state with its lock held; null (status set) if the
// handle cannot be made.
CudnnState* LockedState(OpCall& op, std::unique_lock<std::mutex>* lock) {
  CudaDevice& device = op.device();
  {
    std::lock_guard<std::mutex> guard(device.cudnn_init_mutex);
    if (device.cudnn == nullptr) device.cudnn = new CudnnState();
  }
  CudnnState* state = device.cudnn;
  *lock = std::unique_lock<std::mutex>(state->mutex);
  if (state->handle == nullptr) {
    if (!DnnOk(cudnnCreate(&state->handle), "cudnnCreate", op)) return nullptr;
  }
  if (!DnnOk(cudnnSetStream(state->handle, op.stream()), "cudnnSetStream",
             op)) {
    return nullptr;
  }
  return state;
}

// A 4-D NCHW view of an N x C x W or N x C x H x W operand.
std::vector<int64_t> As4d(const AsyncRT_TensorView& view) {
  std::vector<int64_t> dims(view.dims, view.dims + view.rank);
  if (dims.size() == 3) dims.insert(dims.begin() + 2, 1);
  return dims;
}

// ONNX's window attributes for `spatial` dimensions (1 or 2) of `input`
// with `kernel`, as [stride, dilation, pad] per 2-D dimension (1-D gets a
// leading 1 x 1 window). False (status set) for asymmetric padding.
struct Window2d {
  int stride[2] = {1, 1};
  int dilation[2] = {1, 1};
  int pad[2] = {0, 0};
};
bool MakeWindow2d(OpCall& op, const std::vector<int64_t>& input,
                  const std::vector<int64_t>& kernel, int spatial,
                  Window2d* window) {
  std::vector<int64_t> strides, dilations, pads;
  op.Ints("strides", &strides);
  op.Ints("dilations", &dilations);
  op.Ints("pads", &pads);
  const std::string auto_pad = op.String("auto_pad", "NOTSET");
  for (int i = 0; i < spatial; ++i) {
    const int d2 = 2 - spatial + i;  // Index among the 2-D dimensions.
    const int64_t in = input[2 + d2], k = kernel[d2];
    const int64_t s = i < static_cast<int>(strides.size()) ? strides[i] : 1;
    const int64_t d = i < static_cast<int>(dilations.size()) ? dilations[i] : 1;
    int64_t begin = i < static_cast<int>(pads.size()) ? pads[i] : 0;
    int64_t end =
        i + spatial < static_cast<int>(pads.size()) ? pads[i + spatial] : 0;
    const int64_t extent = (k - 1) * d + 1;
    if (auto_pad == "VALID") {
      begin = end = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    }
    if (begin != end) {
      return op.Unsupported("asymmetric padding (" + std::to_string(begin) +
                            " before, " + std::to_string(end) + " after)");
    }
    window->stride[d2] = static_cast<int>(s);
    window->dilation[d2] = static_cast<int>(d);
    window->pad[d2] = static_cast<int>(begin);
  }
  return true;
}

bool SetTensor4d(cudnnTensorDescriptor_t* desc, AsyncRT_DType dtype,
                 const std::vector<int64_t>& dims, OpCall& op) {
  return DnnOk(cudnnCreateTensorDescriptor(desc), "cudnnCreateTensorDescriptor",
               op) &&
         DnnOk(cudnnSetTensor4dDescriptor(
                   *desc, CUDNN_TENSOR_NCHW, DnnType(dtype),
                   static_cast<int>(dims[0]), static_cast<int>(dims[1]),
                   static_cast<int>(dims[2]), static_cast<int>(dims[3])),
               "cudnnSetTensor4dDescriptor", op);
}

//===--- cuDNN's graph (backend) API --------------------------------------===//

#define ASYNCRT_BACKEND_OK(call) \
  if ((call) != CUDNN_STATUS_SUCCESS) return false

constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3;

bool SetInt64s(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
               const std::vector<int64_t>& values) {
  return cudnnBackendSetAttribute(d, name, CUDNN_TYPE_INT64,
                                  static_cast<int64_t>(values.size()),
                                  values.data()) == CUDNN_STATUS_SUCCESS;
}

cudnnBackendDescriptor_t BackendTensor(BackendDescriptors& descriptors,
                                       cudnnDataType_t type,
                                       const std::vector<int64_t>& dims,
                                       int64_t uid) {
  cudnnBackendDescriptor_t tensor =
      descriptors.Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  if (tensor == nullptr) return nullptr;
  std::vector<int64_t> strides(dims.size());
  int64_t stride = 1;
  for (int i = static_cast<int>(dims.size()) - 1; i >= 0; --i) {
    strides[i] = stride;
    stride *= dims[i];
  }
  const int64_t alignment = 16;
  if (cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_DATA_TYPE,
                               CUDNN_TYPE_DATA_TYPE, 1,
                               &type) != CUDNN_STATUS_SUCCESS ||
      !SetInt64s(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, dims) ||
      !SetInt64s(tensor, CUDNN_ATTR_TENSOR_STRIDES, strides) ||
      !SetInt64s(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, {uid}) ||
      !SetInt64s(tensor, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, {alignment}) ||
      cudnnBackendFinalize(tensor) != CUDNN_STATUS_SUCCESS) {
    return nullptr;
  }
  return tensor;
}

// Runs `plan` once on x, w, y with `workspace`.
cudnnStatus_t ExecuteBackendPlan(cudnnHandle_t handle,
                                 cudnnBackendDescriptor_t plan, const void* x,
                                 const void* w, void* y, void* workspace) {
  cudnnBackendDescriptor_t pack = nullptr;
  cudnnStatus_t status = cudnnBackendCreateDescriptor(
      CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (status != CUDNN_STATUS_SUCCESS) return status;
  const int64_t uids[] = {kUidX, kUidW, kUidY};
  void* pointers[] = {const_cast<void*>(x), const_cast<void*>(w), y};
  if ((status = cudnnBackendSetAttribute(
           pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, 3,
           uids)) == CUDNN_STATUS_SUCCESS &&
      (status = cudnnBackendSetAttribute(
           pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR, 3,
           pointers)) == CUDNN_STATUS_SUCCESS &&
      (status = cudnnBackendSetAttribute(
           pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
           &workspace)) == CUDNN_STATUS_SUCCESS &&
      (status = cudnnBackendFinalize(pack)) == CUDNN_STATUS_SUCCESS) {
    status = cudnnBackendExecute(handle, plan, pack);
  }
  cudnnBackendDestroyDescriptor(pack);
  return status;
}

// Makes plan->backend_plan: the convolution x * w -> y (+ beta y) as a
// one-op graph, the engines cuDNN's heuristics propose, the fastest of the
// first few that build, timed on the call's buffers (the first call of a
// shape waits for the GPU, as cudnnFind does). False (and no plan) where
// any step fails: the caller keeps the legacy API.
bool MakeBackendPlan(CudnnState& state, CudnnState::ConvPlan& plan,
                     cudnnDataType_t type, const std::vector<int64_t>& x,
                     const std::vector<int64_t>& w,
                     const std::vector<int64_t>& y, const Window2d& window,
                     bool beta, const void* x_data, const void* w_data,
                     void* y_data, CudaDevice& device, cudaStream_t stream) {
  auto owned = std::make_unique<BackendDescriptors>();
  BackendDescriptors& descriptors = *owned;
  cudnnBackendDescriptor_t x_desc = BackendTensor(descriptors, type, x, kUidX);
  cudnnBackendDescriptor_t w_desc = BackendTensor(descriptors, type, w, kUidW);
  cudnnBackendDescriptor_t y_desc = BackendTensor(descriptors, type, y, kUidY);
  if (!x_desc || !w_desc || !y_desc) return false;

  cudnnBackendDescriptor_t conv =
      descriptors.Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  if (conv == nullptr) return false;
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                               CUDNN_TYPE_DATA_TYPE, 1, &compute));
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                               CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  if (!SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, {2}) ||
      !SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS,
                 {window.dilation[0], window.dilation[1]}) ||
      !SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                 {window.stride[0], window.stride[1]}) ||
      !SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                 {window.pad[0], window.pad[1]}) ||
      !SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                 {window.pad[0], window.pad[1]})) {
    return false;
  }
  ASYNCRT_BACKEND_OK(cudnnBackendFinalize(conv));

  cudnnBackendDescriptor_t op =
      descriptors.Make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  if (op == nullptr) return false;
  const float alpha = 1.f, beta_value = beta ? 1.f : 0.f;
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x_desc));
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w_desc));
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &y_desc));
  ASYNCRT_BACKEND_OK(cudnnBackendSetAttribute(
      op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_CONV_DESC,
      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv));
  ASYNCRT_BACKEND_OK(cudnnBackendSetAttribute(
      op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_ALPHA, CUDNN_TYPE_FLOAT, 1,
      &alpha));
  ASYNCRT_BACKEND_OK(cudnnBackendSetAttribute(
      op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_BETA, CUDNN_TYPE_FLOAT, 1,
      &beta_value));
  ASYNCRT_BACKEND_OK(cudnnBackendFinalize(op));

  cudnnBackendDescriptor_t graph =
      descriptors.Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  if (graph == nullptr) return false;
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &op));
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
                               CUDNN_TYPE_HANDLE, 1, &state.handle));
  ASYNCRT_BACKEND_OK(cudnnBackendFinalize(graph));

  cudnnBackendDescriptor_t heuristics =
      descriptors.Make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  if (heuristics == nullptr) return false;
  const cudnnBackendHeurMode_t heuristic_mode = CUDNN_HEUR_MODE_A;
  ASYNCRT_BACKEND_OK(cudnnBackendSetAttribute(
      heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
      CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_MODE,
                               CUDNN_TYPE_HEUR_MODE, 1, &heuristic_mode));
  ASYNCRT_BACKEND_OK(cudnnBackendFinalize(heuristics));
  int64_t count = 0;
  ASYNCRT_BACKEND_OK(cudnnBackendGetAttribute(
      heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      0, &count, nullptr));
  constexpr int64_t kCandidates = 8;
  count = std::min(count, kCandidates);
  if (count <= 0) return false;
  std::vector<cudnnBackendDescriptor_t> configs(count);
  for (auto& config : configs) {
    config = descriptors.Make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    if (config == nullptr) return false;
  }
  int64_t returned = 0;
  ASYNCRT_BACKEND_OK(cudnnBackendGetAttribute(
      heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS, CUDNN_TYPE_BACKEND_DESCRIPTOR,
      count, &returned, configs.data()));

  // Time the first few plans that build (twice each; the second run).
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess ||
      cudaEventCreate(&stop) != cudaSuccess) {
    (void)cudaGetLastError();
    if (start) cudaEventDestroy(start);
    return false;
  }
  // A sum's prior value in y must survive the timing runs.
  const size_t y_bytes = [&] {
    int64_t n = 1;
    for (int64_t d : y) n *= d;
    return static_cast<size_t>(n) * (type == CUDNN_DATA_FLOAT ? 4 : 2);
  }();
  void* saved_y = beta ? DeviceAllocate(device, y_bytes) : nullptr;
  if (beta && (saved_y == nullptr || cudaMemcpyAsync(saved_y, y_data, y_bytes,
                                                     cudaMemcpyDeviceToDevice,
                                                     stream) != cudaSuccess)) {
    if (saved_y) DeviceDeallocate(device, saved_y, y_bytes);
    cudaEventDestroy(start);
    cudaEventDestroy(stop);
    return false;
  }
  cudnnBackendDescriptor_t best = nullptr;
  float best_ms = 0;
  int64_t best_workspace = 0;
  int timed = 0;
  for (int64_t i = 0; i < returned && timed < 4; ++i) {
    cudnnBackendDescriptor_t candidate =
        descriptors.Make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (candidate == nullptr) break;
    int64_t workspace_bytes = 0;
    if (cudnnBackendSetAttribute(candidate, CUDNN_ATTR_EXECUTION_PLAN_HANDLE,
                                 CUDNN_TYPE_HANDLE, 1,
                                 &state.handle) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendSetAttribute(candidate,
                                 CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
                                 CUDNN_TYPE_BACKEND_DESCRIPTOR, 1,
                                 &configs[i]) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendFinalize(candidate) != CUDNN_STATUS_SUCCESS ||
        cudnnBackendGetAttribute(candidate,
                                 CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
                                 CUDNN_TYPE_INT64, 1, nullptr,
                                 &workspace_bytes) != CUDNN_STATUS_SUCCESS) {
      continue;
    }
    void* workspace = workspace_bytes > 0
                          ? DeviceAllocate(device, workspace_bytes)
                          : nullptr;
    if (workspace_bytes > 0 && workspace == nullptr) continue;
    float ms = -1;
    bool ran = true;
    for (int run = 0; run < 2 && ran; ++run) {
      if (beta) {
        cudaMemcpyAsync(y_data, saved_y, y_bytes, cudaMemcpyDeviceToDevice,
                        stream);
      }
      cudaEventRecord(start, stream);
      ran = ExecuteBackendPlan(state.handle, candidate, x_data, w_data, y_data,
                               workspace) == CUDNN_STATUS_SUCCESS;
      cudaEventRecord(stop, stream);
    }
    if (ran && cudaEventSynchronize(stop) == cudaSuccess) {
      cudaEventElapsedTime(&ms, start, stop);
    }
    (void)cudaGetLastError();
    if (workspace) DeviceDeallocate(device, workspace, workspace_bytes);
    if (!ran || ms < 0) continue;
    ++timed;
    if (best == nullptr || ms < best_ms) {
      best = candidate;
      best_ms = ms;
      best_workspace = workspace_bytes;
    }
  }
  if (beta) {
    // y as the caller gave it.
    cudaMemcpyAsync(y_data, saved_y, y_bytes, cudaMemcpyDeviceToDevice, stream);
    DeviceDeallocate(device, saved_y, y_bytes);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (best == nullptr) return false;
  plan.backend_plan = best;
  plan.backend_descriptors = std::move(owned);
  plan.backend_workspace_bytes = static_cast<size_t>(best_workspace);
  plan.backend_beta = beta;
  return true;
}

#undef ASYNCRT_BACKEND_OK

//===--- nn.conv ----------------------------------------------------------===//

// Makes the plan of a convolution: descriptors, and the fastest algorithm
// cudnnFind measures (it runs each candidate once, synchronously, on the
// first call of a shape).
std::unique_ptr<CudnnState::ConvPlan> MakeConvPlan(
    CudnnState& state, AsyncRT_DType dtype, const std::vector<int64_t>& x,
    const std::vector<int64_t>& w, const std::vector<int64_t>& y,
    const Window2d& window, int group, OpCall& op) {
  auto plan = std::make_unique<CudnnState::ConvPlan>();
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  bool ok =
      SetTensor4d(&plan->x, dtype, x, op) &&
      SetTensor4d(&plan->y, dtype, y, op) &&
      DnnOk(cudnnCreateFilterDescriptor(&plan->w),
            "cudnnCreateFilterDescriptor", op) &&
      DnnOk(cudnnSetFilter4dDescriptor(
                plan->w, DnnType(dtype), CUDNN_TENSOR_NCHW,
                static_cast<int>(w[0]), static_cast<int>(w[1]),
                static_cast<int>(w[2]), static_cast<int>(w[3])),
            "cudnnSetFilter4dDescriptor", op) &&
      DnnOk(cudnnCreateConvolutionDescriptor(&plan->conv),
            "cudnnCreateConvolutionDescriptor", op) &&
      DnnOk(cudnnSetConvolution2dDescriptor(
                plan->conv, window.pad[0], window.pad[1], window.stride[0],
                window.stride[1], window.dilation[0], window.dilation[1],
                CUDNN_CROSS_CORRELATION, compute),
            "cudnnSetConvolution2dDescriptor", op) &&
      DnnOk(cudnnSetConvolutionGroupCount(plan->conv, group),
            "cudnnSetConvolutionGroupCount", op) &&
      SetTensor4d(&plan->bias, dtype, {1, y[1], 1, 1}, op) &&
      DnnOk(cudnnCreateActivationDescriptor(&plan->relu),
            "cudnnCreateActivationDescriptor", op) &&
      DnnOk(cudnnSetActivationDescriptor(plan->relu, CUDNN_ACTIVATION_RELU,
                                         CUDNN_PROPAGATE_NAN, 0.0),
            "cudnnSetActivationDescriptor", op) &&
      DnnOk(cudnnCreateActivationDescriptor(&plan->identity),
            "cudnnCreateActivationDescriptor", op) &&
      DnnOk(cudnnSetActivationDescriptor(plan->identity,
                                         CUDNN_ACTIVATION_IDENTITY,
                                         CUDNN_PROPAGATE_NAN, 0.0),
            "cudnnSetActivationDescriptor", op);
  // Tensor cores for f16 and bf16; for f32 only where TF32 is allowed.
  const cudnnMathType_t math = dtype != ASYNCRT_DTYPE_F32 ? CUDNN_TENSOR_OP_MATH
                               : Settings().allow_tf32    ? CUDNN_DEFAULT_MATH
                                                          : CUDNN_FMA_MATH;
  ok = ok && DnnOk(cudnnSetConvolutionMathType(plan->conv, math),
                   "cudnnSetConvolutionMathType", op);
  if (!ok) return nullptr;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  if (!DnnOk(cudnnFindConvolutionForwardAlgorithm(
                 state.handle, plan->x, plan->w, plan->conv, plan->y,
                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
             "cudnnFindConvolutionForwardAlgorithm", op)) {
    return nullptr;
  }
  for (int i = 0; i < found; ++i) {
    // FMA math must not come back as TF32.
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        (math == CUDNN_FMA_MATH && perf[i].mathType != CUDNN_FMA_MATH &&
         perf[i].mathType != CUDNN_DEFAULT_MATH)) {
      continue;
    }
    plan->algo = perf[i].algo;
    plan->workspace_bytes = perf[i].memory;
    if (!DnnOk(cudnnSetConvolutionMathType(plan->conv, perf[i].mathType),
               "cudnnSetConvolutionMathType", op)) {
      return nullptr;
    }
    return plan;
  }
  op.Unsupported("this convolution (cuDNN found no algorithm)");
  return nullptr;
}

void ConvKernel(AsyncRT_KernelContext* context, void*, AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, w, bias = {}, sum = {}, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.Input(1, &w)) return;
  if (op.num_inputs() > 2 && !op.Input(2, &bias)) return;
  if (op.num_inputs() > 3 && !op.Input(3, &sum)) return;
  if (x.rank != 3 && x.rank != 4) {
    op.Unsupported("a " + std::to_string(x.rank - 2) + "-D convolution");
    return;
  }
  if (op.String("result_layout", "plain") != "plain") {
    op.Unsupported("result_layout other than plain");
    return;
  }
  if (!op.Output(0, &y) || NumElements(y) == 0) return;
  const std::vector<int64_t> x4 = As4d(x), w4 = As4d(w), y4 = As4d(y);
  Window2d window;
  if (!MakeWindow2d(op, x4, {w4[2], w4[3]}, x.rank - 2, &window)) return;
  const int group = static_cast<int>(op.Int("group", 1));
  UnaryOp activation;
  float alpha_act, beta_act;
  if (!FusedActivation(op, &activation, &alpha_act, &beta_act)) return;

  std::unique_lock<std::mutex> lock;
  CudnnState* state = LockedState(op, &lock);
  if (state == nullptr) return;
  std::vector<int64_t> key = {x.dtype, group, sum.data != nullptr};
  key.insert(key.end(), x4.begin(), x4.end());
  key.insert(key.end(), w4.begin(), w4.end());
  for (int i = 0; i < 2; ++i) {
    key.insert(key.end(),
               {window.stride[i], window.dilation[i], window.pad[i]});
  }
  CudaDevice& device = op.device();
  std::unique_ptr<CudnnState::ConvPlan>& plan = state->conv_plans[key];
  if (!plan) {
    plan = MakeConvPlan(*state, x.dtype, x4, w4, y4, window, group, op);
    if (!plan) {
      state->conv_plans.erase(key);
      return;
    }
    if (!Settings().legacy_conv) {
      // Timed with the sum in y, as the plan runs.
      if (sum.data != nullptr &&
          !op.Launched(cudaMemcpyAsync(y.data, sum.data, y.size_bytes,
                                       cudaMemcpyDeviceToDevice, op.stream()),
                       "cudaMemcpyAsync")) {
        return;
      }
      MakeBackendPlan(*state, *plan, DnnType(x.dtype), x4, w4, y4, window,
                      sum.data != nullptr, x.data, w.data, y.data, device,
                      op.stream());
    }
  }
  if (plan->backend_plan != nullptr) {
    // The graph API's plan: the convolution (adding the sum copied into y),
    // then bias and activation in our kernel.
    void* workspace = nullptr;
    if (plan->backend_workspace_bytes > 0) {
      workspace = DeviceAllocate(device, plan->backend_workspace_bytes);
      if (workspace == nullptr) {
        Fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
             "out of memory for the convolution's workspace of " +
                 std::to_string(plan->backend_workspace_bytes) + " bytes");
        return;
      }
    }
    bool ok =
        sum.data == nullptr ||
        op.Launched(cudaMemcpyAsync(y.data, sum.data, y.size_bytes,
                                    cudaMemcpyDeviceToDevice, op.stream()),
                    "cudaMemcpyAsync");
    ok = ok && DnnOk(ExecuteBackendPlan(state->handle, plan->backend_plan,
                                        x.data, w.data, y.data, workspace),
                     "cudnnBackendExecute", op);
    if (workspace != nullptr) {
      DeviceDeallocate(device, workspace, plan->backend_workspace_bytes);
    }
    lock.unlock();
    if (ok && (bias.data != nullptr || activation != UnaryOp::kIdentity)) {
      op.Launched(
          LaunchBiasActivation(ToGpu(y.dtype), y.data, bias.data, y4[1],
                               y4[2] * y4[3], NumElements(y), activation,
                               alpha_act, beta_act, op.stream()),
          "launching the bias and activation");
    }
    return;
  }
  // The legacy API. The workspace is freed in stream order after the
  // convolution.
  void* workspace = nullptr;
  if (plan->workspace_bytes > 0) {
    workspace = DeviceAllocate(device, plan->workspace_bytes);
    if (workspace == nullptr) {
      Fail(status, ASYNCRT_RESOURCE_EXHAUSTED,
           "out of memory for the convolution's workspace of " +
               std::to_string(plan->workspace_bytes) + " bytes");
      return;
    }
  }
  // One cuDNN call for conv + bias (+ sum) (+ relu) where cuDNN fuses it:
  // relu with any algorithm, no activation only with implicit precomputed
  // GEMM. Otherwise the convolution (with the sum as beta = 1 over a copy
  // of it), then bias and activation in our kernel.
  const bool fused =
      bias.data != nullptr &&
      (activation == UnaryOp::kRelu ||
       (activation == UnaryOp::kIdentity &&
        plan->algo == CUDNN_CONVOLUTION_FWD_ALGO_IMPLICIT_PRECOMP_GEMM));
  float alpha = 1.f, beta = 0.f;
  bool ok = true;
  if (fused) {
    const float alpha2 = sum.data != nullptr ? 1.f : 0.f;
    ok = DnnOk(
        cudnnConvolutionBiasActivationForward(
            state->handle, &alpha, plan->x, x.data, plan->w, w.data, plan->conv,
            plan->algo, workspace, plan->workspace_bytes, &alpha2, plan->y,
            sum.data != nullptr ? sum.data : y.data, plan->bias, bias.data,
            activation == UnaryOp::kRelu ? plan->relu : plan->identity, plan->y,
            y.data),
        "cudnnConvolutionBiasActivationForward", op);
  } else {
    if (sum.data != nullptr) {
      ok = op.Launched(cudaMemcpyAsync(y.data, sum.data, y.size_bytes,
                                       cudaMemcpyDeviceToDevice, op.stream()),
                       "cudaMemcpyAsync");
      beta = 1.f;
    }
    ok = ok && DnnOk(cudnnConvolutionForward(
                         state->handle, &alpha, plan->x, x.data, plan->w,
                         w.data, plan->conv, plan->algo, workspace,
                         plan->workspace_bytes, &beta, plan->y, y.data),
                     "cudnnConvolutionForward", op);
  }
  if (workspace != nullptr) {
    DeviceDeallocate(device, workspace, plan->workspace_bytes);
  }
  lock.unlock();
  if (ok && !fused &&
      (bias.data != nullptr || activation != UnaryOp::kIdentity)) {
    op.Launched(LaunchBiasActivation(ToGpu(y.dtype), y.data, bias.data, y4[1],
                                     y4[2] * y4[3], NumElements(y), activation,
                                     alpha_act, beta_act, op.stream()),
                "launching the bias and activation");
  }
}

//===--- Pooling ----------------------------------------------------------===//

void PoolKernel(AsyncRT_KernelContext* context, void* data,
                AsyncRT_Status* status) {
  const bool max = data != nullptr;
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x)) return;
  if (x.rank != 3 && x.rank != 4) {
    op.Unsupported("a " + std::to_string(x.rank - 2) + "-D pooling");
    return;
  }
  if (op.String("result_layout", "plain") != "plain") {
    op.Unsupported("result_layout other than plain");
    return;
  }
  if (!op.Output(0, &y) || NumElements(y) == 0) return;
  std::vector<int64_t> kernel;
  op.Ints("kernel_shape", &kernel);
  if (static_cast<int>(kernel.size()) != x.rank - 2) {
    op.Invalid("kernel_shape must have one size per spatial dimension");
    return;
  }
  if (kernel.size() == 1) kernel.insert(kernel.begin(), 1);
  const std::vector<int64_t> x4 = As4d(x), y4 = As4d(y);
  Window2d window;
  if (!MakeWindow2d(op, x4, kernel, x.rank - 2, &window)) return;
  if (window.dilation[0] != 1 || window.dilation[1] != 1) {
    op.Unsupported("dilated pooling");
    return;
  }
  // The output size rounded up adds end padding, which cuDNN's symmetric
  // pooling windows cannot have.
  if (op.Int("ceil_mode", 0) != 0) {
    op.Unsupported("ceil_mode = 1");
    return;
  }
  const cudnnPoolingMode_t mode =
      max ? CUDNN_POOLING_MAX
      : op.Int("count_include_pad", 0) != 0
          ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
          : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  std::unique_lock<std::mutex> lock;
  CudnnState* state = LockedState(op, &lock);
  if (state == nullptr) return;
  cudnnPoolingDescriptor_t pool = nullptr;
  cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr;
  float alpha = 1.f, beta = 0.f;
  (void)(DnnOk(cudnnCreatePoolingDescriptor(&pool),
               "cudnnCreatePoolingDescriptor", op) &&
         DnnOk(cudnnSetPooling2dDescriptor(
                   pool, mode, CUDNN_PROPAGATE_NAN, static_cast<int>(kernel[0]),
                   static_cast<int>(kernel[1]), window.pad[0], window.pad[1],
                   window.stride[0], window.stride[1]),
               "cudnnSetPooling2dDescriptor", op) &&
         SetTensor4d(&x_desc, x.dtype, x4, op) &&
         SetTensor4d(&y_desc, y.dtype, y4, op) &&
         DnnOk(cudnnPoolingForward(state->handle, pool, &alpha, x_desc, x.data,
                                   &beta, y_desc, y.data),
               "cudnnPoolingForward", op));
  if (y_desc) cudnnDestroyTensorDescriptor(y_desc);
  if (x_desc) cudnnDestroyTensorDescriptor(x_desc);
  if (pool) cudnnDestroyPoolingDescriptor(pool);
}

//===--- nn.batch_normalization -------------------------------------------===//

void BatchNormKernel(AsyncRT_KernelContext* context, void*,
                     AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, scale, bias, mean, var, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.Input(1, &scale) ||
      !op.Input(2, &bias) || !op.Input(3, &mean) || !op.Input(4, &var) ||
      !op.Output(0, &y)) {
    return;
  }
  if (x.rank < 2) {
    op.Invalid("batch normalization needs N x C x ...");
    return;
  }
  const int64_t channels = x.dims[1];
  for (const AsyncRT_TensorView* parameter : {&scale, &bias, &mean, &var}) {
    if (NumElements(*parameter) != channels) {
      op.Invalid("scale, bias, mean and var need one value per channel");
      return;
    }
  }
  int64_t inner = 1;
  for (int k = 2; k < x.rank; ++k) inner *= x.dims[k];
  op.Launched(
      LaunchBatchNorm(ToGpu(x.dtype), x.data, scale.data, bias.data, mean.data,
                      var.data, y.data, channels, inner, NumElements(y),
                      op.Float("epsilon", 1e-5f), op.stream()),
      "launching the kernel");
}

}  // namespace

bool RegisterCudnnKernels(AsyncRT_PluginParams* params,
                          AsyncRT_Status* status) {
  const KernelEntry kernels[] = {
      {"nn.conv", ConvKernel, nullptr},
      {"nn.max_pool", PoolKernel, reinterpret_cast<void*>(1)},
      {"nn.average_pool", PoolKernel, nullptr},
      {"nn.batch_normalization", BatchNormKernel, nullptr},
  };
  return RegisterKernels(params, kernels, std::size(kernels), status);
}

}  // namespace asyncrt::gpu
