// nn.quantize_linear, nn.dequantize_linear and nn.dynamic_quantize_linear:
// ties to even, saturation, i8 and ui8, scales per tensor and per channel,
// i32 input, the dynamic range holding 0, and errors.
#include <cstdint>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatEq;
using ::testing::HasSubstr;

class QuantizeOpsTest : public AnyDTypeOpTest {};

TEST_F(QuantizeOpsTest, QuantizeRoundsHalfToEvenAndSaturates) {
  // x / 2 = 0.5, 1.5, 2.5, -0.5 round to 0, 2, 2, -0; + 10; 600 saturates.
  auto q = Run("nn.quantize_linear",
               {F32({6}, {1, 3, 5, -1, 600, -600}), F32({}, {2}),
                Make<uint8_t>({}, {10})});
  ASSERT_TRUE(q.ok()) << q.status();
  EXPECT_EQ(q->dtype, DType::kUI8);
  EXPECT_THAT(q->values<uint8_t>(), ElementsAre(10, 12, 12, 10, 255, 0));
  // i8 zero point: the result is i8, saturating at -128 and 127.
  auto s = Run("nn.quantize_linear",
               {F32({3}, {-1000, 0.49f, 1000}), F32({}, {1}),
                Make<int8_t>({}, {-1})});
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_THAT(s->values<int8_t>(), ElementsAre(-128, -1, 127));
  // Without a zero point: ui8 around 0.
  auto plain = Run("nn.quantize_linear", {F32({2}, {3, -3}), F32({}, {1})});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_THAT(plain->values<uint8_t>(), ElementsAre(3, 0));
}

TEST_F(QuantizeOpsTest, ScalesPerChannel) {
  // 2 x 3: axis 1 scales the columns, axis 0 the rows.
  auto columns = Run("nn.quantize_linear",
                     {F32({2, 3}, {2, 4, 6, 8, 10, 12}), F32({3}, {1, 2, 3}),
                      Make<uint8_t>({3}, {0, 1, 2})});
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_THAT(columns->values<uint8_t>(), ElementsAre(2, 3, 4, 8, 6, 6));
  auto rows = Run("nn.dequantize_linear",
                  {Make<uint8_t>({2, 3}, {1, 2, 3, 4, 5, 6}),
                   F32({2}, {0.5f, 2}), Make<uint8_t>({2}, {1, 4})},
                  Int("axis", 0));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->values<float>(), ElementsAre(0, 0.5f, 1, 0, 2, 4));
}

TEST_F(QuantizeOpsTest, DequantizeInt8AndInt32) {
  auto i8 = Run("nn.dequantize_linear",
                {Make<int8_t>({3}, {-128, 0, 127}), F32({}, {0.25f}),
                 Make<int8_t>({}, {-1})});
  ASSERT_TRUE(i8.ok()) << i8.status();
  EXPECT_THAT(i8->values<float>(), ElementsAre(-31.75f, 0.25f, 32));
  auto i32 = Run("nn.dequantize_linear",
                 {I32({2}, {1 << 30, -7}), F32({}, {2})});
  ASSERT_TRUE(i32.ok()) << i32.status();
  EXPECT_THAT(i32->values<float>(),
              ElementsAre(FloatEq(2147483648.f), FloatEq(-14)));
}

TEST_F(QuantizeOpsTest, DynamicQuantizationCoversZero) {
  // [0, 2.55] (0 added): scale 0.01, zero point 0.
  auto result = RunN("nn.dynamic_quantize_linear",
                     {F32({3}, {0.5f, 1, 2.55f})}, OpAttrs(), 3);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT((*result)[0].values<uint8_t>(), ElementsAre(50, 100, 255));
  EXPECT_THAT((*result)[1].values<float>(), ElementsAre(FloatEq(0.01f)));
  EXPECT_THAT((*result)[2].values<uint8_t>(), ElementsAre(0));
  // [-1, 1]: in f32, 1 / (2 / 255) is 127.49999, so the zero point is 127
  // and 1 quantizes to 254 (as ONNX's reference computes).
  auto symmetric = RunN("nn.dynamic_quantize_linear",
                        {F32({2}, {-1, 1})}, OpAttrs(), 3);
  ASSERT_TRUE(symmetric.ok()) << symmetric.status();
  EXPECT_THAT((*symmetric)[2].values<uint8_t>(), ElementsAre(127));
  EXPECT_THAT((*symmetric)[0].values<uint8_t>(), ElementsAre(0, 254));
  // All zeros: scale 1/255 (the reference's), everything 0.
  auto zeros =
      RunN("nn.dynamic_quantize_linear", {F32({2}, {0, 0})}, OpAttrs(), 3);
  ASSERT_TRUE(zeros.ok()) << zeros.status();
  EXPECT_THAT((*zeros)[0].values<uint8_t>(), ElementsAre(0, 0));
  EXPECT_THAT((*zeros)[1].values<float>(), ElementsAre(FloatEq(1.f / 255)));
}

TEST_F(QuantizeOpsTest, Errors) {
  EXPECT_THAT(Error("nn.quantize_linear",
                    {F32({2, 3}, {1, 2, 3, 4, 5, 6}), F32({2}, {1, 1})}),
              HasSubstr("2 scales for dimension 1 of [2, 3]"));
  EXPECT_THAT(Error("nn.quantize_linear",
                    {F32({2}, {1, 2}), F32({}, {1}), I32({}, {0})}),
              HasSubstr("the zero point is i32; it must be u8 or i8"));
  EXPECT_THAT(Error("nn.quantize_linear", {F32({2}, {1, 2}), I32({}, {1})}),
              HasSubstr("the scale is i32; it must be f32"));
  EXPECT_THAT(Error("nn.dequantize_linear",
                    {Make<uint8_t>({1}, {1}), F32({}, {1}),
                     Make<int8_t>({}, {0})}),
              HasSubstr("the zero point is i8; it must be x's dtype, u8"));
  EXPECT_THAT(Error("nn.dequantize_linear", {F32({1}, {1}), F32({}, {1})}),
              HasSubstr("x is f32; it must be u8, i8 or i32"));
  EXPECT_THAT(Error("nn.dynamic_quantize_linear", {I32({1}, {1})}, OpAttrs(),
                    3),
              HasSubstr("x is i32; it must be f32"));
}

}  // namespace
}  // namespace asyncrt::nn
