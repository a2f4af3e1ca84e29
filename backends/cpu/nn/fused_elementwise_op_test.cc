// nn.fused_elementwise: every opcode, chains longer than a block, broadcast
// inputs, bitwise against the separate ops; malformed programs.
#include <cstring>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "asyncrt/backends/fused_elementwise.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/core_runtime/op_site_cache.h"
#include "asyncrt/core_runtime/shape_memo.h"
#include "backends/cpu/nn/fused_elementwise_kernel.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::HasSubstr;

class FusedElementwiseTest : public EagerOpTest {
 protected:
  // `ops` with `operands` (two per op) fused, on `inputs`.
  absl::StatusOr<Tensor32> Fused(const std::vector<Tensor32>& inputs,
                                 std::vector<int64_t> ops,
                                 std::vector<int64_t> operands) {
    OpAttrs attrs;
    attrs.SetArray<int64_t>("ops", ops);
    attrs.SetArray<int64_t>("operands", operands);
    return Run("nn.fused_elementwise", inputs, attrs);
  }
};

Tensor32 Random(std::vector<int64_t> shape, uint32_t seed, float low = -2,
                float high = 2) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(low, high);
  Tensor32 t{shape, {}};
  for (int64_t i = 0; i < n; ++i) t.values.push_back(uniform(random));
  return t;
}

void ExpectBitwiseEqual(const Tensor32& fused, const Tensor32& separate) {
  ASSERT_EQ(fused.shape, separate.shape);
  ASSERT_EQ(fused.values.size(), separate.values.size());
  for (size_t i = 0; i < fused.values.size(); ++i) {
    ASSERT_EQ(std::memcmp(&fused.values[i], &separate.values[i], 4), 0)
        << i << ": " << fused.values[i] << " vs " << separate.values[i];
  }
}

// Each opcode alone equals its nn op (positive inputs for log and sqrt).
TEST_F(FusedElementwiseTest, EveryOpcodeIsItsOp) {
  const Tensor32 a = Random({3, 700}, 1, 0.1f, 3);
  const Tensor32 b = Random({3, 700}, 2, 0.1f, 3);
  for (const FusedElementwiseOpcode& op : kFusedElementwiseOps) {
    SCOPED_TRACE(std::string(op.op_name));
    std::vector<Tensor32> args = {a};
    if (op.arity == 2) args.push_back(b);
    absl::StatusOr<Tensor32> separate = Run(std::string(op.op_name), args);
    ASSERT_TRUE(separate.ok()) << separate.status();
    absl::StatusOr<Tensor32> fused =
        Fused(args, {op.opcode}, {0, op.arity == 2 ? 1 : -1});
    ASSERT_TRUE(fused.ok()) << fused.status();
    ExpectBitwiseEqual(*fused, *separate);
  }
}

// relu(a * b - a) + tanh(b), over 3 blocks and a partial one, with one
// input a single element broadcast.
TEST_F(FusedElementwiseTest, ChainsAndBroadcastEqualTheSeparateOps) {
  const Tensor32 a = Random({1600}, 3);
  const Tensor32 b = Random({1600}, 4);
  const Tensor32 s = {{1}, {0.25f}};
  // Values: 0 a, 1 b, 2 s; ops: 3 = a*b, 4 = 3-a, 5 = relu 4, 6 = tanh b,
  // 7 = 5+6, 8 = 7*s.
  absl::StatusOr<Tensor32> fused = Fused(
      {a, b, s}, {2, 1, 10, 16, 0, 2}, {0, 1, 3, 0, 4, -1, 1, -1, 5, 6, 7, 2});
  ASSERT_TRUE(fused.ok()) << fused.status();
  Tensor32 t = *Run("nn.mul", {a, b});
  t = *Run("nn.sub", {t, a});
  t = *Run("nn.relu", {t});
  Tensor32 u = *Run("nn.tanh", {b});
  t = *Run("nn.add", {t, u});
  t = *Run("nn.mul", {t, s});
  ExpectBitwiseEqual(*fused, t);
}

// Each kernel this CPU runs (the register machines and the block loop
// every CPU has) computes the same bits, for every opcode and for a graph
// whose values are read after the next op (slots) and by both operands,
// over whole chunks and a partial one, with a broadcast input.
TEST(FusedElementwiseKernelTest, EveryVariantComputesTheSameBits) {
  constexpr int64_t kElements = 1000;  // Whole chunks and a part.
  std::mt19937 random(7);
  std::uniform_real_distribution<float> uniform(0.1f, 3.0f);
  std::vector<float> a(kElements), b(kElements);
  for (float& value : a) value = uniform(random);
  for (float& value : b) value = -uniform(random);
  std::vector<float> splat(fused::kSlotFloats, 0.5f);
  const float* inputs[] = {a.data(), b.data(), splat.data()};
  const bool broadcast[] = {false, false, true};

  std::vector<std::vector<fused::Instruction>> programs;
  for (const FusedElementwiseOpcode& op : kFusedElementwiseOps) {
    // On an input, then on the accumulator and a slot.
    const int32_t second = op.arity == 2 ? 1 : -1;
    programs.push_back({{2, {0, 2}},
                        {op.opcode, {3, op.arity == 2 ? 0 : -1}},
                        {op.opcode, {0, second}},
                        {0, {4, 5}}});
  }
  // Values: 0 a, 1 b, 2 splat; 3 = a*b, 4 = 3-a, 5 = relu 4, 6 = tanh b,
  // 7 = 5+6, 8 = 7*splat, 9 = 3*3 (a slot read twice), 10 = 8+9.
  programs.push_back({{2, {0, 1}},
                      {1, {3, 0}},
                      {10, {4, -1}},
                      {16, {1, -1}},
                      {0, {5, 6}},
                      {2, {7, 2}},
                      {2, {3, 3}},
                      {0, {8, 9}}});
  absl::Span<const fused::KernelVariant> variants = fused::SupportedKernels();
  ASSERT_EQ(std::string(variants.front().isa), "blocks");
  for (const auto& program : programs) {
    const fused::Plan plan = fused::MakePlan(program, broadcast);
    std::vector<float> slots(std::max<int64_t>(1, plan.num_slots) *
                             fused::kSlotFloats);
    std::vector<float> expected(kElements);
    variants.front().run(plan.steps, inputs, 0, kElements, slots.data(),
                         expected.data());
    for (const fused::KernelVariant& variant : variants) {
      SCOPED_TRACE(std::string(variant.isa) + " opcode " +
                   std::to_string(program[1].opcode));
      std::vector<float> out(kElements, -1);
      variant.run(plan.steps, inputs, 0, kElements, slots.data(), out.data());
      ExpectBitwiseEqual(Tensor32{{kElements}, out},
                         Tensor32{{kElements}, expected});
    }
  }
}

// At a program's op site the plan is kept for the next calls with the same
// broadcast inputs; calls with others, and a site whose cache another op
// took first, still compute their own.
TEST_F(FusedElementwiseTest, SitesKeepTheirPlan) {
  absl::StatusOr<CoreRuntimeOp> op = cpu_->MakeOp("nn.fused_elementwise");
  ASSERT_TRUE(op.ok()) << op.status();
  OpAttrs attrs;
  attrs.SetArray<int64_t>("ops", {2, 0});  // (a * b) + a.
  attrs.SetArray<int64_t>("operands", {0, 1, 2, 0});
  const OpAttrsRef frozen = attrs.Freeze();
  const Tensor32 a = Random({700}, 7);
  const Tensor32 b = Random({700}, 8);
  const Tensor32 s = {{1}, {0.5f}};
  auto run = [&](OpSiteCache& site, const Tensor32& x, const Tensor32& y) {
    ShapeMemo memo;
    TensorHandle arguments[] = {*Handle(x), *Handle(y)};
    TensorHandle result;
    EXPECT_TRUE(op->RunConcrete(*exec_ctx_, {&arguments[0], &arguments[1]},
                                /*consumed_arguments=*/0, frozen, result, memo,
                                /*arena=*/nullptr, &site));
    return *Read(result);
  };
  auto expected = [&](const Tensor32& y) {
    Tensor32 t = *Run("nn.mul", {a, y});
    return *Run("nn.add", {t, a});
  };
  OpSiteCache site;
  ExpectBitwiseEqual(run(site, a, b), expected(b));
  EXPECT_FALSE(site.empty());
  ExpectBitwiseEqual(run(site, a, s), expected(s));  // Another plan.
  ExpectBitwiseEqual(run(site, a, b), expected(b));  // The kept one.
  OpSiteCache taken;
  static const char kOtherTag = 0;
  taken.Set<int>(&kOtherTag, std::make_shared<const int>(1));
  ExpectBitwiseEqual(run(taken, a, b), expected(b));
  // Calls racing to keep their plan at a fresh site: the one that loses
  // runs its own (under ThreadSanitizer in `make test`).
  const Tensor32 want = expected(b);
  for (int round = 0; round < 200; ++round) {
    OpSiteCache fresh;
    std::vector<Tensor32> got(2);
    std::vector<std::thread> threads;
    for (int t = 0; t < 2; ++t) {
      threads.emplace_back([&, t] { got[t] = run(fresh, a, b); });
    }
    for (std::thread& thread : threads) thread.join();
    for (const Tensor32& result : got) ExpectBitwiseEqual(result, want);
  }
}

TEST_F(FusedElementwiseTest, MalformedProgramsAreErrors) {
  const Tensor32 a = Random({4}, 5);
  EXPECT_THAT(Fused({a}, {99}, {0, -1}).status().message(),
              HasSubstr("unknown opcode 99"));
  EXPECT_THAT(Fused({a}, {0}, {0, 1}).status().message(),
              HasSubstr("bad operand 1"));  // Not yet defined.
  EXPECT_THAT(Fused({a}, {10}, {0, 0}).status().message(),
              HasSubstr("bad operand"));  // A unary op with two.
  EXPECT_THAT(Fused({a}, {10, 10}, {0, -1}).status().message(),
              HasSubstr("two per op"));
  EXPECT_THAT(Fused({a, Random({3}, 6)}, {0}, {0, 1}).status().message(),
              HasSubstr("or one element"));
}

}  // namespace
}  // namespace asyncrt::nn
