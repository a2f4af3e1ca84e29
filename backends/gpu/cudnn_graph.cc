// cuDNN's graph API: the helpers every graph shares and the convolutions'
// graphs (see cudnn_graph.h).
#include "backends/gpu/cudnn_graph.h"

#include <algorithm>
#include <initializer_list>
#include <string>
#include <utility>

namespace asyncrt::gpu {

bool SetInt64s(cudnnBackendDescriptor_t d, cudnnBackendAttributeName_t name,
               const std::vector<int64_t>& values) {
  return cudnnBackendSetAttribute(d, name, CUDNN_TYPE_INT64,
                                  static_cast<int64_t>(values.size()),
                                  values.data()) == CUDNN_STATUS_SUCCESS;
}

cudnnBackendDescriptor_t BackendTensor(BackendDescriptors& descriptors,
                                       cudnnDataType_t type,
                                       const std::vector<int64_t>& dims,
                                       const std::vector<int64_t>& strides,
                                       int64_t uid, bool is_virtual,
                                       bool by_value) {
  cudnnBackendDescriptor_t tensor =
      descriptors.Make(CUDNN_BACKEND_TENSOR_DESCRIPTOR);
  if (tensor == nullptr) return nullptr;
  const int64_t alignment = 16;
  if (cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_DATA_TYPE,
                               CUDNN_TYPE_DATA_TYPE, 1,
                               &type) != CUDNN_STATUS_SUCCESS ||
      !SetInt64s(tensor, CUDNN_ATTR_TENSOR_DIMENSIONS, dims) ||
      !SetInt64s(tensor, CUDNN_ATTR_TENSOR_STRIDES, strides) ||
      !SetInt64s(tensor, CUDNN_ATTR_TENSOR_UNIQUE_ID, {uid}) ||
      !SetInt64s(tensor, CUDNN_ATTR_TENSOR_BYTE_ALIGNMENT, {alignment}) ||
      cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_IS_VIRTUAL,
                               CUDNN_TYPE_BOOLEAN, 1,
                               &is_virtual) != CUDNN_STATUS_SUCCESS ||
      (by_value &&
       cudnnBackendSetAttribute(tensor, CUDNN_ATTR_TENSOR_IS_BY_VALUE,
                                CUDNN_TYPE_BOOLEAN, 1,
                                &by_value) != CUDNN_STATUS_SUCCESS) ||
      cudnnBackendFinalize(tensor) != CUDNN_STATUS_SUCCESS) {
    return nullptr;
  }
  return tensor;
}

cudnnBackendDescriptor_t DescriptorOf(
    BackendDescriptors& descriptors, cudnnBackendDescriptorType_t type,
    std::initializer_list<
        std::pair<cudnnBackendAttributeName_t, cudnnBackendDescriptor_t>>
        attributes) {
  cudnnBackendDescriptor_t descriptor = descriptors.Make(type);
  if (descriptor == nullptr) return nullptr;
  for (auto [name, value] : attributes) {
    if (value != nullptr && cudnnBackendSetAttribute(
                                descriptor, name, CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                1, &value) != CUDNN_STATUS_SUCCESS) {
      return nullptr;
    }
  }
  return cudnnBackendFinalize(descriptor) == CUDNN_STATUS_SUCCESS ? descriptor
                                                                  : nullptr;
}

// A pointwise operation `mode` of the graph: y = x (op b); b may be null.
cudnnBackendDescriptor_t PointwiseOperation(BackendDescriptors& descriptors,
                                            cudnnPointwiseMode_t mode,
                                            cudnnBackendDescriptor_t x,
                                            cudnnBackendDescriptor_t b,
                                            cudnnBackendDescriptor_t y,
                                            const ConvEpilogue* relu) {
  cudnnBackendDescriptor_t pointwise =
      descriptors.Make(CUDNN_BACKEND_POINTWISE_DESCRIPTOR);
  if (pointwise == nullptr) return nullptr;
  const cudnnDataType_t precision = CUDNN_DATA_FLOAT;
  if (cudnnBackendSetAttribute(pointwise, CUDNN_ATTR_POINTWISE_MODE,
                               CUDNN_TYPE_POINTWISE_MODE, 1,
                               &mode) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendSetAttribute(pointwise, CUDNN_ATTR_POINTWISE_MATH_PREC,
                               CUDNN_TYPE_DATA_TYPE, 1,
                               &precision) != CUDNN_STATUS_SUCCESS) {
    return nullptr;
  }
  if (relu != nullptr &&
      (cudnnBackendSetAttribute(pointwise, CUDNN_ATTR_POINTWISE_RELU_LOWER_CLIP,
                                CUDNN_TYPE_DOUBLE, 1,
                                &relu->lower_clip) != CUDNN_STATUS_SUCCESS ||
       (relu->upper_clip &&
        cudnnBackendSetAttribute(
            pointwise, CUDNN_ATTR_POINTWISE_RELU_UPPER_CLIP, CUDNN_TYPE_DOUBLE,
            1, &*relu->upper_clip) != CUDNN_STATUS_SUCCESS))) {
    return nullptr;
  }
  if (cudnnBackendFinalize(pointwise) != CUDNN_STATUS_SUCCESS) return nullptr;
  return DescriptorOf(
      descriptors, CUDNN_BACKEND_OPERATION_POINTWISE_DESCRIPTOR,
      {{CUDNN_ATTR_OPERATION_POINTWISE_PW_DESCRIPTOR, pointwise},
       {CUDNN_ATTR_OPERATION_POINTWISE_XDESC, x},
       {CUDNN_ATTR_OPERATION_POINTWISE_BDESC, b},
       {CUDNN_ATTR_OPERATION_POINTWISE_YDESC, y}});
}

namespace {

// What the engine of an engine configuration says of itself.
struct EngineNotes {
  // It compiles its kernel when its plan is made (NVRTC: hundreds of
  // milliseconds per plan).
  bool compiles_at_run_time = false;
  // It computes f32 in TF32 (tensor cores) or in a narrower type.
  bool narrows_f32 = false;
};

EngineNotes NotesOf(cudnnBackendDescriptor_t config) {
  EngineNotes result;
  cudnnBackendDescriptor_t engine = nullptr;
  if (cudnnBackendCreateDescriptor(CUDNN_BACKEND_ENGINE_DESCRIPTOR, &engine) !=
      CUDNN_STATUS_SUCCESS) {
    return result;
  }
  int64_t count = 0;
  if (cudnnBackendGetAttribute(config, CUDNN_ATTR_ENGINECFG_ENGINE,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &count,
                               &engine) == CUDNN_STATUS_SUCCESS) {
    cudnnBackendBehaviorNote_t behavior[CUDNN_BEHAVIOR_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_BEHAVIOR_NOTE,
                                 CUDNN_TYPE_BEHAVIOR_NOTE,
                                 CUDNN_BEHAVIOR_NOTE_TYPE_COUNT, &count,
                                 behavior) == CUDNN_STATUS_SUCCESS) {
      for (int64_t i = 0; i < count; ++i) {
        result.compiles_at_run_time |=
            behavior[i] == CUDNN_BEHAVIOR_NOTE_RUNTIME_COMPILATION;
      }
    }
    cudnnBackendNumericalNote_t numerical[CUDNN_NUMERICAL_NOTE_TYPE_COUNT];
    if (cudnnBackendGetAttribute(engine, CUDNN_ATTR_ENGINE_NUMERICAL_NOTE,
                                 CUDNN_TYPE_NUMERICAL_NOTE,
                                 CUDNN_NUMERICAL_NOTE_TYPE_COUNT, &count,
                                 numerical) == CUDNN_STATUS_SUCCESS) {
      for (int64_t i = 0; i < count; ++i) {
        result.narrows_f32 |=
            numerical[i] == CUDNN_NUMERICAL_NOTE_TENSOR_CORE ||
            numerical[i] == CUDNN_NUMERICAL_NOTE_DOWN_CONVERT_INPUTS;
      }
    }
  }
  cudnnBackendDestroyDescriptor(engine);
  return result;
}

// In MakeBackendPlan and FastestPlan: no plan where a step fails.
#define ASYNCRT_BACKEND_OK(call) \
  if ((call) != CUDNN_STATUS_SUCCESS) return std::nullopt

constexpr int64_t kUidX = 1, kUidW = 2, kUidY = 3, kUidBias = 4, kUidSum = 5;
// Virtual tensors between a fused graph's operations.
constexpr int64_t kUidFirstVirtual = 100;

// A convolution's tensor: N, C, spatial... `dims` in channels-first or
// channels-last memory.
cudnnBackendDescriptor_t ConvTensor(BackendDescriptors& descriptors,
                                    cudnnDataType_t type,
                                    const std::vector<int64_t>& dims,
                                    bool channels_last, int64_t uid,
                                    bool is_virtual = false) {
  return BackendTensor(descriptors, type, dims,
                       ChannelStrides(dims, channels_last), uid, is_virtual);
}

}  // namespace

std::vector<int64_t> ChannelStrides(const std::vector<int64_t>& dims,
                                    bool channels_last) {
  const size_t rank = dims.size();
  std::vector<int64_t> strides(rank);
  int64_t stride = 1;
  if (channels_last) {
    strides[1] = stride;
    stride *= dims[1];
    for (int k = static_cast<int>(rank) - 1; k >= 2; --k) {
      strides[k] = stride;
      stride *= dims[k];
    }
  } else {
    for (int k = static_cast<int>(rank) - 1; k >= 1; --k) {
      strides[k] = stride;
      stride *= dims[k];
    }
  }
  strides[0] = stride;
  return strides;
}

cudnnStatus_t ExecutePlan(cudnnHandle_t handle, cudnnBackendDescriptor_t plan,
                          const int64_t* uids, void* const* pointers,
                          int64_t count, void* workspace) {
  cudnnBackendDescriptor_t pack = nullptr;
  cudnnStatus_t status = cudnnBackendCreateDescriptor(
      CUDNN_BACKEND_VARIANT_PACK_DESCRIPTOR, &pack);
  if (status != CUDNN_STATUS_SUCCESS) return status;
  if ((status = cudnnBackendSetAttribute(
           pack, CUDNN_ATTR_VARIANT_PACK_UNIQUE_IDS, CUDNN_TYPE_INT64, count,
           uids)) == CUDNN_STATUS_SUCCESS &&
      (status = cudnnBackendSetAttribute(
           pack, CUDNN_ATTR_VARIANT_PACK_DATA_POINTERS, CUDNN_TYPE_VOID_PTR,
           count, pointers)) == CUDNN_STATUS_SUCCESS &&
      (status = cudnnBackendSetAttribute(
           pack, CUDNN_ATTR_VARIANT_PACK_WORKSPACE, CUDNN_TYPE_VOID_PTR, 1,
           &workspace)) == CUDNN_STATUS_SUCCESS &&
      (status = cudnnBackendFinalize(pack)) == CUDNN_STATUS_SUCCESS) {
    status = cudnnBackendExecute(handle, plan, pack);
  }
  cudnnBackendDestroyDescriptor(pack);
  return status;
}

std::optional<BackendPlan> FastestPlan(
    cudnnHandle_t handle,
    const std::vector<cudnnBackendDescriptor_t>& operations,
    std::unique_ptr<BackendDescriptors> owned, bool f32_operands,
    CudaDevice& device, cudaStream_t stream,
    const std::function<bool(cudnnBackendDescriptor_t, void*)>& run,
    std::string* why) {
  // Says which step refused, for `why`.
  auto refuse = [why](const char* step, cudnnStatus_t status) {
    if (why != nullptr) {
      *why = std::string(step) + ": " + cudnnGetErrorString(status);
    }
    return std::nullopt;
  };
#define ASYNCRT_STEP(step, call)                                     \
  if (cudnnStatus_t status = (call); status != CUDNN_STATUS_SUCCESS) \
  return refuse(step, status)
  BackendDescriptors& descriptors = *owned;
  cudnnBackendDescriptor_t graph =
      descriptors.Make(CUDNN_BACKEND_OPERATIONGRAPH_DESCRIPTOR);
  cudnnBackendDescriptor_t heuristics =
      descriptors.Make(CUDNN_BACKEND_ENGINEHEUR_DESCRIPTOR);
  if (graph == nullptr || heuristics == nullptr) {
    return refuse("descriptors", CUDNN_STATUS_ALLOC_FAILED);
  }
  ASYNCRT_STEP("the operation graph",
               cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_OPS,
                                        CUDNN_TYPE_BACKEND_DESCRIPTOR,
                                        static_cast<int64_t>(operations.size()),
                                        operations.data()));
  ASYNCRT_STEP("the operation graph",
               cudnnBackendSetAttribute(graph, CUDNN_ATTR_OPERATIONGRAPH_HANDLE,
                                        CUDNN_TYPE_HANDLE, 1, &handle));
  ASYNCRT_STEP("the operation graph", cudnnBackendFinalize(graph));
  const cudnnBackendHeurMode_t heuristic_mode = CUDNN_HEUR_MODE_A;
  ASYNCRT_STEP("the heuristics",
               cudnnBackendSetAttribute(
                   heuristics, CUDNN_ATTR_ENGINEHEUR_OPERATION_GRAPH,
                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &graph));
  ASYNCRT_STEP("the heuristics", cudnnBackendSetAttribute(
                                     heuristics, CUDNN_ATTR_ENGINEHEUR_MODE,
                                     CUDNN_TYPE_HEUR_MODE, 1, &heuristic_mode));
  ASYNCRT_STEP("the heuristics", cudnnBackendFinalize(heuristics));
  int64_t count = 0;
  ASYNCRT_STEP("the heuristics' results",
               cudnnBackendGetAttribute(
                   heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                   CUDNN_TYPE_BACKEND_DESCRIPTOR, 0, &count, nullptr));
  constexpr int64_t kCandidates = 8;
  count = std::min(count, kCandidates);
  if (count <= 0) {
    return refuse("the heuristics proposed no engine",
                  CUDNN_STATUS_NOT_SUPPORTED);
  }
  std::vector<cudnnBackendDescriptor_t> configs(count);
  for (auto& config : configs) {
    config = descriptors.Make(CUDNN_BACKEND_ENGINECFG_DESCRIPTOR);
    if (config == nullptr)
      return refuse("descriptors", CUDNN_STATUS_ALLOC_FAILED);
  }
  int64_t returned = 0;
  ASYNCRT_STEP(
      "the heuristics' results",
      cudnnBackendGetAttribute(heuristics, CUDNN_ATTR_ENGINEHEUR_RESULTS,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, count, &returned,
                               configs.data()));
#undef ASYNCRT_STEP
  configs.resize(returned);
  // Precompiled engines first, in the heuristics' order.
  std::vector<std::pair<cudnnBackendDescriptor_t, EngineNotes>> candidates;
  for (cudnnBackendDescriptor_t config : configs) {
    EngineNotes notes = NotesOf(config);
    if (f32_operands && notes.narrows_f32 && !Settings().allow_tf32) continue;
    candidates.emplace_back(config, notes);
  }
  std::stable_partition(candidates.begin(), candidates.end(),
                        [](const auto& candidate) {
                          return !candidate.second.compiles_at_run_time;
                        });

  // Time the first few plans that build (twice each; the second run).
  cudaEvent_t start = nullptr, stop = nullptr;
  if (cudaEventCreate(&start) != cudaSuccess ||
      cudaEventCreate(&stop) != cudaSuccess) {
    (void)cudaGetLastError();
    if (start) cudaEventDestroy(start);
    return refuse("cudaEventCreate", CUDNN_STATUS_INTERNAL_ERROR);
  }
  cudnnBackendDescriptor_t best = nullptr;
  float best_ms = 0;
  int64_t best_workspace = 0;
  int timed = 0, compiled = 0;
  for (const auto& [config, notes] : candidates) {
    if (timed >= 4) break;
    // A precompiled engine that runs ends the search before any compiles;
    // else only the first that compiles is tried (each costs the host
    // hundreds of milliseconds).
    if (notes.compiles_at_run_time && (best != nullptr || compiled++ > 0)) {
      break;
    }
    cudnnBackendDescriptor_t candidate =
        descriptors.Make(CUDNN_BACKEND_EXECUTION_PLAN_DESCRIPTOR);
    if (candidate == nullptr) break;
    int64_t workspace_bytes = 0;
    cudnnStatus_t status = CUDNN_STATUS_SUCCESS;
    if ((status = cudnnBackendSetAttribute(
             candidate, CUDNN_ATTR_EXECUTION_PLAN_HANDLE, CUDNN_TYPE_HANDLE, 1,
             &handle)) != CUDNN_STATUS_SUCCESS ||
        (status = cudnnBackendSetAttribute(
             candidate, CUDNN_ATTR_EXECUTION_PLAN_ENGINE_CONFIG,
             CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &config)) !=
            CUDNN_STATUS_SUCCESS ||
        (status = cudnnBackendFinalize(candidate)) != CUDNN_STATUS_SUCCESS ||
        (status = cudnnBackendGetAttribute(
             candidate, CUDNN_ATTR_EXECUTION_PLAN_WORKSPACE_SIZE,
             CUDNN_TYPE_INT64, 1, nullptr, &workspace_bytes)) !=
            CUDNN_STATUS_SUCCESS) {
      refuse("every plan of the proposed engines", status);
      continue;
    }
    void* workspace =
        workspace_bytes > 0 ? DeviceAllocate(device, workspace_bytes) : nullptr;
    if (workspace_bytes > 0 && workspace == nullptr) continue;
    float ms = -1;
    bool ran = true;
    for (int attempt = 0; attempt < 2 && ran; ++attempt) {
      cudaEventRecord(start, stream);
      ran = run(candidate, workspace);
      cudaEventRecord(stop, stream);
    }
    if (ran && cudaEventSynchronize(stop) == cudaSuccess) {
      cudaEventElapsedTime(&ms, start, stop);
    }
    (void)cudaGetLastError();
    if (workspace) DeviceDeallocate(device, workspace, workspace_bytes);
    if (!ran || ms < 0) {
      refuse("running a plan", CUDNN_STATUS_EXECUTION_FAILED);
      continue;
    }
    ++timed;
    if (best == nullptr || ms < best_ms) {
      best = candidate;
      best_ms = ms;
      best_workspace = workspace_bytes;
    }
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  if (best == nullptr) {
    if (candidates.empty()) {
      return refuse("no engine the settings allow", CUDNN_STATUS_NOT_SUPPORTED);
    }
    return std::nullopt;  // `why` says what the last candidate did.
  }
  BackendPlan plan;
  plan.plan = best;
  plan.descriptors = std::move(owned);
  plan.workspace_bytes = static_cast<size_t>(best_workspace);
  return plan;
}

cudnnStatus_t ExecuteBackendPlan(cudnnHandle_t handle,
                                 cudnnBackendDescriptor_t plan,
                                 const ConvBuffers& buffers, void* workspace) {
  int64_t uids[5] = {kUidX, kUidW, kUidY};
  void* pointers[5] = {const_cast<void*>(buffers.x),
                       const_cast<void*>(buffers.w), buffers.y};
  int64_t count = 3;
  if (buffers.bias != nullptr) {
    uids[count] = kUidBias;
    pointers[count++] = const_cast<void*>(buffers.bias);
  }
  if (buffers.sum != nullptr) {
    uids[count] = kUidSum;
    pointers[count++] = const_cast<void*>(buffers.sum);
  }
  return ExecutePlan(handle, plan, uids, pointers, count, workspace);
}

std::optional<ConvEpilogue> FusableEpilogue(bool bias, bool sum,
                                            UnaryOp activation, float alpha,
                                            float beta) {
  ConvEpilogue epilogue;
  epilogue.bias = bias;
  epilogue.sum = sum;
  if (activation == UnaryOp::kRelu) {
    epilogue.relu = true;
  } else if (activation == UnaryOp::kClip) {
    epilogue.relu = true;
    epilogue.lower_clip = alpha;
    epilogue.upper_clip = beta;
  } else if (activation != UnaryOp::kIdentity) {
    return std::nullopt;
  }
  return epilogue;
}

std::optional<BackendConvPlan> MakeBackendPlan(
    cudnnHandle_t handle, cudnnDataType_t type, const ConvGeometry& geometry,
    const ConvEpilogue& epilogue, bool beta, const ConvBuffers& buffers,
    CudaDevice& device, cudaStream_t stream) {
  const std::vector<int64_t>&x = geometry.x, &w = geometry.w, &y = geometry.y;
  const bool channels_last = geometry.channels_last;
  const ConvWindow& window = geometry.window;
  auto owned = std::make_unique<BackendDescriptors>();
  BackendDescriptors& descriptors = *owned;
  const bool fused = !epilogue.empty();
  cudnnBackendDescriptor_t x_desc =
      ConvTensor(descriptors, type, x, channels_last, kUidX);
  cudnnBackendDescriptor_t w_desc =
      ConvTensor(descriptors, type, w, channels_last, kUidW);
  cudnnBackendDescriptor_t y_desc =
      ConvTensor(descriptors, type, y, channels_last, kUidY);
  // A fused graph's convolution writes a virtual f32 tensor.
  int64_t next_virtual = kUidFirstVirtual;
  auto intermediate = [&] {
    return ConvTensor(descriptors, CUDNN_DATA_FLOAT, y, channels_last,
                      next_virtual++, /*is_virtual=*/true);
  };
  cudnnBackendDescriptor_t conv_y = fused ? intermediate() : y_desc;
  if (!x_desc || !w_desc || !y_desc || !conv_y) return std::nullopt;

  cudnnBackendDescriptor_t conv =
      descriptors.Make(CUDNN_BACKEND_CONVOLUTION_DESCRIPTOR);
  if (conv == nullptr) return std::nullopt;
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  const cudnnConvolutionMode_t mode = CUDNN_CROSS_CORRELATION;
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_COMP_TYPE,
                               CUDNN_TYPE_DATA_TYPE, 1, &compute));
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(conv, CUDNN_ATTR_CONVOLUTION_CONV_MODE,
                               CUDNN_TYPE_CONVOLUTION_MODE, 1, &mode));
  const int spatial = window.spatial;
  auto per_dimension = [spatial](const int* values) {
    return std::vector<int64_t>(values, values + spatial);
  };
  if (!SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_SPATIAL_DIMS, {spatial}) ||
      !SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_DILATIONS,
                 per_dimension(window.dilation)) ||
      !SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_FILTER_STRIDES,
                 per_dimension(window.stride)) ||
      !SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_PRE_PADDINGS,
                 per_dimension(window.pad)) ||
      !SetInt64s(conv, CUDNN_ATTR_CONVOLUTION_POST_PADDINGS,
                 per_dimension(window.pad))) {
    return std::nullopt;
  }
  ASYNCRT_BACKEND_OK(cudnnBackendFinalize(conv));

  cudnnBackendDescriptor_t op =
      descriptors.Make(CUDNN_BACKEND_OPERATION_CONVOLUTION_FORWARD_DESCRIPTOR);
  if (op == nullptr) return std::nullopt;
  const float alpha = 1.f, beta_value = beta && !fused ? 1.f : 0.f;
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_X,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &x_desc));
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_W,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &w_desc));
  ASYNCRT_BACKEND_OK(
      cudnnBackendSetAttribute(op, CUDNN_ATTR_OPERATION_CONVOLUTION_FORWARD_Y,
                               CUDNN_TYPE_BACKEND_DESCRIPTOR, 1, &conv_y));
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

  // The epilogue: each operation reads the last value; the last writes y.
  std::vector<cudnnBackendDescriptor_t> operations = {op};
  cudnnBackendDescriptor_t value = conv_y;
  int remaining = epilogue.bias + epilogue.sum + epilogue.relu;
  auto append = [&](cudnnPointwiseMode_t pointwise_mode,
                    cudnnBackendDescriptor_t b, const ConvEpilogue* relu) {
    cudnnBackendDescriptor_t out = --remaining == 0 ? y_desc : intermediate();
    cudnnBackendDescriptor_t pointwise =
        out == nullptr ? nullptr
                       : PointwiseOperation(descriptors, pointwise_mode, value,
                                            b, out, relu);
    value = out;
    operations.push_back(pointwise);
    return pointwise != nullptr;
  };
  if (epilogue.bias) {
    std::vector<int64_t> bias_dims(y.size(), 1);
    bias_dims[1] = y[1];
    cudnnBackendDescriptor_t bias =
        ConvTensor(descriptors, type, bias_dims, channels_last, kUidBias);
    if (bias == nullptr || !append(CUDNN_POINTWISE_ADD, bias, nullptr)) {
      return std::nullopt;
    }
  }
  if (epilogue.sum) {
    cudnnBackendDescriptor_t sum =
        ConvTensor(descriptors, type, y, channels_last, kUidSum);
    if (sum == nullptr || !append(CUDNN_POINTWISE_ADD, sum, nullptr)) {
      return std::nullopt;
    }
  }
  if (epilogue.relu && !append(CUDNN_POINTWISE_RELU_FWD, nullptr, &epilogue)) {
    return std::nullopt;
  }

  // A sum's prior value in y (the unfused plan's beta) must survive the
  // timing runs.
  const bool restore_y = beta && !fused;
  const size_t y_bytes = [&] {
    int64_t n = 1;
    for (int64_t d : y) n *= d;
    return static_cast<size_t>(n) * (type == CUDNN_DATA_FLOAT ? 4 : 2);
  }();
  void* saved_y = restore_y ? DeviceAllocate(device, y_bytes) : nullptr;
  if (restore_y &&
      (saved_y == nullptr ||
       cudaMemcpyAsync(saved_y, buffers.y, y_bytes, cudaMemcpyDeviceToDevice,
                       stream) != cudaSuccess)) {
    if (saved_y) DeviceDeallocate(device, saved_y, y_bytes);
    return std::nullopt;
  }
  std::optional<BackendPlan> best = FastestPlan(
      handle, operations, std::move(owned), type == CUDNN_DATA_FLOAT, device,
      stream, [&](cudnnBackendDescriptor_t plan, void* workspace) {
        if (restore_y) {
          cudaMemcpyAsync(buffers.y, saved_y, y_bytes, cudaMemcpyDeviceToDevice,
                          stream);
        }
        return ExecuteBackendPlan(handle, plan, buffers, workspace) ==
               CUDNN_STATUS_SUCCESS;
      });
  if (restore_y) {
    // y as the caller gave it.
    cudaMemcpyAsync(buffers.y, saved_y, y_bytes, cudaMemcpyDeviceToDevice,
                    stream);
    DeviceDeallocate(device, saved_y, y_bytes);
  }
  if (!best) return std::nullopt;
  BackendConvPlan plan;
  plan.plan = best->plan;
  plan.descriptors = std::move(best->descriptors);
  plan.workspace_bytes = best->workspace_bytes;
  plan.fused = fused;
  return plan;
}

#undef ASYNCRT_BACKEND_OK

}  // namespace asyncrt::gpu
