// OpSiteCache: what an op implementation derived at one op site of a
// program, kept for that site's next calls.
//
// A program's op site (a corert.executeop, or one op of a
// corert.execute_sequence) calls the same op with the same attributes every
// time, and almost always with arguments of the same shapes and layouts.
// An implementation that prepares work per call (the oneDNN ops: the
// convolution's plan, its primitives and its constant operands) can keep
// what it prepared here instead of finding it again by a key built from
// the attributes and shapes. It must still check, on each call, that what
// it kept matches the call's arguments (shapes, layouts, which constant
// buffers), and take its general path when it does not: a site may see
// other shapes, and the same site may run on another device.
//
// The cache holds one entry, set once and never replaced (a site whose
// arguments change goes on with the general path), tagged with its
// implementation so that another implementation reads nothing it did not
// write.
//
// Ownership: the kernel owns one cache per site (its KernelState); the
// entry lives as long as the site. Eager calls have none
// (OpInvocation::site_cache is null).
// Thread-safety: Find and Set may run concurrently on any thread (several
// calls of a program run one site at once); the first Set wins and entries
// are immutable, so they are read without a lock. Never blocks.
#ifndef ASYNCRT_CORE_RUNTIME_OP_SITE_CACHE_H_
#define ASYNCRT_CORE_RUNTIME_OP_SITE_CACHE_H_

#include <atomic>
#include <memory>
#include <utility>

namespace asyncrt {

class OpSiteCache {
 public:
  OpSiteCache() = default;
  OpSiteCache(const OpSiteCache&) = delete;
  OpSiteCache& operator=(const OpSiteCache&) = delete;
  ~OpSiteCache() { delete slot_.load(std::memory_order_acquire); }

  // The entry set with `tag` (an address the implementation owns, e.g. of a
  // static variable), or null if there is none or another tag's.
  template <typename T>
  const T* Find(const void* tag) const {
    const Slot* slot = slot_.load(std::memory_order_acquire);
    if (slot == nullptr || slot->tag != tag) return nullptr;
    return static_cast<const T*>(slot->entry.get());
  }

  // Keeps `entry` under `tag` if the cache is empty and returns it; else
  // drops it and returns null (an entry was set first).
  template <typename T>
  const T* Set(const void* tag, std::shared_ptr<const T> entry) {
    const T* kept = entry.get();
    auto* slot = new Slot{tag, std::move(entry)};
    const Slot* expected = nullptr;
    if (!slot_.compare_exchange_strong(expected, slot,
                                       std::memory_order_acq_rel)) {
      delete slot;
      return nullptr;
    }
    return kept;
  }

  bool empty() const {
    return slot_.load(std::memory_order_acquire) == nullptr;
  }

 private:
  struct Slot {
    const void* tag;
    std::shared_ptr<const void> entry;
  };
  std::atomic<const Slot*> slot_{nullptr};
};

}  // namespace asyncrt

#endif  // ASYNCRT_CORE_RUNTIME_OP_SITE_CACHE_H_
