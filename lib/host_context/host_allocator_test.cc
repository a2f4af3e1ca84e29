// Tests of the host allocators: alignment, statistics, the leak report and
// exit status, and the fixed-size allocator's log and refusals.
#include "asyncrt/host_context/host_allocator.h"

#include <unistd.h>

#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "asyncrt/support/block_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/memory_map_test_util.h"

namespace asyncrt {
namespace {

using ::testing::HasSubstr;

TEST(HostAllocatorTest, MallocHonoursAlignment) {
  auto allocator = CreateMallocAllocator();
  for (size_t alignment : {1u, 8u, 16u, 64u, 256u, 4096u}) {
    void* ptr = allocator->AllocateBytes(100, alignment);
    ASSERT_NE(ptr, nullptr);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % alignment, 0u) << alignment;
    allocator->DeallocateBytes(ptr, 100);
  }
  EXPECT_FALSE(allocator->GetStats().has_value());
}

TEST(HostAllocatorTest, MallocBlocksAreWritableEndToEnd) {
  // Blocks are aligned inside a larger malloc block; under ASan a write past
  // the end or a free of the wrong pointer fails here.
  auto allocator = CreateMallocAllocator();
  std::vector<std::pair<void*, size_t>> blocks;
  for (size_t alignment : {8u, 16u, 32u, 64u, 128u, 4096u}) {
    for (size_t size : {0u, 1u, 7u, 64u, 65u, 1000u, 70000u}) {
      void* ptr = allocator->AllocateBytes(size, alignment);
      ASSERT_NE(ptr, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(ptr) % alignment, 0u);
      std::memset(ptr, 0x5A, size);
      blocks.emplace_back(ptr, size);
    }
  }
  for (auto [ptr, size] : blocks) allocator->DeallocateBytes(ptr, size);
  EXPECT_EQ(allocator->AllocateBytes(SIZE_MAX - 16, 64), nullptr);
}

TEST(HostAllocatorTest, MallocReusesSmallBlocksOfTheSameThread) {
  auto allocator = CreateMallocAllocator();
  void* first = allocator->AllocateBytes(8, 64);
  allocator->DeallocateBytes(first, 8);
  void* second = allocator->AllocateBytes(8, 64);
  // The freed block comes back (the per-thread cache; sanitizer builds
  // bypass it so that use-after-free stays visible).
  if (kBlockCacheEnabled) {
    EXPECT_EQ(second, first);
  }
  EXPECT_EQ(reinterpret_cast<uintptr_t>(second) % 64, 0u);
  // Freed on another thread, a block joins that thread's cache.
  std::thread([&] { allocator->DeallocateBytes(second, 8); }).join();
  void* large = allocator->AllocateBytes(1 << 20, 64);
  ASSERT_NE(large, nullptr);
  std::memset(large, 0x5A, 1 << 20);
  allocator->DeallocateBytes(large, 1 << 20);
}

TEST(HostAllocatorTest, MallocReusesLargeBlocksAcrossThreads) {
  // A model's activations: freed large blocks are kept process-wide, so the
  // next call does not page-fault its working set in again.
  auto allocator = CreateMallocAllocator();
  constexpr size_t kSize = (3 << 20) + 100000;  // A class of 3.5 MiB.
  void* first = allocator->AllocateBytes(kSize, 64);
  ASSERT_NE(first, nullptr);
  EXPECT_EQ(reinterpret_cast<uintptr_t>(first) % 64, 0u);
  std::memset(first, 0x5A, kSize);
  allocator->DeallocateBytes(first, kSize);
  void* second = nullptr;
  // A slightly smaller request of the same size class, on another thread.
  std::thread([&] {
    second = allocator->AllocateBytes(kSize - 1000, 64);
  }).join();
  ASSERT_NE(second, nullptr);
  if (kBlockCacheEnabled) {
    EXPECT_EQ(second, first);
  }
  std::memset(second, 0x5B, kSize - 1000);
  allocator->DeallocateBytes(second, kSize - 1000);
}

TEST(HostAllocatorTest, LargeBlocksComeBackMostRecentlyFreedFirst) {
  // A tensor written right after its inputs' last reads gets the block
  // freed last (still in cache), whatever its size class, within twice the
  // request; a much larger block stays for a request of its size.
  auto allocator = CreateMallocAllocator();
  constexpr size_t kMiB = size_t{1} << 20;
  void* big = allocator->AllocateBytes(16 * kMiB, 64);
  void* older = allocator->AllocateBytes(3 * kMiB, 64);
  void* newer = allocator->AllocateBytes(4 * kMiB, 64);
  ASSERT_NE(big, nullptr);
  ASSERT_NE(older, nullptr);
  ASSERT_NE(newer, nullptr);
  allocator->DeallocateBytes(big, 16 * kMiB);
  allocator->DeallocateBytes(older, 3 * kMiB);
  allocator->DeallocateBytes(newer, 4 * kMiB);
  // 2.5 MiB: both freed blocks fit; the newer one (4 MiB) comes back.
  void* reused = allocator->AllocateBytes(5 * kMiB / 2, 64);
  ASSERT_NE(reused, nullptr);
  std::memset(reused, 0x5A, 5 * kMiB / 2);
  // 1 MiB: the 3 MiB block is more than twice as large, so not it.
  void* small = allocator->AllocateBytes(kMiB, 64);
  ASSERT_NE(small, nullptr);
  std::memset(small, 0x5B, kMiB);
  // 10 MiB: the 16 MiB block, although two blocks were freed after it.
  void* large = allocator->AllocateBytes(10 * kMiB, 64);
  ASSERT_NE(large, nullptr);
  std::memset(large, 0x5C, 10 * kMiB);
  if (kBlockCacheEnabled) {
    EXPECT_EQ(reused, newer);
    EXPECT_NE(small, older);
    EXPECT_EQ(large, big);
  }
  // Freed with the size asked for, whichever block served it.
  allocator->DeallocateBytes(reused, 5 * kMiB / 2);
  allocator->DeallocateBytes(small, kMiB);
  allocator->DeallocateBytes(large, 10 * kMiB);
}

// Blocks of 2 MiB or more (a model's activations, a function's planned
// arena) are made of whole 2 MiB pages advised for transparent huge
// pages; smaller large blocks are not.
TEST(HostAllocatorTest, LargeBlocksAskForHugePages) {
  if (!kBlockCacheEnabled) {
    GTEST_SKIP() << "the block caches are off in this build (sanitizers)";
  }
  if (!memory_test::TransparentHugePagesAvailable()) {
    GTEST_SKIP() << "transparent huge pages are off on this machine";
  }
  auto allocator = CreateMallocAllocator();
  constexpr size_t kMiB = size_t{1} << 20;
  void* huge = allocator->AllocateBytes(6 * kMiB, 64);
  void* small = allocator->AllocateBytes(kMiB, 64);
  ASSERT_NE(huge, nullptr);
  ASSERT_NE(small, nullptr);
  std::memset(huge, 0x5A, 6 * kMiB);
  std::memset(small, 0x5B, kMiB);
  EXPECT_TRUE(memory_test::AdvisedHugePages(huge))
      << memory_test::MappingField(huge, "VmFlags").value_or("no mapping");
  EXPECT_TRUE(
      memory_test::AdvisedHugePages(static_cast<char*>(huge) + 5 * kMiB));
  EXPECT_FALSE(memory_test::AdvisedHugePages(small))
      << memory_test::MappingField(small, "VmFlags").value_or("no mapping");
  allocator->DeallocateBytes(huge, 6 * kMiB);
  allocator->DeallocateBytes(small, kMiB);
}

TEST(BlockCacheTest, ClassesAndReuse) {
  using Cache = BlockCache<64, 4, 2>;
  EXPECT_EQ(Cache::ClassOf(0), 0u);
  EXPECT_EQ(Cache::ClassOf(64), 0u);
  EXPECT_EQ(Cache::ClassOf(65), 1u);
  EXPECT_EQ(Cache::ClassOf(512), 3u);
  EXPECT_EQ(Cache::ClassOf(513), 4u);
  EXPECT_FALSE(Cache::IsCached(4));
  EXPECT_EQ(Cache::ClassBytes(3), 512u);
  Cache cache;
  void* a = cache.Allocate(1);
  void* b = cache.Allocate(1);
  void* c = cache.Allocate(1);
  cache.Free(a, 1);
  cache.Free(b, 1);
  cache.Free(c, 1);                 // The class is full: deleted.
  EXPECT_EQ(cache.Allocate(1), b);  // Last in, first out.
  EXPECT_EQ(cache.Allocate(1), a);
  void* uncached = cache.Allocate(5);  // Past the classes: 2 KiB, not kept.
  std::memset(uncached, 0, Cache::ClassBytes(5));
  cache.Free(uncached, 5);
  cache.Free(a, 1);
  cache.Free(b, 1);
}

TEST(HostAllocatorTest, TypedHelpers) {
  auto allocator = CreateProfiledAllocator(CreateMallocAllocator());
  double* values = allocator->Allocate<double>(4);
  ASSERT_NE(values, nullptr);
  EXPECT_EQ(allocator->GetStats()->live_bytes, 32);
  allocator->Deallocate(values, 4);
  EXPECT_EQ(allocator->GetStats()->live_bytes, 0);
}

TEST(HostAllocatorTest, ProfiledCountsAndPrints) {
  ::testing::internal::CaptureStderr();
  {
    auto allocator = CreateProfiledAllocator(CreateMallocAllocator());
    void* a = allocator->AllocateBytes(100, 8);
    void* b = allocator->AllocateBytes(50, 8);
    HostAllocatorStats stats = *allocator->GetStats();
    EXPECT_EQ(stats.live_allocations, 2);
    EXPECT_EQ(stats.live_bytes, 150);
    allocator->DeallocateBytes(a, 100);
    allocator->DeallocateBytes(b, 50);
    stats = *allocator->GetStats();
    EXPECT_EQ(stats.total_allocations, 2);
    EXPECT_EQ(stats.peak_bytes, 150);
    EXPECT_EQ(stats.live_bytes, 0);
  }
  EXPECT_THAT(
      ::testing::internal::GetCapturedStderr(),
      HasSubstr("HostAllocator profile: 2 allocations, 150 peak bytes"));
}

TEST(HostAllocatorTest, ConcurrentCountsAreExact) {
  auto allocator = CreateLeakCheckAllocator(CreateMallocAllocator());
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        void* ptr = allocator->AllocateBytes(16 + i % 64, 16);
        allocator->DeallocateBytes(ptr, 16 + i % 64);
      }
    });
  }
  for (auto& thread : threads) thread.join();
  EXPECT_EQ(allocator->GetStats()->live_allocations, 0);
  EXPECT_EQ(allocator->GetStats()->total_allocations, 8000);
}

TEST(HostAllocatorDeathTest, LeakCheckReportsAndExitsWithOne) {
  GTEST_FLAG_SET(death_test_style, "threadsafe");
  EXPECT_EXIT(
      {
        // The report goes to stdout; the death test matches stderr.
        dup2(STDERR_FILENO, STDOUT_FILENO);
        auto allocator = CreateLeakCheckAllocator(CreateMallocAllocator());
        allocator->AllocateBytes(4, 4);
        allocator->AllocateBytes(12, 4);
        allocator.reset();
      },
      ::testing::ExitedWithCode(1),
      "Memory leak detected: 2 alive allocations, 16 alive bytes");
}

TEST(HostAllocatorTest, LeakCheckIsSilentWithoutLeaks) {
  ::testing::internal::CaptureStdout();
  {
    auto allocator = CreateLeakCheckAllocator(CreateMallocAllocator());
    allocator->DeallocateBytes(allocator->AllocateBytes(8, 8), 8);
  }
  EXPECT_EQ(::testing::internal::GetCapturedStdout(), "");
}

TEST(HostAllocatorTest, FixedSizeLogsAndRefuses) {
  ::testing::internal::CaptureStderr();
  auto allocator = CreateFixedSizeAllocator(1024);
  void* a = allocator->AllocateBytes(1000, 8);
  ASSERT_NE(a, nullptr);
  EXPECT_EQ(allocator->AllocateBytes(100, 8), nullptr);
  allocator->DeallocateBytes(a, 1000);
  void* b = allocator->AllocateBytes(100, 8);
  ASSERT_NE(b, nullptr);
  allocator->DeallocateBytes(b, 100);
  EXPECT_EQ(::testing::internal::GetCapturedStderr(),
            "Allocating 1000 bytes. 24 remaining.\n"
            "Attempted to allocate 100 bytes. However current capacity is "
            "only 24.\n"
            "Allocating 100 bytes. 924 remaining.\n");
  EXPECT_EQ(allocator->GetStats()->peak_bytes, 1000);
}

TEST(HostAllocatorTest, CreateByName) {
  for (const char* name : {"malloc", "profiled_allocator",
                           "leak_check_allocator", "test_fixed_size_1k"}) {
    ::testing::internal::CaptureStderr();
    {
      auto allocator = CreateHostAllocator(name);
      ASSERT_TRUE(allocator.ok()) << name;
      void* ptr = (*allocator)->AllocateBytes(8, 8);
      EXPECT_NE(ptr, nullptr);
      (*allocator)->DeallocateBytes(ptr, 8);
    }
    ::testing::internal::GetCapturedStderr();
  }
  auto bad = CreateHostAllocator("jemalloc");
  EXPECT_EQ(bad.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(bad.status().message()),
              HasSubstr("invalid host allocator type 'jemalloc'"));
}

}  // namespace
}  // namespace asyncrt
