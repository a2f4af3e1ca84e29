// nn.gather_nd and nn.scatter_nd on ONNX's examples: tuples addressing
// elements and slices, batch_dims, negative indices, reductions, errors.
#include <cstdint>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class NdIndexOpsTest : public AnyDTypeOpTest {};

TEST_F(NdIndexOpsTest, GatherNdElementsSlicesAndBatches) {
  // Tuples of 2 coordinates address elements of a 2 x 2 matrix.
  auto elements = Run("nn.gather_nd",
                      {I32({2, 2}, {0, 1, 2, 3}), I64({2, 2}, {0, 0, 1, -1})});
  ASSERT_TRUE(elements.ok()) << elements.status();
  EXPECT_THAT(elements->shape, ElementsAre(2));
  EXPECT_THAT(elements->values<int32_t>(), ElementsAre(0, 3));
  // Tuples of 1 coordinate address rows.
  auto rows = Run("nn.gather_nd", {IotaF32({2, 2, 2}), I64({2, 1, 1}, {1, 0})});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->shape, ElementsAre(2, 1, 2, 2));
  EXPECT_THAT(rows->values<float>(), ElementsAre(4, 5, 6, 7, 0, 1, 2, 3));
  // batch_dims = 1: each batch gathers from its own matrix.
  auto batched = Run("nn.gather_nd", {IotaF32({2, 2, 2}), I64({2, 1}, {1, 0})},
                     Int("batch_dims", 1));
  ASSERT_TRUE(batched.ok()) << batched.status();
  EXPECT_THAT(batched->shape, ElementsAre(2, 2));
  EXPECT_THAT(batched->values<float>(), ElementsAre(2, 3, 4, 5));
}

TEST_F(NdIndexOpsTest, ScatterNdReplacesOrCombinesSlices) {
  // ONNX's example: rows 0 and 2 of a 4-vector replaced.
  auto replaced =
      Run("nn.scatter_nd",
          {F32({4}, {1, 2, 3, 4}), I64({2, 1}, {0, 2}), F32({2}, {10, 30})});
  ASSERT_TRUE(replaced.ok()) << replaced.status();
  EXPECT_THAT(replaced->values<float>(), ElementsAre(10, 2, 30, 4));
  // Duplicates multiply with reduction = mul; slices of a matrix.
  OpAttrs mul;
  mul.SetString("reduction", "mul");
  auto product = Run("nn.scatter_nd",
                     {I64({2, 2}, {1, 2, 3, 4}), I64({2, 1}, {1, 1}),
                      I64({2, 2}, {2, 3, 5, 7})},
                     mul);
  ASSERT_TRUE(product.ok()) << product.status();
  EXPECT_THAT(product->values<int64_t>(), ElementsAre(1, 2, 30, 84));
}

TEST_F(NdIndexOpsTest, Errors) {
  EXPECT_THAT(Error("nn.gather_nd", {IotaF32({2, 2}), I64({1, 2}, {0, 2})}),
              HasSubstr("index 2 is out of range for a dimension of size 2"));
  EXPECT_THAT(Error("nn.gather_nd", {IotaF32({2, 2}), I64({1, 3}, {0, 0, 0})}),
              HasSubstr("index tuples of 3 coordinates"));
  EXPECT_THAT(Error("nn.gather_nd", {IotaF32({2, 2}), F32({1, 1}, {0})}),
              HasSubstr("must be i32 or i64"));
  EXPECT_THAT(Error("nn.scatter_nd",
                    {IotaF32({4}), I64({2, 1}, {0, 1}), F32({3}, {0, 0, 0})}),
              HasSubstr("updates [3] of f32 are not [2] of f32"));
  OpAttrs bad;
  bad.SetString("reduction", "mean");
  EXPECT_THAT(Error("nn.scatter_nd",
                    {IotaF32({4}), I64({1, 1}, {0}), F32({1}, {0})}, bad),
              HasSubstr("reduction 'mean' is not none, add, mul, max or min"));
}

}  // namespace
}  // namespace asyncrt::nn
