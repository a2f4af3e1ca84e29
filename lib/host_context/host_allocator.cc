#include "asyncrt/host_context/host_allocator.h"

#include <sys/mman.h>

#include <algorithm>
#include <atomic>
#include <bit>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>
#include <new>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/support/block_cache.h"

namespace asyncrt {
namespace {

// glibc's posix_memalign takes its slow path (splitting chunks, merging the
// remainders on free) for every block, which dominated small-tensor eager
// ops. Instead, over-allocate, align inside the block, and keep the block's
// start and size class in the two words just before the aligned address
// (there are at least 16 bytes: blocks are 16-byte aligned, the address a
// multiple of 16 past their start plus a word). Small blocks come from a
// per-thread BlockCache, which serves the buffers of eager ops and kernels
// on scalars and small tensors without malloc and free (over a hundred
// instructions a pair).
//
// Large blocks (a model's activations: hundreds of KiB to tens of MiB) would
// come from glibc's mmap and go back with munmap, unless earlier large frees
// happened to raise glibc's threshold: then every call page-faults its
// whole working set again (2,600 faults per MobileNetV2 call, 3x its
// latency). A process-wide LargeBlockCache keeps them instead.
class LargeBlockCache {
 public:
  static constexpr size_t kMinBytes = size_t{64} << 10;
  // Freed blocks kept at most, in bytes, over all sizes.
  static constexpr size_t kMaxCachedBytes = size_t{512} << 20;
  // Freed blocks looked at (most recently freed first) for one that fits.
  static constexpr size_t kSearch = 16;

  static LargeBlockCache& Get() {
    static auto* cache = new LargeBlockCache;  // Never destroyed.
    return *cache;
  }

  // `size` rounded up to a quarter of its power of two (at most 25% waste,
  // and few distinct classes to reuse from).
  static size_t RoundUp(size_t size) {
    const size_t quarter = size_t{1} << (std::bit_width(size) - 3);
    return (size + quarter - 1) & ~(quarter - 1);
  }

  // A block of at least `bytes` (a RoundUp result), its size in `*size`;
  // null if malloc fails. Thread-safe.
  //
  // The most recently freed block that fits and is at most twice `bytes`:
  // a model's tensors are written right after their inputs' last reads,
  // so the block freed last is the one most likely still in cache (as a
  // planned arena's reuse would be), whatever its size class. MobileNetV2's
  // 1x1 convolutions writing 5 MB tensors ran at half speed into blocks
  // last touched a call earlier.
  void* Allocate(size_t bytes, size_t* size) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      const size_t n = free_.size();
      for (size_t i = 0; i < n && i < kSearch; ++i) {
        Block& block = free_[n - 1 - i];
        if (block.size >= bytes && block.size <= 2 * bytes) {
          void* data = block.data;
          *size = block.size;
          cached_bytes_ -= block.size;
          free_.erase(free_.begin() + (n - 1 - i));
          return data;
        }
      }
    }
    if (bytes < kHugePageSize) {
      *size = bytes;
      return std::malloc(bytes);
    }
    // Blocks of 2 MiB or more are whole huge pages: a model's activations
    // then take a TLB entry per 2 MiB instead of 512 (with the reordered
    // weights on huge pages too, MobileNetV2 ran 3-6% faster on one core).
    // Kept for reuse like any block, so they are faulted in once.
    *size = (bytes + kHugePageSize - 1) & ~(kHugePageSize - 1);
    return AllocateHugePages(*size);
  }

  // Takes back a block of `bytes` from Allocate. Thread-safe.
  void Free(void* data, size_t bytes) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      // Over the budget: the least recently freed blocks go first.
      while (!free_.empty() && cached_bytes_ + bytes > kMaxCachedBytes) {
        std::free(free_.front().data);
        cached_bytes_ -= free_.front().size;
        free_.erase(free_.begin());
      }
      if (cached_bytes_ + bytes <= kMaxCachedBytes) {
        free_.push_back({data, bytes});
        cached_bytes_ += bytes;
        return;
      }
    }
    std::free(data);
  }

 private:
  struct Block {
    void* data;
    size_t size;
  };
  std::mutex mutex_;
  std::vector<Block> free_;  // Oldest first. Guarded by mutex_.
  size_t cached_bytes_ = 0;  // Guarded by mutex_.
};

class MallocAllocator final : public HostAllocator {
 public:
  void* AllocateBytes(size_t size, size_t alignment) override {
    alignment = std::max(alignment, kMinAlignment);
    // Room to align and for the two words in front.
    if (size > SIZE_MAX / 2 - alignment) return nullptr;
    size_t total = size + alignment;
    uintptr_t block_class = BufferCache::ClassOf(total);
    void* raw;
    if (kBlockCacheEnabled && BufferCache::IsCached(block_class)) {
      raw = buffer_cache.Allocate(block_class);
    } else if (kBlockCacheEnabled && total >= LargeBlockCache::kMinBytes) {
      raw = LargeBlockCache::Get().Allocate(LargeBlockCache::RoundUp(total),
                                            &total);
      block_class = kLarge | total;
    } else {
      block_class = kUncached;
      raw = std::malloc(total);
    }
    if (raw == nullptr) return nullptr;
    uintptr_t start = reinterpret_cast<uintptr_t>(raw) + sizeof(void*);
    uintptr_t aligned = (start + alignment - 1) & ~(uintptr_t{alignment} - 1);
    reinterpret_cast<void**>(aligned)[-1] = raw;
    reinterpret_cast<uintptr_t*>(aligned)[-2] = block_class;
    return reinterpret_cast<void*>(aligned);
  }
  void DeallocateBytes(void* ptr, size_t) override {
    if (ptr == nullptr) return;
    void* raw = static_cast<void**>(ptr)[-1];
    const uintptr_t block_class = static_cast<uintptr_t*>(ptr)[-2];
    if (block_class == kUncached) {
      std::free(raw);
    } else if (block_class & kLarge) {
      LargeBlockCache::Get().Free(raw, block_class & ~kLarge);
    } else {
      buffer_cache.Free(raw, static_cast<uint32_t>(block_class));
    }
  }

 private:
  static constexpr size_t kMinAlignment = 16;
  // The class word of a block: a BufferCache class, kUncached (from
  // malloc) or kLarge | its bytes (from the LargeBlockCache).
  static constexpr uintptr_t kUncached = ~uint32_t{0};
  static constexpr uintptr_t kLarge = uintptr_t{1} << 63;
  // Classes from 128 bytes (a scalar's buffer with its header and room to
  // align) to 4 KiB; larger buffers (and all in sanitizer builds) are
  // malloc's, of their exact size.
  using BufferCache = BlockCache</*kMinBytes=*/128, /*kClasses=*/6,
                                 /*kPerClass=*/8>;
  static thread_local BufferCache buffer_cache;
};

thread_local MallocAllocator::BufferCache MallocAllocator::buffer_cache;

// Wraps another allocator and keeps counts. Relaxed atomics: the counters
// are statistics and order nothing else.
class CountingAllocator : public HostAllocator {
 public:
  explicit CountingAllocator(std::unique_ptr<HostAllocator> allocator)
      : allocator_(std::move(allocator)) {}

  void* AllocateBytes(size_t size, size_t alignment) override {
    void* ptr = allocator_->AllocateBytes(size, alignment);
    if (ptr == nullptr) return nullptr;
    live_allocations_.fetch_add(1, std::memory_order_relaxed);
    total_allocations_.fetch_add(1, std::memory_order_relaxed);
    int64_t live = live_bytes_.fetch_add(size, std::memory_order_relaxed) +
                   static_cast<int64_t>(size);
    int64_t peak = peak_bytes_.load(std::memory_order_relaxed);
    while (live > peak && !peak_bytes_.compare_exchange_weak(
                              peak, live, std::memory_order_relaxed)) {
    }
    return ptr;
  }

  void DeallocateBytes(void* ptr, size_t size) override {
    if (ptr == nullptr) return;
    live_allocations_.fetch_sub(1, std::memory_order_relaxed);
    live_bytes_.fetch_sub(size, std::memory_order_relaxed);
    allocator_->DeallocateBytes(ptr, size);
  }

  std::optional<HostAllocatorStats> GetStats() const override {
    return stats();
  }

  HostAllocatorStats stats() const {
    return {live_allocations_.load(std::memory_order_relaxed),
            live_bytes_.load(std::memory_order_relaxed),
            total_allocations_.load(std::memory_order_relaxed),
            peak_bytes_.load(std::memory_order_relaxed)};
  }

 private:
  std::unique_ptr<HostAllocator> allocator_;
  std::atomic<int64_t> live_allocations_{0};
  std::atomic<int64_t> live_bytes_{0};
  std::atomic<int64_t> total_allocations_{0};
  std::atomic<int64_t> peak_bytes_{0};
};

class ProfiledAllocator final : public CountingAllocator {
 public:
  using CountingAllocator::CountingAllocator;
  ~ProfiledAllocator() override {
    HostAllocatorStats s = stats();
    std::fprintf(stderr,
                 "HostAllocator profile: %lld allocations, %lld peak bytes, "
                 "%lld alive allocations, %lld alive bytes\n",
                 static_cast<long long>(s.total_allocations),
                 static_cast<long long>(s.peak_bytes),
                 static_cast<long long>(s.live_allocations),
                 static_cast<long long>(s.live_bytes));
  }
};

class LeakCheckAllocator final : public CountingAllocator {
 public:
  using CountingAllocator::CountingAllocator;
  ~LeakCheckAllocator() override {
    HostAllocatorStats s = stats();
    if (s.live_allocations == 0) return;
    // On stdout, after the program's own output, where TFRT's tools print
    // it and its tests look for it.
    std::fprintf(stdout,
                 "Memory leak detected: %lld alive allocations, %lld alive "
                 "bytes\n",
                 static_cast<long long>(s.live_allocations),
                 static_cast<long long>(s.live_bytes));
    std::fflush(stdout);
    std::exit(1);
  }
};

class FixedSizeAllocator final : public HostAllocator {
 public:
  explicit FixedSizeAllocator(size_t capacity) : capacity_(capacity) {}

  void* AllocateBytes(size_t size, size_t alignment) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (size > capacity_ - used_) {
        std::fprintf(stderr,
                     "Attempted to allocate %zu bytes. However current "
                     "capacity is only %zu.\n",
                     size, capacity_ - used_);
        return nullptr;
      }
      used_ += size;
      peak_ = std::max(peak_, used_);
      ++live_allocations_;
      ++total_allocations_;
      std::fprintf(stderr, "Allocating %zu bytes. %zu remaining.\n", size,
                   capacity_ - used_);
    }
    void* ptr = malloc_.AllocateBytes(size, alignment);
    if (ptr == nullptr) {
      std::lock_guard<std::mutex> lock(mutex_);
      used_ -= size;
      --live_allocations_;
    }
    return ptr;
  }

  void DeallocateBytes(void* ptr, size_t size) override {
    if (ptr == nullptr) return;
    malloc_.DeallocateBytes(ptr, size);
    std::lock_guard<std::mutex> lock(mutex_);
    used_ -= size;
    --live_allocations_;
  }

  std::optional<HostAllocatorStats> GetStats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    return HostAllocatorStats{live_allocations_, static_cast<int64_t>(used_),
                              total_allocations_, static_cast<int64_t>(peak_)};
  }

 private:
  const size_t capacity_;
  MallocAllocator malloc_;
  mutable std::mutex mutex_;
  size_t used_ = 0;  // All guarded by mutex_.
  size_t peak_ = 0;
  int64_t live_allocations_ = 0;
  int64_t total_allocations_ = 0;
};

}  // namespace

void* AllocateHugePages(size_t size) {
  size = (size + kHugePageSize - 1) & ~(kHugePageSize - 1);
  void* data = std::aligned_alloc(kHugePageSize, size);
#ifdef MADV_HUGEPAGE
  if (data != nullptr) madvise(data, size, MADV_HUGEPAGE);
#endif
  return data;
}

std::unique_ptr<HostAllocator> CreateMallocAllocator() {
  return std::make_unique<MallocAllocator>();
}

std::unique_ptr<HostAllocator> CreateProfiledAllocator(
    std::unique_ptr<HostAllocator> allocator) {
  return std::make_unique<ProfiledAllocator>(std::move(allocator));
}

std::unique_ptr<HostAllocator> CreateLeakCheckAllocator(
    std::unique_ptr<HostAllocator> allocator) {
  return std::make_unique<LeakCheckAllocator>(std::move(allocator));
}

std::unique_ptr<HostAllocator> CreateFixedSizeAllocator(size_t capacity) {
  return std::make_unique<FixedSizeAllocator>(capacity);
}

absl::StatusOr<std::unique_ptr<HostAllocator>> CreateHostAllocator(
    absl::string_view name) {
  if (name == "malloc") return CreateMallocAllocator();
  if (name == "profiled_allocator") {
    return CreateProfiledAllocator(CreateMallocAllocator());
  }
  if (name == "leak_check_allocator") {
    return CreateLeakCheckAllocator(CreateMallocAllocator());
  }
  if (name == "test_fixed_size_1k") return CreateFixedSizeAllocator(1024);
  return absl::InvalidArgumentError(absl::StrCat(
      "invalid host allocator type '", name,
      "': expected malloc, profiled_allocator, leak_check_allocator or "
      "test_fixed_size_1k"));
}

}  // namespace asyncrt
