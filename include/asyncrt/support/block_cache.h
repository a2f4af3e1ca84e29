// BlockCache: a few freed heap blocks per power-of-two size class, kept for
// the next allocations of the same thread.
//
// Short-lived blocks of a few sizes (call states, small tensor buffers) come
// back to the same thread again and again; reusing them takes a handful of
// instructions where glibc's malloc and free take well over a hundred.
// Blocks come from ::operator new and go back to ::operator delete when the
// cache is full or destroyed, so a block may be freed on another thread than
// the one that made it: it then serves that thread.
//
// Meant as a `thread_local`: not thread-safe. Sanitizer builds should bypass
// it (kBlockCacheEnabled), so that use-after-free stays visible.
#ifndef ASYNCRT_SUPPORT_BLOCK_CACHE_H_
#define ASYNCRT_SUPPORT_BLOCK_CACHE_H_

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <new>

namespace asyncrt {

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
inline constexpr bool kBlockCacheEnabled = false;
#else
inline constexpr bool kBlockCacheEnabled = true;
#endif

// Classes of kMinBytes << 0 .. kMinBytes << (kClasses - 1) bytes, up to
// kPerClass cached blocks each.
template <size_t kMinBytes, size_t kClasses, size_t kPerClass>
class BlockCache {
  static_assert(std::has_single_bit(kMinBytes));

 public:
  BlockCache() = default;
  BlockCache(const BlockCache&) = delete;
  BlockCache& operator=(const BlockCache&) = delete;
  ~BlockCache() {
    for (size_t c = 0; c < kClasses; ++c) {
      for (size_t i = 0; i < counts_[c]; ++i) ::operator delete(blocks_[c][i]);
      counts_[c] = 0;
    }
    // A thread's thread_locals die before its last frees can happen (the
    // main thread's before static destructors): from now on, no caching.
    closed_ = true;
  }

  // The class of a block of `size` bytes: 0 up to kMinBytes, 1 up to twice
  // that, and so on. Classes from kClasses on are valid but never cached.
  static uint32_t ClassOf(size_t size) {
    return std::bit_width((std::max(size, kMinBytes) - 1) / kMinBytes);
  }
  static size_t ClassBytes(uint32_t index) { return kMinBytes << index; }
  static constexpr bool IsCached(uint32_t index) { return index < kClasses; }

  // A block of ClassBytes(index) bytes.
  void* Allocate(uint32_t index) {
    if (index < kClasses && counts_[index] > 0) {
      return blocks_[index][--counts_[index]];
    }
    return ::operator new(ClassBytes(index));
  }

  // Takes back a block from Allocate(index), on any thread's cache.
  void Free(void* block, uint32_t index) {
    if (index < kClasses && counts_[index] < kPerClass && !closed_) {
      blocks_[index][counts_[index]++] = block;
      return;
    }
    ::operator delete(block);
  }

 private:
  void* blocks_[kClasses][kPerClass];
  uint8_t counts_[kClasses] = {};
  bool closed_ = false;
};

}  // namespace asyncrt

#endif  // ASYNCRT_SUPPORT_BLOCK_CACHE_H_
