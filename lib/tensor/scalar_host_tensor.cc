#include "asyncrt/tensor/scalar_host_tensor.h"

#include "absl/strings/str_cat.h"

namespace asyncrt {

ScalarHostTensor::ScalarHostTensor(const TensorMetadata& metadata,
                                   const void* value_bytes)
    : Tensor(metadata) {
  assert(metadata.dtype != DType::kString &&
         metadata.dtype != DType::kInvalid &&
         "ScalarHostTensor needs a numeric dtype");
  std::memcpy(value_, value_bytes, DTypeSize(metadata.dtype));
}

void ScalarHostTensor::Print(std::string* out) const {
  absl::StrAppend(out, "ScalarHostTensor ", metadata().DebugString(),
                  ", value = ");
  AppendElement(dtype(), value_, out);
}

absl::StatusOr<DenseHostTensor> ConvertScalarToDense(
    const ScalarHostTensor& scalar, HostAllocator& allocator) {
  if (!internal::DenseByteSize(scalar.metadata())) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Cannot convert scalar tensor with ", scalar.metadata().DebugString(),
        " to a dense tensor"));
  }
  auto dense =
      DenseHostTensor::CreateUninitialized(scalar.metadata(), allocator);
  if (!dense) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "Cannot allocate tensor with ", scalar.metadata().DebugString()));
  }
  const size_t element_size = DTypeSize(scalar.dtype());
  char* out = static_cast<char*>(dense->data());
  const int64_t n = scalar.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(out + i * element_size, scalar.value_data(), element_size);
  }
  return *std::move(dense);
}

}  // namespace asyncrt
