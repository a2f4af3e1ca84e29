// DType: the element types of tensors, their names, sizes and C++ types.
//
// Every DType maps to one C++ element type (GetDType<T>() and
// DispatchByDType go between them):
//
//   i1 bool        i8..i64 int8_t..int64_t   u8..u64 uint8_t..uint64_t
//   f16 Half       bf16 BFloat16             f32 float    f64 double
//   complex64 std::complex<float>            complex128 std::complex<double>
//   str std::string
//
// Half and BFloat16 are 2-byte storage types with conversions to and from
// float; arithmetic on them goes through float.
//
// Everything here is stateless and thread-safe.
#ifndef ASYNCRT_TENSOR_DTYPE_H_
#define ASYNCRT_TENSOR_DTYPE_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <complex>
#include <optional>
#include <string>
#include <type_traits>

#include "absl/strings/string_view.h"

namespace asyncrt {

// IEEE 754 binary16. FromFloat rounds to nearest, ties to even; values too
// large become infinity, NaN stays NaN (quiet).
struct Half {
  uint16_t bits = 0;

  static Half FromFloat(float value);
  float ToFloat() const;
  friend bool operator==(Half a, Half b) { return a.bits == b.bits; }
};

// The upper 16 bits of an IEEE binary32 (bfloat16). FromFloat rounds to
// nearest, ties to even; NaN stays NaN (quiet, sign kept).
struct BFloat16 {
  uint16_t bits = 0;

  static BFloat16 FromFloat(float value);
  float ToFloat() const;
  friend bool operator==(BFloat16 a, BFloat16 b) { return a.bits == b.bits; }
};

static_assert(sizeof(Half) == 2 && sizeof(BFloat16) == 2);

enum class DType : uint8_t {
  kInvalid = 0,
  kI1,
  kI8,
  kI16,
  kI32,
  kI64,
  kUI8,
  kUI16,
  kUI32,
  kUI64,
  kF16,
  kBF16,
  kF32,
  kF64,
  kComplex64,
  kComplex128,
  kString,
  // Quantized integers: stored and computed as their integer type.
  kQUI8,
  kQUI16,
  kQI8,
  kQI16,
  kQI32,
};

// "i1", "i8", ..., "u8", ..., "f16", "bf16", "f32", "f64", "complex64",
// "complex128", "str", "qui8", "qui16", "qi8", "qi16", "qi32"; "invalid" for
// kInvalid or an out-of-range value.
absl::string_view DTypeName(DType dtype);

// The inverse of DTypeName, also accepting the MLIR spellings "ui8", "ui16",
// "ui32", "ui64", "bool" (i1), "string" (str) and the corert dialect's
// "!corert.string", "!corert.quint8", ... "!corert.qint32". nullopt for
// anything else, including "invalid".
std::optional<DType> ParseDType(absl::string_view name);

// Bytes per element: i1 takes one byte (bool storage), str is
// sizeof(std::string); 0 for kInvalid.
size_t DTypeSize(DType dtype);

// Alignment of one element (alignof of the C++ type); 1 for kInvalid.
size_t DTypeAlignment(DType dtype);

// Appends the element at `element` (of type `dtype`) to `out`:
//   integers in decimal (i1 as 0/1, i8/u8 as numbers), f32/f64 as printf
//   "%e", f16 as "fp16(BITS)" and bf16 as "bf16(BITS)" with the raw bits in
//   decimal, complex as "(%e,%e)", strings quoted ("\"abc\"", unescaped).
// kInvalid appends "<invalid>".
void AppendElement(DType dtype, const void* element, std::string* out);

//===--- C++ element types ------------------------------------------------===//

// A value-less carrier of a type, passed to DispatchByDType callbacks.
template <typename T>
struct TypeTag {
  using type = T;
};

namespace internal {
template <typename T>
inline constexpr bool kAlwaysFalse = false;
}  // namespace internal

// The DType of C++ element type T; a compile error for other types.
template <typename T>
constexpr DType GetDType() {
  using U = std::remove_cv_t<T>;
  if constexpr (std::is_same_v<U, bool>) {
    return DType::kI1;
  } else if constexpr (std::is_same_v<U, int8_t>) {
    return DType::kI8;
  } else if constexpr (std::is_same_v<U, int16_t>) {
    return DType::kI16;
  } else if constexpr (std::is_same_v<U, int32_t>) {
    return DType::kI32;
  } else if constexpr (std::is_same_v<U, int64_t>) {
    return DType::kI64;
  } else if constexpr (std::is_same_v<U, uint8_t>) {
    return DType::kUI8;
  } else if constexpr (std::is_same_v<U, uint16_t>) {
    return DType::kUI16;
  } else if constexpr (std::is_same_v<U, uint32_t>) {
    return DType::kUI32;
  } else if constexpr (std::is_same_v<U, uint64_t>) {
    return DType::kUI64;
  } else if constexpr (std::is_same_v<U, Half>) {
    return DType::kF16;
  } else if constexpr (std::is_same_v<U, BFloat16>) {
    return DType::kBF16;
  } else if constexpr (std::is_same_v<U, float>) {
    return DType::kF32;
  } else if constexpr (std::is_same_v<U, double>) {
    return DType::kF64;
  } else if constexpr (std::is_same_v<U, std::complex<float>>) {
    return DType::kComplex64;
  } else if constexpr (std::is_same_v<U, std::complex<double>>) {
    return DType::kComplex128;
  } else if constexpr (std::is_same_v<U, std::string>) {
    return DType::kString;
  } else {
    static_assert(internal::kAlwaysFalse<T>, "not a tensor element type");
    return DType::kInvalid;
  }
}

// Calls f(TypeTag<T>{}) with T the C++ element type of `dtype` and returns
// its result. `f` is instantiated for every element type including
// std::string, so generic callbacks that only handle numbers should branch
// with `if constexpr`. kInvalid (or a value outside the enum) is a
// programming error: f is not called and the process aborts; check
// `dtype != DType::kInvalid` first where it may occur.
template <typename F>
decltype(auto) DispatchByDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kI1:
      return f(TypeTag<bool>{});
    case DType::kI8:
      return f(TypeTag<int8_t>{});
    case DType::kI16:
      return f(TypeTag<int16_t>{});
    case DType::kI32:
      return f(TypeTag<int32_t>{});
    case DType::kI64:
      return f(TypeTag<int64_t>{});
    case DType::kUI8:
      return f(TypeTag<uint8_t>{});
    case DType::kUI16:
      return f(TypeTag<uint16_t>{});
    case DType::kUI32:
      return f(TypeTag<uint32_t>{});
    case DType::kUI64:
      return f(TypeTag<uint64_t>{});
    case DType::kF16:
      return f(TypeTag<Half>{});
    case DType::kBF16:
      return f(TypeTag<BFloat16>{});
    case DType::kF32:
      return f(TypeTag<float>{});
    case DType::kF64:
      return f(TypeTag<double>{});
    case DType::kComplex64:
      return f(TypeTag<std::complex<float>>{});
    case DType::kComplex128:
      return f(TypeTag<std::complex<double>>{});
    case DType::kString:
      return f(TypeTag<std::string>{});
    case DType::kQUI8:
      return f(TypeTag<uint8_t>{});
    case DType::kQUI16:
      return f(TypeTag<uint16_t>{});
    case DType::kQI8:
      return f(TypeTag<int8_t>{});
    case DType::kQI16:
      return f(TypeTag<int16_t>{});
    case DType::kQI32:
      return f(TypeTag<int32_t>{});
    case DType::kInvalid:
      break;
  }
  std::abort();
}

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_DTYPE_H_
