// Tensor: the abstract base of every tensor class, and TensorType, the
// interned name of a tensor class ("DenseHost", "CooHost", ...).
//
// Tensors travel between kernels inside AsyncValues. An AsyncValue holds the
// CONCRETE class (AsyncValue type checks are exact: IsType<DenseHostTensor>()
// is true, IsType<Tensor>() never is), so code that accepts any tensor uses
// GetTensorIfPresent to find the Tensor base. Tensor classes defined outside
// this library call RegisterTensorPayloadType<T>() once at start-up to be
// found too.
//
// Thread-safety: Tensor objects are thread-compatible (const access from
// many threads is safe; mutation needs exclusive access). TensorType and the
// payload-type registry are thread-safe.
#ifndef ASYNCRT_TENSOR_TENSOR_H_
#define ASYNCRT_TENSOR_TENSOR_H_

#include <cstdint>
#include <string>
#include <type_traits>
#include <utility>

#include "absl/strings/string_view.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/tensor/dtype.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt {

namespace internal {
// One interned tensor type name; entries are never freed.
struct TensorTypeEntry {
  int32_t id;
  absl::string_view name;
};
inline constexpr TensorTypeEntry kInvalidTensorTypeEntry = {0, "<invalid>"};
// The host tensor types of this library are constants (no registry lookup
// or static guard on the op dispatch path); the registry knows them by name.
inline constexpr TensorTypeEntry kDenseHostTensorTypeEntry = {1, "DenseHost"};
inline constexpr TensorTypeEntry kStringHostTensorTypeEntry = {2, "StringHost"};
inline constexpr TensorTypeEntry kCooHostTensorTypeEntry = {3, "CooHost"};
inline constexpr TensorTypeEntry kScalarHostTensorTypeEntry = {4, "ScalarHost"};
inline constexpr int32_t kNumBuiltinTensorTypes = 4;
}  // namespace internal

// A process-wide interned tensor type id. Copying and comparing are pointer
// operations; name() is lock-free.
class TensorType {
 public:
  // The invalid type, named "<invalid>" (id 0).
  constexpr TensorType() : entry_(&internal::kInvalidTensorTypeEntry) {}

  // The type named `name`, registered on first use. The same name always
  // gives the same type. Thread-safe.
  static TensorType Register(absl::string_view name);
  // A type of a constant entry (the built-in ones).
  static constexpr TensorType FromEntry(
      const internal::TensorTypeEntry* entry) {
    return TensorType(entry);
  }

  absl::string_view name() const { return entry_->name; }
  // Small dense integers in registration order; 0 is the invalid type.
  int32_t id() const { return entry_->id; }

  friend bool operator==(TensorType a, TensorType b) {
    return a.entry_ == b.entry_;
  }
  friend bool operator!=(TensorType a, TensorType b) { return !(a == b); }
  template <typename H>
  friend H AbslHashValue(H h, TensorType type) {
    return H::combine(std::move(h), type.entry_->id);
  }

 private:
  constexpr explicit TensorType(const internal::TensorTypeEntry* entry)
      : entry_(entry) {}
  const internal::TensorTypeEntry* entry_;
};

// The host tensor types of this library.
constexpr TensorType DenseHostTensorType() {
  return TensorType::FromEntry(&internal::kDenseHostTensorTypeEntry);
}
constexpr TensorType StringHostTensorType() {
  return TensorType::FromEntry(&internal::kStringHostTensorTypeEntry);
}
constexpr TensorType CooHostTensorType() {
  return TensorType::FromEntry(&internal::kCooHostTensorTypeEntry);
}
constexpr TensorType ScalarHostTensorType() {
  return TensorType::FromEntry(&internal::kScalarHostTensorTypeEntry);
}

class Tensor {
 public:
  // Inline, so that destroying a tensor inlines its members' destructors.
  virtual ~Tensor() = default;

  const TensorMetadata& metadata() const { return metadata_; }
  DType dtype() const { return metadata_.dtype; }
  const TensorShape& shape() const { return metadata_.shape; }
  int64_t NumElements() const { return metadata_.shape.GetNumElements(); }

  virtual TensorType tensor_type() const = 0;

  // Appends a human-readable description, e.g.
  // "DenseHostTensor dtype = i32, shape = [2, 2], values = [1, 2, 3, 4]".
  // Tests and tfrt_test.print kernels compare this text.
  virtual void Print(std::string* out) const = 0;
  std::string ToString() const;

 protected:
  explicit Tensor(const TensorMetadata& metadata) : metadata_(metadata) {}
  Tensor(const Tensor&) = default;
  Tensor& operator=(const Tensor&) = default;
  Tensor(Tensor&&) = default;
  Tensor& operator=(Tensor&&) = default;

 private:
  TensorMetadata metadata_;
};

// The Tensor base of `value`'s payload if `value` is concrete and holds a
// registered tensor class (the four host tensors of this library and those
// registered with RegisterTensorPayloadType); nullptr otherwise, including
// for unavailable and error values. Borrowed: valid while `value` lives.
// Lock-free; DenseHostTensor is checked first.
const Tensor* GetTensorIfPresent(const AsyncValue& value);
Tensor* GetTensorIfPresent(AsyncValue& value);

namespace internal {
using TensorPayloadCaster = Tensor* (*)(AsyncValue& value);

template <typename T>
Tensor* CastTensorPayload(AsyncValue& value) {
  return value.IsType<T>() ? &value.get<T>() : nullptr;
}

// Adds `caster` unless already present. At most 32 casters (the host types
// included); aborts beyond that. Thread-safe.
void RegisterTensorPayloadCaster(TensorPayloadCaster caster);
}  // namespace internal

// Makes GetTensorIfPresent recognize AsyncValues holding a T. Idempotent and
// thread-safe; call once per type at start-up (up to 28 types beyond the
// built-in four).
template <typename T>
void RegisterTensorPayloadType() {
  static_assert(std::is_base_of_v<Tensor, T>, "T must derive from Tensor");
  internal::RegisterTensorPayloadCaster(&internal::CastTensorPayload<T>);
}

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_TENSOR_H_
