#include "asyncrt/core_runtime/shape_memo.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace asyncrt {
namespace {

std::vector<const TensorMetadata*> Pointers(
    const std::vector<TensorMetadata>& metadata) {
  std::vector<const TensorMetadata*> pointers;
  for (const TensorMetadata& m : metadata) pointers.push_back(&m);
  return pointers;
}

TEST(ShapeMemoTest, FindsWhatWasRecordedForEqualArguments) {
  ShapeMemo memo;
  std::vector<TensorMetadata> args = {{DType::kF32, {2, 3}},
                                      {DType::kF32, {3}}};
  EXPECT_EQ(memo.Find(Pointers(args)), nullptr);
  std::vector<TensorMetadata> results = {{DType::kF32, {2, 3}},
                                         {DType::kI32, {}}};
  memo.Record(Pointers(args), results);
  // Equal metadata elsewhere in memory finds the entry.
  std::vector<TensorMetadata> same = args;
  const TensorMetadata* found = memo.Find(Pointers(same));
  ASSERT_NE(found, nullptr);
  EXPECT_EQ(found[0], results[0]);
  EXPECT_EQ(found[1], results[1]);
  // Another dtype, shape or argument count is another key.
  std::vector<TensorMetadata> dtype = {{DType::kF64, {2, 3}},
                                       {DType::kF32, {3}}};
  std::vector<TensorMetadata> shape = {{DType::kF32, {2, 4}},
                                       {DType::kF32, {3}}};
  std::vector<TensorMetadata> fewer = {{DType::kF32, {2, 3}}};
  EXPECT_EQ(memo.Find(Pointers(dtype)), nullptr);
  EXPECT_EQ(memo.Find(Pointers(shape)), nullptr);
  EXPECT_EQ(memo.Find(Pointers(fewer)), nullptr);
}

TEST(ShapeMemoTest, KeepsOneEntryPerKeyAndStopsWhenFull) {
  ShapeMemo memo;
  std::vector<TensorMetadata> first = {{DType::kF32, {1}}};
  memo.Record(Pointers(first), first);
  memo.Record(Pointers(first), first);
  EXPECT_EQ(memo.size(), 1);
  for (int64_t n = 2; n <= ShapeMemo::kCapacity + 3; ++n) {
    std::vector<TensorMetadata> args = {{DType::kF32, {n}}};
    memo.Record(Pointers(args), args);
  }
  EXPECT_EQ(memo.size(), ShapeMemo::kCapacity);
  std::vector<TensorMetadata> kept = {{DType::kF32, {ShapeMemo::kCapacity}}};
  std::vector<TensorMetadata> dropped = {
      {DType::kF32, {ShapeMemo::kCapacity + 1}}};
  ASSERT_NE(memo.Find(Pointers(kept)), nullptr);
  EXPECT_EQ(memo.Find(Pointers(kept))[0], kept[0]);
  EXPECT_EQ(memo.Find(Pointers(dropped)), nullptr);
}

// Ranks past the inline storage of a shape are keys like any other.
TEST(ShapeMemoTest, HighRankShapes) {
  ShapeMemo memo;
  std::vector<TensorMetadata> args = {{DType::kF32, {1, 2, 3, 4, 5, 6}}};
  std::vector<TensorMetadata> results = {{DType::kF32, {6, 5, 4, 3, 2, 1}}};
  memo.Record(Pointers(args), results);
  std::vector<TensorMetadata> other = {{DType::kF32, {1, 2, 3, 4, 5, 7}}};
  EXPECT_EQ(memo.Find(Pointers(other)), nullptr);
  ASSERT_NE(memo.Find(Pointers(args)), nullptr);
  EXPECT_EQ(memo.Find(Pointers(args))[0], results[0]);
}

// Readers race writers (ThreadSanitizer checks the publication): every
// answer found is the one recorded for its key.
TEST(ShapeMemoTest, ConcurrentFindAndRecord) {
  ShapeMemo memo;
  constexpr int kThreads = 4;
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&memo, &wrong, t] {
      for (int i = 0; i < 2000; ++i) {
        const int64_t n = (i + t) % (ShapeMemo::kCapacity + 2) + 1;
        std::vector<TensorMetadata> args = {{DType::kF32, {n}},
                                            {DType::kI64, {n, 2}}};
        std::vector<TensorMetadata> results = {{DType::kF32, {n, n}}};
        if (const TensorMetadata* found = memo.Find(Pointers(args))) {
          if (found[0] != results[0]) wrong.fetch_add(1);
        } else {
          memo.Record(Pointers(args), results);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(memo.size(), ShapeMemo::kCapacity);
}

}  // namespace
}  // namespace asyncrt
