// Tests of the index, selection and rearrangement nn.* ops through the
// eager API: values and shapes against hand-computed expectations (ONNX's
// examples where it gives them), several dtypes, and errors that name the
// op.
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using Shape = std::vector<int64_t>;

class IndexOpsTest : public AnyDTypeOpTest {};

OpAttrs With(OpAttrs attrs, const std::string& name, int64_t value) {
  attrs.Set(name, value);
  return attrs;
}

//===--- nn.arg_max, nn.arg_min -------------------------------------------===//

TEST_F(IndexOpsTest, ArgMaxAlongEachAxisKeepsOrDropsTheAxis) {
  // [[2, 1], [3, 10]]
  const AnyTensor x = F32({2, 2}, {2, 1, 3, 10});
  auto rows = Run("nn.arg_max", {x}, Int("axis", 1));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->dtype, DType::kI64);
  EXPECT_THAT(rows->shape, ElementsAre(2, 1));
  EXPECT_THAT(rows->values<int64_t>(), ElementsAre(0, 1));

  auto columns = Run("nn.arg_max", {x}, With(Int("axis", 0), "keepdims", 0));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->shape, ElementsAre(2));
  EXPECT_THAT(columns->values<int64_t>(), ElementsAre(1, 1));

  auto min = Run("nn.arg_min", {x}, Int("axis", -1));
  ASSERT_TRUE(min.ok()) << min.status();
  EXPECT_THAT(min->values<int64_t>(), ElementsAre(1, 0));
}

TEST_F(IndexOpsTest, ArgMaxTiesGoToTheFirstOrTheLastIndex) {
  const AnyTensor x = I64({1, 4}, {7, 9, 9, 1});
  auto first = Run("nn.arg_max", {x}, Int("axis", 1));
  ASSERT_TRUE(first.ok()) << first.status();
  EXPECT_THAT(first->values<int64_t>(), ElementsAre(1));
  auto last =
      Run("nn.arg_max", {x}, With(Int("axis", 1), "select_last_index", 1));
  ASSERT_TRUE(last.ok()) << last.status();
  EXPECT_THAT(last->values<int64_t>(), ElementsAre(2));
  auto min_last = Run("nn.arg_min", {I32({3}, {4, 4, 5})},
                      With(Int("axis", 0), "select_last_index", 1));
  ASSERT_TRUE(min_last.ok()) << min_last.status();
  EXPECT_THAT(min_last->values<int64_t>(), ElementsAre(1));
}

TEST_F(IndexOpsTest, ArgMaxErrors) {
  EXPECT_THAT(Error("nn.arg_max", {F32({2, 0}, {})}, Int("axis", 1)),
              HasSubstr("nn.arg_max: axis 1 of"));
  EXPECT_THAT(Error("nn.arg_max", {F32({2}, {1, 2})}, Int("axis", 1)),
              HasSubstr("nn.arg_max"));
  EXPECT_THAT(Error("nn.arg_min", {Bool({2}, {true, false})}),
              HasSubstr("dtype"));
}

//===--- nn.cum_sum -------------------------------------------------------===//

TEST_F(IndexOpsTest, CumSumInclusiveExclusiveAndReverse) {
  const AnyTensor x = F32({5}, {1, 2, 3, 4, 5});
  auto plain = Run("nn.cum_sum", {x}, Int("axis", 0));
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(plain->values<float>(), ElementsAre(1, 3, 6, 10, 15));
  auto exclusive = Run("nn.cum_sum", {x}, With(Int("axis", 0), "exclusive", 1));
  ASSERT_TRUE(exclusive.ok()) << exclusive.status();
  EXPECT_THAT(exclusive->values<float>(), ElementsAre(0, 1, 3, 6, 10));
  auto reverse = Run("nn.cum_sum", {x}, With(Int("axis", 0), "reverse", 1));
  ASSERT_TRUE(reverse.ok()) << reverse.status();
  EXPECT_THAT(reverse->values<float>(), ElementsAre(15, 14, 12, 9, 5));
  auto both = Run("nn.cum_sum", {x},
                  With(With(Int("axis", 0), "reverse", 1), "exclusive", 1));
  ASSERT_TRUE(both.ok()) << both.status();
  EXPECT_THAT(both->values<float>(), ElementsAre(14, 12, 9, 5, 0));
}

TEST_F(IndexOpsTest, CumSumAlongAnInnerAxisOfIntegersWraps) {
  // [[1, 2, 3], [4, 5, 6]] along axis 1 (rows), then 0 (columns).
  const AnyTensor x = I64({2, 3}, {1, 2, 3, 4, 5, 6});
  auto rows = Run("nn.cum_sum", {x}, Int("axis", 1));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->values<int64_t>(), ElementsAre(1, 3, 6, 4, 9, 15));
  auto columns = Run("nn.cum_sum", {x}, Int("axis", -2));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->values<int64_t>(), ElementsAre(1, 2, 3, 5, 7, 9));
  const int32_t max = std::numeric_limits<int32_t>::max();
  auto wrapped = Run("nn.cum_sum", {I32({2}, {max, 1})}, Int("axis", 0));
  ASSERT_TRUE(wrapped.ok()) << wrapped.status();
  EXPECT_THAT(wrapped->values<int32_t>(),
              ElementsAre(max, std::numeric_limits<int32_t>::min()));
}

TEST_F(IndexOpsTest, CumSumErrors) {
  EXPECT_THAT(Error("nn.cum_sum", {F32({2}, {1, 2})}),
              HasSubstr("nn.cum_sum: attribute `axis`"));
  EXPECT_THAT(Error("nn.cum_sum", {Bool({1}, {true})}, Int("axis", 0)),
              HasSubstr("must be f32, f64, i32 or i64"));
  EXPECT_THAT(Error("nn.cum_sum", {F32({2}, {1, 2})}, Int("axis", 3)),
              HasSubstr("nn.cum_sum"));
}

//===--- nn.tile ----------------------------------------------------------===//

TEST_F(IndexOpsTest, TileRepeatsEachDimension) {
  // [[0, 1], [2, 3]] tiled 2 x 3.
  auto tiled = Run("nn.tile", {IotaF32({2, 2})}, Ints("repeats", {2, 3}));
  ASSERT_TRUE(tiled.ok()) << tiled.status();
  EXPECT_THAT(tiled->shape, ElementsAre(4, 6));
  EXPECT_THAT(tiled->values<float>(),
              ElementsAreArray({0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3,  //
                                0, 1, 0, 1, 0, 1, 2, 3, 2, 3, 2, 3}));
  auto bools = Run("nn.tile", {Bool({2}, {true, false})}, Ints("repeats", {2}));
  ASSERT_TRUE(bools.ok()) << bools.status();
  EXPECT_THAT(bools->values<bool>(), ElementsAre(true, false, true, false));
  auto empty = Run("nn.tile", {IotaF32({2})}, Ints("repeats", {0}));
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_THAT(empty->shape, ElementsAre(0));
}

TEST_F(IndexOpsTest, TileErrors) {
  EXPECT_THAT(Error("nn.tile", {IotaF32({2, 2})}),
              HasSubstr("nn.tile: attribute `repeats`"));
  EXPECT_THAT(Error("nn.tile", {IotaF32({2, 2})}, Ints("repeats", {2})),
              HasSubstr("has rank 2"));
  EXPECT_THAT(Error("nn.tile", {IotaF32({2})}, Ints("repeats", {-1})),
              HasSubstr("negative"));
  EXPECT_THAT(Error("nn.tile", {IotaF32({2})},
                    Ints("repeats", {std::numeric_limits<int64_t>::max()})),
              HasSubstr("overflows"));
}

//===--- nn.trilu ---------------------------------------------------------===//

TEST_F(IndexOpsTest, TriluKeepsATriangleFromDiagonalK) {
  // 3 x 3: 0..8.
  const AnyTensor x = IotaF32({3, 3});
  auto upper = Run("nn.trilu", {x});
  ASSERT_TRUE(upper.ok()) << upper.status();
  EXPECT_THAT(upper->values<float>(), ElementsAre(0, 1, 2, 0, 4, 5, 0, 0, 8));
  auto lower = Run("nn.trilu", {x}, Int("upper", 0));
  ASSERT_TRUE(lower.ok()) << lower.status();
  EXPECT_THAT(lower->values<float>(), ElementsAre(0, 0, 0, 3, 4, 0, 6, 7, 8));
  auto above = Run("nn.trilu", {x}, Int("k", 1));
  ASSERT_TRUE(above.ok()) << above.status();
  EXPECT_THAT(above->values<float>(), ElementsAre(0, 1, 2, 0, 0, 5, 0, 0, 0));
  auto below = Run("nn.trilu", {x}, With(Int("upper", 0), "k", -1));
  ASSERT_TRUE(below.ok()) << below.status();
  EXPECT_THAT(below->values<float>(), ElementsAre(0, 0, 0, 3, 0, 0, 6, 7, 0));
  // A k beyond the matrix keeps everything or nothing.
  auto none = Run("nn.trilu", {x}, Int("k", 100));
  ASSERT_TRUE(none.ok()) << none.status();
  EXPECT_THAT(none->values<float>(), ElementsAre(0, 0, 0, 0, 0, 0, 0, 0, 0));
  auto all = Run("nn.trilu", {I64({2, 2}, {1, 2, 3, 4})}, Int("k", -100));
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_THAT(all->values<int64_t>(), ElementsAre(1, 2, 3, 4));
}

TEST_F(IndexOpsTest, TriluNeedsAMatrix) {
  EXPECT_THAT(Error("nn.trilu", {IotaF32({3})}),
              HasSubstr("nn.trilu: x [3] must have rank >= 2"));
}

//===--- nn.gather_elements -----------------------------------------------===//

TEST_F(IndexOpsTest, GatherElementsAlongEachAxis) {
  // ONNX's examples.
  auto rows = Run("nn.gather_elements",
                  {F32({2, 2}, {1, 2, 3, 4}), I64({2, 2}, {0, 0, 1, 0})},
                  Int("axis", 1));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->values<float>(), ElementsAre(1, 1, 4, 3));
  auto columns =
      Run("nn.gather_elements",
          {IotaF32({3, 3}), I32({2, 3}, {1, 2, 0, 2, 0, -3})}, Int("axis", 0));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->shape, ElementsAre(2, 3));
  EXPECT_THAT(columns->values<float>(), ElementsAre(3, 7, 2, 6, 1, 2));
}

TEST_F(IndexOpsTest, GatherElementsErrors) {
  EXPECT_THAT(
      Error("nn.gather_elements", {IotaF32({2, 2}), I64({2, 2}, {0, 2, 0, 0})},
            Int("axis", 1)),
      HasSubstr("index 2 is out of range for axis 1 of size 2"));
  EXPECT_THAT(Error("nn.gather_elements", {IotaF32({2, 2}), I64({2}, {0, 1})}),
              HasSubstr("must have the same rank"));
  EXPECT_THAT(
      Error("nn.gather_elements", {IotaF32({2, 2}), F32({2, 2}, {0, 0, 0, 0})}),
      HasSubstr("must be i32 or i64"));
  EXPECT_THAT(Error("nn.gather_elements",
                    {IotaF32({2, 2}), I64({3, 1}, {0, 0, 0})}, Int("axis", 1)),
              HasSubstr("exceed data"));
}

//===--- nn.scatter_elements ----------------------------------------------===//

TEST_F(IndexOpsTest, ScatterElementsWritesOrCombines) {
  // ONNX's example along axis 1, a negative index included.
  auto written = Run("nn.scatter_elements",
                     {F32({1, 5}, {1, 2, 3, 4, 5}), I64({1, 2}, {1, -2}),
                      F32({1, 2}, {1.1f, 2.1f})},
                     Int("axis", 1));
  ASSERT_TRUE(written.ok()) << written.status();
  EXPECT_THAT(written->values<float>(), ElementsAre(1, 1.1f, 3, 2.1f, 5));
  // Duplicate indices add up with reduction = add.
  OpAttrs add = Int("axis", 1);
  add.SetString("reduction", "add");
  auto summed =
      Run("nn.scatter_elements",
          {I32({1, 3}, {1, 2, 3}), I64({1, 2}, {1, 1}), I32({1, 2}, {10, 20})},
          add);
  ASSERT_TRUE(summed.ok()) << summed.status();
  EXPECT_THAT(summed->values<int32_t>(), ElementsAre(1, 32, 3));
  // Along axis 0 (the default) with fewer indices than data.
  auto rows = Run("nn.scatter_elements", {IotaF32({3, 2}), I64({1, 2}, {2, 0}),
                                          F32({1, 2}, {-1, -2})});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->values<float>(), ElementsAre(0, -2, 2, 3, -1, 5));
}

TEST_F(IndexOpsTest, ScatterElementsErrors) {
  EXPECT_THAT(Error("nn.scatter_elements",
                    {IotaF32({2, 2}), I64({1, 1}, {2}), F32({1, 1}, {0})}),
              HasSubstr("index 2 is out of range for axis 0 of size 2"));
  EXPECT_THAT(Error("nn.scatter_elements",
                    {IotaF32({2, 2}), I64({1, 1}, {0}), F32({1, 2}, {0, 0})}),
              HasSubstr("must have the indices' shape and data's dtype"));
  OpAttrs bad;
  bad.SetString("reduction", "mean");
  EXPECT_THAT(Error("nn.scatter_elements",
                    {IotaF32({2, 2}), I64({1, 1}, {0}), F32({1, 1}, {0})}, bad),
              HasSubstr("reduction 'mean' is not none, add, mul, max or min"));
}

//===--- nn.negative_log_likelihood_loss ----------------------------------===//

TEST_F(IndexOpsTest, NegativeLogLikelihoodLossReducesAsOnnx) {
  // input [N = 2, C = 3, d = 2]; per element -input[n, target, d].
  const AnyTensor input =
      F32({2, 3, 2}, {-1, -2, -3, -4, -5, -6, -7, -8, -9, -10, -11, -12});
  const AnyTensor target = I64({2, 2}, {0, 2, 1, 1});
  OpAttrs none;
  none.SetString("reduction", "none");
  auto each = Run("nn.negative_log_likelihood_loss", {input, target}, none);
  ASSERT_TRUE(each.ok()) << each.status();
  EXPECT_THAT(each->shape, ElementsAre(2, 2));
  EXPECT_THAT(each->values<float>(), ElementsAre(1, 6, 9, 10));
  OpAttrs sum;
  sum.SetString("reduction", "sum");
  auto total = Run("nn.negative_log_likelihood_loss", {input, target}, sum);
  ASSERT_TRUE(total.ok()) << total.status();
  EXPECT_TRUE(total->shape.empty());
  EXPECT_THAT(total->values<float>(), ElementsAre(26));
  // Mean with class weights and an ignored target: the sum of weighted
  // losses over the weights of the targets kept.
  OpAttrs ignore = Int("ignore_index", 2);
  auto mean = Run("nn.negative_log_likelihood_loss",
                  {input, target, F32({3}, {1, 2, 4})}, ignore);
  ASSERT_TRUE(mean.ok()) << mean.status();
  // (1 * 1 + 9 * 2 + 10 * 2) / (1 + 2 + 2).
  EXPECT_THAT(mean->values<float>(), ElementsAre(39.0f / 5.0f));
  auto doubles = Run("nn.negative_log_likelihood_loss",
                     {Make<double>({1, 2}, {-0.25, -0.75}), I32({1}, {1})});
  ASSERT_TRUE(doubles.ok()) << doubles.status();
  EXPECT_THAT(doubles->values<double>(), ElementsAre(0.75));
}

TEST_F(IndexOpsTest, NegativeLogLikelihoodLossErrors) {
  const AnyTensor input = IotaF32({2, 3});
  EXPECT_THAT(
      Error("nn.negative_log_likelihood_loss", {input, I64({2}, {0, 3})}),
      HasSubstr("target 3 is out of range for 3 classes"));
  EXPECT_THAT(
      Error("nn.negative_log_likelihood_loss", {input, I64({3}, {0, 0, 0})}),
      HasSubstr("is not input [2, 3] without its class dimension"));
  EXPECT_THAT(
      Error("nn.negative_log_likelihood_loss", {input, F32({2}, {0, 0})}),
      HasSubstr("must be i32 or i64"));
  OpAttrs bad;
  bad.SetString("reduction", "max");
  EXPECT_THAT(
      Error("nn.negative_log_likelihood_loss", {input, I64({2}, {0, 1})}, bad),
      HasSubstr("reduction 'max' is not none, sum or mean"));
  EXPECT_THAT(Error("nn.negative_log_likelihood_loss",
                    {input, I64({2}, {0, 1}), F32({2}, {1, 1})}),
              HasSubstr("weight [2] of f32 is not [3] of f32"));
}

//===--- nn.depth_to_space, nn.space_to_depth -----------------------------===//

TEST_F(IndexOpsTest, DepthToSpaceInBothModesAndBack) {
  // 1 x 4 x 1 x 2, blocksize 2: DCR takes block offsets from the channel's
  // high part, CRD from its low part.
  const AnyTensor x = IotaF32({1, 4, 1, 2});
  auto dcr = Run("nn.depth_to_space", {x}, Int("blocksize", 2));
  ASSERT_TRUE(dcr.ok()) << dcr.status();
  EXPECT_THAT(dcr->shape, ElementsAre(1, 1, 2, 4));
  EXPECT_THAT(dcr->values<float>(), ElementsAre(0, 2, 1, 3, 4, 6, 5, 7));
  OpAttrs crd_attrs = Int("blocksize", 2);
  crd_attrs.SetString("mode", "CRD");
  auto crd = Run("nn.depth_to_space", {x}, crd_attrs);
  ASSERT_TRUE(crd.ok()) << crd.status();
  // With one output channel, both modes agree.
  EXPECT_EQ(crd->values<float>(), dcr->values<float>());

  auto back = Run("nn.space_to_depth", {*dcr}, Int("blocksize", 2));
  ASSERT_TRUE(back.ok()) << back.status();
  EXPECT_EQ(back->shape, x.shape);
  EXPECT_EQ(back->values<float>(), x.values<float>());
}

TEST_F(IndexOpsTest, DepthToSpaceModesDifferWithSeveralOutputChannels) {
  // 8 channels, blocksize 2: 2 output channels.
  const AnyTensor x = IotaF32({1, 8, 1, 1});
  auto dcr = Run("nn.depth_to_space", {x}, Int("blocksize", 2));
  ASSERT_TRUE(dcr.ok()) << dcr.status();
  EXPECT_THAT(dcr->shape, ElementsAre(1, 2, 2, 2));
  // DCR: channel = (by * 2 + bx) * 2 + c.
  EXPECT_THAT(dcr->values<float>(), ElementsAre(0, 2, 4, 6, 1, 3, 5, 7));
  OpAttrs crd_attrs = Int("blocksize", 2);
  crd_attrs.SetString("mode", "CRD");
  auto crd = Run("nn.depth_to_space", {x}, crd_attrs);
  ASSERT_TRUE(crd.ok()) << crd.status();
  // CRD: channel = c * 4 + by * 2 + bx.
  EXPECT_THAT(crd->values<float>(), ElementsAre(0, 1, 2, 3, 4, 5, 6, 7));
}

TEST_F(IndexOpsTest, BlockErrors) {
  EXPECT_THAT(
      Error("nn.depth_to_space", {IotaF32({1, 3, 1, 1})}, Int("blocksize", 2)),
      HasSubstr("not a multiple of blocksize 2 squared"));
  EXPECT_THAT(
      Error("nn.space_to_depth", {IotaF32({1, 1, 3, 2})}, Int("blocksize", 2)),
      HasSubstr("nn.space_to_depth"));
  EXPECT_THAT(
      Error("nn.depth_to_space", {IotaF32({4, 1, 1})}, Int("blocksize", 2)),
      HasSubstr("must be N x C x H x W"));
  EXPECT_THAT(
      Error("nn.depth_to_space", {IotaF32({1, 4, 1, 1})}, Int("blocksize", 0)),
      HasSubstr("must be positive"));
  OpAttrs bad_mode = Int("blocksize", 2);
  bad_mode.SetString("mode", "XYZ");
  EXPECT_THAT(Error("nn.depth_to_space", {IotaF32({1, 4, 1, 1})}, bad_mode),
              HasSubstr("is not DCR or CRD"));
}

//===--- nn.hardmax -------------------------------------------------------===//

TEST_F(IndexOpsTest, HardmaxMarksTheFirstMax) {
  auto rows = Run("nn.hardmax", {F32({2, 3}, {1, 3, 3, -1, -5, -2})});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->values<float>(), ElementsAre(0, 1, 0, 1, 0, 0));
  auto columns = Run("nn.hardmax", {F32({2, 2}, {1, 4, 2, 3})}, Int("axis", 0));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->values<float>(), ElementsAre(0, 1, 1, 0));
}

//===--- nn.top_k ---------------------------------------------------------===//

TEST_F(IndexOpsTest, TopKLargestAndSmallestWithTiesByIndex) {
  const AnyTensor x = F32({2, 4}, {1, 5, 5, 2, 8, -1, 3, 3});
  auto largest = RunN("nn.top_k", {x}, Int("k", 2), 2);
  ASSERT_TRUE(largest.ok()) << largest.status();
  EXPECT_THAT((*largest)[0].shape, ElementsAre(2, 2));
  EXPECT_THAT((*largest)[0].values<float>(), ElementsAre(5, 5, 8, 3));
  EXPECT_THAT((*largest)[1].values<int64_t>(), ElementsAre(1, 2, 0, 2));
  auto smallest = RunN("nn.top_k", {x}, With(Int("k", 3), "largest", 0), 2);
  ASSERT_TRUE(smallest.ok()) << smallest.status();
  EXPECT_THAT((*smallest)[0].values<float>(), ElementsAre(1, 2, 5, -1, 3, 3));
  EXPECT_THAT((*smallest)[1].values<int64_t>(), ElementsAre(0, 3, 1, 1, 2, 3));
}

TEST_F(IndexOpsTest, TopKAlongAnOuterAxisUnsortedAndIntegers) {
  // Columns of [[3, 0], [1, 2], [2, 1]], k = 2 along axis 0.
  const AnyTensor x = I64({3, 2}, {3, 0, 1, 2, 2, 1});
  auto sorted = RunN("nn.top_k", {x}, With(Int("k", 2), "axis", 0), 2);
  ASSERT_TRUE(sorted.ok()) << sorted.status();
  EXPECT_THAT((*sorted)[0].values<int64_t>(), ElementsAre(3, 2, 2, 1));
  EXPECT_THAT((*sorted)[1].values<int64_t>(), ElementsAre(0, 1, 2, 2));
  // Unsorted: the k best in the order of their indices.
  auto unsorted =
      RunN("nn.top_k", {x}, With(With(Int("k", 2), "axis", 0), "sorted", 0), 2);
  ASSERT_TRUE(unsorted.ok()) << unsorted.status();
  EXPECT_THAT((*unsorted)[1].values<int64_t>(), ElementsAre(0, 1, 2, 2));
  EXPECT_THAT((*unsorted)[0].values<int64_t>(), ElementsAre(3, 2, 2, 1));
}

TEST_F(IndexOpsTest, TopKRanksNanAboveEveryNumber) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  auto top = RunN("nn.top_k", {F32({3}, {1, nan, 2})}, Int("k", 1), 2);
  ASSERT_TRUE(top.ok()) << top.status();
  EXPECT_THAT((*top)[1].values<int64_t>(), ElementsAre(1));
}

TEST_F(IndexOpsTest, TopKErrors) {
  EXPECT_THAT(Error("nn.top_k", {IotaF32({3})}, Int("k", 4), 2),
              HasSubstr("nn.top_k: k = 4 is not in [0, 3]"));
  EXPECT_THAT(Error("nn.top_k", {IotaF32({3})}, OpAttrs(), 2),
              HasSubstr("attribute `k`"));
  EXPECT_THAT(Error("nn.top_k", {IotaF32({3})}, Int("k", 1), 1),
              HasSubstr("has 2 results"));
}

}  // namespace
}  // namespace asyncrt::nn
