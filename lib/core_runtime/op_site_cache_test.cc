#include "asyncrt/core_runtime/op_site_cache.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace asyncrt {
namespace {

constexpr char kTag = 0;
constexpr char kOtherTag = 0;

TEST(OpSiteCacheTest, KeepsTheFirstEntryUnderItsTag) {
  OpSiteCache cache;
  EXPECT_TRUE(cache.empty());
  EXPECT_EQ(cache.Find<int>(&kTag), nullptr);
  const int* kept = cache.Set<int>(&kTag, std::make_shared<const int>(7));
  ASSERT_NE(kept, nullptr);
  EXPECT_FALSE(cache.empty());
  EXPECT_EQ(cache.Find<int>(&kTag), kept);
  EXPECT_EQ(*cache.Find<int>(&kTag), 7);
  // Another implementation reads nothing; nothing replaces the entry.
  EXPECT_EQ(cache.Find<int>(&kOtherTag), nullptr);
  EXPECT_EQ(cache.Set<int>(&kOtherTag, std::make_shared<const int>(8)),
            nullptr);
  EXPECT_EQ(cache.Set<int>(&kTag, std::make_shared<const int>(9)), nullptr);
  EXPECT_EQ(*cache.Find<int>(&kTag), 7);
}

TEST(OpSiteCacheTest, OwnsItsEntryUntilDestroyed) {
  auto entry = std::make_shared<const int>(1);
  std::weak_ptr<const int> watch = entry;
  {
    OpSiteCache cache;
    cache.Set<int>(&kTag, std::move(entry));
    EXPECT_FALSE(watch.expired());
  }
  EXPECT_TRUE(watch.expired());
  // A losing entry is dropped at once.
  OpSiteCache cache;
  cache.Set<int>(&kTag, std::make_shared<const int>(2));
  auto loser = std::make_shared<const int>(3);
  std::weak_ptr<const int> lost = loser;
  EXPECT_EQ(cache.Set<int>(&kTag, std::move(loser)), nullptr);
  EXPECT_TRUE(lost.expired());
}

// Threads racing to set and read one site agree on one entry (run under
// ThreadSanitizer with the concurrency label).
TEST(OpSiteCacheTest, ConcurrentCallsAgreeOnOneEntry) {
  for (int round = 0; round < 50; ++round) {
    OpSiteCache cache;
    std::atomic<int> winners{0};
    std::vector<const int*> seen(4, nullptr);
    std::vector<std::thread> threads;
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        const int* found = cache.Find<int>(&kTag);
        if (found == nullptr) {
          if (const int* kept =
                  cache.Set<int>(&kTag, std::make_shared<const int>(t))) {
            winners.fetch_add(1);
            found = kept;
          } else {
            found = cache.Find<int>(&kTag);
          }
        }
        seen[t] = found;
        EXPECT_GE(*found, 0);
      });
    }
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(winners.load(), 1);
    for (const int* found : seen) EXPECT_EQ(found, seen[0]);
  }
}

}  // namespace
}  // namespace asyncrt
