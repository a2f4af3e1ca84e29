// CooHostTensor: a sparse tensor in coordinate (COO) format.
//
// A COO tensor of dense shape S (rank R) with N stored (non-zero) elements
// holds two DenseHostTensors:
//   indices: i64, shape [N, R]; row k is the coordinate of element k;
//   values:  the tensor's dtype, shape [N].
// Elements not listed are zero. Coordinates are not validated on
// construction; ConvertCooToDense checks them.
//
// Ownership: the tensor owns its two DenseHostTensors (each one buffer
// reference). Move-only; CopyRef() shares both buffers.
//
// Thread-safety: as for Tensor.
#ifndef ASYNCRT_TENSOR_COO_HOST_TENSOR_H_
#define ASYNCRT_TENSOR_COO_HOST_TENSOR_H_

#include <string>

#include "absl/status/statusor.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/tensor.h"

namespace asyncrt {

class CooHostTensor final : public Tensor {
 public:
  // `indices` (i64, [nnz, rank]) and `values` ([nnz], of `dtype`) are
  // consumed. Their shapes are asserted in debug builds only.
  CooHostTensor(const TensorShape& dense_shape, DType dtype,
                DenseHostTensor indices, DenseHostTensor values);

  CooHostTensor(CooHostTensor&&) = default;
  CooHostTensor& operator=(CooHostTensor&&) = default;
  CooHostTensor(const CooHostTensor&) = delete;
  CooHostTensor& operator=(const CooHostTensor&) = delete;

  // A tensor sharing this tensor's index and value buffers.
  CooHostTensor CopyRef() const {
    return CooHostTensor(shape(), dtype(), indices_.CopyRef(),
                         values_.CopyRef());
  }

  TensorType tensor_type() const override { return CooHostTensorType(); }

  // "CooHostTensor dtype = i32, shape = [3, 2], indices = [0, 0, 0, 1],
  // values = [4, 4]"; each list is flat and limited to 16 values.
  void Print(std::string* out) const override;

  const DenseHostTensor& indices() const { return indices_; }
  DenseHostTensor& indices() { return indices_; }
  const DenseHostTensor& values() const { return values_; }
  DenseHostTensor& values() { return values_; }
  // The number of stored elements.
  int64_t NumStored() const { return values_.NumElements(); }

 private:
  DenseHostTensor indices_;
  DenseHostTensor values_;
};

// A COO tensor holding every non-zero element of `dense` (compared with
// T{}, so -0.0 counts as zero) in flat order. InvalidArgument for string
// tensors, ResourceExhausted if `allocator` fails.
//
// Compatibility: the coordinate of flat element i is computed as TFRT does,
// unravelling i over the dimensions in reversed order:
//   for (j = 0; j < rank; ++j) { coord[rank-1-j] = i % dims[j]; i /= dims[j]; }
// For shape [3, 2] this lists [0, 0], [0, 1], [0, 2], [1, 0], [1, 1], [1, 2]
// (not row-major coordinates of [3, 2]); for square shapes it is row-major.
// TFRT programs check the printed output, so it is kept.
absl::StatusOr<CooHostTensor> ConvertDenseToCoo(const DenseHostTensor& dense,
                                                HostAllocator& allocator);

// The dense tensor with each stored value at its (row-major) coordinate and
// zeros elsewhere; a repeated coordinate keeps the last value.
// InvalidArgument if the indices or values have the wrong dtype or shape, or
// any coordinate is outside the dense shape; ResourceExhausted if
// `allocator` fails.
absl::StatusOr<DenseHostTensor> ConvertCooToDense(const CooHostTensor& coo,
                                                  HostAllocator& allocator);

// True if `a` and `b` have the same metadata and equal index and value
// tensors (the same stored elements in the same order).
bool CooTensorEqual(const CooHostTensor& a, const CooHostTensor& b);

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_COO_HOST_TENSOR_H_
