// HostAllocator: the allocator for host memory that kernels and tensors use.
//
// Implementations, created by name with CreateHostAllocator (the
// --host_allocator_type flag of bef_executor):
//   "malloc"                aligned malloc.
//   "profiled_allocator"    malloc that prints allocation counts and bytes to
//                           stderr when destroyed.
//   "leak_check_allocator"  malloc that, when destroyed with live
//                           allocations, prints "Memory leak detected: N
//                           alive allocations, M alive bytes" to stdout and
//                           exits the process with status 1.
//   "test_fixed_size_1k"    a 1 KiB budget that logs every allocation, for
//                           tests of allocation failure.
// All implementations are thread-safe.
#ifndef ASYNCRT_HOST_CONTEXT_HOST_ALLOCATOR_H_
#define ASYNCRT_HOST_CONTEXT_HOST_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace asyncrt {

// Counters kept by the profiling and leak-checking allocators.
struct HostAllocatorStats {
  int64_t live_allocations = 0;
  int64_t live_bytes = 0;
  int64_t total_allocations = 0;
  int64_t peak_bytes = 0;
};

class HostAllocator {
 public:
  virtual ~HostAllocator() = default;

  // Returns `size` bytes aligned to `alignment` (a power of two), or nullptr
  // if the allocator cannot satisfy the request. Thread-safe.
  virtual void* AllocateBytes(size_t size, size_t alignment) = 0;

  // Frees a block returned by AllocateBytes with the same `size`.
  // Thread-safe.
  virtual void DeallocateBytes(void* ptr, size_t size) = 0;

  // Counters, for allocators that keep them (profiled, leak-check, fixed
  // size); nullopt for the others. Thread-safe.
  virtual std::optional<HostAllocatorStats> GetStats() const {
    return std::nullopt;
  }

  // Typed helpers: uninitialized storage for `count` objects of type T.
  template <typename T>
  T* Allocate(size_t count = 1) {
    return static_cast<T*>(AllocateBytes(sizeof(T) * count, alignof(T)));
  }
  template <typename T>
  void Deallocate(T* ptr, size_t count = 1) {
    DeallocateBytes(ptr, sizeof(T) * count);
  }
};

std::unique_ptr<HostAllocator> CreateMallocAllocator();

// The size of a transparent huge page on x86-64.
inline constexpr size_t kHugePageSize = size_t{2} << 20;

// `size` bytes (rounded up to whole huge pages), aligned to a huge page and
// advised for transparent huge pages (MADV_HUGEPAGE: one TLB entry per
// 2 MiB where THP is "madvise" or "always"; ordinary pages elsewhere);
// null if memory runs out. Free with std::free. Thread-safe.
void* AllocateHugePages(size_t size);

// Wraps `allocator` and prints its statistics to stderr when destroyed.
std::unique_ptr<HostAllocator> CreateProfiledAllocator(
    std::unique_ptr<HostAllocator> allocator);

// Wraps `allocator`; on destruction with live allocations prints the leak
// report to stdout and calls std::exit(1).
std::unique_ptr<HostAllocator> CreateLeakCheckAllocator(
    std::unique_ptr<HostAllocator> allocator);

// An allocator with a fixed budget of `capacity` bytes, logging each
// allocation to stderr ("Allocating N bytes. R remaining.") and each refusal
// ("Attempted to allocate N bytes. However current capacity is only R.").
std::unique_ptr<HostAllocator> CreateFixedSizeAllocator(size_t capacity);

// Creates an allocator by the names listed above; InvalidArgument otherwise.
absl::StatusOr<std::unique_ptr<HostAllocator>> CreateHostAllocator(
    absl::string_view name);

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_HOST_ALLOCATOR_H_
