// Device memory: an allocator per device (and one for pinned host memory)
// that accounts for every live byte, and DeviceMemory, the owning handle of
// one allocation.
//
// An allocation that would pass the allocator's limit, or that the backend
// cannot satisfy, is a ResourceExhausted status naming the device, the
// request and what is in use: out of memory is an error on the op that
// asked, never an abort. Tests check `Stats().live_bytes == 0` at their end:
// no device memory leaks.
//
// Memory still in use by a stream's work is freed after that work:
// FreeAfter(memory, event) keeps the allocation until the event is done
// (what a device tensor does when its last host reference goes while a
// kernel reading it is still queued).
//
// Ownership: DeviceMemory owns its bytes and must not outlive its
// allocator. Thread-safety: allocators are thread-safe; a DeviceMemory is
// not (move it between threads). Blocking: none.
#ifndef ASYNCRT_DEVICE_DEVICE_ALLOCATOR_H_
#define ASYNCRT_DEVICE_DEVICE_ALLOCATOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "asyncrt/device/stream.h"
#include "asyncrt/host_context/device.h"

namespace asyncrt {

class DeviceAllocator;

// One allocation; frees itself through its allocator when destroyed.
class DeviceMemory {
 public:
  DeviceMemory() = default;
  DeviceMemory(DeviceMemory&& other) noexcept { *this = std::move(other); }
  DeviceMemory& operator=(DeviceMemory&& other) noexcept;
  ~DeviceMemory() { Free(); }

  // The device address: not dereferenceable on the host unless the
  // allocator says its memory is host-accessible.
  void* data() const { return data_; }
  size_t size() const { return size_; }
  explicit operator bool() const { return allocator_ != nullptr; }
  // Frees now (the memory must not be in use by queued work).
  void Free();

 private:
  friend class DeviceAllocator;
  DeviceMemory(DeviceAllocator* allocator, void* data, size_t size)
      : allocator_(allocator), data_(data), size_(size) {}

  DeviceAllocator* allocator_ = nullptr;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// Frees `memory` once `event` is done (at once if it is).
void FreeAfter(DeviceMemory memory, const RCReference<DeviceEvent>& event);

class DeviceAllocator {
 public:
  struct Stats {
    int64_t live_bytes = 0;
    int64_t peak_bytes = 0;
    int64_t live_allocations = 0;
    int64_t total_allocations = 0;
    int64_t limit_bytes = 0;  // 0: no limit.
  };

  // `name` says what memory this is in errors ("GPU:0", "pinned host").
  // `limit_bytes` caps live bytes (0: no cap beyond the backend's).
  DeviceAllocator(std::string name, int64_t limit_bytes)
      : name_(std::move(name)), limit_bytes_(limit_bytes) {}
  virtual ~DeviceAllocator() = default;
  DeviceAllocator(const DeviceAllocator&) = delete;
  DeviceAllocator& operator=(const DeviceAllocator&) = delete;

  // `size` bytes aligned to `alignment` (a power of two). A zero-size
  // request gives an empty, valid DeviceMemory. ResourceExhausted past the
  // limit or when the backend fails; InvalidArgument for a bad alignment.
  absl::StatusOr<DeviceMemory> Allocate(size_t size, size_t alignment = 64);

  Stats GetStats() const;
  const std::string& name() const { return name_; }
  // Whether data() of this allocator's memory may be read by the host.
  virtual bool IsHostAccessible() const = 0;

 protected:
  // The backend: null when it cannot allocate.
  virtual void* AllocateRaw(size_t size, size_t alignment) = 0;
  virtual void DeallocateRaw(void* data, size_t size) = 0;

 private:
  friend class DeviceMemory;
  void Deallocate(void* data, size_t size);

  const std::string name_;
  const int64_t limit_bytes_;
  std::atomic<int64_t> live_bytes_{0};
  std::atomic<int64_t> peak_bytes_{0};
  std::atomic<int64_t> live_allocations_{0};
  std::atomic<int64_t> total_allocations_{0};
};

// Host memory standing in for a device's: the simulated devices' memory,
// and pinned staging memory where the platform has no pinning.
class HostMemoryAllocator final : public DeviceAllocator {
 public:
  using DeviceAllocator::DeviceAllocator;
  bool IsHostAccessible() const override { return true; }

 protected:
  void* AllocateRaw(size_t size, size_t alignment) override;
  void DeallocateRaw(void* data, size_t size) override;
};

}  // namespace asyncrt

#endif  // ASYNCRT_DEVICE_DEVICE_ALLOCATOR_H_
