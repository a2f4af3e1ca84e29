// An allocator that keeps freed blocks of one type per thread, for the
// trace records a lazy loop makes and frees by the hundred per step
// (glibc's thread cache keeps 7 blocks of a size, so most of them went
// through malloc's slow paths). Internal to asyncrt::lazy.
//
// Thread-safety: each thread has its own cache (no locks, no atomics); a
// block freed on another thread than the one that allocated it joins that
// thread's cache. Each cache keeps at most kMaxCached blocks and frees them
// when its thread exits.
#ifndef ASYNCRT_LIB_LAZY_RECYCLING_ALLOCATOR_H_
#define ASYNCRT_LIB_LAZY_RECYCLING_ALLOCATOR_H_

#include <cstddef>
#include <new>
#include <vector>

namespace asyncrt::lazy::internal {

template <typename T>
class RecyclingAllocator {
 public:
  using value_type = T;

  RecyclingAllocator() = default;
  template <typename U>
  RecyclingAllocator(const RecyclingAllocator<U>&) {}  // NOLINT: rebinding.

  T* allocate(size_t n) {
    if (n == 1) {
      std::vector<void*>& cache = Cache();
      if (!cache.empty()) {
        void* block = cache.back();
        cache.pop_back();
        return static_cast<T*>(block);
      }
    }
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }

  void deallocate(T* block, size_t n) {
    if (n == 1) {
      std::vector<void*>& cache = Cache();
      if (cache.size() < kMaxCached) {
        cache.push_back(block);
        return;
      }
    }
    ::operator delete(block);
  }

  template <typename U>
  bool operator==(const RecyclingAllocator<U>&) const {
    return true;
  }

 private:
  static constexpr size_t kMaxCached = 4096;

  struct ThreadCache {
    std::vector<void*> blocks;
    ~ThreadCache() {
      for (void* block : blocks) ::operator delete(block);
    }
  };
  static std::vector<void*>& Cache() {
    thread_local ThreadCache cache;
    return cache.blocks;
  }
};

}  // namespace asyncrt::lazy::internal

#endif  // ASYNCRT_LIB_LAZY_RECYCLING_ALLOCATOR_H_
