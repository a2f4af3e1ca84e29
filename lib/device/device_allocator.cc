#include "asyncrt/device/device_allocator.h"

#include <cstdlib>
#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"

namespace asyncrt {

DeviceMemory& DeviceMemory::operator=(DeviceMemory&& other) noexcept {
  if (this != &other) {
    Free();
    allocator_ = std::exchange(other.allocator_, nullptr);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void DeviceMemory::Free() {
  if (allocator_ == nullptr) return;
  allocator_->Deallocate(data_, size_);
  allocator_ = nullptr;
  data_ = nullptr;
  size_ = 0;
}

void FreeAfter(DeviceMemory memory, const RCReference<DeviceEvent>& event) {
  // Runs at once if the event is done; if the event's value is destroyed
  // unavailable, the waiter's destruction frees the memory all the same.
  event->done().AndThen(
      [memory = std::move(memory)]() mutable { memory.Free(); });
}

absl::StatusOr<DeviceMemory> DeviceAllocator::Allocate(size_t size,
                                                       size_t alignment) {
  if (alignment == 0 || (alignment & (alignment - 1)) != 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        name_, ": alignment ", alignment, " is not a power of two"));
  }
  if (size > static_cast<size_t>(std::numeric_limits<int64_t>::max())) {
    return absl::ResourceExhaustedError(
        absl::StrCat(name_, ": out of memory allocating ", size, " bytes"));
  }
  const int64_t request = static_cast<int64_t>(size);
  // Reserve the bytes before allocating, never passing the limit: the
  // counter only ever holds bytes that may be allocated.
  int64_t live = live_bytes_.load();
  do {
    if (request > std::numeric_limits<int64_t>::max() - live ||
        (limit_bytes_ > 0 && live + request > limit_bytes_)) {
      return absl::ResourceExhaustedError(
          absl::StrCat(name_, ": out of memory allocating ", size, " bytes (",
                       live, " of ", limit_bytes_, " bytes in use)"));
    }
  } while (!live_bytes_.compare_exchange_weak(live, live + request));
  live += request;
  void* data = nullptr;
  if (size > 0) {
    data = AllocateRaw(size, alignment);
    if (data == nullptr) {
      live_bytes_.fetch_sub(request);
      return absl::ResourceExhaustedError(absl::StrCat(
          name_, ": out of memory allocating ", size,
          " bytes (the device refused; ", live - request, " bytes in use)"));
    }
  }
  int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
  while (live > peak && !peak_bytes_.compare_exchange_weak(peak, live)) {
  }
  live_allocations_.fetch_add(1, std::memory_order_relaxed);
  total_allocations_.fetch_add(1, std::memory_order_relaxed);
  return DeviceMemory(this, data, size);
}

void DeviceAllocator::Deallocate(void* data, size_t size) {
  if (data != nullptr) DeallocateRaw(data, size);
  live_bytes_.fetch_sub(static_cast<int64_t>(size));
  live_allocations_.fetch_sub(1, std::memory_order_relaxed);
}

DeviceAllocator::Stats DeviceAllocator::GetStats() const {
  Stats stats;
  stats.live_bytes = live_bytes_.load();
  stats.peak_bytes = peak_bytes_.load();
  stats.live_allocations = live_allocations_.load();
  stats.total_allocations = total_allocations_.load();
  stats.limit_bytes = limit_bytes_;
  return stats;
}

void* HostMemoryAllocator::AllocateRaw(size_t size, size_t alignment) {
  // aligned_alloc needs a size that is a multiple of the alignment.
  const size_t rounded = (size + alignment - 1) / alignment * alignment;
  if (rounded < size) return nullptr;
  return std::aligned_alloc(alignment, rounded);
}

void HostMemoryAllocator::DeallocateRaw(void* data, size_t) { std::free(data); }

}  // namespace asyncrt
