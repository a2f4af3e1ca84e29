// BEF (Binary Executable Format): constants shared by the writer and the
// reader. The byte-level layout is specified in docs/bef.md.
#ifndef ASYNCRT_BEF_BEF_FORMAT_H_
#define ASYNCRT_BEF_BEF_FORMAT_H_

#include <cstdint>

namespace asyncrt::bef {

inline constexpr uint8_t kMagic0 = 0x0B;
inline constexpr uint8_t kMagic1 = 0xEF;
inline constexpr uint8_t kVersionMajor = 1;
inline constexpr uint8_t kVersionMinor = 2;  // 1: location names; 2: complex.

// Header: magic (2), version major, minor, u32 section count, then one
// 12-byte entry per section.
inline constexpr uint32_t kHeaderSize = 8;
inline constexpr uint32_t kSectionEntrySize = 12;

enum class SectionId : uint8_t {
  kStrings = 1,
  kTypes = 2,
  kKernelNames = 3,
  kAttributes = 4,
  kLocations = 5,
  kFunctions = 6,
  kDebugInfo = 7,  // Optional: register names, for exact BEF-to-MLIR.
  // Optional: a name per location ("scope/op", from MLIR name locations),
  // which kernels and traces can show.
  kLocationNames = 8,
  // Optional: per function, the stream of the entry and of each kernel
  // (from the compiler's stream analysis); kernels of another stream than
  // the one that makes them ready are handed to the work queue. Since 1.2.
  kKernelStreams = 9,
};
inline constexpr int kNumSectionIds = 9;

// Encoded attribute kinds. Scalars carry 8 little-endian payload bytes.
enum class AttributeKind : uint8_t {
  kUnit = 0,
  kBool = 1,
  kI8 = 2,
  kI16 = 3,
  kI32 = 4,
  kI64 = 5,
  kUI8 = 6,
  kUI16 = 7,
  kUI32 = 8,
  kUI64 = 9,
  kF16 = 10,   // Raw IEEE half bits in the payload.
  kBF16 = 11,  // Raw bfloat16 bits in the payload.
  kF32 = 12,
  kF64 = 13,
  kString = 14,  // u32 length, bytes.
  kType = 15,    // u32 type index.
  kArray = 16,   // u8 element kind, u32 count, pad to 8, elements.
  kDense = 17,   // u8 element kind, u32 rank, i64 dims, u32 bytes, pad, data.
  kAggregate = 18,  // u32 count, u32 attribute indices (earlier ones).
  kFunction = 19,   // u32 function index.
  // u32 rank (kUnrankedShape for none), i64 dims (-1 unknown). Since 1.1.
  kShape = 20,
  // Element kinds only (of arrays and dense attributes), never a scalar
  // attribute of their own: (real, imaginary) pairs of f32 / f64. Since 1.2.
  kComplex64 = 21,
  kComplex128 = 22,
  // A symbol in a nested module compiled by another toolchain
  // (`@kernel::@main`, the module marked `tfrt.compiled`): u32 root symbol
  // (string), u32 the module's MLIR text (string), u32 list of nested
  // symbols (strings). Since 1.2.
  kCompilationUnit = 23,
};
inline constexpr uint8_t kMaxAttributeKind = 23;

constexpr bool IsComplex(AttributeKind kind) {
  return kind == AttributeKind::kComplex64 ||
         kind == AttributeKind::kComplex128;
}
inline constexpr uint32_t kUnrankedShape = 0xFFFFFFFF;

// Size in bytes of one element of a scalar kind; 0 for non-scalar kinds.
constexpr uint32_t ScalarSize(AttributeKind kind) {
  switch (kind) {
    case AttributeKind::kBool:
    case AttributeKind::kI8:
    case AttributeKind::kUI8:
      return 1;
    case AttributeKind::kI16:
    case AttributeKind::kUI16:
    case AttributeKind::kF16:
    case AttributeKind::kBF16:
      return 2;
    case AttributeKind::kI32:
    case AttributeKind::kUI32:
    case AttributeKind::kF32:
      return 4;
    case AttributeKind::kI64:
    case AttributeKind::kUI64:
    case AttributeKind::kF64:
    case AttributeKind::kComplex64:
      return 8;
    case AttributeKind::kComplex128:
      return 16;
    default:
      return 0;
  }
}

enum class FunctionKind : uint8_t {
  kBef = 0,     // A body of kernels run by the executor.
  kNative = 1,  // A C++ function looked up by name (tfrt.native).
  kSync = 2,    // A body of synchronous kernels (tfrt.sync).
};

}  // namespace asyncrt::bef

#endif  // ASYNCRT_BEF_BEF_FORMAT_H_
