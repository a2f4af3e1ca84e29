// nn.einsum against numpy's einsum: explicit and implicit outputs,
// diagonals and traces, the ellipsis anywhere in the output and
// broadcast, outer products, f64, and errors.
#include <string>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class EinsumTest : public AnyDTypeOpTest {
 protected:
  static OpAttrs Equation(const std::string& equation) {
    OpAttrs attrs;
    attrs.SetString("equation", equation);
    return attrs;
  }
};

TEST_F(EinsumTest, MatchesNumpy) {
  auto a = IotaF32({2, 3});
  auto b = IotaF32({3, 4});
  for (const char* equation : {"ij,jk->ik", "ij, jk", "ij,jk"}) {
    auto y = Run("nn.einsum", {a, b}, Equation(equation));
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(y->shape, ElementsAre(2, 4));
    EXPECT_THAT(y->values<float>(),
                ElementsAre(20, 23, 26, 29, 56, 68, 80, 92));
  }
  auto diagonal = Run("nn.einsum", {IotaF32({2, 3, 3})}, Equation("...ii->...i"));
  ASSERT_TRUE(diagonal.ok()) << diagonal.status();
  EXPECT_THAT(diagonal->values<float>(), ElementsAre(0, 4, 8, 9, 13, 17));
  auto trace = Run("nn.einsum", {IotaF32({3, 3})}, Equation("ii"));
  ASSERT_TRUE(trace.ok()) << trace.status();
  EXPECT_THAT(trace->shape, ElementsAre());
  EXPECT_THAT(trace->values<float>(), ElementsAre(12));
  auto middle = Run("nn.einsum", {IotaF32({2, 3, 4})}, Equation("i...k->k...i"));
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_THAT(middle->shape, ElementsAre(4, 3, 2));
  EXPECT_EQ(middle->values<float>()[1], 12);
  EXPECT_EQ(middle->values<float>()[2], 4);
  auto outer = Run("nn.einsum", {IotaF32({3}), IotaF32({4})}, Equation("i,j->ij"));
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_THAT(outer->values<float>(),
              ElementsAre(0, 0, 0, 0, 0, 1, 2, 3, 0, 2, 4, 6));
  auto broadcast =
      Run("nn.einsum", {IotaF32({2, 3}), IotaF32({3})}, Equation("...j,j->..."));
  ASSERT_TRUE(broadcast.ok()) << broadcast.status();
  EXPECT_THAT(broadcast->values<float>(), ElementsAre(5, 14));
  auto f64 = Run("nn.einsum",
                 {Make<double>({2}, {1.5, 2}), Make<double>({2}, {4, 0.25})},
                 Equation("i,i"));
  ASSERT_TRUE(f64.ok()) << f64.status();
  EXPECT_THAT(f64->values<double>(), ElementsAre(6.5));
}

TEST_F(EinsumTest, Errors) {
  EXPECT_THAT(Error("nn.einsum", {IotaF32({2, 3}), IotaF32({4, 5})},
                    Equation("ij,jk->ik")),
              HasSubstr("'j' is 3 and 4"));
  EXPECT_THAT(Error("nn.einsum", {IotaF32({2, 3})}, Equation("ijk->i")),
              HasSubstr("operand 0 has rank 2 for its term of 3 letters"));
  EXPECT_THAT(Error("nn.einsum", {IotaF32({2, 3})}, Equation("ij->iz")),
              HasSubstr("output letter 'z' is in no operand"));
  EXPECT_THAT(Error("nn.einsum", {IotaF32({2, 3})}, Equation("ij,jk->ik")),
              HasSubstr("the equation has 2 operands; the op has 1"));
  EXPECT_THAT(Error("nn.einsum", {IotaF32({2, 3})}, Equation("i1->i")),
              HasSubstr("'1' is not a letter or ..."));
  EXPECT_THAT(Error("nn.einsum", {IotaF32({2}), I64({2}, {1, 2})},
                    Equation("i,i")),
              HasSubstr("must all be f32 or all f64"));
}

}  // namespace
}  // namespace asyncrt::nn
