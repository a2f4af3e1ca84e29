// AsyncRT's CUDA backend as a device plug-in on the stable C API
// (include/asyncrt/c/device_plugin.h): one device per visible GPU, named
// CUDA:0, CUDA:1...
//
// - Memory: CUDA's stream-ordered memory pools (cudaMallocFromPoolAsync and
//   cudaFreeAsync on the device's stream), with the pool keeping freed
//   memory for reuse instead of returning it to the driver. A limit
//   (ASYNCRT_CUDA_MEMORY_LIMIT_MB) is the device's memory limit, which the
//   runtime's allocator enforces; running out is an error on the op.
// - Pinned host memory (cudaHostAlloc) for the runtime's staging buffers.
// - Streams are non-blocking CUDA streams; events are CUDA events without
//   timing; completions reach the runtime through cudaStreamAddCallback,
//   which also reports a faulted stream's error (the runtime hands the rest
//   to its blocking pool; no host thread waits for the GPU).
#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <vector>

#include "asyncrt/c/device_plugin.h"
#include "backends/gpu/cuda_device.h"
#include "backends/gpu/cuda_kernels.h"

namespace asyncrt::gpu {

const AsyncRT_RuntimeApi* g_api = nullptr;

const CudaSettings& Settings() {
  static const CudaSettings settings = [] {
    CudaSettings s;
    if (const char* limit = std::getenv("ASYNCRT_CUDA_MEMORY_LIMIT_MB")) {
      s.memory_limit_bytes = std::strtoull(limit, nullptr, 10) << 20;
    }
    if (const char* tf32 = std::getenv("ASYNCRT_CUDA_ALLOW_TF32")) {
      s.allow_tf32 = std::strcmp(tf32, "1") == 0;
    }
    if (const char* api = std::getenv("ASYNCRT_CUDA_CONV_API")) {
      s.legacy_conv = std::strcmp(api, "legacy") == 0;
    }
    if (const char* profile = std::getenv("ASYNCRT_CUDA_HOST_PROFILE")) {
      s.host_profile = std::strcmp(profile, "1") == 0;
    }
    if (const char* fault = std::getenv("ASYNCRT_CUDA_FAULT_OP")) {
      s.fault_op = fault;
    }
    if (const char* memory = std::getenv("ASYNCRT_CUDA_DEVICE_MEMORY")) {
      s.memory_from_pool = std::strcmp(memory, "malloc") != 0;
    }
    if (const char* completion = std::getenv("ASYNCRT_CUDA_COMPLETION")) {
      s.poll_completions = std::strcmp(completion, "callback") != 0;
    }
    if (const char* idle = std::getenv("ASYNCRT_CUDA_POLLER_IDLE_US")) {
      s.poller_idle_spin = std::chrono::microseconds(std::atoll(idle));
    }
    if (const char* attention = std::getenv("ASYNCRT_CUDA_ATTENTION")) {
      using Path = CudaSettings::AttentionPath;
      const std::string path = attention;
      s.attention = path == "cudnn"    ? Path::kCudnn
                    : path == "auto"   ? Path::kAuto
                    : path == "flash"  ? Path::kFlash
                    : path == "kernel" ? Path::kKernel
                                       : Path::kProducts;
    }
    if (const char* warps = std::getenv("ASYNCRT_CUDA_FLASH_WARPS")) {
      s.flash_warps = std::atoi(warps);
    }
    return s;
  }();
  return settings;
}

void Fail(AsyncRT_Status* status, AsyncRT_Code code,
          const std::string& message) {
  g_api->set_status(status, code, message.c_str());
}

bool CheckCuda(cudaError_t error, const char* what, AsyncRT_Status* status) {
  if (error == cudaSuccess) return true;
  // Clears a non-sticky error so that it is not reported twice.
  (void)cudaGetLastError();
  AsyncRT_Code code = error == cudaErrorMemoryAllocation
                          ? ASYNCRT_RESOURCE_EXHAUSTED
                          : ASYNCRT_INTERNAL;
  Fail(status, code,
       std::string(what) + ": " + cudaGetErrorName(error) + ": " +
           cudaGetErrorString(error));
  return false;
}

namespace {

// A kernel timed on the host (ASYNCRT_CUDA_HOST_PROFILE).
struct ProfiledKernel {
  AsyncRT_KernelFn compute;
  void* data;
  std::string op;
  std::atomic<int64_t> calls{0};
  std::atomic<int64_t> nanoseconds{0};
  std::atomic<int64_t> launch_nanoseconds{0};  // Of those, in CUDA launches.
};
// The profiled kernel this thread is running, if any.
thread_local ProfiledKernel* running_kernel = nullptr;
std::mutex profile_mutex;
std::vector<std::unique_ptr<ProfiledKernel>>& Profiled() {
  static auto* kernels = new std::vector<std::unique_ptr<ProfiledKernel>>();
  return *kernels;
}

void RunProfiled(AsyncRT_KernelContext* context, void* data,
                 AsyncRT_Status* status) {
  auto* kernel = static_cast<ProfiledKernel*>(data);
  ProfiledKernel* const outer = running_kernel;
  running_kernel = kernel;
  const auto start = std::chrono::steady_clock::now();
  kernel->compute(context, kernel->data, status);
  running_kernel = outer;
  kernel->nanoseconds.fetch_add(
      std::chrono::duration_cast<std::chrono::nanoseconds>(
          std::chrono::steady_clock::now() - start)
          .count(),
      std::memory_order_relaxed);
  kernel->calls.fetch_add(1, std::memory_order_relaxed);
}

}  // namespace

void AddProfiledLaunchTime(int64_t nanoseconds) {
  if (running_kernel != nullptr) {
    running_kernel->launch_nanoseconds.fetch_add(nanoseconds,
                                                 std::memory_order_relaxed);
  }
}

namespace {

// The kernel, then a faulting one (ASYNCRT_CUDA_FAULT_OP).
struct FaultingKernel {
  AsyncRT_KernelFn compute;
  void* data;
};

void RunThenFault(AsyncRT_KernelContext* context, void* data,
                  AsyncRT_Status* status) {
  auto* kernel = static_cast<FaultingKernel*>(data);
  kernel->compute(context, kernel->data, status);
  if (g_api->status_code(status) != ASYNCRT_OK) return;
  CheckCuda(LaunchFault(StreamFor(g_api->kernel_stream(context))),
            "launching the fault", status);
}

}  // namespace

bool RegisterKernels(AsyncRT_PluginParams* params, const KernelEntry* kernels,
                     size_t count, AsyncRT_Status* status) {
  for (size_t i = 0; i < count; ++i) {
    AsyncRT_KernelDef def = {};
    def.struct_size = ASYNCRT_KERNEL_DEF_STRUCT_SIZE;
    def.op_name = kernels[i].op;
    def.compute = kernels[i].fn;
    def.kernel_data = kernels[i].data;
    if (Settings().fault_op == def.op_name) {
      // Lives as long as the process (a loaded plug-in stays loaded).
      def.kernel_data = new FaultingKernel{def.compute, def.kernel_data};
      def.compute = RunThenFault;
    }
    if (Settings().host_profile) {
      auto kernel = std::make_unique<ProfiledKernel>();
      kernel->compute = def.compute;
      kernel->data = def.kernel_data;
      kernel->op = def.op_name;
      def.compute = RunProfiled;
      def.kernel_data = kernel.get();
      std::lock_guard<std::mutex> lock(profile_mutex);
      Profiled().push_back(std::move(kernel));
    }
    params->api->register_kernel(params->registrar, &def, status);
    if (params->api->status_code(status) != ASYNCRT_OK) return false;
  }
  return true;
}

void PrintHostProfile() {
  std::lock_guard<std::mutex> lock(profile_mutex);
  for (const auto& kernel : Profiled()) {
    const int64_t calls = kernel->calls.exchange(0);
    const int64_t ns = kernel->nanoseconds.exchange(0);
    const int64_t launch_ns = kernel->launch_nanoseconds.exchange(0);
    if (calls == 0) continue;
    std::fprintf(stderr,
                 "asyncrt cuda host profile: %-24s %8lld calls %10.2f us/call "
                 "%10.1f ms",
                 kernel->op.c_str(), static_cast<long long>(calls),
                 ns / 1e3 / calls, ns / 1e6);
    if (launch_ns != 0) {
      std::fprintf(stderr, " (in CUDA's launch: %.2f us/call)",
                   launch_ns / 1e3 / calls);
    }
    std::fprintf(stderr, "\n");
  }
}

namespace {

//===--- Devices ----------------------------------------------------------===//

// The stream the block cache allocates and frees device memory on, from
// the device's pool; null for cudaMalloc and cudaFree (without a stream,
// or with ASYNCRT_CUDA_DEVICE_MEMORY=malloc).
cudaStream_t PoolStream(const CudaDevice& device) {
  return Settings().memory_from_pool
             ? device.allocation_stream.load(std::memory_order_acquire)
             : nullptr;
}

void CreateDevice(const AsyncRT_Platform* platform, AsyncRT_Device* device,
                  AsyncRT_Status* status) {
  (void)platform;
  auto cuda = std::make_unique<CudaDevice>();
  cuda->ordinal = device->ordinal;
  cudaDeviceProp props;
  if (!CheckCuda(cudaGetDeviceProperties(&props, cuda->ordinal),
                 "cudaGetDeviceProperties", status)) {
    return;
  }
  UseDevice(cuda->ordinal);
  char bus_id[32] = {};
  std::snprintf(bus_id, sizeof(bus_id), "%04x:%02x:%02x.0", props.pciDomainID,
                props.pciBusID, props.pciDeviceID);
  cuda->bus_id = bus_id;
  size_t free_bytes = 0, total_bytes = 0;
  if (!CheckCuda(cudaMemGetInfo(&free_bytes, &total_bytes), "cudaMemGetInfo",
                 status)) {
    return;
  }
  uint64_t limit = total_bytes;
  if (Settings().memory_limit_bytes != 0 &&
      Settings().memory_limit_bytes < limit) {
    limit = Settings().memory_limit_bytes;
  }
  // The runtime's user's limit for this device (API 1.3), which the block
  // cache keeps to (in use plus cached).
  if (device->struct_size >= ASYNCRT_DEVICE_STRUCT_SIZE &&
      device->requested_memory_limit_bytes != 0 &&
      device->requested_memory_limit_bytes < limit) {
    limit = device->requested_memory_limit_bytes;
  }
  cuda->description = std::string(props.name) + ", compute capability " +
                      std::to_string(props.major) + "." +
                      std::to_string(props.minor) + ", " +
                      std::to_string(props.multiProcessorCount) + " SMs";
  // The device's default pool, keeping what is freed (as a caching
  // allocator does) instead of trimming it at every synchronization.
  if (!CheckCuda(cudaDeviceGetDefaultMemPool(&cuda->pool, cuda->ordinal),
                 "cudaDeviceGetDefaultMemPool", status)) {
    return;
  }
  uint64_t keep = UINT64_MAX;
  if (!CheckCuda(cudaMemPoolSetAttribute(
                     cuda->pool, cudaMemPoolAttrReleaseThreshold, &keep),
                 "cudaMemPoolSetAttribute", status)) {
    return;
  }
  if (cublasLtCreate(&cuda->blas_lt) != CUBLAS_STATUS_SUCCESS) {
    return Fail(status, ASYNCRT_INTERNAL, "cublasLtCreate failed");
  }
  // cuBLAS's recommended workspace on Hopper.
  cuda->blas_workspace_bytes = 32u << 20;
  if (!CheckCuda(cudaMalloc(&cuda->blas_workspace, cuda->blas_workspace_bytes),
                 "allocating the cuBLASLt workspace", status)) {
    cublasLtDestroy(cuda->blas_lt);
    return;
  }
  // Pinned and mapped: kernels write it, the host reads it (unified
  // addressing gives both the same address). The last step that can fail.
  void* fault = nullptr;
  if (!CheckCuda(cudaHostAlloc(&fault, sizeof(DeviceFault),
                               cudaHostAllocMapped | cudaHostAllocPortable),
                 "allocating the device's fault report", status)) {
    cudaFree(cuda->blas_workspace);
    cublasLtDestroy(cuda->blas_lt);
    return;
  }
  cuda->fault = new (fault) DeviceFault();
  CudaDevice* raw = cuda.get();
  cuda->memory = std::make_unique<BlockCache>(
      [raw](uint64_t size) -> void* {
        void* memory = nullptr;
        cudaStream_t stream = PoolStream(*raw);
        UseDevice(raw->ordinal);
        cudaError_t error =
            stream != nullptr
                ? cudaMallocFromPoolAsync(&memory, size, raw->pool, stream)
                : cudaMalloc(&memory, size);
        if (error != cudaSuccess) {
          (void)cudaGetLastError();
          return nullptr;
        }
        return memory;
      },
      [raw](void* memory, uint64_t) {
        cudaStream_t stream = PoolStream(*raw);
        UseDevice(raw->ordinal);
        // Without a stream (the runtime destroyed it) cudaFree waits.
        if (stream != nullptr) {
          cudaFreeAsync(memory, stream);
        } else {
          cudaFree(memory);
        }
      },
      limit);
  cuda->host_memory = std::make_unique<BlockCache>(
      [](uint64_t size) -> void* {
        void* memory = nullptr;
        if (cudaHostAlloc(&memory, size, cudaHostAllocPortable) !=
            cudaSuccess) {
          (void)cudaGetLastError();
          return nullptr;
        }
        return memory;
      },
      [](void* memory, uint64_t) { cudaFreeHost(memory); });
  if (Settings().poll_completions) {
    CudaDevice* raw = cuda.get();
    cuda->completions = std::make_unique<CompletionPoller>(
        CompletionPoller::EventOps{
            [ordinal = cuda->ordinal] { UseDevice(ordinal); },
            [raw](void* event, AsyncRT_Code* code, std::string* message) {
              cudaError_t error =
                  cudaEventQuery(static_cast<cudaEvent_t>(event));
              if (error == cudaErrorNotReady) return EventState::kPending;
              if (error == cudaSuccess) {
                *code = DeviceFaultError(*raw, message);
                return *code == ASYNCRT_OK ? EventState::kDone
                                           : EventState::kFailed;
              }
              *code = ASYNCRT_INTERNAL;
              *message = std::string("CUDA stream failed: ") +
                         cudaGetErrorName(error) + ": " +
                         cudaGetErrorString(error);
              return EventState::kFailed;
            },
            [raw](void* event) {
              ReturnEvent(*raw, static_cast<cudaEvent_t>(event));
            }},
        Settings().poller_idle_spin);
  }
  device->memory_limit_bytes = limit;
  device->numa_node = -1;
  device->bus_id = cuda->bus_id.c_str();
  device->physical_description = cuda->description.c_str();
  device->device_handle = cuda.release();
}

void DestroyDevice(const AsyncRT_Platform* platform, AsyncRT_Device* device) {
  (void)platform;
  std::unique_ptr<CudaDevice> cuda(DeviceOf(device));
  if (!cuda) return;
  UseDevice(cuda->ordinal);
  // Completions still due (the runtime drained its streams before).
  cuda->completions.reset();
  for (cudaEvent_t event : cuda->event_pool) cudaEventDestroy(event);
  DestroyRetiredGraphs(*cuda);
#ifdef ASYNCRT_HAVE_CUDNN
  if (cuda->cudnn != nullptr) DestroyCudnnState(cuda->cudnn);
#endif
  cuda->memory.reset();
  cuda->host_memory.reset();
  cudaFreeHost(cuda->fault);
  cudaFree(cuda->blas_workspace);
  cublasLtDestroy(cuda->blas_lt);
  // Memory still in the pool goes back to the driver.
  cudaMemPoolTrimTo(cuda->pool, 0);
}

void DestroyPlatform(AsyncRT_Platform* platform) {
  (void)platform;
  PrintHostProfile();
}

//===--- Memory -----------------------------------------------------------===//

void* Allocate(const AsyncRT_Device* device, uint64_t size,
               uint64_t alignment) {
  // Blocks are aligned to at least 256 bytes (CUDA's allocations, and
  // rounded sizes that are multiples of 512).
  if (alignment > 256) return nullptr;
  return DeviceAllocate(*DeviceOf(device), size);
}

void Deallocate(const AsyncRT_Device* device, void* memory, uint64_t size) {
  DeviceDeallocate(*DeviceOf(device), memory, size);
}

void* HostAllocate(const AsyncRT_Device* device, uint64_t size,
                   uint64_t alignment) {
  if (alignment > 4096) return nullptr;
  return DeviceOf(device)->host_memory->Allocate(size);
}

void HostDeallocate(const AsyncRT_Device* device, void* memory, uint64_t size) {
  DeviceOf(device)->host_memory->Deallocate(memory, size);
}

int MemoryUsage(const AsyncRT_Device* device, int64_t* free_bytes,
                int64_t* total_bytes) {
  UseDevice(DeviceOf(device)->ordinal);
  size_t free = 0, total = 0;
  if (cudaMemGetInfo(&free, &total) != cudaSuccess) return 0;
  *free_bytes = static_cast<int64_t>(free);
  *total_bytes = static_cast<int64_t>(total);
  return 1;
}

int MemoryStats(const AsyncRT_Device* device, AsyncRT_MemoryStats* stats) {
  const BlockCache::Stats cache = DeviceOf(device)->memory->GetStats();
  stats->in_use_bytes = cache.in_use_bytes;
  stats->cached_bytes = cache.cached_bytes;
  stats->peak_reserved_bytes = cache.peak_reserved_bytes;
  stats->cache_hits = cache.hits;
  stats->cache_misses = cache.misses;
  return 1;
}

//===--- Streams and events -----------------------------------------------===//

void CreateStream(const AsyncRT_Device* device, AsyncRT_Stream* stream,
                  AsyncRT_Status* status) {
  CudaDevice* cuda = DeviceOf(device);
  UseDevice(cuda->ordinal);
  auto created = std::make_unique<CudaStream>();
  created->device = cuda;
  if (!CheckCuda(
          cudaStreamCreateWithFlags(&created->stream, cudaStreamNonBlocking),
          "cudaStreamCreateWithFlags", status)) {
    return;
  }
  cudaStream_t none = nullptr;
  cuda->allocation_stream.compare_exchange_strong(none, created->stream,
                                                  std::memory_order_acq_rel);
  *stream = reinterpret_cast<AsyncRT_Stream>(created.release());
}

void DestroyStream(const AsyncRT_Device* device, AsyncRT_Stream stream) {
  CudaDevice* cuda = DeviceOf(device);
  std::unique_ptr<CudaStream> owned(StreamOf(stream));
  cudaStreamSynchronize(owned->stream);
  if (cuda->completions != nullptr) cuda->completions->Drain();
  cudaStream_t self = owned->stream;
  // Cached blocks go back to the pool on this stream, while it lives;
  // frees after this go through cudaFree.
  if (cuda->allocation_stream.load(std::memory_order_acquire) == self) {
    cuda->memory->Trim();
  }
  cuda->allocation_stream.compare_exchange_strong(self, nullptr,
                                                  std::memory_order_acq_rel);
  cudaStreamDestroy(owned->stream);
}

void CreateEvent(const AsyncRT_Device* device, AsyncRT_Event* event,
                 AsyncRT_Status* status) {
  CudaDevice& cuda = *DeviceOf(device);
  UseDevice(cuda.ordinal);
  auto created = std::make_unique<CudaEvent>();
  if (!CheckCuda(TakeEvent(cuda, &created->event), "cudaEventCreateWithFlags",
                 status)) {
    return;
  }
  *event = reinterpret_cast<AsyncRT_Event>(created.release());
}

void DestroyEvent(const AsyncRT_Device* device, AsyncRT_Event event) {
  std::unique_ptr<CudaEvent> owned(reinterpret_cast<CudaEvent*>(event));
  // Work still queued keeps its recording (TakeEvent).
  ReturnEvent(*DeviceOf(device), owned->event);
}

void RecordEvent(const AsyncRT_Device* device, AsyncRT_Stream stream,
                 AsyncRT_Event event, AsyncRT_Status* status) {
  // An event would mark nothing of a replay: it breaks a capture (which
  // then fails as a whole; the stream itself stays usable).
  if (BreakCapture(*DeviceOf(device), "an event")) return;
  auto* cuda_event = reinterpret_cast<CudaEvent*>(event);
  if (CheckCuda(cudaEventRecord(cuda_event->event, StreamOf(stream)->stream),
                "cudaEventRecord", status)) {
    cuda_event->recorded.store(true, std::memory_order_release);
  }
}

AsyncRT_EventStatus QueryEvent(const AsyncRT_Device* device,
                               AsyncRT_Event event) {
  (void)device;
  auto* cuda_event = reinterpret_cast<CudaEvent*>(event);
  if (!cuda_event->recorded.load(std::memory_order_acquire)) {
    return ASYNCRT_EVENT_COMPLETE;
  }
  switch (cudaEventQuery(cuda_event->event)) {
    case cudaSuccess:
      return ASYNCRT_EVENT_COMPLETE;
    case cudaErrorNotReady:
      return ASYNCRT_EVENT_PENDING;
    default:
      return ASYNCRT_EVENT_ERROR;
  }
}

void WaitForEvent(const AsyncRT_Device* device, AsyncRT_Stream stream,
                  AsyncRT_Event event, AsyncRT_Status* status) {
  if (BreakCapture(*DeviceOf(device), "a wait for an event")) return;
  auto* cuda_event = reinterpret_cast<CudaEvent*>(event);
  // Not recorded yet: nothing to wait for (a pooled CUDA event may still
  // carry an older recording of its last user's).
  if (!cuda_event->recorded.load(std::memory_order_acquire)) return;
  CheckCuda(cudaStreamWaitEvent(StreamOf(stream)->stream, cuda_event->event, 0),
            "cudaStreamWaitEvent", status);
}

//===--- Copies -----------------------------------------------------------===//

void Copy(AsyncRT_Stream stream, void* dst, const void* src, uint64_t size,
          cudaMemcpyKind kind, AsyncRT_Status* status) {
  CheckCuda(cudaMemcpyAsync(dst, src, size, kind, StreamFor(stream)),
            "cudaMemcpyAsync", status);
}

// A replay would copy from or to a host buffer that has moved on.
bool RefuseHostCopyInCapture(const AsyncRT_Device* device,
                             AsyncRT_Status* status) {
  if (!BreakCapture(*DeviceOf(device), "a copy from or to host memory")) {
    return false;
  }
  Fail(status, ASYNCRT_FAILED_PRECONDITION,
       "a device graph cannot record a copy from or to host memory");
  return true;
}

void MemcpyHtoD(const AsyncRT_Device* device, AsyncRT_Stream stream, void* dst,
                const void* src, uint64_t size, AsyncRT_Status* status) {
  if (RefuseHostCopyInCapture(device, status)) return;
  Copy(stream, dst, src, size, cudaMemcpyHostToDevice, status);
}

void MemcpyDtoH(const AsyncRT_Device* device, AsyncRT_Stream stream, void* dst,
                const void* src, uint64_t size, AsyncRT_Status* status) {
  if (RefuseHostCopyInCapture(device, status)) return;
  Copy(stream, dst, src, size, cudaMemcpyDeviceToHost, status);
}

void MemcpyDtoD(const AsyncRT_Device* device, AsyncRT_Stream stream, void* dst,
                const void* src, uint64_t size, AsyncRT_Status* status) {
  (void)device;
  Copy(stream, dst, src, size, cudaMemcpyDeviceToDevice, status);
}

//===--- Host callbacks ---------------------------------------------------===//

struct PendingCallback {
  const CudaDevice* device;
  AsyncRT_CallbackFn callback;
  void* arg;
};

// On CUDA's callback thread, which must not call CUDA: only the runtime's
// callback, which hands its work to the runtime's threads.
void CUDART_CB RunCallback(cudaStream_t stream, cudaError_t error, void* data) {
  (void)stream;
  std::unique_ptr<PendingCallback> pending(static_cast<PendingCallback*>(data));
  if (error == cudaSuccess) {
    std::string message;
    const AsyncRT_Code code = DeviceFaultError(*pending->device, &message);
    pending->callback(pending->arg, code,
                      code == ASYNCRT_OK ? nullptr : message.c_str());
  } else {
    std::string message = std::string("CUDA stream failed: ") +
                          cudaGetErrorName(error) + ": " +
                          cudaGetErrorString(error);
    pending->callback(pending->arg, ASYNCRT_INTERNAL, message.c_str());
  }
}

}  // namespace

//===--- Events -----------------------------------------------------------===//

cudaError_t TakeEvent(CudaDevice& device, cudaEvent_t* event) {
  {
    std::lock_guard<std::mutex> lock(device.event_pool_mutex);
    if (!device.event_pool.empty()) {
      *event = device.event_pool.back();
      device.event_pool.pop_back();
      return cudaSuccess;
    }
  }
  return cudaEventCreateWithFlags(event, cudaEventDisableTiming);
}

void ReturnEvent(CudaDevice& device, cudaEvent_t event) {
  std::lock_guard<std::mutex> lock(device.event_pool_mutex);
  device.event_pool.push_back(event);
}

//===--- Faults found on the device ---------------------------------------===//

AsyncRT_Code DeviceFaultError(const CudaDevice& device, std::string* message) {
  const volatile DeviceFault* fault = device.fault;
  if (fault == nullptr || fault->code == kNoFault) return ASYNCRT_OK;
  // Only nn.gather checks its operands on the device so far.
  *message = "nn.gather on CUDA:" + std::to_string(device.ordinal) +
             ": index " + std::to_string(fault->value) +
             " is out of range for an axis of size " +
             std::to_string(fault->bound) +
             " (found on the device: its later work fails too)";
  return ASYNCRT_INVALID_ARGUMENT;
}

namespace {

// The completion poller's, or cudaStreamAddCallback's (which, unlike
// cudaLaunchHostFunc, passes the stream's error: a faulted stream still
// calls back, with the fault).
cudaError_t AddCallback(CudaDevice& device, cudaStream_t stream,
                        AsyncRT_CallbackFn callback, void* arg,
                        const char** what) {
  if (device.completions != nullptr) {
    *what = "recording a completion event";
    cudaEvent_t event = nullptr;
    if (cudaError_t error = TakeEvent(device, &event); error != cudaSuccess) {
      return error;
    }
    if (cudaError_t error = cudaEventRecord(event, stream);
        error != cudaSuccess) {
      ReturnEvent(device, event);
      return error;
    }
    device.completions->Add(stream, event, callback, arg);
    return cudaSuccess;
  }
  *what = "cudaStreamAddCallback";
  auto* pending = new PendingCallback{&device, callback, arg};
  cudaError_t error = cudaStreamAddCallback(stream, RunCallback, pending, 0);
  if (error != cudaSuccess) delete pending;
  return error;
}

}  // namespace

void EnqueueHostCallback(CudaDevice& device, cudaStream_t stream,
                         AsyncRT_CallbackFn callback, void* arg) {
  const char* what = "";
  cudaError_t error = AddCallback(device, stream, callback, arg, &what);
  if (error != cudaSuccess) {
    (void)cudaGetLastError();
    std::string message = std::string(what) + ": " + cudaGetErrorName(error) +
                          ": " + cudaGetErrorString(error);
    callback(arg, ASYNCRT_INTERNAL, message.c_str());
  }
}

namespace {

void HostCallback(const AsyncRT_Device* device, AsyncRT_Stream stream,
                  AsyncRT_CallbackFn callback, void* arg,
                  AsyncRT_Status* status) {
  CudaDevice& cuda = *DeviceOf(device);
  // While this thread records a graph: after the graph's first run.
  if (HoldCallback(cuda, callback, arg)) return;
  UseDevice(cuda.ordinal);
  const char* what = "";
  CheckCuda(AddCallback(cuda, StreamOf(stream)->stream, callback, arg, &what),
            what, status);
}

}  // namespace
}  // namespace asyncrt::gpu

extern "C" ASYNCRT_PLUGIN_EXPORT void AsyncRT_InitPlugin(
    AsyncRT_PluginParams* params, AsyncRT_Status* status) {
  using namespace asyncrt::gpu;  // NOLINT: the plug-in's own functions.
  g_api = params->api;
  params->plugin_api_major = ASYNCRT_PLUGIN_API_MAJOR;
  params->plugin_api_minor = ASYNCRT_PLUGIN_API_MINOR;
  params->plugin_api_patch = ASYNCRT_PLUGIN_API_PATCH;
  if (params->api->struct_size < ASYNCRT_RUNTIME_API_1_1_STRUCT_SIZE) {
    return Fail(status, ASYNCRT_FAILED_PRECONDITION,
                "the CUDA plug-in needs device plug-in API 1.1 or newer");
  }
  int device_count = 0;
  cudaError_t error = cudaGetDeviceCount(&device_count);
  if (error != cudaSuccess || device_count == 0) {
    (void)cudaGetLastError();
    return Fail(status, ASYNCRT_UNAVAILABLE,
                std::string("no CUDA GPU is usable here: ") +
                    (error == cudaSuccess ? "cudaGetDeviceCount found none"
                                          : cudaGetErrorString(error)));
  }
  AsyncRT_Platform* platform = params->platform;
  platform->struct_size = ASYNCRT_PLATFORM_STRUCT_SIZE;
  platform->name = "NVIDIA CUDA";
  platform->device_type = "cuda";
  platform->device_count = device_count;
  platform->platform_handle = nullptr;  // All state is per device.
  platform->create_device = CreateDevice;
  platform->destroy_device = DestroyDevice;
  platform->destroy_platform = DestroyPlatform;

  AsyncRT_DeviceFns* fns = params->device_fns;
  fns->struct_size = ASYNCRT_DEVICE_FNS_STRUCT_SIZE;
  fns->allocate = Allocate;
  fns->deallocate = Deallocate;
  fns->host_memory_allocate = HostAllocate;
  fns->host_memory_deallocate = HostDeallocate;
  fns->memory_usage = MemoryUsage;
  fns->memory_stats = MemoryStats;
  fns->create_stream = CreateStream;
  fns->destroy_stream = DestroyStream;
  fns->create_event = CreateEvent;
  fns->destroy_event = DestroyEvent;
  fns->record_event = RecordEvent;
  fns->query_event = QueryEvent;
  fns->wait_for_event = WaitForEvent;
  fns->memcpy_htod = MemcpyHtoD;
  fns->memcpy_dtoh = MemcpyDtoH;
  fns->memcpy_dtod = MemcpyDtoD;
  fns->host_callback = HostCallback;
  fns->begin_capture = BeginCapture;
  fns->end_capture = EndCapture;
  fns->launch_graph = LaunchGraph;
  fns->destroy_graph = DestroyGraph;
  if (RegisterCudaKernels(params, status) &&
      RegisterResizeKernels(params, status)) {
#ifdef ASYNCRT_HAVE_CUDNN
    RegisterCudnnKernels(params, status);
#endif
  }
}
