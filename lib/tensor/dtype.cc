#include "asyncrt/tensor/dtype.h"

#include <bit>
#include <cstdio>
#include <cstring>

#include "absl/strings/str_cat.h"

namespace asyncrt {

//===--- Half and BFloat16 ------------------------------------------------===//

Half Half::FromFloat(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  const uint16_t sign = static_cast<uint16_t>((f >> 16) & 0x8000u);
  uint32_t abs = f & 0x7fffffffu;
  uint16_t bits;
  if (abs >= 0x47800000u) {
    // >= 2^16 (beyond rounding range), inf or NaN. NaN keeps its top payload
    // bits and is forced quiet so it cannot turn into infinity.
    bits = abs > 0x7f800000u
               ? static_cast<uint16_t>(0x7e00u | ((abs >> 13) & 0x3ffu))
               : 0x7c00u;
  } else if (abs < 0x38800000u) {
    // Below the smallest normal half (2^-14): a subnormal or zero. Adding
    // 0.5f aligns the half's subnormal unit (2^-24) with the float's last
    // mantissa bit, so the FPU's round-to-nearest-even does the rounding.
    constexpr uint32_t kMagic = 126u << 23;  // 0.5f
    float sum = std::bit_cast<float>(abs) + std::bit_cast<float>(kMagic);
    bits = static_cast<uint16_t>(std::bit_cast<uint32_t>(sum) - kMagic);
  } else {
    // Normal: rebias the exponent (127 -> 15) and round the 13 dropped
    // mantissa bits to nearest even; a carry may round up to infinity.
    const uint32_t mantissa_odd = (abs >> 13) & 1u;
    abs += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu;
    abs += mantissa_odd;
    bits = static_cast<uint16_t>(abs >> 13);
  }
  return Half{static_cast<uint16_t>(sign | bits)};
}

float Half::ToFloat() const {
  const uint32_t sign = static_cast<uint32_t>(bits & 0x8000u) << 16;
  const uint32_t exponent = (bits >> 10) & 0x1fu;
  const uint32_t mantissa = bits & 0x3ffu;
  if (exponent == 0) {
    // Zero or subnormal: mantissa * 2^-24 is exact in float.
    float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
    return sign ? -magnitude : magnitude;
  }
  if (exponent == 31) {
    return std::bit_cast<float>(sign | 0x7f800000u | (mantissa << 13));
  }
  return std::bit_cast<float>(sign | ((exponent + 112u) << 23) |
                              (mantissa << 13));
}

BFloat16 BFloat16::FromFloat(float value) {
  uint32_t f = std::bit_cast<uint32_t>(value);
  if ((f & 0x7fffffffu) > 0x7f800000u) {
    // Truncating a NaN could clear every payload bit left and produce
    // infinity, so set the quiet bit.
    return BFloat16{static_cast<uint16_t>((f >> 16) | 0x0040u)};
  }
  const uint32_t rounding_bias = 0x7fffu + ((f >> 16) & 1u);
  return BFloat16{static_cast<uint16_t>((f + rounding_bias) >> 16)};
}

float BFloat16::ToFloat() const {
  return std::bit_cast<float>(static_cast<uint32_t>(bits) << 16);
}

//===--- Names and sizes --------------------------------------------------===//

absl::string_view DTypeName(DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return "i1";
    case DType::kI8:
      return "i8";
    case DType::kI16:
      return "i16";
    case DType::kI32:
      return "i32";
    case DType::kI64:
      return "i64";
    case DType::kUI8:
      return "u8";
    case DType::kUI16:
      return "u16";
    case DType::kUI32:
      return "u32";
    case DType::kUI64:
      return "u64";
    case DType::kF16:
      return "f16";
    case DType::kBF16:
      return "bf16";
    case DType::kF32:
      return "f32";
    case DType::kF64:
      return "f64";
    case DType::kComplex64:
      return "complex64";
    case DType::kComplex128:
      return "complex128";
    case DType::kString:
      return "str";
    case DType::kQUI8:
      return "qui8";
    case DType::kQUI16:
      return "qui16";
    case DType::kQI8:
      return "qi8";
    case DType::kQI16:
      return "qi16";
    case DType::kQI32:
      return "qi32";
    case DType::kInvalid:
      break;
  }
  return "invalid";
}

std::optional<DType> ParseDType(absl::string_view name) {
  static constexpr struct {
    absl::string_view name;
    DType dtype;
  } kNames[] = {
      {"i1", DType::kI1},
      {"bool", DType::kI1},
      {"i8", DType::kI8},
      {"i16", DType::kI16},
      {"i32", DType::kI32},
      {"i64", DType::kI64},
      {"u8", DType::kUI8},
      {"ui8", DType::kUI8},
      {"u16", DType::kUI16},
      {"ui16", DType::kUI16},
      {"u32", DType::kUI32},
      {"ui32", DType::kUI32},
      {"u64", DType::kUI64},
      {"ui64", DType::kUI64},
      {"f16", DType::kF16},
      {"bf16", DType::kBF16},
      {"f32", DType::kF32},
      {"f64", DType::kF64},
      {"complex64", DType::kComplex64},
      {"complex128", DType::kComplex128},
      {"str", DType::kString},
      {"string", DType::kString},
      {"qui8", DType::kQUI8},
      {"qui16", DType::kQUI16},
      {"qi8", DType::kQI8},
      {"qi16", DType::kQI16},
      {"qi32", DType::kQI32},
      // The corert dialect's spellings.
      {"!corert.string", DType::kString},
      {"!corert.quint8", DType::kQUI8},
      {"!corert.quint16", DType::kQUI16},
      {"!corert.qint8", DType::kQI8},
      {"!corert.qint16", DType::kQI16},
      {"!corert.qint32", DType::kQI32},
  };
  for (const auto& entry : kNames) {
    if (entry.name == name) return entry.dtype;
  }
  return std::nullopt;
}

size_t DTypeSize(DType dtype) {
  if (dtype == DType::kInvalid) return 0;
  return DispatchByDType(dtype, [](auto tag) -> size_t {
    return sizeof(typename decltype(tag)::type);
  });
}

size_t DTypeAlignment(DType dtype) {
  if (dtype == DType::kInvalid) return 1;
  return DispatchByDType(dtype, [](auto tag) -> size_t {
    return alignof(typename decltype(tag)::type);
  });
}

//===--- Printing ---------------------------------------------------------===//

namespace {

void AppendE(double value, std::string* out) {
  char buffer[64];
  int n = std::snprintf(buffer, sizeof(buffer), "%e", value);
  out->append(buffer, n > 0 ? static_cast<size_t>(n) : 0);
}

}  // namespace

void AppendElement(DType dtype, const void* element, std::string* out) {
  if (dtype == DType::kInvalid) {
    out->append("<invalid>");
    return;
  }
  DispatchByDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    // memcpy: tensor data need not be aligned for T when it comes from a
    // slice or an external buffer.
    if constexpr (std::is_same_v<T, std::string>) {
      const auto& text = *static_cast<const std::string*>(element);
      absl::StrAppend(out, "\"", text, "\"");
    } else if constexpr (std::is_same_v<T, bool>) {
      // Read the storage byte: a byte other than 0/1 is not a valid bool.
      out->append(*static_cast<const uint8_t*>(element) != 0 ? "1" : "0");
    } else {
      T value;
      std::memcpy(&value, element, sizeof(T));
      if constexpr (std::is_integral_v<T>) {
        // StrAppend prints int8_t/uint8_t as numbers, not characters.
        absl::StrAppend(out, static_cast<std::conditional_t<
                                 std::is_signed_v<T>, int64_t, uint64_t>>(
                                 value));
      } else if constexpr (std::is_same_v<T, Half>) {
        absl::StrAppend(out, "fp16(", value.bits, ")");
      } else if constexpr (std::is_same_v<T, BFloat16>) {
        absl::StrAppend(out, "bf16(", value.bits, ")");
      } else if constexpr (std::is_floating_point_v<T>) {
        AppendE(value, out);
      } else {
        out->push_back('(');
        AppendE(value.real(), out);
        out->push_back(',');
        AppendE(value.imag(), out);
        out->push_back(')');
      }
    }
  });
}

}  // namespace asyncrt
