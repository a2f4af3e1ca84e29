// nn.attention on the CPU: the same values as the ops it replaces (head
// reshapes and transposes, the two matrix products, the softmax), grouped
// query heads as the key and value heads repeated, and errors.
#include <random>
#include <string>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

class AttentionTest : public EagerOpTest {
 protected:
  Tensor32 Random(std::vector<int64_t> shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::uniform_real_distribution<float> dist(-1.f, 1.f);
    Tensor32 t{shape, std::vector<float>(n)};
    for (float& v : t.values) v = dist(rng_);
    return t;
  }

  // `x` [B, S, H x D] as heads [B, H, S, D], or [B, H, D, S] if
  // `transposed`.
  Tensor32 Heads(const Tensor32& x, int64_t heads, bool transposed) {
    OpAttrs reshape;
    reshape.SetArray<int64_t>(
        "shape", {x.shape[0], x.shape[1], heads, x.shape[2] / heads});
    OpAttrs transpose;
    transpose.SetArray<int64_t>("perm", transposed
                                            ? std::vector<int64_t>{0, 2, 3, 1}
                                            : std::vector<int64_t>{0, 2, 1, 3});
    return *Run("nn.transpose", {*Run("nn.reshape", {x}, reshape)}, transpose);
  }

  // What -nn-fuse-attention replaces: the unfused ops.
  Tensor32 Unfused(const Tensor32& q, const Tensor32& k, const Tensor32& v,
                   int64_t heads, float scale) {
    Tensor32 scores =
        *Run("nn.matmul", {Heads(q, heads, false), Heads(k, heads, true)});
    for (float& s : scores.values) s *= scale;
    OpAttrs last;
    last.Set<int64_t>("axis", -1);
    Tensor32 context = *Run("nn.matmul", {*Run("nn.softmax", {scores}, last),
                                          Heads(v, heads, false)});
    OpAttrs back;
    back.SetArray<int64_t>("perm", {0, 2, 1, 3});
    OpAttrs merge;
    merge.SetArray<int64_t>("shape", {q.shape[0], q.shape[1], v.shape[2]});
    return *Run("nn.reshape", {*Run("nn.transpose", {context}, back)}, merge);
  }

  std::mt19937 rng_{7};
};

TEST_F(AttentionTest, MatchesTheUnfusedOps) {
  // Batch 2, 5 queries over 7 keys, 3 heads of 4 (values of 4 too).
  const Tensor32 q = Random({2, 5, 12}), k = Random({2, 7, 12}),
                 v = Random({2, 7, 12});
  OpAttrs attrs;
  attrs.Set<int64_t>("q_num_heads", 3);
  auto fused = Run("nn.attention", {q, k, v}, attrs);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(fused->shape, (std::vector<int64_t>{2, 5, 12}));
  // The default scale is 1 / sqrt(head size).
  EXPECT_THAT(fused->values,
              Pointwise(FloatNear(1e-5f), Unfused(q, k, v, 3, 0.5f).values));
  attrs.Set("scale", 0.125f);
  auto scaled = Run("nn.attention", {q, k, v}, attrs);
  ASSERT_TRUE(scaled.ok()) << scaled.status();
  EXPECT_THAT(scaled->values,
              Pointwise(FloatNear(1e-5f), Unfused(q, k, v, 3, 0.125f).values));
}

TEST_F(AttentionTest, GroupedQueryHeadsShareKeysAndValues) {
  // 4 query heads of 2 over 2 key/value heads (values of 3).
  const Tensor32 q = Random({1, 3, 8}), k = Random({1, 6, 4}),
                 v = Random({1, 6, 6});
  OpAttrs grouped;
  grouped.Set<int64_t>("q_num_heads", 4);
  grouped.Set<int64_t>("kv_num_heads", 2);
  auto fused = Run("nn.attention", {q, k, v}, grouped);
  ASSERT_TRUE(fused.ok()) << fused.status();
  EXPECT_EQ(fused->shape, (std::vector<int64_t>{1, 3, 12}));
  // Each key and value head repeated for the two query heads of its group.
  auto repeat = [](const Tensor32& x, int64_t head_size) {
    Tensor32 out{{x.shape[0], x.shape[1], x.shape[2] * 2}, {}};
    for (int64_t row = 0; row < x.shape[0] * x.shape[1]; ++row) {
      for (int64_t h = 0; h < x.shape[2] / head_size; ++h) {
        for (int copy = 0; copy < 2; ++copy) {
          for (int64_t d = 0; d < head_size; ++d) {
            out.values.push_back(
                x.values[row * x.shape[2] + h * head_size + d]);
          }
        }
      }
    }
    return out;
  };
  OpAttrs plain;
  plain.Set<int64_t>("q_num_heads", 4);
  auto repeated = Run("nn.attention", {q, repeat(k, 2), repeat(v, 3)}, plain);
  ASSERT_TRUE(repeated.ok()) << repeated.status();
  EXPECT_THAT(fused->values, Pointwise(FloatNear(1e-6f), repeated->values));
}

// Q, K and V side by side in one operand (a fused projection's result) give
// what they give apart; the widths must add up.
TEST_F(AttentionTest, PackedQueriesKeysAndValuesMatchSeparateOnes) {
  // 4 query heads of 2 over 2 key/value heads (values of 3): widths 8, 4, 6.
  const Tensor32 q = Random({2, 5, 8}), k = Random({2, 5, 4}),
                 v = Random({2, 5, 6});
  Tensor32 packed{{2, 5, 18}, {}};
  for (int64_t row = 0; row < 10; ++row) {
    for (const Tensor32* part : {&q, &k, &v}) {
      const int64_t width = part->shape[2];
      packed.values.insert(packed.values.end(),
                           part->values.begin() + row * width,
                           part->values.begin() + (row + 1) * width);
    }
  }
  OpAttrs separate;
  separate.Set<int64_t>("q_num_heads", 4);
  separate.Set<int64_t>("kv_num_heads", 2);
  OpAttrs together = separate;
  together.SetArray<int64_t>("qkv_widths", {8, 4, 6});
  auto expected = Run("nn.attention", {q, k, v}, separate);
  auto got = Run("nn.attention", {packed}, together);
  ASSERT_TRUE(expected.ok()) << expected.status();
  ASSERT_TRUE(got.ok()) << got.status();
  EXPECT_EQ(got->shape, (std::vector<int64_t>{2, 5, 12}));
  EXPECT_THAT(got->values, Pointwise(FloatNear(0.f), expected->values));

  OpAttrs wrong = separate;
  wrong.SetArray<int64_t>("qkv_widths", {8, 4, 5});
  EXPECT_THAT(Run("nn.attention", {packed}, wrong).status().message(),
              HasSubstr("add up to the operand's hidden size, 18"));
  EXPECT_THAT(Run("nn.attention", {packed}, separate).status().message(),
              HasSubstr("or one operand holding them side by side"));
  EXPECT_THAT(Run("nn.attention", {q, k, v}, together).status().message(),
              HasSubstr("takes Q, K and V"));
}

TEST_F(AttentionTest, RejectsWhatItDoesNotCompute) {
  const Tensor32 q = Random({1, 2, 8}), k = Random({1, 3, 8}),
                 v = Random({1, 3, 8});
  OpAttrs heads;
  heads.Set<int64_t>("q_num_heads", 3);
  EXPECT_THAT(Run("nn.attention", {q, k, v}, heads).status().message(),
              HasSubstr("q_num_heads 3 and kv_num_heads 3 do not divide"));
  OpAttrs two;
  two.Set<int64_t>("q_num_heads", 2);
  EXPECT_THAT(Run("nn.attention", {q, k}, two).status().message(),
              HasSubstr("takes Q, K and V"));
  EXPECT_THAT(
      Run("nn.attention", {q, Random({1, 3, 6}), v}, two).status().message(),
      HasSubstr("do not match Q"));
  EXPECT_THAT(
      Run("nn.attention", {Random({2, 8}), k, v}, two).status().message(),
      HasSubstr("batch x sequence x hidden"));
  OpAttrs causal = two;
  causal.Set<int64_t>("is_causal", 1);
  EXPECT_THAT(Run("nn.attention", {q, k, v}, causal).status().message(),
              HasSubstr("is_causal and softcap are not supported yet"));
}

}  // namespace
}  // namespace asyncrt::nn
