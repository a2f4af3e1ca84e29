// StringHostTensor: a dense, row-major tensor of std::string (dtype str).
//
// Ownership: the strings live in a refcounted array on the C++ heap (not the
// HostAllocator: std::string manages its own memory). The tensor is
// move-only; CopyRef() makes a second tensor sharing the same array, so it
// is cheap and writes through one are visible through the other.
//
// Thread-safety: as for Tensor. The array's refcount is atomic.
#ifndef ASYNCRT_TENSOR_STRING_HOST_TENSOR_H_
#define ASYNCRT_TENSOR_STRING_HOST_TENSOR_H_

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "asyncrt/support/ref_count.h"
#include "asyncrt/tensor/tensor.h"

namespace asyncrt {

namespace internal {
// The shared storage of StringHostTensors.
class StringArray : public ReferenceCounted<StringArray> {
 public:
  explicit StringArray(std::vector<std::string> strings)
      : strings(std::move(strings)) {}
  std::vector<std::string> strings;
};
}  // namespace internal

class StringHostTensor final : public Tensor {
 public:
  // A tensor of empty strings; nullopt if `shape` has a negative dimension.
  static std::optional<StringHostTensor> CreateUninitialized(
      const TensorShape& shape);

  // A tensor holding `strings` in row-major order; nullopt if their number
  // is not shape.GetNumElements() or the shape is invalid.
  static std::optional<StringHostTensor> CreateFromStrings(
      const TensorShape& shape, std::vector<std::string> strings);

  StringHostTensor(StringHostTensor&&) = default;
  StringHostTensor& operator=(StringHostTensor&&) = default;
  StringHostTensor(const StringHostTensor&) = delete;
  StringHostTensor& operator=(const StringHostTensor&) = delete;

  // A tensor sharing this tensor's strings.
  StringHostTensor CopyRef() const {
    return StringHostTensor(shape(), strings_);
  }

  TensorType tensor_type() const override { return StringHostTensorType(); }

  // StringHostTensor shape = [2], values = ["a", "b"]; at most 16 values.
  void Print(std::string* out) const override;

  // Empty after a move.
  absl::Span<std::string> strings() {
    return strings_ ? absl::MakeSpan(strings_->strings)
                    : absl::Span<std::string>();
  }
  absl::Span<const std::string> strings() const {
    return strings_ ? absl::MakeConstSpan(strings_->strings)
                    : absl::Span<const std::string>();
  }

 private:
  StringHostTensor(const TensorShape& shape,
                   RCReference<internal::StringArray> strings)
      : Tensor(TensorMetadata(DType::kString, shape)),
        strings_(std::move(strings)) {}

  RCReference<internal::StringArray> strings_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_STRING_HOST_TENSOR_H_
