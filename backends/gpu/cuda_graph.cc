// The CUDA plug-in's graphs (the C API's begin_capture, end_capture,
// launch_graph, destroy_graph): CUDA graphs recorded by stream capture.
//
// A capture belongs to the thread that began it, as PyTorch's
// torch.cuda.graph does: that thread's work for the device goes to a
// capture stream of its own (StreamFor), recorded by CUDA and not run, and
// its device memory comes from the graph's pool (DeviceAllocate), blocks
// that nothing but the graph uses while it lives, because every replay
// writes the same addresses. Inside the pool blocks are reused in capture
// order, which a single captured stream keeps (its graph is a chain).
// Other threads' work runs on the device's stream as usual.
//
// Host copies, events and waits for events are not recorded (a replay
// would read a host buffer that has moved on; an event would mark nothing
// of a replay): they break the capture, and end_capture fails. Host
// callbacks the capturing thread enqueues are held and enqueued after the
// graph's first run (or called with the error if there is none).
#include <cuda_runtime.h>

#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "asyncrt/c/device_plugin.h"
#include "backends/gpu/cuda_device.h"

namespace asyncrt::gpu {
// A destroyed graph's executable, destroyed once its last launch is done
// (`done`, recorded on the device's stream, has completed): one still
// queued when destroy_graph comes keeps it.
struct RetiredGraph {
  cudaGraphExec_t exec;
  cudaEvent_t done;
};
}  // namespace asyncrt::gpu

struct AsyncRT_GraphImpl {
  cudaGraphExec_t exec = nullptr;
  std::shared_ptr<asyncrt::gpu::GraphPool> pool;
};

namespace asyncrt::gpu {

// The graph's device memory: blocks of the device's cache, kept for the
// graph until it is destroyed.
struct GraphPool {
  explicit GraphPool(CudaDevice* device)
      : cache([device](uint64_t size) { return device->memory->Allocate(size); },
              [device](void* memory, uint64_t size) {
                device->memory->Deallocate(memory, size);
              }) {}
  BlockCache cache;
  bool destroyed = false;  // Guarded by the device's graph_mutex.
};

namespace {

struct HeldCallback {
  AsyncRT_CallbackFn callback;
  void* arg;
};

struct CaptureState {
  CudaDevice* device = nullptr;
  cudaStream_t stream = nullptr;  // The capture stream.
  std::shared_ptr<GraphPool> pool;
  std::string broken;  // Why the capture cannot be used; empty if it can.
  std::vector<std::pair<void*, uint64_t>> held_frees;
  std::vector<HeldCallback> held_callbacks;
};

thread_local CaptureState* t_capture = nullptr;

CaptureState* CaptureOn(const CudaDevice* device) {
  return t_capture != nullptr && t_capture->device == device ? t_capture
                                                             : nullptr;
}

void DestroyFinished(CudaDevice& device, bool wait) {
  std::lock_guard<std::mutex> lock(device.graph_mutex);
  auto& retired = device.retired_graphs;
  for (size_t i = 0; i < retired.size();) {
    RetiredGraph* graph = retired[i];
    if (wait) cudaEventSynchronize(graph->done);
    if (cudaEventQuery(graph->done) == cudaErrorNotReady) {
      ++i;
      continue;
    }
    (void)cudaGetLastError();
    cudaGraphExecDestroy(graph->exec);
    cudaEventDestroy(graph->done);
    delete graph;
    retired[i] = retired.back();
    retired.pop_back();
  }
}

// Ends `state`'s capture without a graph: callbacks get `message`, held
// memory goes back (nothing recorded will run).
void Abandon(std::unique_ptr<CaptureState> state, const std::string& message) {
  CudaDevice& device = *state->device;
  {
    std::lock_guard<std::mutex> lock(device.graph_mutex);
    state->pool->destroyed = true;
  }
  state->pool->cache.Trim();
  for (auto& [memory, size] : state->held_frees) {
    device.memory->Deallocate(memory, size);
  }
  for (const HeldCallback& held : state->held_callbacks) {
    held.callback(held.arg, ASYNCRT_FAILED_PRECONDITION, message.c_str());
  }
  cudaStreamDestroy(state->stream);
}

}  // namespace

cudaStream_t StreamFor(AsyncRT_Stream stream) {
  CudaStream* cuda = StreamOf(stream);
  if (CaptureState* capture = CaptureOn(cuda->device)) return capture->stream;
  return cuda->stream;
}

void* DeviceAllocate(CudaDevice& device, uint64_t size) {
  CaptureState* capture = CaptureOn(&device);
  if (capture == nullptr) return device.memory->Allocate(size);
  void* memory = capture->pool->cache.Allocate(size);
  if (memory != nullptr) {
    std::lock_guard<std::mutex> lock(device.graph_mutex);
    device.graph_blocks[memory] = capture->pool;
    device.graph_block_count.store(device.graph_blocks.size(),
                                   std::memory_order_release);
  }
  return memory;
}

void DeviceDeallocate(CudaDevice& device, void* memory, uint64_t size) {
  if (device.graph_block_count.load(std::memory_order_acquire) != 0) {
    std::lock_guard<std::mutex> lock(device.graph_mutex);
    auto it = device.graph_blocks.find(memory);
    if (it != device.graph_blocks.end()) {
      std::shared_ptr<GraphPool> pool = std::move(it->second);
      device.graph_blocks.erase(it);
      device.graph_block_count.store(device.graph_blocks.size(),
                                     std::memory_order_release);
      // Back to the graph's blocks (its destruction trims them under this
      // lock), or, once the graph is gone, the device's.
      if (!pool->destroyed) {
        pool->cache.Deallocate(memory, size);
      } else {
        device.memory->Deallocate(memory, size);
      }
      return;
    }
  }
  if (CaptureState* capture = CaptureOn(&device)) {
    // Recorded work, not run yet, may read it: it goes back after the run.
    capture->held_frees.emplace_back(memory, size);
    return;
  }
  device.memory->Deallocate(memory, size);
}

bool BreakCapture(const CudaDevice& device, const char* what) {
  CaptureState* capture = CaptureOn(&device);
  if (capture == nullptr) return false;
  if (capture->broken.empty()) capture->broken = what;
  return true;
}

bool HoldCallback(const CudaDevice& device, AsyncRT_CallbackFn callback,
                  void* arg) {
  CaptureState* capture = CaptureOn(&device);
  if (capture == nullptr) return false;
  capture->held_callbacks.push_back({callback, arg});
  return true;
}

void BeginCapture(const AsyncRT_Device* device, AsyncRT_Stream stream,
                  AsyncRT_Status* status) {
  (void)stream;
  CudaDevice* cuda = DeviceOf(device);
  if (t_capture != nullptr) {
    return Fail(status, ASYNCRT_FAILED_PRECONDITION,
                "this thread is already recording a graph");
  }
  UseDevice(cuda->ordinal);
  auto state = std::make_unique<CaptureState>();
  state->device = cuda;
  state->pool = std::make_shared<GraphPool>(cuda);
  if (!CheckCuda(cudaStreamCreateWithFlags(&state->stream,
                                           cudaStreamNonBlocking),
                 "cudaStreamCreateWithFlags", status)) {
    return;
  }
  // Relaxed: the capturing thread may still call CUDA (the allocator's
  // pool, on the device's own stream, outside the capture).
  if (!CheckCuda(cudaStreamBeginCapture(state->stream,
                                        cudaStreamCaptureModeRelaxed),
                 "cudaStreamBeginCapture", status)) {
    cudaStreamDestroy(state->stream);
    return;
  }
  t_capture = state.release();
}

void EndCapture(const AsyncRT_Device* device, AsyncRT_Stream stream,
                AsyncRT_Graph* graph, AsyncRT_Status* status) {
  CudaDevice* cuda = DeviceOf(device);
  if (CaptureOn(cuda) == nullptr) {
    return Fail(status, ASYNCRT_FAILED_PRECONDITION,
                "this thread is not recording a graph of this device");
  }
  std::unique_ptr<CaptureState> state(t_capture);
  t_capture = nullptr;
  UseDevice(cuda->ordinal);
  cudaGraph_t recorded = nullptr;
  cudaError_t error = cudaStreamEndCapture(state->stream, &recorded);
  std::string message;
  if (!state->broken.empty()) {
    message = "the graph cannot record " + state->broken;
  } else if (error != cudaSuccess) {
    message = std::string("cudaStreamEndCapture: ") + cudaGetErrorName(error) +
              ": " + cudaGetErrorString(error);
  }
  cudaGraphExec_t exec = nullptr;
  if (message.empty()) {
    error = cudaGraphInstantiate(&exec, recorded, 0);
    if (error != cudaSuccess) {
      message = std::string("cudaGraphInstantiate: ") +
                cudaGetErrorName(error) + ": " + cudaGetErrorString(error);
    }
  }
  if (recorded != nullptr) cudaGraphDestroy(recorded);
  (void)cudaGetLastError();
  cudaStream_t main = StreamOf(stream)->stream;
  if (message.empty()) {
    error = cudaGraphLaunch(exec, main);
    if (error != cudaSuccess) {
      cudaGraphExecDestroy(exec);
      message = std::string("cudaGraphLaunch: ") + cudaGetErrorName(error) +
                ": " + cudaGetErrorString(error);
    }
  }
  if (!message.empty()) {
    Fail(status, ASYNCRT_FAILED_PRECONDITION, message);
    Abandon(std::move(state), message);
    return;
  }
  // The capturing thread's callbacks come after the graph's run.
  for (const HeldCallback& held : state->held_callbacks) {
    EnqueueHostCallback(*cuda, main, held.callback, held.arg);
  }
  for (auto& [memory, size] : state->held_frees) {
    cuda->memory->Deallocate(memory, size);
  }
  cudaStreamDestroy(state->stream);
  auto* made = new AsyncRT_GraphImpl;
  made->exec = exec;
  made->pool = std::move(state->pool);
  *graph = made;
}

void LaunchGraph(const AsyncRT_Device* device, AsyncRT_Stream stream,
                 AsyncRT_Graph graph, AsyncRT_Status* status) {
  UseDevice(DeviceOf(device)->ordinal);
  CheckCuda(cudaGraphLaunch(graph->exec, StreamFor(stream)), "cudaGraphLaunch",
            status);
}

void DestroyGraph(const AsyncRT_Device* device, AsyncRT_Graph graph) {
  std::unique_ptr<AsyncRT_GraphImpl> owned(graph);
  CudaDevice& cuda = *DeviceOf(device);
  UseDevice(cuda.ordinal);
  // Its blocks go back to the device's cache, and those in use will when
  // the runtime frees them. Work queued after this on the device's stream
  // comes after the graph's last run, so reusing them is in stream order.
  {
    std::lock_guard<std::mutex> lock(cuda.graph_mutex);
    owned->pool->destroyed = true;
    owned->pool->cache.Trim();
  }
  auto* retired = new RetiredGraph{owned->exec, nullptr};
  cudaStream_t main = cuda.allocation_stream.load(std::memory_order_acquire);
  if (cudaEventCreateWithFlags(&retired->done, cudaEventDisableTiming) !=
          cudaSuccess ||
      main == nullptr || cudaEventRecord(retired->done, main) != cudaSuccess) {
    (void)cudaGetLastError();
    if (main != nullptr) cudaStreamSynchronize(main);
    cudaGraphExecDestroy(retired->exec);
    if (retired->done != nullptr) cudaEventDestroy(retired->done);
    delete retired;
  } else {
    std::lock_guard<std::mutex> lock(cuda.graph_mutex);
    cuda.retired_graphs.push_back(retired);
  }
  DestroyFinished(cuda, /*wait=*/false);
}

void DestroyRetiredGraphs(CudaDevice& device) {
  DestroyFinished(device, /*wait=*/true);
}

}  // namespace asyncrt::gpu
