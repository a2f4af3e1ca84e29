#include "asyncrt/tensor/coo_host_tensor.h"

#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/strings/str_cat.h"

namespace asyncrt {

CooHostTensor::CooHostTensor(const TensorShape& dense_shape, DType dtype,
                             DenseHostTensor indices, DenseHostTensor values)
    : Tensor(TensorMetadata(dtype, dense_shape)),
      indices_(std::move(indices)),
      values_(std::move(values)) {
  assert(indices_.dtype() == DType::kI64 && indices_.shape().GetRank() == 2);
  assert(values_.dtype() == dtype && values_.shape().GetRank() == 1);
}

void CooHostTensor::Print(std::string* out) const {
  absl::StrAppend(out, "CooHostTensor ", metadata().DebugString(),
                  ", indices = ");
  internal::AppendElementList(indices_.dtype(), indices_.data(),
                              indices_.NumElements(), out);
  out->append(", values = ");
  internal::AppendElementList(values_.dtype(), values_.data(),
                              values_.NumElements(), out);
}

namespace {

absl::Status AllocationError(const TensorMetadata& metadata) {
  return absl::ResourceExhaustedError(
      absl::StrCat("Cannot allocate tensor with ", metadata.DebugString()));
}

template <typename T>
bool IsNonZero(const T& value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return value.ToFloat() != 0.0f;
  } else {
    return value != T{};
  }
}

}  // namespace

absl::StatusOr<CooHostTensor> ConvertDenseToCoo(const DenseHostTensor& dense,
                                                HostAllocator& allocator) {
  const DType dtype = dense.dtype();
  if (dtype == DType::kString || dtype == DType::kInvalid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot convert a dense tensor of dtype ", DTypeName(dtype), " to COO"));
  }
  const int64_t num_elements = dense.NumElements();
  const size_t element_size = DTypeSize(dtype);
  const char* bytes = static_cast<const char*>(dense.data());

  // Flat positions of the non-zero elements.
  std::vector<int64_t> nonzero;
  DispatchByDType(dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!std::is_same_v<T, std::string>) {
      for (int64_t i = 0; i < num_elements; ++i) {
        T value;
        std::memcpy(&value, bytes + i * element_size, sizeof(T));
        if (IsNonZero(value)) nonzero.push_back(i);
      }
    }
  });

  const int rank = dense.shape().GetRank();
  const int64_t nnz = static_cast<int64_t>(nonzero.size());
  TensorMetadata indices_md(DType::kI64, {nnz, static_cast<int64_t>(rank)});
  TensorMetadata values_md(dtype, {nnz});
  auto indices = DenseHostTensor::CreateUninitialized(indices_md, allocator);
  if (!indices) return AllocationError(indices_md);
  auto values = DenseHostTensor::CreateUninitialized(values_md, allocator);
  if (!values) return AllocationError(values_md);

  absl::Span<const int64_t> dims = dense.shape().GetDimensions();
  absl::Span<int64_t> coords = indices->elements<int64_t>();
  char* value_bytes = static_cast<char*>(values->data());
  for (int64_t k = 0; k < nnz; ++k) {
    // TFRT's unravelling over reversed dimensions; see the header.
    int64_t flat = nonzero[k];
    for (int j = 0; j < rank; ++j) {
      coords[k * rank + (rank - 1 - j)] = flat % dims[j];
      flat /= dims[j];
    }
    std::memcpy(value_bytes + k * element_size,
                bytes + nonzero[k] * element_size, element_size);
  }
  return CooHostTensor(dense.shape(), dtype, *std::move(indices),
                       *std::move(values));
}

absl::StatusOr<DenseHostTensor> ConvertCooToDense(const CooHostTensor& coo,
                                                  HostAllocator& allocator) {
  const DenseHostTensor& indices = coo.indices();
  const DenseHostTensor& values = coo.values();
  const int rank = coo.shape().GetRank();
  if (coo.dtype() == DType::kString || coo.dtype() == DType::kInvalid) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot convert a COO tensor of dtype ", DTypeName(coo.dtype()),
        " to dense"));
  }
  if (values.dtype() != coo.dtype() || values.shape().GetRank() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("COO values must be a rank-1 ", DTypeName(coo.dtype()),
                     " tensor, got ", values.metadata().DebugString()));
  }
  const int64_t nnz = values.NumElements();
  if (indices.dtype() != DType::kI64 || indices.shape().GetRank() != 2 ||
      indices.shape().GetDimensionSize(0) != nnz ||
      indices.shape().GetDimensionSize(1) != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "COO indices must be an i64 tensor of shape [", nnz, ", ", rank,
        "], got ", indices.metadata().DebugString()));
  }

  auto dense = DenseHostTensor::CreateUninitialized(coo.metadata(), allocator);
  if (!dense) return AllocationError(coo.metadata());
  // All-zero bytes are zero for every numeric dtype (and false for i1).
  if (dense->DataSizeInBytes() > 0) {
    std::memset(dense->data(), 0, dense->DataSizeInBytes());
  }

  absl::Span<const int64_t> dims = coo.shape().GetDimensions();
  absl::Span<const int64_t> coords = indices.elements<int64_t>();
  const size_t element_size = DTypeSize(coo.dtype());
  const char* value_bytes = static_cast<const char*>(values.data());
  char* out = static_cast<char*>(dense->data());
  for (int64_t k = 0; k < nnz; ++k) {
    int64_t offset = 0;
    for (int j = 0; j < rank; ++j) {
      const int64_t c = coords[k * rank + j];
      if (c < 0 || c >= dims[j]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "COO index out of bounds: element ", k, " has coordinate ", c,
            " in dimension ", j, " of shape ", coo.shape().DebugString()));
      }
      offset = offset * dims[j] + c;
    }
    std::memcpy(out + offset * element_size, value_bytes + k * element_size,
                element_size);
  }
  return *std::move(dense);
}

bool CooTensorEqual(const CooHostTensor& a, const CooHostTensor& b) {
  return a.metadata() == b.metadata() &&
         DenseTensorEqual(a.indices(), b.indices()) &&
         DenseTensorEqual(a.values(), b.values());
}

}  // namespace asyncrt
