// nn.reverse_sequence on ONNX's two examples (time-major and batch-major)
// and errors.
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class ReverseSequenceTest : public AnyDTypeOpTest {
 protected:
  static OpAttrs Axes(int64_t batch, int64_t time) {
    OpAttrs attrs;
    attrs.Set<int64_t>("batch_axis", batch);
    attrs.Set<int64_t>("time_axis", time);
    return attrs;
  }
};

TEST_F(ReverseSequenceTest, TimeMajorAndBatchMajor) {
  // Time-major 4 x 4, lengths 4, 3, 2, 1: column b's first lengths[b]
  // entries reversed.
  auto time = Run("nn.reverse_sequence",
                  {IotaF32({4, 4}), I64({4}, {4, 3, 2, 1})}, Axes(1, 0));
  ASSERT_TRUE(time.ok()) << time.status();
  EXPECT_THAT(time->values<float>(),
              ElementsAre(12, 9, 6, 3, 8, 5, 2, 7, 4, 1, 10, 11, 0, 13, 14,
                          15));
  // Batch-major: row b's first lengths[b] entries reversed.
  auto batch = Run("nn.reverse_sequence",
                   {IotaF32({4, 4}), I64({4}, {1, 2, 3, 4})}, Axes(0, 1));
  ASSERT_TRUE(batch.ok()) << batch.status();
  EXPECT_THAT(batch->values<float>(),
              ElementsAre(0, 1, 2, 3, 5, 4, 6, 7, 10, 9, 8, 11, 15, 14, 13,
                          12));
}

TEST_F(ReverseSequenceTest, Errors) {
  EXPECT_THAT(Error("nn.reverse_sequence",
                    {IotaF32({2, 2}), I64({2}, {3, 1})}, Axes(1, 0)),
              HasSubstr("sequence_lens[0] is 3; there are 2 steps"));
  EXPECT_THAT(Error("nn.reverse_sequence", {IotaF32({2, 2}), I64({3}, {1, 1, 1})},
                    Axes(1, 0)),
              HasSubstr("sequence_lens must be 2 integers"));
  EXPECT_THAT(Error("nn.reverse_sequence", {IotaF32({2, 2}), I64({2}, {1, 1})},
                    Axes(1, 2)),
              HasSubstr("batch_axis and time_axis must be 0 and 1"));
}

}  // namespace
}  // namespace asyncrt::nn
