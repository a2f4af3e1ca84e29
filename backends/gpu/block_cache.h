// A cache of memory blocks by rounded size, for the CUDA plug-in's device
// memory and pinned host memory: a freed block goes on its size's free
// list and the next request of that size takes it without calling CUDA.
//
// For device memory this is exact because the runtime runs a device's
// kernels on one stream and frees in stream order: a block freed while
// queued work still reads it is handed only to work queued after (the C
// API's contract, device_plugin.h), as PyTorch's caching allocator does
// per stream. Copies on the copy streams first wait for that stream, and
// what they used is freed only once they are done.
//
// Thread-safety: every member may be called from any thread at once.
// Blocking: no; the backing allocator's calls are made outside the lock.
#ifndef ASYNCRT_BACKENDS_GPU_BLOCK_CACHE_H_
#define ASYNCRT_BACKENDS_GPU_BLOCK_CACHE_H_

#include <cstdint>
#include <functional>
#include <mutex>
#include <unordered_map>
#include <vector>

namespace asyncrt::gpu {

class BlockCache {
 public:
  struct Stats {
    uint64_t in_use_bytes = 0;         // Handed out (rounded sizes).
    uint64_t cached_bytes = 0;         // Free, kept for reuse.
    uint64_t peak_reserved_bytes = 0;  // Peak of in use + cached.
    uint64_t hits = 0;                 // Requests served from the cache.
    uint64_t misses = 0;  // Requests that called the backing allocator.
  };

  // `allocate(size)` returns memory or null; `release(memory, size)` gives
  // it back. Both are called without the cache's lock held.
  // `limit_bytes` (0: none): cached blocks are given back before memory in
  // use plus cached would pass it.
  BlockCache(std::function<void*(uint64_t)> allocate,
             std::function<void(void*, uint64_t)> release,
             uint64_t limit_bytes = 0)
      : allocate_(std::move(allocate)),
        release_(std::move(release)),
        limit_bytes_(limit_bytes) {}
  ~BlockCache() { Trim(); }
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;

  // The size a request of `size` bytes is served with: multiples of 512
  // bytes up to 1 MiB, then of an eighth of the power of two below (at most
  // 12.5% more than asked).
  static uint64_t RoundUp(uint64_t size);

  // Null if the backing allocator has no memory, even after the cache gave
  // its blocks back.
  void* Allocate(uint64_t size);
  // `size` as passed to Allocate.
  void Deallocate(void* memory, uint64_t size);
  // Gives every cached block back.
  void Trim();
  Stats GetStats() const;

 private:
  std::function<void*(uint64_t)> allocate_;
  std::function<void(void*, uint64_t)> release_;
  const uint64_t limit_bytes_;
  mutable std::mutex mutex_;
  // Free blocks by rounded size: up to 1 MiB indexed by size / 512 (no
  // hashing on the per-op path), larger ones in a map.
  static constexpr uint64_t kSmallStep = 512;
  static constexpr uint64_t kSmallLimit = uint64_t{1} << 20;
  std::vector<void*>& FreeList(uint64_t rounded);  // mutex_ held.
  std::vector<std::vector<void*>> small_free_ =
      std::vector<std::vector<void*>>(kSmallLimit / kSmallStep + 1);
  std::unordered_map<uint64_t, std::vector<void*>> large_free_;
  Stats stats_;
};

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_BLOCK_CACHE_H_
