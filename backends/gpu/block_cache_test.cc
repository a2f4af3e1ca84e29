// The CUDA plug-in's block cache over a counting host allocator (it needs
// no GPU, so CI runs it): rounding, reuse without the backing allocator,
// statistics, giving blocks back under the limit and when the backing
// allocator runs out, and concurrent use.
#include "backends/gpu/block_cache.h"

#include <cstdlib>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace asyncrt::gpu {
namespace {

// malloc with a capacity, counting calls.
struct Backing {
  std::mutex mutex;
  uint64_t capacity = UINT64_MAX;
  uint64_t live = 0;
  int allocations = 0;
  int releases = 0;

  BlockCache MakeCache(uint64_t limit = 0) {
    return BlockCache(
        [this](uint64_t size) -> void* {
          std::lock_guard<std::mutex> lock(mutex);
          if (live + size > capacity) return nullptr;
          live += size;
          ++allocations;
          return std::malloc(size);
        },
        [this](void* memory, uint64_t size) {
          std::lock_guard<std::mutex> lock(mutex);
          live -= size;
          ++releases;
          std::free(memory);
        },
        limit);
  }
};

TEST(BlockCacheTest, RoundsToFewSizes) {
  EXPECT_EQ(BlockCache::RoundUp(1), 512u);
  EXPECT_EQ(BlockCache::RoundUp(512), 512u);
  EXPECT_EQ(BlockCache::RoundUp(513), 1024u);
  EXPECT_EQ(BlockCache::RoundUp(1 << 20), 1u << 20);
  // Above 1 MiB: eighths of the power of two below.
  EXPECT_EQ(BlockCache::RoundUp((1 << 20) + 1), (1u << 20) + (1u << 17));
  EXPECT_EQ(BlockCache::RoundUp(100u << 20), 104u << 20);
  for (uint64_t size = 1; size < (1ull << 34); size = size * 3 + 7) {
    const uint64_t rounded = BlockCache::RoundUp(size);
    EXPECT_GE(rounded, size);
    EXPECT_EQ(rounded % 512, 0u);
    if (size > (1 << 20)) EXPECT_LE(rounded, size + size / 8);
  }
}

TEST(BlockCacheTest, ReusesFreedBlocksWithoutTheBackingAllocator) {
  Backing backing;
  {
    BlockCache cache = backing.MakeCache();
    void* a = cache.Allocate(1000);
    ASSERT_NE(a, nullptr);
    cache.Deallocate(a, 1000);
    // Any size of the same rounded size takes the block.
    for (int i = 0; i < 100; ++i) {
      void* b = cache.Allocate(600 + i);
      EXPECT_EQ(b, a);
      cache.Deallocate(b, 600 + i);
    }
    EXPECT_EQ(backing.allocations, 1);
    BlockCache::Stats stats = cache.GetStats();
    EXPECT_EQ(stats.hits, 100u);
    EXPECT_EQ(stats.misses, 1u);
    EXPECT_EQ(stats.in_use_bytes, 0u);
    EXPECT_EQ(stats.cached_bytes, 1024u);
    EXPECT_EQ(stats.peak_reserved_bytes, 1024u);
    // Another size is another block.
    void* c = cache.Allocate(5000);
    EXPECT_NE(c, a);
    EXPECT_EQ(cache.GetStats().in_use_bytes, 5120u);
    cache.Deallocate(c, 5000);
  }
  // Destruction gives everything back.
  EXPECT_EQ(backing.live, 0u);
  EXPECT_EQ(backing.releases, backing.allocations);
}

TEST(BlockCacheTest, GivesCachedBlocksBackWhenTheBackingRunsOut) {
  Backing backing;
  backing.capacity = 4096;
  BlockCache cache = backing.MakeCache();
  void* small[4];
  for (void*& block : small) block = cache.Allocate(1024);
  for (void* block : small) cache.Deallocate(block, 1024);
  EXPECT_EQ(cache.GetStats().cached_bytes, 4096u);
  // 2048 bytes fit only once the cached 1024s are gone.
  void* big = cache.Allocate(2048);
  ASSERT_NE(big, nullptr);
  EXPECT_EQ(cache.GetStats().cached_bytes, 0u);
  EXPECT_EQ(backing.releases, 4);
  // More than the backing has is null, and nothing is lost.
  EXPECT_EQ(cache.Allocate(8192), nullptr);
  cache.Deallocate(big, 2048);
  cache.Trim();
  EXPECT_EQ(backing.live, 0u);
}

TEST(BlockCacheTest, KeepsInUsePlusCachedUnderTheLimit) {
  Backing backing;
  BlockCache cache = backing.MakeCache(/*limit=*/3072);
  void* a = cache.Allocate(1024);
  void* b = cache.Allocate(1024);
  cache.Deallocate(a, 1024);
  cache.Deallocate(b, 1024);
  // 2048 more would make 4096 reserved: the cached blocks go first.
  void* c = cache.Allocate(2048);
  ASSERT_NE(c, nullptr);
  EXPECT_EQ(backing.live, 2048u);
  EXPECT_LE(cache.GetStats().peak_reserved_bytes, 3072u);
  cache.Deallocate(c, 2048);
}

TEST(BlockCacheTest, ConcurrentAllocationsStayConsistent) {
  Backing backing;
  BlockCache cache = backing.MakeCache();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&cache, t] {
      std::vector<std::pair<void*, uint64_t>> held;
      for (int i = 0; i < 2000; ++i) {
        const uint64_t size = 100 + ((i * 7 + t) % 5) * 700;
        void* block = cache.Allocate(size);
        ASSERT_NE(block, nullptr);
        // A block is never handed out twice.
        *static_cast<int*>(block) = t * 100000 + i;
        held.push_back({block, size});
        if (held.size() > 8) {
          auto [old, old_size] = held.front();
          held.erase(held.begin());
          cache.Deallocate(old, old_size);
        }
      }
      for (auto [block, size] : held) cache.Deallocate(block, size);
    });
  }
  for (std::thread& thread : threads) thread.join();
  BlockCache::Stats stats = cache.GetStats();
  EXPECT_EQ(stats.in_use_bytes, 0u);
  EXPECT_EQ(stats.hits + stats.misses, 8000u);
  cache.Trim();
  EXPECT_EQ(backing.live, 0u);
}

}  // namespace
}  // namespace asyncrt::gpu
