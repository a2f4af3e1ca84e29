// The CUDA plug-in's state behind the C API's opaque handles: its platform,
// each GPU (memory pool, cuBLASLt handle and workspace), streams and events.
//
// Internal to the plug-in (backends/gpu/*.cc). Nothing of AsyncRT's C++
// runtime is used here: the plug-in sees only include/asyncrt/c/.
//
// Ownership: the platform owns a CudaDevice per GPU the runtime created;
// the runtime owns streams and events through the C API (create_*/
// destroy_*). Thread-safety: every function may be called from any thread
// at once; mutable state is atomic or guarded by a mutex. Blocking: none,
// except destroy_stream (drains the stream) and device creation.
#ifndef ASYNCRT_BACKENDS_GPU_CUDA_DEVICE_H_
#define ASYNCRT_BACKENDS_GPU_CUDA_DEVICE_H_

#include <cublasLt.h>
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#include "asyncrt/c/device_plugin.h"
#include "backends/gpu/block_cache.h"
#include "backends/gpu/completion_poller.h"

namespace asyncrt::gpu {

// The runtime's functions (set once by AsyncRT_InitPlugin).
extern const AsyncRT_RuntimeApi* g_api;

// Settings read from the environment when the plug-in starts.
struct CudaSettings {
  // ASYNCRT_CUDA_MEMORY_LIMIT_MB: at most this much device memory per GPU
  // (0: all of it).
  uint64_t memory_limit_bytes = 0;
  // ASYNCRT_CUDA_ALLOW_TF32=1: f32 matmuls may use TF32 tensor cores (as
  // torch.backends.cuda.matmul.allow_tf32).
  bool allow_tf32 = false;
  // ASYNCRT_CUDA_HOST_PROFILE=1: the host time of each op's kernel call
  // (reading operands, allocating, enqueueing), printed per op to stderr
  // when the plug-in's platform is destroyed.
  bool host_profile = false;
  // ASYNCRT_CUDA_CONV_API=legacy: convolutions through cuDNN's legacy API
  // only (default: its graph API where a plan can be made).
  bool legacy_conv = false;
  // ASYNCRT_CUDA_FAULT_OP=nn.x: after each nn.x, a kernel that faults (an
  // illegal address): how tests see a device fault reach the program. The
  // fault is sticky for the process's CUDA context.
  std::string fault_op;
  // ASYNCRT_CUDA_DEVICE_MEMORY=malloc: the block cache's device memory from
  // cudaMalloc (its frees wait for the device) instead of the device's
  // default pool (cudaMallocFromPoolAsync): whether where tensors live
  // changes a kernel's speed.
  bool memory_from_pool = true;
  // ASYNCRT_CUDA_COMPLETION=callback: completions through CUDA's host
  // callbacks (default: polled events, completion_poller.h).
  bool poll_completions = true;
  // ASYNCRT_CUDA_POLLER_IDLE_US: how long the completion poller stays
  // awake with nothing due (0: it sleeps at once).
  std::chrono::microseconds poller_idle_spin =
      CompletionPoller::kDefaultIdleSpin;
  // ASYNCRT_CUDA_ATTENTION: nn.attention's path. products (default): two
  // cuBLASLt products around our softmax, else our one kernel; auto:
  // cuDNN's fused attention where it takes the shape, else as products;
  // cudnn: as auto, but a shape cuDNN should take and does not is an error
  // (how tests see it run); flash: our FlashAttention-2 kernel where it
  // takes the shape, else as products; kernel: our CUDA-core kernel only.
  // The products were the fastest for BERT on an H200 (docs/gpu.md).
  enum class AttentionPath { kAuto, kCudnn, kFlash, kProducts, kKernel };
  AttentionPath attention = AttentionPath::kProducts;
  // ASYNCRT_CUDA_FLASH_WARPS=1|2|4: warps (of 16 query rows) per block of
  // the flash attention kernel.
  int flash_warps = 2;
};

// A kernel to register: an op of the runtime's op set, its C function and
// the data passed to it.
struct KernelEntry {
  const char* op;
  AsyncRT_KernelFn fn;
  void* data;
};
// Registers `count` kernels (api->register_kernel; with host profiling on,
// through a wrapper that times each call). False (status set) at the first
// failure.
bool RegisterKernels(AsyncRT_PluginParams* params, const KernelEntry* kernels,
                     size_t count, AsyncRT_Status* status);
// Prints and clears the host profile (no-op when it is off).
void PrintHostProfile();
const CudaSettings& Settings();
// With host profiling on, adds `nanoseconds` spent in CUDA's launch call
// to the profile of the kernel running on this thread (so that the
// profile tells CUDA's host time from the plug-in's own).
void AddProfiledLaunchTime(int64_t nanoseconds);

// A key for cached matmul plans: dtype (and whether a C is read), m, n, k,
// batch, the batch strides, the leading dimensions, the alignments of a
// strided product, transposes, epilogue, compute type.
using MatmulKey =
    std::tuple<int, int64_t, int64_t, int64_t, int64_t,
               std::tuple<int64_t, int64_t, int64_t>,
               std::tuple<int64_t, int64_t, int64_t>,
               std::tuple<uint32_t, uint32_t, uint32_t>, int64_t, int, int>;

// A matrix product's cuBLASLt descriptors and algorithm, made once per
// shape (cuda_ops.cc).
struct MatmulPlan {
  cublasLtMatmulDesc_t desc = nullptr;
  cublasLtMatrixLayout_t first = nullptr;
  cublasLtMatrixLayout_t second = nullptr;
  cublasLtMatrixLayout_t out = nullptr;
  cublasLtMatmulAlgo_t algo = {};
  MatmulPlan() = default;
  MatmulPlan(const MatmulPlan&) = delete;
  MatmulPlan& operator=(const MatmulPlan&) = delete;
  ~MatmulPlan() {
    if (out) cublasLtMatrixLayoutDestroy(out);
    if (second) cublasLtMatrixLayoutDestroy(second);
    if (first) cublasLtMatrixLayoutDestroy(first);
    if (desc) cublasLtMatmulDescDestroy(desc);
  }
};

struct CudnnState;  // cudnn_ops.cc
struct DeviceFault;   // cuda_kernels.h
struct GraphPool;     // cuda_graph.cc
struct RetiredGraph;  // cuda_graph.cc
void DestroyCudnnState(CudnnState* state);

struct CudaDevice {
  int ordinal = 0;
  std::string description;
  std::string bus_id;
  cudaMemPool_t pool = nullptr;
  // The stream that allocations and frees are ordered on: the first stream
  // the runtime creates (its compute stream; copy streams come after).
  // Null before.
  std::atomic<cudaStream_t> allocation_stream{nullptr};
  // Device memory: blocks from `pool` (on allocation_stream, or cudaMalloc
  // without one), reused in stream order without calling CUDA.
  std::unique_ptr<BlockCache> memory;
  // Pinned host memory (cudaHostAlloc), reused likewise.
  std::unique_ptr<BlockCache> host_memory;

  // cuBLASLt: the handle is thread-safe; the workspace is used by work on
  // the allocation stream only, so stream order keeps its uses apart.
  cublasLtHandle_t blas_lt = nullptr;
  void* blas_workspace = nullptr;
  size_t blas_workspace_bytes = 0;
  // Guards the plans, and a plan's descriptor from the setting of a call's
  // bias pointer to its launch.
  std::mutex matmul_mutex;
  std::map<MatmulKey, std::unique_ptr<MatmulPlan>> matmul_plans;

  // cuDNN's handle and convolution plans, made on first use (owned).
  std::mutex cudnn_init_mutex;
  CudnnState* cudnn = nullptr;

  // What kernels that check their operands on the device found wrong
  // (cuda_kernels.h): pinned host memory mapped into the device, the same
  // address on both (unified addressing). Set by kernels, read by the host
  // after work is done, never cleared: every later completion fails.
  DeviceFault* fault = nullptr;

  // Completions of host callbacks (null with poll_completions off).
  std::unique_ptr<CompletionPoller> completions;
  // CUDA events given back (TakeEvent, ReturnEvent), guarded by the mutex.
  std::mutex event_pool_mutex;
  std::vector<cudaEvent_t> event_pool;

  // Graphs (cuda_graph.cc). graph_mutex guards the blocks graphs' pools
  // hold, by address (graph_block_count: their number, read without the
  // lock on every free), and the executables waiting for their last run.
  std::mutex graph_mutex;
  std::unordered_map<void*, std::shared_ptr<GraphPool>> graph_blocks;
  std::atomic<size_t> graph_block_count{0};
  std::vector<RetiredGraph*> retired_graphs;
};

// A stream: CUDA's and its device. Errors need no state here: launch
// errors are reported at the call, and faults are sticky in CUDA itself.
struct CudaStream {
  CudaDevice* device = nullptr;
  cudaStream_t stream = nullptr;
};

struct CudaEvent {
  cudaEvent_t event = nullptr;
  std::atomic<bool> recorded{false};
};

inline CudaDevice* DeviceOf(const AsyncRT_Device* device) {
  return static_cast<CudaDevice*>(device->device_handle);
}
inline CudaStream* StreamOf(AsyncRT_Stream stream) {
  return reinterpret_cast<CudaStream*>(stream);
}

// Makes `ordinal` the calling thread's current CUDA device, which kernel
// launches and cuBLAS calls need to match their stream's; cached per
// thread, since the runtime calls from any of its threads.
inline void UseDevice(int ordinal) {
  thread_local int current = -1;
  if (current != ordinal) {
    cudaSetDevice(ordinal);
    current = ordinal;
  }
}

//===--- Graphs (cuda_graph.cc) -------------------------------------------===//

// The CUDA stream for work the calling thread enqueues on `stream`: its
// capture stream while it records a graph of the stream's device.
cudaStream_t StreamFor(AsyncRT_Stream stream);
// Device memory for the calling thread's work (the graph's pool while it
// records one), and its release (to whichever pool it came from). Every
// device allocation of the plug-in goes through these.
void* DeviceAllocate(CudaDevice& device, uint64_t size);
void DeviceDeallocate(CudaDevice& device, void* memory, uint64_t size);
// While the calling thread records a graph of `device`: marks the capture
// unusable (end_capture fails, naming `what`) and returns true.
bool BreakCapture(const CudaDevice& device, const char* what);
// While the calling thread records a graph of `device`: keeps the callback
// for after the graph's first run and returns true.
bool HoldCallback(const CudaDevice& device, AsyncRT_CallbackFn callback,
                  void* arg);
// The C API's graph functions.
void BeginCapture(const AsyncRT_Device* device, AsyncRT_Stream stream,
                  AsyncRT_Status* status);
void EndCapture(const AsyncRT_Device* device, AsyncRT_Stream stream,
                AsyncRT_Graph* graph, AsyncRT_Status* status);
void LaunchGraph(const AsyncRT_Device* device, AsyncRT_Stream stream,
                 AsyncRT_Graph graph, AsyncRT_Status* status);
void DestroyGraph(const AsyncRT_Device* device, AsyncRT_Graph graph);
// Destroys the executables of destroyed graphs, waiting for their runs.
void DestroyRetiredGraphs(CudaDevice& device);
// Calls `callback(arg, ...)` once the work enqueued on `stream` (of
// `device`) so far is done: through the device's completion poller, or
// cudaStreamAddCallback; the callback gets the error at once if that
// cannot be enqueued (cuda_plugin.cc).
void EnqueueHostCallback(CudaDevice& device, cudaStream_t stream,
                         AsyncRT_CallbackFn callback, void* arg);

// A CUDA event without timing, from the device's pool or new (the error
// otherwise). Every event the plug-in makes (the runtime's, the completion
// poller's) comes from here and goes back with ReturnEvent once nothing
// more will be enqueued on it: CUDA keeps what queued work needs of an
// event, and a new recording replaces the old for whoever queries it
// later, so an event may be recorded again while an older recording is
// pending (waits enqueued before keep waiting for that one).
cudaError_t TakeEvent(CudaDevice& device, cudaEvent_t* event);
void ReturnEvent(CudaDevice& device, cudaEvent_t event);

// The error every completion of `device` reports once one of its kernels
// found a bad operand (DeviceFault): ASYNCRT_OK when none has.
AsyncRT_Code DeviceFaultError(const CudaDevice& device, std::string* message);

// Sets `status` from a CUDA error ("what: cudaErrorX: text"); true if `error`
// is cudaSuccess.
bool CheckCuda(cudaError_t error, const char* what, AsyncRT_Status* status);
// Fails `status` with `code` and a message.
void Fail(AsyncRT_Status* status, AsyncRT_Code code,
          const std::string& message);

// Registers the kernels of cuda_ops.cc; false (status set) on failure.
// And those of cudnn_ops.cc (convolution, pooling, batch normalization),
// where cuDNN was found at build time.
bool RegisterCudnnKernels(AsyncRT_PluginParams* params, AsyncRT_Status* status);
bool RegisterCudaKernels(AsyncRT_PluginParams* params, AsyncRT_Status* status);
// And nn.resize's (cuda_resize.cc).
bool RegisterResizeKernels(AsyncRT_PluginParams* params,
                           AsyncRT_Status* status);

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_CUDA_DEVICE_H_
