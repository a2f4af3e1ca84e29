// Tests of the elementwise nn.* ops beyond f32 arithmetic: integer
// arithmetic (wrapping, division and modulo by zero), comparisons and
// logical ops giving bool, PRelu, and the unary ops added for ONNX's
// activations and math functions. f32 arithmetic and broadcasting are in
// nn_ops_test.cc.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <functional>
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
using ::testing::HasSubstr;

class ElementwiseDTypesTest : public AnyDTypeOpTest {
 protected:
  // The values of `op` on `args`, which must succeed with dtype T.
  template <typename T>
  std::vector<T> Values(const std::string& op,
                        const std::vector<AnyTensor>& args,
                        const OpAttrs& attrs = OpAttrs()) {
    auto result = Run(op, args, attrs);
    EXPECT_TRUE(result.ok()) << op << ": " << result.status();
    if (!result.ok()) return {};
    return result->values<T>();
  }
};

constexpr int32_t kMin32 = std::numeric_limits<int32_t>::min();
constexpr int32_t kMax32 = std::numeric_limits<int32_t>::max();

TEST_F(ElementwiseDTypesTest, IntegerArithmeticWrapsAndBroadcasts) {
  const AnyTensor a = I32({3}, {kMax32, kMin32, 7});
  const AnyTensor one = I32({}, {1});
  EXPECT_THAT(Values<int32_t>("nn.add", {a, one}),
              ElementsAre(kMin32, kMin32 + 1, 8));
  EXPECT_THAT(Values<int32_t>("nn.sub", {a, one}),
              ElementsAre(kMax32 - 1, kMax32, 6));
  EXPECT_THAT(Values<int32_t>("nn.mul", {a, I32({}, {2})}),
              ElementsAre(-2, 0, 14));
  EXPECT_THAT(Values<int64_t>("nn.max", {I64({2}, {3, -4}), I64({}, {0})}),
              ElementsAre(3, 0));
  EXPECT_THAT(Values<int64_t>("nn.min", {I64({2}, {3, -4}), I64({}, {0})}),
              ElementsAre(0, -4));
}

TEST_F(ElementwiseDTypesTest, IntegerDivisionTruncatesAndNeverTraps) {
  EXPECT_THAT(Values<int32_t>("nn.div", {I32({4}, {7, -7, 7, kMin32}),
                                         I32({4}, {2, 2, 0, -1})}),
              ElementsAre(3, -3, 0, kMin32));
  EXPECT_THAT(Values<int64_t>("nn.pow", {I64({4}, {2, 3, -2, 2}),
                                         I64({4}, {10, 0, 3, -1})}),
              ElementsAre(1024, 1, -8, 0));
}

TEST_F(ElementwiseDTypesTest, ModTakesTheDivisorsOrTheDividendsSign) {
  const AnyTensor a = I64({4}, {5, -5, 5, -5});
  const AnyTensor b = I64({4}, {3, 3, -3, -3});
  // Python's %: the divisor's sign.
  EXPECT_THAT(Values<int64_t>("nn.mod", {a, b}), ElementsAre(2, 1, -1, -2));
  // C's fmod: the dividend's sign.
  EXPECT_THAT(Values<int64_t>("nn.mod", {a, b}, Int("fmod", 1)),
              ElementsAre(2, -2, 2, -2));
  EXPECT_THAT(Values<int64_t>("nn.mod", {I64({1}, {5}), I64({1}, {0})}),
              ElementsAre(0));
  auto floats = Values<float>(
      "nn.mod", {F32({2}, {5.5f, -5.5f}), F32({2}, {2, 2})}, Int("fmod", 1));
  EXPECT_THAT(floats, ElementsAre(1.5f, -1.5f));
}

TEST_F(ElementwiseDTypesTest, BitShiftOnUnsignedIntegers) {
  OpAttrs left;
  left.SetString("direction", "LEFT");
  EXPECT_THAT(Values<uint8_t>("nn.bit_shift",
                              {Make<uint8_t>({4}, {16, 4, 1, 255}),
                               Make<uint8_t>({4}, {1, 2, 7, 8})},
                              left),
              ElementsAre(32, 16, 128, 0));  // By the width or more: 0.
  OpAttrs right;
  right.SetString("direction", "RIGHT");
  EXPECT_THAT(Values<uint64_t>("nn.bit_shift",
                               {Make<uint64_t>({3}, {16, 4, 1ull << 63}),
                                Make<uint64_t>({1}, {2})},
                               right),
              ElementsAre(4, 1, 1ull << 61));
  EXPECT_THAT(Error("nn.bit_shift", {I32({1}, {1}), I32({1}, {1})}, left),
              HasSubstr("this op computes in unsigned integers only"));
}

// ONNX's bitwise ops (opset 18) on signed and unsigned integers of every
// width, broadcasting; floats and bool are refused.
TEST_F(ElementwiseDTypesTest, BitwiseOpsOnIntegers) {
  const AnyTensor a = I32({2, 2}, {12, -1, 0x0f0f, -256});
  const AnyTensor b = I32({2}, {10, 0x00ff});
  EXPECT_THAT(Values<int32_t>("nn.bitwise_and", {a, b}),
              ElementsAre(8, 0x00ff, 10, 0));
  EXPECT_THAT(Values<int32_t>("nn.bitwise_or", {a, b}),
              ElementsAre(14, -1, 0x0f0f, -1));
  EXPECT_THAT(Values<int32_t>("nn.bitwise_xor", {a, b}),
              ElementsAre(6, -256, 0x0f05, -1));
  EXPECT_THAT(Values<int32_t>("nn.bitwise_not", {a}),
              ElementsAre(-13, 0, ~0x0f0f, 255));
  EXPECT_THAT(
      Values<uint8_t>("nn.bitwise_not", {Make<uint8_t>({3}, {0, 1, 255})}),
      ElementsAre(255, 254, 0));
  EXPECT_THAT(
      Values<uint64_t>("nn.bitwise_and", {Make<uint64_t>({1}, {~0ull}),
                                          Make<uint64_t>({1}, {1ull << 63})}),
      ElementsAre(1ull << 63));
  EXPECT_THAT(Values<int8_t>("nn.bitwise_xor", {Make<int8_t>({2}, {-128, 5}),
                                                Make<int8_t>({}, {-1})}),
              ElementsAre(127, -6));
  EXPECT_THAT(Error("nn.bitwise_and", {F32({1}, {1}), F32({1}, {1})}),
              HasSubstr("nn.bitwise_and: argument 0 is f32; this op computes "
                        "in integers only"));
  EXPECT_THAT(Error("nn.bitwise_not", {Make<bool>({1}, {true})}),
              HasSubstr("computes in integers only"));
  EXPECT_THAT(Error("nn.bitwise_or", {I32({1}, {1}), I64({1}, {1})}),
              HasSubstr("arguments are i32 and i64"));
}

TEST_F(ElementwiseDTypesTest, ComparisonsGiveBool) {
  const AnyTensor a = F32({3}, {1, 2, 3});
  const AnyTensor b = F32({}, {2});
  auto less = Run("nn.less", {a, b});
  ASSERT_TRUE(less.ok()) << less.status();
  EXPECT_EQ(less->dtype, DType::kI1);
  EXPECT_THAT(less->values<bool>(), ElementsAre(true, false, false));
  EXPECT_THAT(Values<bool>("nn.less_or_equal", {a, b}),
              ElementsAre(true, true, false));
  EXPECT_THAT(Values<bool>("nn.greater", {a, b}),
              ElementsAre(false, false, true));
  EXPECT_THAT(Values<bool>("nn.greater_or_equal", {a, b}),
              ElementsAre(false, true, true));
  EXPECT_THAT(Values<bool>("nn.equal", {I64({3}, {1, 2, 3}), I64({}, {2})}),
              ElementsAre(false, true, false));
  EXPECT_THAT(Values<bool>("nn.equal",
                           {Bool({2}, {true, false}), Bool({2}, {true, true})}),
              ElementsAre(true, false));
}

TEST_F(ElementwiseDTypesTest, LogicalOpsOnBool) {
  const AnyTensor a = Bool({4}, {false, false, true, true});
  const AnyTensor b = Bool({4}, {false, true, false, true});
  EXPECT_THAT(Values<bool>("nn.and", {a, b}),
              ElementsAre(false, false, false, true));
  EXPECT_THAT(Values<bool>("nn.or", {a, b}),
              ElementsAre(false, true, true, true));
  EXPECT_THAT(Values<bool>("nn.xor", {a, b}),
              ElementsAre(false, true, true, false));
  EXPECT_THAT(Values<bool>("nn.not", {a}),
              ElementsAre(true, true, false, false));
}

TEST_F(ElementwiseDTypesTest, DTypeErrorsNameTheOpAndTheDTypes) {
  EXPECT_THAT(Error("nn.add", {F32({1}, {1}), I64({1}, {1})}),
              HasSubstr("nn.add: arguments are f32 and i64"));
  // Mixed precisions never widen silently.
  const AnyTensor bf16{DType::kBF16, {1, 1}, {'\x80', '\x3f'}};  // 1.0
  EXPECT_THAT(Error("nn.add", {F32({1}, {1}), bf16}),
              HasSubstr("nn.add: arguments are f32 and bf16"));
  EXPECT_THAT(Error("nn.matmul", {F32({1, 1}, {1}), bf16}), HasSubstr("bf16"));
  EXPECT_THAT(Error("nn.and", {F32({1}, {1}), F32({1}, {1})}),
              HasSubstr("this op computes in bool only"));
  EXPECT_THAT(Error("nn.less", {Bool({1}, {true}), Bool({1}, {true})}),
              HasSubstr("nn.less: argument 0 is"));
  EXPECT_THAT(Error("nn.not", {F32({1}, {1})}),
              HasSubstr("this op computes in bool only"));
  EXPECT_THAT(Error("nn.sin", {I32({1}, {1})}),
              HasSubstr("nn.sin: argument 0 is i32"));
  EXPECT_THAT(Error("nn.neg", {Bool({1}, {true})}),
              HasSubstr("computes in integers, f32 and f64"));
}

TEST_F(ElementwiseDTypesTest, PReluBroadcastsTheSlopeToX) {
  // A slope per channel of [1, 2, 2].
  auto y = Values<float>(
      "nn.prelu", {F32({1, 2, 2}, {-1, 2, -3, 4}), F32({2, 1}, {0.5f, 0.25f})});
  EXPECT_THAT(y, ElementsAre(-0.5f, 2, -0.75f, 4));
  // The slope may not make the result larger than x.
  EXPECT_THAT(Error("nn.prelu", {F32({2}, {1, 2}), F32({2, 2}, {1, 1, 1, 1})}),
              HasSubstr("does not broadcast to x"));
}

TEST_F(ElementwiseDTypesTest, IntegerUnaryOps) {
  EXPECT_THAT(Values<int32_t>("nn.neg", {I32({3}, {1, -2, kMin32})}),
              ElementsAre(-1, 2, kMin32));
  EXPECT_THAT(Values<int32_t>("nn.abs", {I32({3}, {1, -2, kMin32})}),
              ElementsAre(1, 2, kMin32));
  EXPECT_THAT(Values<int64_t>("nn.sign", {I64({3}, {-7, 0, 9})}),
              ElementsAre(-1, 0, 1));
}

TEST_F(ElementwiseDTypesTest, FloatNegAndAbsKeepIeeeSignedZeros) {
  auto neg = Values<float>("nn.neg", {F32({2}, {0.0f, -0.0f})});
  ASSERT_EQ(neg.size(), 2u);
  EXPECT_TRUE(std::signbit(neg[0]));
  EXPECT_FALSE(std::signbit(neg[1]));
  auto abs = Values<double>("nn.abs", {Make<double>({1}, {-0.0})});
  ASSERT_EQ(abs.size(), 1u);
  EXPECT_FALSE(std::signbit(abs[0]));
}

TEST_F(ElementwiseDTypesTest, PredicatesOnFloats) {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const AnyTensor x = F32({4}, {inf, -inf, nan, 1});
  EXPECT_THAT(Values<bool>("nn.is_nan", {x}),
              ElementsAre(false, false, true, false));
  EXPECT_THAT(Values<bool>("nn.is_inf", {x}),
              ElementsAre(true, true, false, false));
  EXPECT_THAT(Values<bool>("nn.is_inf", {x}, Int("detect_negative", 0)),
              ElementsAre(true, false, false, false));
  EXPECT_THAT(Values<bool>("nn.is_inf", {x}, Int("detect_positive", 0)),
              ElementsAre(false, true, false, false));
}

TEST_F(ElementwiseDTypesTest, FloatUnaryOpsMatchTheirDefinitions) {
  const std::vector<float> xs = {-2.5f, -0.5f, 0.0f, 0.5f, 1.5f, 2.5f};
  AnyTensor x{DType::kF32, {static_cast<int64_t>(xs.size())}, {}};
  for (float v : xs) {
    const char* p = reinterpret_cast<const char*>(&v);
    x.bytes.insert(x.bytes.end(), p, p + sizeof(v));
  }
  auto expect = [&](const std::string& op, std::function<double(double)> f,
                    const OpAttrs& attrs = OpAttrs()) {
    std::vector<float> actual = Values<float>(op, {x}, attrs);
    ASSERT_EQ(actual.size(), xs.size()) << op;
    for (size_t i = 0; i < xs.size(); ++i) {
      EXPECT_NEAR(actual[i], f(xs[i]),
                  1e-5 * std::max(1.0, std::fabs(f(xs[i]))))
          << op << " of " << xs[i];
    }
  };
  expect("nn.floor", [](double v) { return std::floor(v); });
  expect("nn.ceil", [](double v) { return std::ceil(v); });
  // Halves to even: -2.5 -> -2, 0.5 -> 0, 1.5 -> 2, 2.5 -> 2.
  expect("nn.round", [](double v) { return std::nearbyint(v); });
  expect("nn.sin", [](double v) { return std::sin(v); });
  expect("nn.cos", [](double v) { return std::cos(v); });
  expect("nn.atan", [](double v) { return std::atan(v); });
  expect("nn.sinh", [](double v) { return std::sinh(v); });
  expect("nn.cosh", [](double v) { return std::cosh(v); });
  expect("nn.asinh", [](double v) { return std::asinh(v); });
  expect("nn.softplus", [](double v) { return std::log(1 + std::exp(v)); });
  expect("nn.softsign", [](double v) { return v / (1 + std::fabs(v)); });
  expect("nn.mish",
         [](double v) { return v * std::tanh(std::log(1 + std::exp(v))); });
  expect("nn.sign", [](double v) { return (v > 0) - (v < 0); });
  OpAttrs alpha;
  alpha.Set("alpha", 0.5f);
  expect(
      "nn.elu", [](double v) { return v >= 0 ? v : 0.5 * std::expm1(v); },
      alpha);
  expect(
      "nn.celu",
      [](double v) {
        return std::max(0.0, v) + std::min(0.0, 0.5 * std::expm1(v / 0.5));
      },
      alpha);
  expect(
      "nn.thresholded_relu", [](double v) { return v > 0.5 ? v : 0; }, alpha);
  OpAttrs shrink;
  shrink.Set("lambd", 0.5f);
  shrink.Set("bias", 0.25f);
  expect(
      "nn.shrink",
      [](double v) { return v < -0.5 ? v + 0.25 : (v > 0.5 ? v - 0.25 : 0); },
      shrink);
  expect("nn.selu", [](double v) {
    return 1.05070102 * (v > 0 ? v : 1.67326319 * std::expm1(v));
  });
  // Softplus of a large x is x, not infinity.
  EXPECT_THAT(Values<float>("nn.softplus", {F32({1}, {1000})}),
              ElementsAre(1000));
}

}  // namespace
}  // namespace asyncrt::nn
