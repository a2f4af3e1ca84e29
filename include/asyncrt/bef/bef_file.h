// BefFile: a validated, decoded BEF file.
//
// Open() checks every section, count, index and offset of untrusted bytes
// once (a truncated or corrupted file is a DataLoss error naming what was
// malformed and where, never a crash) and decodes the tables into compact
// arrays. After that nothing is re-parsed: the executor and tools read the
// decoded form. Strings and array/dense attribute data point into the
// buffer, which the BefFile keeps alive.
//
// Thread-safety: immutable after Open (but for the once-per-attribute
// decode cache, which locks); safe to share across threads.
#ifndef ASYNCRT_BEF_BEF_FILE_H_
#define ASYNCRT_BEF_BEF_FILE_H_

#include <atomic>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/bef/bef_format.h"

namespace asyncrt::bef {

static_assert(__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__,
              "BEF array and dense attributes are read in place: "
              "little-endian hosts only");

// A decoded attribute. Scalars keep their raw bits; use the accessors.
struct Attribute {
  AttributeKind kind = AttributeKind::kUnit;
  AttributeKind element_kind = AttributeKind::kUnit;  // kArray, kDense.
  uint64_t bits = 0;        // Scalars; kShape: 1 if ranked.
  absl::string_view bytes;  // kString; raw elements of kArray, kDense.
  uint32_t count = 0;       // Elements of kArray.
  // kType: type index; kFunction: function; kCompilationUnit: the root
  // symbol's string index (`bytes` is the module text, `elements` the
  // nested symbols' string indices).
  uint32_t index = 0;
  absl::Span<const int64_t> shape;      // kDense; kShape (-1: unknown).
  absl::Span<const uint32_t> elements;  // kAggregate: attribute indices.

  bool IsScalar() const { return ScalarSize(kind) != 0 && !IsComplex(kind); }

  // The scalar as T (a type of the attribute's size: int32_t for kI32,
  // float for kF32, bool for kBool, ...).
  template <typename T>
  T scalar() const {
    if constexpr (std::is_same_v<T, bool>) {
      return bits != 0;  // Never materialise a bool from arbitrary bytes.
    } else {
      T value;
      static_assert(sizeof(T) <= sizeof(bits));
      std::memcpy(&value, &bits, sizeof(T));
      return value;
    }
  }

  // The elements of a kArray (or the data of a kDense) as T.
  template <typename T>
  absl::Span<const T> array() const {
    return absl::Span<const T>(reinterpret_cast<const T*>(bytes.data()),
                               bytes.size() / sizeof(T));
  }
};

struct NamedAttribute {
  uint32_t name;       // String index.
  uint32_t attribute;  // Attribute index.
};

struct Kernel {
  uint32_t kernel_name;                 // Index into kernel_names().
  uint32_t location;                    // Index into locations.
  absl::Span<const uint32_t> operands;  // Registers.
  absl::Span<const uint32_t> results;   // Registers.
  absl::Span<const NamedAttribute> attributes;
  absl::Span<const uint32_t> functions;  // Function indices.
};

struct Function {
  absl::string_view name;  // Empty for region bodies.
  FunctionKind kind;
  absl::Span<const uint32_t> argument_types;  // Type indices.
  absl::Span<const uint32_t> result_types;
  uint32_t num_registers = 0;
  absl::Span<const uint32_t> argument_registers;
  std::vector<Kernel> kernels;  // In source order; operands defined earlier.
  absl::Span<const uint32_t> result_registers;
  // Debug info; each empty or one per register.
  absl::Span<const uint32_t> register_names;  // String indices.
  absl::Span<const uint32_t> register_types;  // Type indices.
  // Empty, or the entry's stream followed by each kernel's (KernelStreams).
  absl::Span<const uint32_t> kernel_streams;
};

struct Location {
  absl::string_view filename;
  uint32_t line = 0;
  uint32_t column = 0;
  absl::string_view name;  // Name scope ("scope/op"), or empty.
};

class BefFile {
 public:
  // Validates and decodes `bytes`. The bytes are copied if `keep_alive` is
  // null or they are not 8-byte aligned; otherwise they are used in place
  // and `keep_alive` (e.g. an mmap owner) is held for the file's lifetime.
  static absl::StatusOr<std::unique_ptr<BefFile>> Open(
      absl::Span<const uint8_t> bytes,
      std::shared_ptr<const void> keep_alive = nullptr);

  uint8_t version_major() const { return version_major_; }
  uint8_t version_minor() const { return version_minor_; }

  absl::Span<const Function> functions() const { return functions_; }
  // The function named `name`, or nullptr.
  const Function* GetFunction(absl::string_view name) const;
  absl::string_view string(uint32_t index) const { return strings_[index]; }
  absl::string_view type_name(uint32_t index) const {
    return strings_[types_[index]];
  }
  size_t num_types() const { return types_.size(); }
  absl::string_view kernel_name(uint32_t index) const {
    return strings_[kernel_names_[index]];
  }
  size_t num_kernel_names() const { return kernel_names_.size(); }
  const Attribute& attribute(uint32_t index) const {
    return attributes_[index];
  }
  size_t num_attributes() const { return attributes_.size(); }
  Location location(uint32_t index) const;
  size_t num_locations() const { return locations_.size(); }
  bool has_debug_info() const { return has_debug_info_; }

  // What keeps the file's bytes alive (never null once opened): a value
  // that views attribute bytes in place (a model's weights as a constant
  // tensor) holds it, so it may outlive the file.
  const std::shared_ptr<const void>& keep_alive() const { return keep_alive_; }

  // A value decoded from `attribute` (one of this file's) once per file:
  // `decode`'s result on the first call for that attribute, the same object
  // on later calls. A null result is not kept (the next call decodes
  // again). Thread-safe: a decoded attribute is found without a lock (two
  // atomic loads); concurrent first calls decode once, the others wait
  // (blocking) for it.
  std::shared_ptr<const void> GetOrDecode(
      const Attribute& attribute,
      absl::FunctionRef<std::shared_ptr<const void>()> decode) const;

 private:
  BefFile() = default;
  class Decoder;

  std::shared_ptr<const void> keep_alive_;
  // GetOrDecode's values: one slot per attribute (made on first use),
  // null until decoded, then pointing at the value, which lives as long as
  // the file. Slots are read without the mutex; written under it.
  using DecodedSlot = std::atomic<const std::shared_ptr<const void>*>;
  mutable std::atomic<DecodedSlot*> decoded_slots_{nullptr};
  mutable std::mutex decoded_mutex_;
  // Guarded by decoded_mutex_: what the slots point at (a deque: appending
  // moves no element).
  mutable std::unique_ptr<DecodedSlot[]> decoded_slot_storage_;
  mutable std::deque<std::shared_ptr<const void>> decoded_values_;
  uint8_t version_major_ = 0;
  uint8_t version_minor_ = 0;
  std::vector<absl::string_view> strings_;
  std::vector<uint32_t> types_;
  std::vector<uint32_t> kernel_names_;
  std::vector<uint32_t> files_;
  struct LocationEntry {
    uint32_t file, line, column;
    uint32_t name = 0;  // 1 + string index, or 0 for none.
  };
  std::vector<LocationEntry> locations_;
  std::vector<Attribute> attributes_;
  std::vector<Function> functions_;
  bool has_debug_info_ = false;
  // Backing storage for the spans above; sized once, never reallocated.
  std::vector<uint32_t> u32_pool_;
  std::vector<int64_t> i64_pool_;
  std::vector<NamedAttribute> named_attribute_pool_;
};

}  // namespace asyncrt::bef

#endif  // ASYNCRT_BEF_BEF_FILE_H_
