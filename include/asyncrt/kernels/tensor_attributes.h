// Reading tensors and shapes out of BEF attributes, shared by the tensor
// and corert kernels.
#ifndef ASYNCRT_KERNELS_TENSOR_ATTRIBUTES_H_
#define ASYNCRT_KERNELS_TENSOR_ATTRIBUTES_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/dtype.h"
#include "asyncrt/tensor/string_host_tensor.h"

namespace asyncrt {

// The dtype of a scalar attribute kind (kI32 -> DType::kI32, kBool -> kI1).
std::optional<DType> DTypeOfAttributeKind(bef::AttributeKind kind);

// An integer array attribute (`[1 : i64, 57 : i64]`, `[]`), widened.
absl::StatusOr<std::vector<int64_t>> IntegerArrayAttribute(
    const bef::Attribute* attribute);
// The same, with every element a valid (non-negative) dimension.
absl::StatusOr<std::vector<int64_t>> DimensionsAttribute(
    const bef::Attribute* attribute);

// A new tensor holding a dense elements attribute (`dense<...>`).
absl::StatusOr<DenseHostTensor> DenseTensorFromAttribute(
    const bef::Attribute& dense, HostAllocator& allocator);

// The constant tensor of a dense elements attribute of `file`, decoded
// once per file (BefFile::GetOrDecode) and shared by every call: its
// read-only buffer views the attribute's bytes in the file (copied once
// only if they are not aligned for the dtype), so loading a model's
// weights neither copies them per call nor lets an op write into them.
absl::StatusOr<DenseHostTensor> ConstantTensorFromAttribute(
    const bef::BefFile& file, const bef::Attribute& dense,
    HostAllocator& allocator);

// A string tensor of `shape` from `values`: one string (splatted) or one
// per element.
absl::StatusOr<StringHostTensor> StringTensorFromAttributes(
    const bef::BefFile& file, const bef::Attribute* shape,
    const bef::Attribute* values);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_TENSOR_ATTRIBUTES_H_
