// ScalarHostTensor: one value splatted over a whole shape (e.g. zeros of
// shape [1024, 1024]) stored in 16 inline bytes, for any non-string dtype.
//
// Ownership: a plain value; copyable, no heap allocation.
// Thread-safety: as for Tensor.
#ifndef ASYNCRT_TENSOR_SCALAR_HOST_TENSOR_H_
#define ASYNCRT_TENSOR_SCALAR_HOST_TENSOR_H_

#include <cassert>
#include <cstring>
#include <new>
#include <string>
#include <type_traits>

#include "absl/status/statusor.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/tensor.h"

namespace asyncrt {

class ScalarHostTensor final : public Tensor {
 public:
  // `value`'s type gives the dtype (GetDType<T>()); not std::string.
  template <typename T>
  ScalarHostTensor(const TensorShape& shape, T value)
      : Tensor(TensorMetadata(GetDType<T>(), shape)) {
    static_assert(!std::is_same_v<T, std::string>,
                  "ScalarHostTensor cannot hold strings");
    static_assert(sizeof(T) <= kValueSize && alignof(T) <= kValueSize);
    std::memcpy(value_, &value, sizeof(T));
  }

  // Copies DTypeSize(metadata.dtype) bytes from `value_bytes`. The dtype
  // must not be kString or kInvalid (asserted).
  ScalarHostTensor(const TensorMetadata& metadata, const void* value_bytes);

  ScalarHostTensor(const ScalarHostTensor&) = default;
  ScalarHostTensor& operator=(const ScalarHostTensor&) = default;
  ScalarHostTensor(ScalarHostTensor&&) = default;
  ScalarHostTensor& operator=(ScalarHostTensor&&) = default;

  // A copy (the value is inline, so there is nothing to share).
  ScalarHostTensor CopyRef() const { return *this; }

  TensorType tensor_type() const override { return ScalarHostTensorType(); }

  // "ScalarHostTensor dtype = i32, shape = [2, 2], value = 1".
  void Print(std::string* out) const override;

  const void* value_data() const { return value_; }
  // The value as T, which must be the dtype's C++ type (asserted).
  template <typename T>
  const T& GetValue() const {
    assert(GetDType<T>() == dtype() && "ScalarHostTensor::GetValue<T> type");
    return *std::launder(reinterpret_cast<const T*>(value_));
  }

 private:
  static constexpr size_t kValueSize = 16;
  // Large and aligned enough for complex128.
  alignas(kValueSize) unsigned char value_[kValueSize] = {};
};

// A dense tensor of the scalar's shape with every element equal to its
// value. InvalidArgument for a negative dimension, ResourceExhausted if
// `allocator` fails.
absl::StatusOr<DenseHostTensor> ConvertScalarToDense(
    const ScalarHostTensor& scalar, HostAllocator& allocator);

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_SCALAR_HOST_TENSOR_H_
