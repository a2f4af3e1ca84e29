#include "backends/gpu/block_cache.h"

#include <algorithm>
#include <utility>

namespace asyncrt::gpu {

uint64_t BlockCache::RoundUp(uint64_t size) {
  constexpr uint64_t kSmallStep = 512;
  constexpr uint64_t kSmallLimit = 1 << 20;
  if (size <= kSmallLimit) {
    return std::max<uint64_t>(
        kSmallStep, (size + kSmallStep - 1) / kSmallStep * kSmallStep);
  }
  // The power of two at or below `size`, in eighths.
  uint64_t power = uint64_t{1} << (63 - __builtin_clzll(size));
  const uint64_t step = power / 8;
  return (size + step - 1) / step * step;
}

void* BlockCache::Allocate(uint64_t size) {
  const uint64_t rounded = RoundUp(size);
  bool over_limit = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.find(rounded);
    if (it != free_.end() && !it->second.empty()) {
      void* memory = it->second.back();
      it->second.pop_back();
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
  free_[rounded].push_back(memory);
  stats_.in_use_bytes -= rounded;
  stats_.cached_bytes += rounded;
}

void BlockCache::Trim() {
  std::unordered_map<uint64_t, std::vector<void*>> blocks;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    blocks.swap(free_);
    stats_.cached_bytes = 0;
  }
  for (auto& [size, list] : blocks) {
    for (void* memory : list) release_(memory, size);
  }
}

BlockCache::Stats BlockCache::GetStats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace asyncrt::gpu
