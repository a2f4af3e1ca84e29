// DenseHostTensor: a dense, row-major tensor of numeric (non-string)
// elements in a refcounted HostBuffer.
//
// Ownership: the tensor holds one reference to its buffer. It is move-only;
// CopyRef() makes a second tensor sharing the same buffer (no byte copy), so
// writes through one are visible through the other. Kernels that want to
// write in place check IsBufferUnique() first.
//
// Thread-safety: as for Tensor. The buffer's refcount is atomic, so CopyRef
// and destruction may race freely; the bytes are not synchronized.
#ifndef ASYNCRT_TENSOR_DENSE_HOST_TENSOR_H_
#define ASYNCRT_TENSOR_DENSE_HOST_TENSOR_H_

#include <cassert>
#include <cstddef>
#include <optional>
#include <string>

#include "absl/types/span.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/support/ref_count.h"
#include "asyncrt/tensor/host_buffer.h"
#include "asyncrt/tensor/tensor.h"

namespace asyncrt {

class DenseHostTensor final : public Tensor {
 public:
  // Wraps `buffer` (+1, consumed), which must hold at least
  // NumElements() * DTypeSize(dtype) bytes, suitably aligned for the dtype.
  // `buffer` may be null only for a tensor with no elements.
  DenseHostTensor(const TensorMetadata& metadata,
                  RCReference<HostBuffer> buffer);

  // A tensor with uninitialized contents in a new kTensorAlignment-aligned
  // buffer from `allocator` (which must outlive the buffer). nullopt if
  // the allocation fails or `metadata` is invalid (kInvalid or kString dtype,
  // a negative dimension, a byte size that overflows).
  static std::optional<DenseHostTensor> CreateUninitialized(
      const TensorMetadata& metadata, HostAllocator& allocator);
  // The same tensor, built in place in a new available async value (no
  // tensor moved into it: what an op returns); null where
  // CreateUninitialized gives nullopt.
  static AsyncValueRef<DenseHostTensor> MakeUninitializedAsyncValue(
      const TensorMetadata& metadata, HostAllocator& allocator);

  DenseHostTensor(DenseHostTensor&&) = default;
  DenseHostTensor& operator=(DenseHostTensor&&) = default;
  DenseHostTensor(const DenseHostTensor&) = delete;
  DenseHostTensor& operator=(const DenseHostTensor&) = delete;

  // A tensor sharing this tensor's buffer and metadata.
  DenseHostTensor CopyRef() const {
    return DenseHostTensor(metadata(), buffer_);
  }

  TensorType tensor_type() const override { return DenseHostTensorType(); }

  // "DenseHostTensor dtype = i32, shape = [2, 2], values = [1, 2, 3, 4]";
  // at most 16 values, then ", ..." if there are more.
  void Print(std::string* out) const override;

  void* data() { return buffer_ ? buffer_->data() : nullptr; }
  const void* data() const { return buffer_ ? buffer_->data() : nullptr; }
  // NumElements() * DTypeSize(dtype()).
  size_t DataSizeInBytes() const {
    return static_cast<size_t>(NumElements()) * DTypeSize(dtype());
  }

  // The buffer (+0); null after ReleaseBuffer or a move.
  const RCReference<HostBuffer>& buffer() const { return buffer_; }
  // Gives the buffer (+1) to the caller, leaving this tensor without one.
  RCReference<HostBuffer> ReleaseBuffer() { return std::move(buffer_); }
  // True if this tensor holds the only reference to its buffer, so the
  // bytes may be overwritten without affecting anyone else; never for a
  // read-only or planned buffer. A slice buffer counts as shared only if the slice
  // itself is.
  bool IsBufferUnique() const {
    return buffer_ && buffer_->IsUnique() && !buffer_->IsReadOnly() &&
           !buffer_->IsPlanned();
  }

  // The elements as T, which must be the dtype's C++ type (asserted).
  template <typename T>
  absl::Span<T> elements() {
    assert(GetDType<T>() == dtype() && "DenseHostTensor::elements<T> type");
    return absl::Span<T>(static_cast<T*>(data()),
                         static_cast<size_t>(NumElements()));
  }
  template <typename T>
  absl::Span<const T> elements() const {
    assert(GetDType<T>() == dtype() && "DenseHostTensor::elements<T> type");
    return absl::Span<const T>(static_cast<const T*>(data()),
                               static_cast<size_t>(NumElements()));
  }

 private:
  RCReference<HostBuffer> buffer_;
};

// True if `a` and `b` have the same metadata and the same element bytes.
bool DenseTensorEqual(const DenseHostTensor& a, const DenseHostTensor& b);

// True if `a` and `b` have the same metadata and, element by element,
// |a - b| <= atol + rtol * |b| (NaN is never close). f16, bf16, f32 and f64
// only; false for other dtypes.
bool DenseTensorAllClose(const DenseHostTensor& a, const DenseHostTensor& b,
                         double rtol, double atol);

namespace internal {
// Appends "[e0, e1, ..., e15, ...]": at most 16 elements of `dtype` from
// `data` (`count` in all, `DTypeSize(dtype)` bytes apart). Shared by the
// Print methods of the host tensors.
void AppendElementList(DType dtype, const void* data, int64_t count,
                       std::string* out);
// The byte size of `metadata`'s elements, or nullopt for an invalid or
// string dtype, a negative dimension or overflow.
std::optional<size_t> DenseByteSize(const TensorMetadata& metadata);
}  // namespace internal

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_DENSE_HOST_TENSOR_H_
