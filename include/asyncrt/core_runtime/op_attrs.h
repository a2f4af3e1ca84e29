// OpAttrs: the attributes of one op invocation (eager or graph).
//
//   OpAttrs attrs;
//   attrs.Set("axis", int32_t{1});
//   attrs.SetArray<int64_t>("shape", {2, 3});
//   OpAttrsRef frozen = attrs.Freeze();  // immutable, shared, cheap to copy
//
// An OpAttrs keeps up to four entries and 128 bytes of values inline, so a
// typical op builds its attributes without touching the heap; larger sets
// spill. Setting a name that exists replaces its value.
//
// Thread-safety: an OpAttrs is a plain value (no internal locking). An
// OpAttrsRef is immutable and may be shared and read from any thread.
#ifndef ASYNCRT_CORE_RUNTIME_OP_ATTRS_H_
#define ASYNCRT_CORE_RUNTIME_OP_ATTRS_H_

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <type_traits>

#include "absl/container/inlined_vector.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/support/ref_count.h"
#include "asyncrt/tensor/dtype.h"

namespace asyncrt {

class Function;

enum class OpAttrType : uint8_t {
  kBool,
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
  kDType,
  kChar,       // Strings are arrays of kChar.
  kDense,      // A dense elements attribute (see DenseAttr).
  kShape,      // A possibly unranked shape (see ShapeAttr).
  kFunc,       // A function (const Function*), e.g. a composite op's body.
  kAggregate,  // A list of values of any of these types (see GetAggregate).
};

// "I32", "F32", "DTYPE", ... as printed by OpAttrs::Print.
absl::string_view OpAttrTypeName(OpAttrType type);
// Bytes of one element of `type` (a kFunc is a pointer); 0 for kDense,
// kShape and kAggregate, whose entries count bytes.
size_t OpAttrTypeSize(OpAttrType type);
// The OpAttrType holding elements of `dtype` (kI32 for DType::kI32, ...).
std::optional<OpAttrType> OpAttrTypeForDType(DType dtype);

template <typename T>
constexpr OpAttrType OpAttrTypeOf() {
  if constexpr (std::is_same_v<T, bool>)
    return OpAttrType::kBool;
  else if constexpr (std::is_same_v<T, int8_t>)
    return OpAttrType::kI8;
  else if constexpr (std::is_same_v<T, int16_t>)
    return OpAttrType::kI16;
  else if constexpr (std::is_same_v<T, int32_t>)
    return OpAttrType::kI32;
  else if constexpr (std::is_same_v<T, int64_t>)
    return OpAttrType::kI64;
  else if constexpr (std::is_same_v<T, uint8_t>)
    return OpAttrType::kUI8;
  else if constexpr (std::is_same_v<T, uint16_t>)
    return OpAttrType::kUI16;
  else if constexpr (std::is_same_v<T, uint32_t>)
    return OpAttrType::kUI32;
  else if constexpr (std::is_same_v<T, uint64_t>)
    return OpAttrType::kUI64;
  else if constexpr (std::is_same_v<T, Half>)
    return OpAttrType::kF16;
  else if constexpr (std::is_same_v<T, BFloat16>)
    return OpAttrType::kBF16;
  else if constexpr (std::is_same_v<T, float>)
    return OpAttrType::kF32;
  else if constexpr (std::is_same_v<T, double>)
    return OpAttrType::kF64;
  else if constexpr (std::is_same_v<T, DType>)
    return OpAttrType::kDType;
  else if constexpr (std::is_same_v<T, char>)
    return OpAttrType::kChar;
  else
    static_assert(sizeof(T) == 0, "not an OpAttrs scalar type");
}

// A dense elements value, viewed in place.
struct DenseAttr {
  DType dtype = DType::kInvalid;
  absl::Span<const int64_t> shape;
  const void* data = nullptr;  // Row-major elements of dtype.
  size_t data_size = 0;        // In bytes.
  int64_t NumElements() const;
};

// A shape value, viewed in place; `dims` may contain -1 (unknown).
struct ShapeAttr {
  bool ranked = false;
  absl::Span<const int64_t> dims;
};

class OpAttrs {
 public:
  struct Entry {
    std::string name;
    OpAttrType type;
    bool is_array;
    uint32_t count;   // Elements (arrays); bytes (dense, shape, aggregate).
    uint32_t offset;  // Into the value arena, in bytes.
  };

  // User-provided (not `= default`), so that `const OpAttrs& attrs = {}`,
  // the default argument of the eager and lazy calls, does not zero the
  // inline storage (a few hundred bytes) before constructing it.
  OpAttrs() {}  // NOLINT(modernize-use-equals-default)
  OpAttrs(const OpAttrs&) = default;
  OpAttrs& operator=(const OpAttrs&) = default;
  OpAttrs(OpAttrs&&) = default;
  OpAttrs& operator=(OpAttrs&&) = default;

  template <typename T>
  void Set(absl::string_view name, T value) {
    SetRaw(name, OpAttrTypeOf<T>(), /*is_array=*/false, &value, sizeof(T), 1);
  }
  template <typename T>
  void SetArray(absl::string_view name, absl::Span<const T> values) {
    SetRaw(name, OpAttrTypeOf<T>(), /*is_array=*/true, values.data(),
           values.size() * sizeof(T), values.size());
  }
  template <typename T>
  void SetArray(absl::string_view name, std::initializer_list<T> values) {
    SetArray<T>(name, absl::MakeConstSpan(values.begin(), values.size()));
  }
  void SetString(absl::string_view name, absl::string_view value) {
    SetRaw(name, OpAttrType::kChar, /*is_array=*/true, value.data(),
           value.size(), value.size());
  }
  // Copies `data` (`data_size` bytes of row-major dtype elements).
  void SetDense(absl::string_view name, DType dtype,
                absl::Span<const int64_t> shape, const void* data,
                size_t data_size);
  // `dims` nullopt: unranked.
  void SetShape(absl::string_view name,
                std::optional<absl::Span<const int64_t>> dims);
  // A list of values: the entries of `elements`, in the order they were
  // set (their names are kept but carry no meaning). Copied.
  void SetAggregate(absl::string_view name, const OpAttrs& elements);
  void SetFunc(absl::string_view name, const Function* function) {
    SetRaw(name, OpAttrType::kFunc, false, &function, sizeof(function), 1);
  }
  // Replaces or adds `name` with raw element bytes. Exposed for the kernels
  // that copy BEF attributes wholesale.
  void SetRaw(absl::string_view name, OpAttrType type, bool is_array,
              const void* data, size_t size_in_bytes, size_t count);

  // Typed getters: nullopt if `name` is missing or has another type/shape.
  template <typename T>
  std::optional<T> Get(absl::string_view name) const {
    const Entry* entry = Find(name);
    if (!entry || entry->is_array || entry->type != OpAttrTypeOf<T>()) {
      return std::nullopt;
    }
    T value;
    std::memcpy(&value, data(*entry), sizeof(T));
    return value;
  }
  template <typename T>
  std::optional<absl::Span<const T>> GetArray(absl::string_view name) const {
    const Entry* entry = Find(name);
    if (!entry || !entry->is_array || entry->type != OpAttrTypeOf<T>()) {
      return std::nullopt;
    }
    return absl::Span<const T>(static_cast<const T*>(data(*entry)),
                               entry->count);
  }
  std::optional<absl::string_view> GetString(absl::string_view name) const;
  std::optional<DenseAttr> GetDense(absl::string_view name) const;
  std::optional<ShapeAttr> GetShape(absl::string_view name) const;
  // The elements of an aggregate, as an OpAttrs of their own (a copy).
  std::optional<OpAttrs> GetAggregate(absl::string_view name) const;
  const Function* GetFunc(absl::string_view name) const;
  // Any integer scalar or one-element integer array, widened.
  std::optional<int64_t> GetInteger(absl::string_view name) const;
  // Integer arrays of any width, widened (e.g. `shape = [2, 3]`).
  std::optional<absl::InlinedVector<int64_t, 4>> GetIntegerArray(
      absl::string_view name) const;

  const Entry* Find(absl::string_view name) const;
  // Bytes of `entry`'s value (at data(entry)).
  static size_t ValueSize(const Entry& entry);
  const void* data(const Entry& entry) const {
    return reinterpret_cast<const char*>(arena_.data()) + entry.offset;
  }
  absl::Span<const Entry> entries() const { return entries_; }
  size_t size() const { return entries_.size(); }
  bool empty() const { return entries_.empty(); }

  // "OpAttrs is empty" or "OpAttrs contains N entries:\n" followed by one
  // "  'name' type=I32 value=1\n" line per entry, sorted by name. An
  // aggregate prints "elt_count=2 [{dtype=I32, rank=2, elt_count=4}, 7]".
  void Print(std::string* out) const;
  std::string DebugString() const;

  // An immutable copy that can be shared (see OpAttrsRef).
  class OpAttrsRef Freeze() const;

 private:
  // Appends the value of `entry` as Print shows it.
  void PrintValue(const Entry& entry, std::string* out) const;
  // Views of entries of those types.
  DenseAttr DenseOf(const Entry& entry) const;
  ShapeAttr ShapeOf(const Entry& entry) const;
  OpAttrs AggregateOf(const Entry& entry) const;

  absl::InlinedVector<Entry, 4> entries_;
  absl::InlinedVector<uint64_t, 16> arena_;  // 8-byte aligned values.
};

// A frozen, immutable, refcounted OpAttrs: copying shares it.
class OpAttrsRef {
 public:
  // Empty attributes, the common case: no holder, so making, copying and
  // dropping one touches no shared reference count.
  OpAttrsRef() = default;
  explicit OpAttrsRef(OpAttrs attrs);
  const OpAttrs& get() const { return holder_ ? holder_->attrs : Empty(); }
  const OpAttrs* operator->() const { return &get(); }
  const OpAttrs& operator*() const { return get(); }

 private:
  // Inline: get() of empty attributes costs a guard check, not a call.
  static const OpAttrs& Empty() {
    static const OpAttrs* const empty = new OpAttrs();
    return *empty;
  }

  struct Holder : ReferenceCounted<Holder> {
    explicit Holder(OpAttrs a) : attrs(std::move(a)) {}
    const OpAttrs attrs;
  };
  RCReference<Holder> holder_;
};

inline OpAttrsRef OpAttrs::Freeze() const { return OpAttrsRef(*this); }

}  // namespace asyncrt

#endif  // ASYNCRT_CORE_RUNTIME_OP_ATTRS_H_
