#include "backends/gpu/block_cache.h"

#include <algorithm>
#include <utility>

namespace asyncrt::gpu {

uint64_t BlockCache::RoundUp(uint64_t size) {
  if (size <= kSmallLimit) {
    return std::max<uint64_t>(
        kSmallStep, (size + kSmallStep - 1) / kSmallStep * kSmallStep);
  }
  // The power of two at or below `size`, in eighths.
  uint64_t power = uint64_t{1} << (63 - __builtin_clzll(size));
  const uint64_t step = power / 8;
  return (size + step - 1) / step * step;
}

std::vector<void*>& BlockCache::FreeList(uint64_t rounded) {
  return rounded <= kSmallLimit ? small_free_[rounded / kSmallStep]
                                : large_free_[rounded];
}

void* BlockCache::Allocate(uint64_t size) {
  const uint64_t rounded = RoundUp(size);
  bool over_limit = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<void*>& list = FreeList(rounded);
    if (!list.empty()) {
      void* memory = list.back();
      list.pop_back();
      stats_.cached_bytes -= rounded;
      stats_.in_use_bytes += rounded;
      ++stats_.hits;
      return memory;
    }
    ++stats_.misses;
    over_limit =
        limit_bytes_ != 0 &&
        stats_.in_use_bytes + stats_.cached_bytes + rounded > limit_bytes_;
  }
  if (over_limit) Trim();
  void* memory = allocate_(rounded);
  if (memory == nullptr) {
    // Cached blocks of other sizes may be what is missing.
    Trim();
    memory = allocate_(rounded);
    if (memory == nullptr) return nullptr;
  }
  std::lock_guard<std::mutex> lock(mutex_);
  stats_.in_use_bytes += rounded;
  stats_.peak_reserved_bytes = std::max(
      stats_.peak_reserved_bytes, stats_.in_use_bytes + stats_.cached_bytes);
  return memory;
}

void BlockCache::Deallocate(void* memory, uint64_t size) {
  const uint64_t rounded = RoundUp(size);
  std::lock_guard<std::mutex> lock(mutex_);
  FreeList(rounded).push_back(memory);
  stats_.in_use_bytes -= rounded;
  stats_.cached_bytes += rounded;
}

void BlockCache::Trim() {
  std::vector<std::pair<void*, uint64_t>> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (size_t i = 0; i < small_free_.size(); ++i) {
      for (void* memory : small_free_[i])
        blocks.push_back({memory, i * kSmallStep});
      small_free_[i].clear();
    }
    for (auto& [size, list] : large_free_) {
      for (void* memory : list) blocks.push_back({memory, size});
    }
    large_free_.clear();
    stats_.cached_bytes = 0;
  }
  for (auto [memory, size] : blocks) release_(memory, size);
}

BlockCache::Stats BlockCache::GetStats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace asyncrt::gpu
