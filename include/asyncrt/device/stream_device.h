// StreamDevice: a device with memory of its own and a stream that runs its
// work in order (GPUs, plug-in accelerators, the simulated devices of
// tests). The host CPU is a plain Device: its tensors are host tensors.
//
// A backend subclasses StreamDevice and provides the allocators, the stream
// and the three asynchronous copies; device tensors
// (dense_device_tensor.h), transfers and op dispatch build on those.
//
// Ordering: every op of the device, and every copy within it, runs on
// stream(), so work that reads a device buffer is always enqueued after the
// work that wrote it. Copies to and from the host may run on copy streams
// of their own (copy_stream(); a plug-in's device has one per direction),
// each starting after the work enqueued on stream() before it: a copy
// never waits behind work enqueued after it, nor holds that work up, and
// the memory it reads or writes is free of earlier users. Whoever enqueues
// such a copy keeps its buffers until an event recorded on its copy stream
// after it is done (what the copies of dense_device_tensor.h do), so
// memory that copies used is freed only after them.
//
// Ownership: devices are reference-counted; the HostContext's DeviceManager
// holds one reference and each device buffer another, so a device lives
// until its last tensor is gone. Shutdown() (called by the HostContext as it
// is destroyed) drains and releases the stream; buffers freed afterwards are
// freed at once. Thread-safety: all members are thread-safe. Blocking: none
// except Shutdown(), which waits for queued work.
#ifndef ASYNCRT_DEVICE_STREAM_DEVICE_H_
#define ASYNCRT_DEVICE_STREAM_DEVICE_H_

#include <cstddef>
#include <memory>
#include <optional>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asyncrt/device/device_allocator.h"
#include "asyncrt/device/stream.h"
#include "asyncrt/host_context/device.h"
#include "asyncrt/host_context/host_context.h"

namespace asyncrt {

enum class CopyDirection { kHostToDevice, kDeviceToHost, kDeviceToDevice };

// A recorded sequence of a device's work that runs again with one call (a
// CUDA graph): made by StreamDevice::EndCapture. It reads and writes the
// device memory it was recorded with; whoever launches it refreshes its
// inputs there first. Owned by its maker; keeps its device alive.
// Thread-safety: Launch may be called from any thread; launches run in
// the order the calls return. Blocking: none.
class DeviceGraph {
 public:
  virtual ~DeviceGraph() = default;
  // Enqueues a run on the device's stream.
  virtual absl::Status Launch() = 0;
};

class StreamDevice : public Device {
 public:
  // `host` completes the device's events on its blocking pool and must
  // outlive the device's streams (see Shutdown).
  StreamDevice(DeviceAttributes attributes, HostContext* host);

  HostContext* host() const { return host_; }

  // The device's memory.
  virtual DeviceAllocator& allocator() = 0;
  // Host memory the device copies to and from fastest (pinned where the
  // platform pins), for staging buffers.
  virtual DeviceAllocator& host_allocator() = 0;
  // The stream every op and copy of the device runs on; null once the
  // device is shut down.
  virtual Stream* stream() = 0;

  // The stream copies in `direction` run on: stream() for copies within
  // the device, where the backend has no copy streams, and while the
  // calling thread records a device graph (BeginCapture); null once the
  // device is shut down.
  virtual Stream* copy_stream(CopyDirection direction) { return stream(); }

  // Enqueues a copy of `bytes` from `src` to `dst` on
  // copy_stream(direction), after the work enqueued on stream() so far:
  // `dst` and `src` are device addresses of this device or host addresses,
  // as `direction` says. Returns at once; the copy is done once an event
  // recorded on copy_stream(direction) after it is, and a copy that fails
  // fails that stream. An error here means nothing was enqueued. The
  // caller keeps both buffers alive until then.
  virtual absl::Status EnqueueCopy(CopyDirection direction, void* dst,
                                   const void* src, size_t bytes) = 0;

  // Whether copies to and from the host should go through host_allocator()'s
  // memory: true where it is pinned and copies of other host memory would
  // block the caller (CUDA's cudaMemcpyAsync from pageable memory waits for
  // the stream). The copies of dense_device_tensor.h then stage there.
  virtual bool StagesHostCopies() const { return false; }

  // Whether memory may go back to allocator() while work queued on
  // stream() still reads it: true where the allocator hands memory only to
  // work queued behind that work on the same stream (device memory no host
  // code touches: a plug-in's, cudaFreeAsync's). Otherwise a buffer is
  // freed only after an event recorded when its last reference went.
  virtual bool FreesInStreamOrder() const { return false; }

  // The backend's own accounting of the device's memory, beyond
  // allocator()'s count of what the runtime holds: what a caching
  // allocator keeps (cached bytes are its fragmentation), its peak, and
  // how often it reused memory. nullopt where the backend keeps none.
  struct BackendMemoryStats {
    uint64_t in_use_bytes = 0;
    uint64_t cached_bytes = 0;
    uint64_t peak_reserved_bytes = 0;
    uint64_t cache_hits = 0;
    uint64_t cache_misses = 0;
  };
  virtual std::optional<BackendMemoryStats> GetBackendMemoryStats() {
    return std::nullopt;
  }

  // Device graphs (CUDA graphs; a plug-in's begin_capture and friends).
  // Between BeginCapture and EndCapture on one thread, what that thread
  // enqueues on stream() is recorded instead of run, and the device memory
  // it allocates belongs to the graph (a replay writes it again); other
  // threads' work runs as usual. EndCapture enqueues one run of the
  // recorded work and returns the graph; an error there (a host copy or a
  // wait in the recorded work, a failure of the backend) means nothing
  // recorded runs: the caller discards what the capture made and runs the
  // work again without capturing. Unimplemented where the backend has no
  // graphs.
  virtual bool SupportsGraphs() const { return false; }
  virtual absl::Status BeginCapture();
  virtual absl::StatusOr<std::unique_ptr<DeviceGraph>> EndCapture();

 private:
  HostContext* host_;
};

// The device `device` as a StreamDevice, or null for the host CPU and other
// devices without streams.
StreamDevice* AsStreamDevice(Device* device);
const StreamDevice* AsStreamDevice(const Device* device);

}  // namespace asyncrt

#endif  // ASYNCRT_DEVICE_STREAM_DEVICE_H_
