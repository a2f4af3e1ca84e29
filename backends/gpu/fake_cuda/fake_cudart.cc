// A stand-in for CUDA's runtime (libcudart.so.13) with no GPU behind it:
// what the CUDA plug-in's host path calls, answered on the host. Device
// and pinned memory are host memory, copies and fills are done at once
// (memmove, memset), kernel launches, events and stream waits do nothing
// and succeed (so kernels' results are whatever the memory held), graphs
// are not supported, and a stream callback runs at once.
//
// With it on LD_LIBRARY_PATH the plug-in loads on a machine without a GPU,
// so that its host side (the C API, attributes, errors, the block cache,
// the completion poller, concurrency) is tested, sanitized and profiled
// there (cuda_plugin_test.host_only; docs/gpu.md). Never installed.
#include <cuda_runtime.h>

#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>

namespace {

// Distinct non-null handles for streams, events and pools.
template <typename Handle>
Handle NewHandle() {
  static std::atomic<uintptr_t> next{0x1000};
  return reinterpret_cast<Handle>(next.fetch_add(16));
}

cudaError_t HostAllocate(void** memory, size_t size) {
  // aligned_alloc needs a multiple of the alignment; a zero-byte request
  // still gets a distinct block, as CUDA's allocators give.
  const size_t rounded = (size + 255) / 256 * 256;
  *memory = std::aligned_alloc(256, rounded == 0 ? 256 : rounded);
  return *memory != nullptr ? cudaSuccess : cudaErrorMemoryAllocation;
}

}  // namespace

extern "C" {

cudaError_t cudaGetDeviceCount(int* count) {
  *count = 1;
  return cudaSuccess;
}

cudaError_t cudaGetDeviceProperties(cudaDeviceProp* props, int) {
  std::memset(props, 0, sizeof(*props));
  std::snprintf(props->name, sizeof(props->name), "fake GPU (host only)");
  props->major = 9;
  props->minor = 0;
  props->totalGlobalMem = size_t{80} << 30;
  props->multiProcessorCount = 132;
  props->maxThreadsPerBlock = 1024;
  props->warpSize = 32;
  props->sharedMemPerBlock = 48 << 10;
  props->sharedMemPerBlockOptin = 227 << 10;
  props->pciBusID = 1;
  return cudaSuccess;
}

cudaError_t cudaSetDevice(int) { return cudaSuccess; }

cudaError_t cudaMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  *total_bytes = size_t{80} << 30;
  *free_bytes = *total_bytes - (size_t{1} << 30);
  return cudaSuccess;
}

cudaError_t cudaGetLastError() { return cudaSuccess; }

const char* cudaGetErrorString(cudaError_t) {
  return "not supported by the fake CUDA runtime";
}

const char* cudaGetErrorName(cudaError_t error) {
  return error == cudaSuccess ? "cudaSuccess" : "cudaErrorNotSupported";
}

//===--- Streams and events -----------------------------------------------===//

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* stream, unsigned) {
  *stream = NewHandle<cudaStream_t>();
  return cudaSuccess;
}
cudaError_t cudaStreamDestroy(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamSynchronize(cudaStream_t) { return cudaSuccess; }
cudaError_t cudaStreamWaitEvent(cudaStream_t, cudaEvent_t, unsigned) {
  return cudaSuccess;
}
cudaError_t cudaStreamAddCallback(cudaStream_t stream,
                                  cudaStreamCallback_t callback, void* data,
                                  unsigned) {
  callback(stream, cudaSuccess, data);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  *event = NewHandle<cudaEvent_t>();
  return cudaSuccess;
}
cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned) {
  return cudaEventCreate(event);
}
cudaError_t cudaEventDestroy(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventRecord(cudaEvent_t, cudaStream_t) { return cudaSuccess; }
cudaError_t cudaEventQuery(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventSynchronize(cudaEvent_t) { return cudaSuccess; }
cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t, cudaEvent_t) {
  *ms = 0;
  return cudaSuccess;
}

//===--- Memory -----------------------------------------------------------===//

cudaError_t cudaDeviceGetDefaultMemPool(cudaMemPool_t* pool, int) {
  *pool = NewHandle<cudaMemPool_t>();
  return cudaSuccess;
}
cudaError_t cudaMemPoolSetAttribute(cudaMemPool_t, cudaMemPoolAttr, void*) {
  return cudaSuccess;
}
cudaError_t cudaMemPoolTrimTo(cudaMemPool_t, size_t) { return cudaSuccess; }
cudaError_t cudaMallocFromPoolAsync(void** memory, size_t size, cudaMemPool_t,
                                    cudaStream_t) {
  return HostAllocate(memory, size);
}
cudaError_t cudaFreeAsync(void* memory, cudaStream_t) {
  std::free(memory);
  return cudaSuccess;
}
cudaError_t cudaMalloc(void** memory, size_t size) {
  return HostAllocate(memory, size);
}
cudaError_t cudaFree(void* memory) {
  std::free(memory);
  return cudaSuccess;
}
cudaError_t cudaHostAlloc(void** memory, size_t size, unsigned) {
  return HostAllocate(memory, size);
}
cudaError_t cudaMallocHost(void** memory, size_t size) {
  return HostAllocate(memory, size);
}
cudaError_t cudaFreeHost(void* memory) {
  std::free(memory);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* to, const void* from, size_t size,
                            cudaMemcpyKind, cudaStream_t) {
  // CUDA takes null pointers for nothing to copy; memmove does not.
  if (size > 0) std::memmove(to, from, size);
  return cudaSuccess;
}
cudaError_t cudaMemcpy(void* to, const void* from, size_t size,
                       cudaMemcpyKind kind) {
  return cudaMemcpyAsync(to, from, size, kind, nullptr);
}
cudaError_t cudaMemsetAsync(void* memory, int value, size_t size,
                            cudaStream_t) {
  if (size > 0) std::memset(memory, value, size);
  return cudaSuccess;
}
cudaError_t cudaMemcpy2DAsync(void* to, size_t to_pitch, const void* from,
                              size_t from_pitch, size_t width, size_t height,
                              cudaMemcpyKind, cudaStream_t) {
  for (size_t row = 0; width > 0 && row < height; ++row) {
    std::memmove(static_cast<char*>(to) + row * to_pitch,
                 static_cast<const char*>(from) + row * from_pitch, width);
  }
  return cudaSuccess;
}

//===--- Graphs: not supported --------------------------------------------===//

cudaError_t cudaStreamBeginCapture(cudaStream_t, cudaStreamCaptureMode) {
  return cudaErrorNotSupported;
}
cudaError_t cudaStreamEndCapture(cudaStream_t, cudaGraph_t*) {
  return cudaErrorNotSupported;
}
cudaError_t cudaGraphInstantiate(cudaGraphExec_t*, cudaGraph_t,
                                 unsigned long long) {
  return cudaErrorNotSupported;
}
cudaError_t cudaGraphLaunch(cudaGraphExec_t, cudaStream_t) {
  return cudaErrorNotSupported;
}
cudaError_t cudaGraphDestroy(cudaGraph_t) { return cudaSuccess; }
cudaError_t cudaGraphExecDestroy(cudaGraphExec_t) { return cudaSuccess; }

//===--- What nvcc's generated host code calls ----------------------------===//

void** __cudaRegisterFatBinary(void*) {
  static void* handle[4];
  return handle;
}
void __cudaRegisterFatBinaryEnd(void**) {}
void __cudaUnregisterFatBinary(void**) {}
void __cudaRegisterFunction(void**, const char*, char*, const char*, int,
                            uint3*, uint3*, dim3*, dim3*, int*) {}
unsigned __cudaPushCallConfiguration(dim3, dim3, size_t, CUstream_st*) {
  return 0;
}
cudaError_t __cudaPopCallConfiguration(dim3* grid, dim3* block,
                                       size_t* shared_memory, void* stream) {
  *grid = dim3();
  *block = dim3();
  *shared_memory = 0;
  *static_cast<cudaStream_t*>(stream) = nullptr;
  return cudaSuccess;
}
cudaError_t __cudaGetKernel(cudaKernel_t* kernel, const void* function) {
  *kernel = reinterpret_cast<cudaKernel_t>(const_cast<void*>(function));
  return cudaSuccess;
}
cudaError_t __cudaLaunchKernel(cudaKernel_t, dim3, dim3, void**, size_t,
                               cudaStream_t) {
  return cudaSuccess;
}
cudaError_t cudaLaunchKernel(const void*, dim3, dim3, void**, size_t,
                             cudaStream_t) {
  return cudaSuccess;
}

}  // extern "C"
