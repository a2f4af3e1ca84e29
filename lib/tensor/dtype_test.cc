// Tests of DType names, sizes and dispatch, Half/BFloat16 conversions and
// element printing.
#include "asyncrt/tensor/dtype.h"

#include <bit>
#include <cmath>
#include <complex>
#include <limits>
#include <string>

#include "gtest/gtest.h"

namespace asyncrt {
namespace {

//===--- Half -------------------------------------------------------------===//

TEST(HalfTest, ExactValuesRoundTrip) {
  EXPECT_EQ(Half::FromFloat(1.0f).bits, 0x3C00);
  EXPECT_EQ(Half::FromFloat(-1.0f).bits, 0xBC00);
  EXPECT_EQ(Half::FromFloat(0.0f).bits, 0x0000);
  EXPECT_EQ(Half::FromFloat(-0.0f).bits, 0x8000);
  EXPECT_EQ(Half::FromFloat(2.5f).bits, 0x4100);
  EXPECT_EQ(Half::FromFloat(65504.0f).bits, 0x7BFF);  // largest finite
  for (float f : {1.0f, -1.0f, 2.5f, 0.5f, 1024.0f, 65504.0f, -3.140625f,
                  0x1p-14f /*smallest normal*/, 0x1p-24f /*smallest subnormal*/,
                  0x3p-24f}) {
    EXPECT_EQ(Half::FromFloat(f).ToFloat(), f) << f;
  }
}

TEST(HalfTest, AllBitPatternsRoundTrip) {
  for (uint32_t bits = 0; bits <= 0xFFFF; ++bits) {
    Half h{static_cast<uint16_t>(bits)};
    float f = h.ToFloat();
    if (std::isnan(f)) {
      EXPECT_TRUE(std::isnan(Half::FromFloat(f).ToFloat())) << bits;
    } else {
      EXPECT_EQ(Half::FromFloat(f).bits, bits) << bits;
    }
  }
}

TEST(HalfTest, RoundsToNearestEven) {
  // 1 + 2^-11 is halfway between 1 and 1 + 2^-10: ties go to the even 1.
  EXPECT_EQ(Half::FromFloat(1.0f + 0x1p-11f).bits, 0x3C00);
  // 1 + 3 * 2^-11 is halfway between 0x3C01 and 0x3C02: even is 0x3C02.
  EXPECT_EQ(Half::FromFloat(1.0f + 0x3p-11f).bits, 0x3C02);
  // Just above the halfway point rounds up.
  EXPECT_EQ(Half::FromFloat(1.0f + 0x1p-11f + 0x1p-20f).bits, 0x3C01);
  // Subnormals: half of the smallest subnormal ties to zero, 1.5 of it to 2.
  EXPECT_EQ(Half::FromFloat(0x1p-25f).bits, 0x0000);
  EXPECT_EQ(Half::FromFloat(0x3p-25f).bits, 0x0002);
}

TEST(HalfTest, OverflowInfinityAndNan) {
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(Half::FromFloat(inf).bits, 0x7C00);
  EXPECT_EQ(Half::FromFloat(-inf).bits, 0xFC00);
  EXPECT_EQ(Half::FromFloat(65520.0f).bits, 0x7C00);  // ties up to inf
  EXPECT_EQ(Half::FromFloat(65519.0f).bits, 0x7BFF);
  EXPECT_EQ(Half::FromFloat(1e10f).bits, 0x7C00);
  EXPECT_TRUE(std::isinf(Half{0x7C00}.ToFloat()));
  Half nan = Half::FromFloat(std::numeric_limits<float>::quiet_NaN());
  EXPECT_EQ(nan.bits & 0x7C00, 0x7C00);
  EXPECT_NE(nan.bits & 0x03FF, 0);
  EXPECT_TRUE(std::isnan(nan.ToFloat()));
  // A NaN whose payload lives only in the dropped low bits stays NaN.
  EXPECT_TRUE(std::isnan(
      Half::FromFloat(std::bit_cast<float>(0x7F800001u)).ToFloat()));
}

//===--- BFloat16 ---------------------------------------------------------===//

TEST(BFloat16Test, RoundTrips) {
  EXPECT_EQ(BFloat16::FromFloat(2.5f).bits, 16416);
  EXPECT_EQ(BFloat16::FromFloat(1.0f).bits, 0x3F80);
  EXPECT_EQ(BFloat16::FromFloat(-2.0f).bits, 0xC000);
  for (float f : {2.5f, 1.0f, -2.0f, 0.0f, 3.0f, 1.5e30f}) {
    float back = BFloat16::FromFloat(f).ToFloat();
    EXPECT_NEAR(back, f, std::fabs(f) * 0x1p-8f) << f;
  }
  EXPECT_EQ(BFloat16::FromFloat(2.5f).ToFloat(), 2.5f);
}

TEST(BFloat16Test, RoundsToNearestEvenAndKeepsNan) {
  // 1 + 2^-8 is halfway between 1 (0x3F80) and 0x3F81: ties to even.
  EXPECT_EQ(BFloat16::FromFloat(1.0f + 0x1p-8f).bits, 0x3F80);
  // 1 + 3 * 2^-8 is halfway between 0x3F81 and 0x3F82: even is 0x3F82.
  EXPECT_EQ(BFloat16::FromFloat(1.0f + 0x3p-8f).bits, 0x3F82);
  EXPECT_EQ(BFloat16::FromFloat(1.0f + 0x1p-8f + 0x1p-20f).bits, 0x3F81);
  const float inf = std::numeric_limits<float>::infinity();
  EXPECT_EQ(BFloat16::FromFloat(inf).bits, 0x7F80);
  EXPECT_EQ(BFloat16::FromFloat(-inf).bits, 0xFF80);
  EXPECT_EQ(BFloat16::FromFloat(std::numeric_limits<float>::max()).bits,
            0x7F80);
  EXPECT_TRUE(std::isnan(
      BFloat16::FromFloat(std::numeric_limits<float>::quiet_NaN()).ToFloat()));
  // Payload only in the low 16 bits: truncation alone would give infinity.
  EXPECT_TRUE(std::isnan(
      BFloat16::FromFloat(std::bit_cast<float>(0x7F800001u)).ToFloat()));
  EXPECT_TRUE(std::isnan(
      BFloat16::FromFloat(std::bit_cast<float>(0xFF800001u)).ToFloat()));
}

//===--- Names, sizes, dispatch -------------------------------------------===//

TEST(DTypeTest, NamesRoundTrip) {
  const DType all[] = {
      DType::kI1,   DType::kI8,   DType::kI16,       DType::kI32,
      DType::kI64,  DType::kUI8,  DType::kUI16,      DType::kUI32,
      DType::kUI64, DType::kF16,  DType::kBF16,      DType::kF32,
      DType::kF64,  DType::kComplex64, DType::kComplex128, DType::kString};
  for (DType dtype : all) {
    EXPECT_EQ(ParseDType(DTypeName(dtype)), dtype) << DTypeName(dtype);
  }
  EXPECT_EQ(DTypeName(DType::kUI16), "u16");
  EXPECT_EQ(DTypeName(DType::kComplex128), "complex128");
  EXPECT_EQ(DTypeName(DType::kString), "str");
  EXPECT_EQ(DTypeName(DType::kInvalid), "invalid");
}

TEST(DTypeTest, ParsesMlirSpellings) {
  EXPECT_EQ(ParseDType("ui8"), DType::kUI8);
  EXPECT_EQ(ParseDType("ui16"), DType::kUI16);
  EXPECT_EQ(ParseDType("ui32"), DType::kUI32);
  EXPECT_EQ(ParseDType("ui64"), DType::kUI64);
  EXPECT_EQ(ParseDType("bool"), DType::kI1);
  EXPECT_EQ(ParseDType("string"), DType::kString);
  EXPECT_EQ(ParseDType("invalid"), std::nullopt);
  EXPECT_EQ(ParseDType("f128"), std::nullopt);
  EXPECT_EQ(ParseDType(""), std::nullopt);
}

TEST(DTypeTest, SizesAndCppTypes) {
  EXPECT_EQ(DTypeSize(DType::kI1), 1u);
  EXPECT_EQ(DTypeSize(DType::kI16), 2u);
  EXPECT_EQ(DTypeSize(DType::kUI64), 8u);
  EXPECT_EQ(DTypeSize(DType::kF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kBF16), 2u);
  EXPECT_EQ(DTypeSize(DType::kComplex64), 8u);
  EXPECT_EQ(DTypeSize(DType::kComplex128), 16u);
  EXPECT_EQ(DTypeSize(DType::kString), sizeof(std::string));
  EXPECT_EQ(DTypeSize(DType::kInvalid), 0u);
  static_assert(GetDType<bool>() == DType::kI1);
  static_assert(GetDType<uint32_t>() == DType::kUI32);
  static_assert(GetDType<const float>() == DType::kF32);
  static_assert(GetDType<BFloat16>() == DType::kBF16);
  static_assert(GetDType<std::complex<double>>() == DType::kComplex128);
  static_assert(GetDType<std::string>() == DType::kString);
}

TEST(DTypeTest, DispatchGivesTheMatchingType) {
  const DType all[] = {
      DType::kI1,   DType::kI8,   DType::kI16,       DType::kI32,
      DType::kI64,  DType::kUI8,  DType::kUI16,      DType::kUI32,
      DType::kUI64, DType::kF16,  DType::kBF16,      DType::kF32,
      DType::kF64,  DType::kComplex64, DType::kComplex128, DType::kString};
  for (DType dtype : all) {
    DType back = DispatchByDType(dtype, [](auto tag) {
      return GetDType<typename decltype(tag)::type>();
    });
    EXPECT_EQ(back, dtype);
  }
}

//===--- Printing ---------------------------------------------------------===//

template <typename T>
std::string Print(T value) {
  std::string out;
  AppendElement(GetDType<T>(), &value, &out);
  return out;
}

TEST(AppendElementTest, Formats) {
  EXPECT_EQ(Print(true), "1");
  EXPECT_EQ(Print(false), "0");
  EXPECT_EQ(Print(int8_t{-5}), "-5");
  EXPECT_EQ(Print(uint8_t{65}), "65");
  EXPECT_EQ(Print(int64_t{-1234567890123}), "-1234567890123");
  EXPECT_EQ(Print(uint64_t{18446744073709551615u}), "18446744073709551615");
  EXPECT_EQ(Print(1.0f), "1.000000e+00");
  EXPECT_EQ(Print(-2.5), "-2.500000e+00");
  EXPECT_EQ(Print(Half::FromFloat(-1.0f)), "fp16(48128)");
  EXPECT_EQ(Print(BFloat16::FromFloat(2.5f)), "bf16(16416)");
  EXPECT_EQ(Print(std::complex<float>(1.0f, -2.0f)),
            "(1.000000e+00,-2.000000e+00)");
  EXPECT_EQ(Print(std::complex<double>(0.5, 3.0)),
            "(5.000000e-01,3.000000e+00)");
  EXPECT_EQ(Print(std::string("abc")), "\"abc\"");
}

}  // namespace
}  // namespace asyncrt
