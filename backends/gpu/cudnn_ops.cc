// The CUDA plug-in's convolution, pooling and fused attention on cuDNN 9,
// and inference batch normalization on our kernel.
//
// nn.conv (1-D to 3-D, groups, dilations, symmetric padding; channels
// first, or NHWC where data_format says so) runs a plan of cuDNN's graph
// API: the convolution with its bias, sum and relu or clip as pointwise
// operations of one graph where an engine fuses them, else the convolution
// alone (a sum as its beta = 1 over a copy) then bias and activation in one
// pass of our kernel; the legacy API (cudnnFind's algorithm) where no plan
// builds.
// nn.conv_transpose is cuDNN's backward data of a convolution. Pooling is
// cudnnPoolingForward where cuDNN's symmetric windows fit, else our kernel.
#include <cudnn.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "backends/gpu/cuda_device.h"
#include "backends/gpu/cuda_kernels.h"
#include "backends/gpu/cudnn_graph.h"
#include "backends/gpu/op_call.h"

namespace asyncrt::gpu {

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
    // convolution on an H200's host). None: the legacy API.
    std::optional<BackendConvPlan> backend;
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
  // A transposed convolution: cuDNN's backward data of the convolution
  // from y's shape to x's.
  struct TransposedConvPlan {
    cudnnTensorDescriptor_t x = nullptr, y = nullptr;
    cudnnFilterDescriptor_t w = nullptr;
    cudnnConvolutionDescriptor_t conv = nullptr;
    cudnnConvolutionBwdDataAlgo_t algo = CUDNN_CONVOLUTION_BWD_DATA_ALGO_1;
    size_t workspace_bytes = 0;
    ~TransposedConvPlan() {
      if (conv) cudnnDestroyConvolutionDescriptor(conv);
      if (w) cudnnDestroyFilterDescriptor(w);
      if (y) cudnnDestroyTensorDescriptor(y);
      if (x) cudnnDestroyTensorDescriptor(x);
    }
  };
  std::mutex mutex;
  cudnnHandle_t handle = nullptr;
  std::map<std::vector<int64_t>, std::unique_ptr<ConvPlan>> conv_plans;
  std::map<std::vector<int64_t>, std::unique_ptr<TransposedConvPlan>>
      transposed_conv_plans;
  // Fused attention by shape: the plan, or why cuDNN refused the shape.
  struct AttentionPlan {
    std::optional<BackendPlan> plan;
    std::string refusal;
  };
  std::map<std::vector<int64_t>, AttentionPlan> attention_plans;
  ~CudnnState() {
    conv_plans.clear();
    transposed_conv_plans.clear();
    attention_plans.clear();
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

// An operand's dimensions as N, C, spatial... whatever the memory's order
// (`channels_last`: N x spatial... x C; a convolution's weights M x
// kernel... x C/group), 1-D raised to 2-D by a leading spatial 1.
std::vector<int64_t> CanonicalDims(const AsyncRT_TensorView& view,
                                   bool channels_last) {
  std::vector<int64_t> dims(view.dims, view.dims + view.rank);
  if (channels_last) {
    const int64_t channels = dims.back();
    dims.pop_back();
    dims.insert(dims.begin() + 1, channels);
  }
  if (dims.size() == 3) dims.insert(dims.begin() + 2, 1);
  return dims;
}

// The bits of `value`, for keys.
int64_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof(bits));
  return bits;
}

// False (status set) for a kernel size, stride or dilation below 1.
bool PositiveWindow(OpCall& op, int64_t kernel, int64_t stride,
                    int64_t dilation) {
  return (kernel >= 1 && stride >= 1 && dilation >= 1) ||
         op.Invalid("kernel sizes, strides and dilations must be positive");
}

// ONNX's window of an op (strides, dilations, pads, auto_pad) over the
// canonical spatial dimensions of `input` (CanonicalDims') with `kernel`
// (one size per canonical spatial dimension); `spatial` is the op's own
// count (1 to 3: a 1-D window is the last of two).
struct Window {
  int count = 2;  // Canonical spatial dimensions: 2 or 3.
  int64_t kernel[3] = {1, 1, 1};
  int64_t stride[3] = {1, 1, 1};
  int64_t dilation[3] = {1, 1, 1};
  int64_t begin[3] = {0, 0, 0};  // Padding before and after.
  int64_t end[3] = {0, 0, 0};
};
// False (status set) for sizes, strides or dilations below 1.
bool ReadWindow(OpCall& op, const std::vector<int64_t>& input,
                const std::vector<int64_t>& kernel, int spatial,
                Window* result) {
  Window& window = *result;
  window.count = static_cast<int>(input.size()) - 2;
  std::vector<int64_t> strides, dilations, pads;
  op.Ints("strides", &strides);
  op.Ints("dilations", &dilations);
  op.Ints("pads", &pads);
  const std::string auto_pad = op.String("auto_pad", "NOTSET");
  const int skipped = window.count - spatial;  // The 1-D window's leading 1.
  for (int i = 0; i < spatial; ++i) {
    const int d = skipped + i;
    const int64_t in = input[2 + d], k = kernel[d];
    const int64_t s = i < static_cast<int>(strides.size()) ? strides[i] : 1;
    const int64_t dilation =
        i < static_cast<int>(dilations.size()) ? dilations[i] : 1;
    int64_t begin = i < static_cast<int>(pads.size()) ? pads[i] : 0;
    int64_t end =
        i + spatial < static_cast<int>(pads.size()) ? pads[i + spatial] : 0;
    if (!PositiveWindow(op, k, s, dilation)) return false;
    const int64_t extent = (k - 1) * dilation + 1;
    if (auto_pad == "VALID") {
      begin = end = 0;
    } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = (in + s - 1) / s;
      const int64_t total = std::max<int64_t>(0, (out - 1) * s + extent - in);
      begin = auto_pad == "SAME_UPPER" ? total / 2 : total - total / 2;
      end = total - begin;
    }
    window.kernel[d] = k;
    window.stride[d] = s;
    window.dilation[d] = dilation;
    window.begin[d] = begin;
    window.end[d] = end;
  }
  for (int d = 0; d < skipped; ++d) window.kernel[d] = kernel[d];
  return true;
}

// cuDNN's convolution window: symmetric padding only. False (status set)
// for padding that differs before and after.
bool SymmetricWindow(OpCall& op, const Window& window, ConvWindow* conv) {
  conv->spatial = window.count;
  for (int d = 0; d < window.count; ++d) {
    if (window.begin[d] != window.end[d]) {
      return op.Unsupported("asymmetric padding (" +
                            std::to_string(window.begin[d]) + " before, " +
                            std::to_string(window.end[d]) + " after)");
    }
    conv->stride[d] = static_cast<int>(window.stride[d]);
    conv->dilation[d] = static_cast<int>(window.dilation[d]);
    conv->pad[d] = static_cast<int>(window.begin[d]);
  }
  return true;
}

std::vector<int> Ints32(const std::vector<int64_t>& values) {
  return std::vector<int>(values.begin(), values.end());
}

// `dims` are N, C, spatial...; the memory is channels-first or, with
// `channels_last`, N x spatial... x C.
bool SetTensor(cudnnTensorDescriptor_t* desc, AsyncRT_DType dtype,
               const std::vector<int64_t>& dims, bool channels_last,
               OpCall& op) {
  const std::vector<int> dims32 = Ints32(dims);
  return DnnOk(cudnnCreateTensorDescriptor(desc), "cudnnCreateTensorDescriptor",
               op) &&
         DnnOk(cudnnSetTensorNdDescriptorEx(
                   *desc, channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                   DnnType(dtype), static_cast<int>(dims32.size()),
                   dims32.data()),
               "cudnnSetTensorNdDescriptorEx", op);
}

// A per-channel bias of `dims`' C: 1 x C x 1....
std::vector<int64_t> BiasDims(const std::vector<int64_t>& dims) {
  std::vector<int64_t> bias(dims.size(), 1);
  bias[1] = dims[1];
  return bias;
}

// Elements between one channel's consecutive values of y: 1 in channels-last
// memory, else the spatial size.
int64_t ChannelInner(const std::vector<int64_t>& dims, bool channels_last) {
  int64_t inner = 1;
  if (!channels_last) {
    for (size_t k = 2; k < dims.size(); ++k) inner *= dims[k];
  }
  return inner;
}

// A filter (M, C/group, kernel... in `dims`) and a convolution of `window`
// with `group`.
bool SetFilterAndConvolution(cudnnFilterDescriptor_t* filter,
                             cudnnConvolutionDescriptor_t* conv,
                             AsyncRT_DType dtype,
                             const std::vector<int64_t>& dims,
                             bool channels_last, const ConvWindow& window,
                             int group, OpCall& op) {
  const std::vector<int> dims32 = Ints32(dims);
  return DnnOk(cudnnCreateFilterDescriptor(filter),
               "cudnnCreateFilterDescriptor", op) &&
         DnnOk(cudnnSetFilterNdDescriptor(
                   *filter, DnnType(dtype),
                   channels_last ? CUDNN_TENSOR_NHWC : CUDNN_TENSOR_NCHW,
                   static_cast<int>(dims32.size()), dims32.data()),
               "cudnnSetFilterNdDescriptor", op) &&
         DnnOk(cudnnCreateConvolutionDescriptor(conv),
               "cudnnCreateConvolutionDescriptor", op) &&
         DnnOk(cudnnSetConvolutionNdDescriptor(
                   *conv, window.spatial, window.pad, window.stride,
                   window.dilation, CUDNN_CROSS_CORRELATION, CUDNN_DATA_FLOAT),
               "cudnnSetConvolutionNdDescriptor", op) &&
         DnnOk(cudnnSetConvolutionGroupCount(*conv, group),
               "cudnnSetConvolutionGroupCount", op);
}

// Tensor cores for f16 and bf16; for f32 only where TF32 is allowed.
cudnnMathType_t MathFor(AsyncRT_DType dtype) {
  return dtype != ASYNCRT_DTYPE_F32 ? CUDNN_TENSOR_OP_MATH
         : Settings().allow_tf32    ? CUDNN_DEFAULT_MATH
                                    : CUDNN_FMA_MATH;
}

// A cuDNN call's workspace of `bytes` from the device's memory (null for
// none); false (status set: out of memory, naming `what`) where it cannot
// be had. FreeWorkspace gives it back once the call is enqueued: stream
// ordered, the next user of the bytes runs after the call.
bool AllocateWorkspace(OpCall& op, size_t bytes, const char* what,
                       void** workspace) {
  *workspace = bytes > 0 ? DeviceAllocate(op.device(), bytes) : nullptr;
  if (bytes == 0 || *workspace != nullptr) return true;
  Fail(op.status(), ASYNCRT_RESOURCE_EXHAUSTED,
       std::string("out of memory for ") + what + "'s workspace of " +
           std::to_string(bytes) + " bytes");
  return false;
}
void FreeWorkspace(OpCall& op, void* workspace, size_t bytes) {
  if (workspace != nullptr) DeviceDeallocate(op.device(), workspace, bytes);
}

// Of cudnnFind's `found` results (`perf`, fastest first), the first that
// succeeded and keeps `math` (FMA math must not come back as TF32): its
// algorithm and workspace into `plan`, its math type onto plan.conv.
// False (status set) where none does.
template <typename Perf, typename Plan>
bool ChooseAlgorithm(const Perf* perf, int found, cudnnMathType_t math,
                     const char* what, Plan& plan, OpCall& op) {
  for (int i = 0; i < found; ++i) {
    const cudnnMathType_t kept = perf[i].mathType;
    if (perf[i].status != CUDNN_STATUS_SUCCESS ||
        (math == CUDNN_FMA_MATH && kept != CUDNN_FMA_MATH &&
         kept != CUDNN_DEFAULT_MATH)) {
      continue;
    }
    plan.algo = perf[i].algo;
    plan.workspace_bytes = perf[i].memory;
    return DnnOk(cudnnSetConvolutionMathType(plan.conv, kept),
                 "cudnnSetConvolutionMathType", op);
  }
  return op.Unsupported(std::string(what) + " (cuDNN found no algorithm)");
}

//===--- nn.conv ----------------------------------------------------------===//

// Makes the plan of a convolution: descriptors, and the fastest algorithm
// cudnnFind measures (it runs each candidate once, synchronously, on the
// first call of a shape).
std::unique_ptr<CudnnState::ConvPlan> MakeConvPlan(
    CudnnState& state, AsyncRT_DType dtype, const std::vector<int64_t>& x,
    const std::vector<int64_t>& w, const std::vector<int64_t>& y,
    bool channels_last, const ConvWindow& window, int group, OpCall& op) {
  auto plan = std::make_unique<CudnnState::ConvPlan>();
  bool ok =
      SetTensor(&plan->x, dtype, x, channels_last, op) &&
      SetTensor(&plan->y, dtype, y, channels_last, op) &&
      SetFilterAndConvolution(&plan->w, &plan->conv, dtype, w, channels_last,
                              window, group, op) &&
      SetTensor(&plan->bias, dtype, BiasDims(y), false, op) &&
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
  const cudnnMathType_t math = MathFor(dtype);
  ok = ok && DnnOk(cudnnSetConvolutionMathType(plan->conv, math),
                   "cudnnSetConvolutionMathType", op);
  if (!ok) return nullptr;
  cudnnConvolutionFwdAlgoPerf_t perf[CUDNN_CONVOLUTION_FWD_ALGO_COUNT];
  int found = 0;
  if (!DnnOk(cudnnFindConvolutionForwardAlgorithm(
                 state.handle, plan->x, plan->w, plan->conv, plan->y,
                 CUDNN_CONVOLUTION_FWD_ALGO_COUNT, &found, perf),
             "cudnnFindConvolutionForwardAlgorithm", op) ||
      !ChooseAlgorithm(perf, found, math, "this convolution", *plan, op)) {
    return nullptr;
  }
  return plan;
}

void ConvKernel(AsyncRT_KernelContext* context, void*, AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, w, bias = {}, sum = {}, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.Input(1, &w)) return;
  if (op.num_inputs() > 2 && !op.Input(2, &bias)) return;
  if (op.num_inputs() > 3 && !op.Input(3, &sum)) return;
  if (x.rank < 3 || x.rank > 5) {
    op.Unsupported("a " + std::to_string(x.rank - 2) + "-D convolution");
    return;
  }
  if (op.String("result_layout", "plain") != "plain") {
    op.Unsupported("result_layout other than plain");
    return;
  }
  bool channels_last = false;
  if (!ChannelsLast(op, x, &channels_last)) return;
  if (!op.Output(0, &y) || NumElements(y) == 0) return;
  const std::vector<int64_t> x4 = CanonicalDims(x, channels_last),
                             w4 = CanonicalDims(w, channels_last),
                             y4 = CanonicalDims(y, channels_last);
  if (w4.size() != x4.size()) {
    op.Invalid("weights of rank " + std::to_string(w.rank) + " for an input " +
               "of rank " + std::to_string(x.rank));
    return;
  }
  Window attributes;
  ConvWindow window;
  if (!ReadWindow(op, x4, {w4.begin() + 2, w4.end()}, x.rank - 2,
                  &attributes) ||
      !SymmetricWindow(op, attributes, &window)) {
    return;
  }
  const int group = static_cast<int>(op.Int("group", 1));
  UnaryOp activation;
  float alpha_act, beta_act;
  if (!FusedActivation(op, &activation, &alpha_act, &beta_act)) return;
  // Depthwise in NHWC (one filter per channel): our kernel, with its
  // bias, sum and activation.
  if (channels_last && x.rank == 4 && group == x4[1] && w4[0] == x4[1] &&
      w4[1] == 1 && NumElements(x) <= INT32_MAX &&
      NumElements(y) <= INT32_MAX) {
    const DepthwiseShape shape = {.n = x4[0],
                                  .h = x4[2],
                                  .w = x4[3],
                                  .c = x4[1],
                                  .out_h = y4[2],
                                  .out_w = y4[3],
                                  .kernel_h = static_cast<int>(w4[2]),
                                  .kernel_w = static_cast<int>(w4[3]),
                                  .stride_h = window.stride[0],
                                  .stride_w = window.stride[1],
                                  .dilation_h = window.dilation[0],
                                  .dilation_w = window.dilation[1],
                                  .pad_h = window.pad[0],
                                  .pad_w = window.pad[1]};
    op.Launched(LaunchDepthwiseConvNhwc(
                    ToGpu(x.dtype), x.data, w.data, bias.data, sum.data, y.data,
                    shape, activation, alpha_act, beta_act, op.stream()),
                "launching the depthwise convolution");
    return;
  }
  // Our kernel's bias and activation: channels vary fastest in NHWC.
  const int64_t channel_inner = ChannelInner(y4, channels_last);

  std::unique_lock<std::mutex> lock;
  CudnnState* state = LockedState(op, &lock);
  if (state == nullptr) return;
  // The epilogue is part of the key: a fused plan computes it.
  std::vector<int64_t> key = {x.dtype,
                              group,
                              sum.data != nullptr,
                              bias.data != nullptr,
                              channels_last,
                              static_cast<int64_t>(activation),
                              FloatBits(alpha_act),
                              FloatBits(beta_act)};
  key.push_back(static_cast<int64_t>(x4.size()));
  key.insert(key.end(), x4.begin(), x4.end());
  key.insert(key.end(), w4.begin(), w4.end());
  for (int i = 0; i < window.spatial; ++i) {
    key.insert(key.end(),
               {window.stride[i], window.dilation[i], window.pad[i]});
  }
  CudaDevice& device = op.device();
  const ConvBuffers buffers = {x.data, w.data, y.data, bias.data, sum.data};
  std::unique_ptr<CudnnState::ConvPlan>& plan = state->conv_plans[key];
  if (!plan) {
    plan = MakeConvPlan(*state, x.dtype, x4, w4, y4, channels_last, window,
                        group, op);
    if (!plan) {
      state->conv_plans.erase(key);
      return;
    }
    if (!Settings().legacy_conv) {
      // One graph with the bias, sum and activation where an engine takes
      // it; else the convolution alone, timed with the sum in y, as that
      // plan runs.
      const ConvGeometry geometry = {x4, w4, y4, channels_last, window};
      std::optional<ConvEpilogue> epilogue =
          FusableEpilogue(bias.data != nullptr, sum.data != nullptr, activation,
                          alpha_act, beta_act);
      if (epilogue && !epilogue->empty()) {
        plan->backend =
            MakeBackendPlan(state->handle, DnnType(x.dtype), geometry,
                            *epilogue, false, buffers, device, op.stream());
      }
      if (!plan->backend) {
        if (sum.data != nullptr &&
            !op.Launched(cudaMemcpyAsync(y.data, sum.data, y.size_bytes,
                                         cudaMemcpyDeviceToDevice, op.stream()),
                         "cudaMemcpyAsync")) {
          return;
        }
        plan->backend = MakeBackendPlan(
            state->handle, DnnType(x.dtype), geometry, ConvEpilogue(),
            sum.data != nullptr, {x.data, w.data, y.data}, device, op.stream());
      }
    }
  }
  if (plan->backend) {
    // The graph API's plan: fused, or the convolution (adding the sum
    // copied into y) then bias and activation in our kernel.
    void* workspace = nullptr;
    if (!AllocateWorkspace(op, plan->backend->workspace_bytes,
                           "the convolution", &workspace))
      return;
    const bool fused = plan->backend->fused;
    bool ok =
        fused || sum.data == nullptr ||
        op.Launched(cudaMemcpyAsync(y.data, sum.data, y.size_bytes,
                                    cudaMemcpyDeviceToDevice, op.stream()),
                    "cudaMemcpyAsync");
    ok = ok && DnnOk(ExecuteBackendPlan(
                         state->handle, plan->backend->plan,
                         fused ? buffers : ConvBuffers{x.data, w.data, y.data},
                         workspace),
                     "cudnnBackendExecute", op);
    FreeWorkspace(op, workspace, plan->backend->workspace_bytes);
    lock.unlock();
    if (ok && !fused &&
        (bias.data != nullptr || activation != UnaryOp::kIdentity)) {
      op.Launched(
          LaunchBiasActivation(ToGpu(y.dtype), y.data, bias.data, y4[1],
                               channel_inner, NumElements(y), activation,
                               alpha_act, beta_act, op.stream()),
          "launching the bias and activation");
    }
    return;
  }
  // The legacy API.
  void* workspace = nullptr;
  if (!AllocateWorkspace(op, plan->workspace_bytes, "the convolution",
                         &workspace))
    return;
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
  FreeWorkspace(op, workspace, plan->workspace_bytes);
  lock.unlock();
  if (ok && !fused &&
      (bias.data != nullptr || activation != UnaryOp::kIdentity)) {
    op.Launched(LaunchBiasActivation(ToGpu(y.dtype), y.data, bias.data, y4[1],
                                     channel_inner, NumElements(y), activation,
                                     alpha_act, beta_act, op.stream()),
                "launching the bias and activation");
  }
}

//===--- nn.conv_transpose ------------------------------------------------===//

// The padding before each spatial dimension of a transposed convolution
// (ONNX's pads, auto_pad and output_shape, as the CPU op reads them) into
// `window`, for cuDNN's convolution from y's shape to x's: it must give
// x's size with that padding on both sides (the end padding, less the
// output padding, within a stride of it). False (status set) otherwise.
bool TransposedConvWindow(OpCall& op, const std::vector<int64_t>& x,
                          const std::vector<int64_t>& w,
                          const std::vector<int64_t>& y, int spatial,
                          ConvWindow* window) {
  std::vector<int64_t> strides, dilations, pads, output_padding, output_shape;
  op.Ints("strides", &strides);
  op.Ints("dilations", &dilations);
  op.Ints("pads", &pads);
  op.Ints("output_padding", &output_padding);
  const bool sized = op.Ints("output_shape", &output_shape);
  const std::string auto_pad = op.String("auto_pad", "NOTSET");
  auto at = [](const std::vector<int64_t>& values, int i, int64_t otherwise) {
    return i < static_cast<int>(values.size()) ? values[i] : otherwise;
  };
  window->spatial = static_cast<int>(x.size()) - 2;
  const int skipped = window->spatial - spatial;
  for (int i = 0; i < spatial; ++i) {
    const int d = skipped + i;
    const int64_t in = x[2 + d], k = w[2 + d], out = y[2 + d];
    const int64_t s = at(strides, i, 1), dilation = at(dilations, i, 1);
    if (!PositiveWindow(op, k, s, dilation)) return false;
    const int64_t extent = (k - 1) * dilation + 1;
    const int64_t full = s * (in - 1) + at(output_padding, i, 0) + extent;
    int64_t begin = at(pads, i, 0);
    if (auto_pad == "VALID") {
      begin = 0;
    } else if (sized || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t total = full - out;
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      begin = auto_pad == "SAME_UPPER" ? half : total - half;
    }
    const int64_t span = out + 2 * begin - extent;
    if (begin < 0 || span < 0 || span / s + 1 != in) {
      return op.Unsupported("this transposed convolution's padding (" +
                            std::to_string(begin) + " before, " +
                            std::to_string(full - out - begin) + " after)");
    }
    window->stride[d] = static_cast<int>(s);
    window->dilation[d] = static_cast<int>(dilation);
    window->pad[d] = static_cast<int>(begin);
  }
  return true;
}

std::unique_ptr<CudnnState::TransposedConvPlan> MakeTransposedConvPlan(
    CudnnState& state, AsyncRT_DType dtype, const std::vector<int64_t>& x,
    const std::vector<int64_t>& w, const std::vector<int64_t>& y,
    const ConvWindow& window, int group, OpCall& op) {
  auto plan = std::make_unique<CudnnState::TransposedConvPlan>();
  const cudnnMathType_t math = MathFor(dtype);
  if (!SetTensor(&plan->x, dtype, x, false, op) ||
      !SetTensor(&plan->y, dtype, y, false, op) ||
      !SetFilterAndConvolution(&plan->w, &plan->conv, dtype, w, false, window,
                               group, op) ||
      !DnnOk(cudnnSetConvolutionMathType(plan->conv, math),
             "cudnnSetConvolutionMathType", op)) {
    return nullptr;
  }
  cudnnConvolutionBwdDataAlgoPerf_t perf[CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT];
  int found = 0;
  if (!DnnOk(cudnnFindConvolutionBackwardDataAlgorithm(
                 state.handle, plan->w, plan->x, plan->conv, plan->y,
                 CUDNN_CONVOLUTION_BWD_DATA_ALGO_COUNT, &found, perf),
             "cudnnFindConvolutionBackwardDataAlgorithm", op) ||
      !ChooseAlgorithm(perf, found, math, "this transposed convolution", *plan,
                       op)) {
    return nullptr;
  }
  return plan;
}

// nn.conv_transpose (1-D to 3-D, groups, dilations, output padding; x N x
// C x spatial..., w C x M/group x kernel..., optional bias [M]) as cuDNN's
// backward data of a convolution, then the bias in our kernel.
void ConvTransposeKernel(AsyncRT_KernelContext* context, void*,
                         AsyncRT_Status* status) {
  OpCall op(context, status);
  AsyncRT_TensorView x, w, bias = {}, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x) || !op.Input(1, &w)) return;
  if (op.num_inputs() > 2 && !op.Input(2, &bias)) return;
  if (x.rank < 3 || x.rank > 5 || w.rank != x.rank) {
    op.Unsupported("a " + std::to_string(x.rank - 2) +
                   "-D transposed convolution");
    return;
  }
  if (op.String("data_format", "NCHW") != "NCHW") {
    op.Unsupported("data_format other than NCHW");
    return;
  }
  if (!op.Output(0, &y) || NumElements(y) == 0) return;
  const std::vector<int64_t> x_dims = CanonicalDims(x, false),
                             w_dims = CanonicalDims(w, false),
                             y_dims = CanonicalDims(y, false);
  ConvWindow window;
  if (!TransposedConvWindow(op, x_dims, w_dims, y_dims, x.rank - 2, &window)) {
    return;
  }
  const int group = static_cast<int>(op.Int("group", 1));
  std::unique_lock<std::mutex> lock;
  CudnnState* state = LockedState(op, &lock);
  if (state == nullptr) return;
  std::vector<int64_t> key = {x.dtype, group,
                              static_cast<int64_t>(x_dims.size())};
  for (const std::vector<int64_t>* dims : {&x_dims, &w_dims, &y_dims}) {
    key.insert(key.end(), dims->begin(), dims->end());
  }
  for (int i = 0; i < window.spatial; ++i) {
    key.insert(key.end(),
               {window.stride[i], window.dilation[i], window.pad[i]});
  }
  std::unique_ptr<CudnnState::TransposedConvPlan>& plan =
      state->transposed_conv_plans[key];
  if (!plan) {
    plan = MakeTransposedConvPlan(*state, x.dtype, x_dims, w_dims, y_dims,
                                  window, group, op);
    if (!plan) {
      state->transposed_conv_plans.erase(key);
      return;
    }
  }
  void* workspace = nullptr;
  if (!AllocateWorkspace(op, plan->workspace_bytes,
                         "the transposed convolution", &workspace))
    return;
  const float alpha = 1.f, beta = 0.f;
  const bool ok = DnnOk(
      cudnnConvolutionBackwardData(
          state->handle, &alpha, plan->w, w.data, plan->x, x.data, plan->conv,
          plan->algo, workspace, plan->workspace_bytes, &beta, plan->y, y.data),
      "cudnnConvolutionBackwardData", op);
  FreeWorkspace(op, workspace, plan->workspace_bytes);
  lock.unlock();
  if (ok && bias.data != nullptr) {
    op.Launched(
        LaunchBiasActivation(ToGpu(y.dtype), y.data, bias.data, y_dims[1],
                             ChannelInner(y_dims, false), NumElements(y),
                             UnaryOp::kIdentity, 0.f, 0.f, op.stream()),
        "launching the bias");
  }
}

//===--- Pooling ----------------------------------------------------------===//

// Our kernel for a window cuDNN's pooling does not take.
void PoolOnOurKernel(OpCall& op, PoolMode mode, const AsyncRT_TensorView& x,
                     const AsyncRT_TensorView& y,
                     const std::vector<int64_t>& x_dims,
                     const std::vector<int64_t>& y_dims, const Window& window,
                     bool channels_last) {
  PoolShape shape;
  shape.n = x_dims[0];
  shape.c = x_dims[1];
  shape.channels_last = channels_last;
  const int skipped = 3 - window.count;  // 2-D: a leading dimension of 1.
  for (int d = 0; d < window.count; ++d) {
    const int to = skipped + d;
    shape.in[to] = x_dims[2 + d];
    shape.out[to] = y_dims[2 + d];
    shape.kernel[to] = static_cast<int>(window.kernel[d]);
    shape.stride[to] = static_cast<int>(window.stride[d]);
    shape.dilation[to] = static_cast<int>(window.dilation[d]);
    shape.pad_begin[to] = static_cast<int>(window.begin[d]);
    shape.pad_end[to] = static_cast<int>(window.end[d]);
  }
  op.Launched(
      LaunchPool(mode, ToGpu(x.dtype), x.data, y.data, shape, op.stream()),
      "launching the pooling kernel");
}

// nn.max_pool and nn.average_pool over 1 to 3 spatial dimensions: cuDNN's
// pooling where its symmetric windows give y's size, else our kernel
// (ceil_mode's rounded-up sizes, dilations, asymmetric padding).
void PoolKernel(AsyncRT_KernelContext* context, void* data,
                AsyncRT_Status* status) {
  const bool max = data != nullptr;
  OpCall op(context, status);
  AsyncRT_TensorView x, y;
  if (!op.Input(0, &x) || !op.RequireFloat(x)) return;
  if (x.rank < 3 || x.rank > 5) {
    op.Unsupported("a " + std::to_string(x.rank - 2) + "-D pooling");
    return;
  }
  if (op.String("result_layout", "plain") != "plain") {
    op.Unsupported("result_layout other than plain");
    return;
  }
  bool channels_last = false;
  if (!ChannelsLast(op, x, &channels_last)) return;
  if (!op.Output(0, &y) || NumElements(y) == 0) return;
  std::vector<int64_t> kernel;
  op.Ints("kernel_shape", &kernel);
  if (static_cast<int>(kernel.size()) != x.rank - 2) {
    op.Invalid("kernel_shape must have one size per spatial dimension");
    return;
  }
  if (kernel.size() == 1) kernel.insert(kernel.begin(), 1);
  const std::vector<int64_t> x_dims = CanonicalDims(x, channels_last),
                             y_dims = CanonicalDims(y, channels_last);
  Window window;
  if (!ReadWindow(op, x_dims, kernel, x.rank - 2, &window)) return;
  const bool counts_padding = !max && op.Int("count_include_pad", 0) != 0;
  bool cudnn_takes = true;
  for (int d = 0; d < window.count; ++d) {
    const int64_t floor_size =
        (x_dims[2 + d] + 2 * window.begin[d] - window.kernel[d]) /
            window.stride[d] +
        1;
    cudnn_takes = cudnn_takes && window.dilation[d] == 1 &&
                  window.begin[d] == window.end[d] &&
                  y_dims[2 + d] == floor_size;
  }
  if (!cudnn_takes) {
    PoolOnOurKernel(op,
                    max              ? PoolMode::kMax
                    : counts_padding ? PoolMode::kAverageIncludingPadding
                                     : PoolMode::kAverageExcludingPadding,
                    x, y, x_dims, y_dims, window, channels_last);
    return;
  }
  const cudnnPoolingMode_t mode =
      max              ? CUDNN_POOLING_MAX
      : counts_padding ? CUDNN_POOLING_AVERAGE_COUNT_INCLUDE_PADDING
                       : CUDNN_POOLING_AVERAGE_COUNT_EXCLUDE_PADDING;
  int sizes[3], pads[3], strides[3];
  for (int d = 0; d < window.count; ++d) {
    sizes[d] = static_cast<int>(window.kernel[d]);
    pads[d] = static_cast<int>(window.begin[d]);
    strides[d] = static_cast<int>(window.stride[d]);
  }
  std::unique_lock<std::mutex> lock;
  CudnnState* state = LockedState(op, &lock);
  if (state == nullptr) return;
  cudnnPoolingDescriptor_t pool = nullptr;
  cudnnTensorDescriptor_t x_desc = nullptr, y_desc = nullptr;
  float alpha = 1.f, beta = 0.f;
  (void)(DnnOk(cudnnCreatePoolingDescriptor(&pool),
               "cudnnCreatePoolingDescriptor", op) &&
         DnnOk(cudnnSetPoolingNdDescriptor(pool, mode, CUDNN_PROPAGATE_NAN,
                                           window.count, sizes, pads, strides),
               "cudnnSetPoolingNdDescriptor", op) &&
         SetTensor(&x_desc, x.dtype, x_dims, channels_last, op) &&
         SetTensor(&y_desc, y.dtype, y_dims, channels_last, op) &&
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
  // The host's pipeline folds a relu in (-nn-fuse-elementwise); the
  // device's never does: an error, not a result without it.
  if (const std::string activation = op.String("activation", "");
      !activation.empty()) {
    op.Unsupported("fused activation '" + activation + "'");
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

bool AttentionOnCudnn(OpCall& op, const AttentionOperands& in,
                      const AsyncRT_TensorView& y, const AttentionShape& shape,
                      float scale) {
  const int64_t element = ElementBytes(in.dtype);
  auto aligned = [](const void* pointer) {
    return reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
  };
  const StridedAttentionShape geometry = StridedShapeOf(shape, in);
  const int64_t y_row = geometry.y_row;
  const bool suits =
      (in.dtype == ASYNCRT_DTYPE_F16 || in.dtype == ASYNCRT_DTYPE_BF16) &&
      shape.batch > 0 && shape.q_length > 0 && shape.kv_length > 0 &&
      shape.kv_heads > 0 && shape.q_heads % shape.kv_heads == 0 &&
      shape.head_size > 0 && shape.head_size % 8 == 0 &&
      shape.head_size <= 128 && shape.value_head_size > 0 &&
      shape.value_head_size % 8 == 0 && shape.value_head_size <= 128 &&
      aligned(in.q) && aligned(in.k) && aligned(in.v) && aligned(y.data) &&
      (in.q_row * element) % 16 == 0 && (in.k_row * element) % 16 == 0 &&
      (in.v_row * element) % 16 == 0 && (y_row * element) % 16 == 0;
  if (!suits) return false;
  const bool strict =
      Settings().attention == CudaSettings::AttentionPath::kCudnn;
  std::unique_lock<std::mutex> lock;
  CudnnState* state = LockedState(op, &lock);
  // Without a handle the error is on the op: cuDNN is broken here.
  if (state == nullptr) return true;
  const std::vector<int64_t> key = {
      in.dtype,           geometry.batch,           geometry.q_heads,
      geometry.kv_heads,  geometry.q_length,        geometry.kv_length,
      geometry.head_size, geometry.value_head_size, geometry.q_row,
      geometry.k_row,     geometry.v_row,           geometry.y_row};
  const AttentionBuffers buffers = {in.q, in.k, in.v, y.data, scale};
  auto [entry, made] = state->attention_plans.try_emplace(key);
  CudnnState::AttentionPlan& attention = entry->second;
  if (made) {
    attention.plan =
        MakeAttentionPlan(state->handle, DnnType(in.dtype), geometry, buffers,
                          op.device(), op.stream(), &attention.refusal);
  }
  const std::optional<BackendPlan>& plan = attention.plan;
  if (!plan) {
    if (!strict) return false;
    Fail(op.status(), ASYNCRT_UNIMPLEMENTED,
         "cuDNN's fused attention does not take this shape "
         "(ASYNCRT_CUDA_ATTENTION=cudnn): " +
             attention.refusal);
    return true;
  }
  void* workspace = nullptr;
  if (!AllocateWorkspace(op, plan->workspace_bytes, "the attention",
                         &workspace))
    return true;
  DnnOk(ExecuteAttentionPlan(state->handle, plan->plan, buffers, workspace),
        "cudnnBackendExecute (attention)", op);
  FreeWorkspace(op, workspace, plan->workspace_bytes);
  return true;
}

bool RegisterCudnnKernels(AsyncRT_PluginParams* params,
                          AsyncRT_Status* status) {
  const KernelEntry kernels[] = {
      {"nn.conv", ConvKernel, nullptr},
      {"nn.conv_transpose", ConvTransposeKernel, nullptr},
      {"nn.max_pool", PoolKernel, reinterpret_cast<void*>(1)},
      {"nn.average_pool", PoolKernel, nullptr},
      {"nn.batch_normalization", BatchNormKernel, nullptr},
  };
  return RegisterKernels(params, kernels, std::size(kernels), status);
}

}  // namespace asyncrt::gpu
