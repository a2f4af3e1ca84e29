// Reading tensors and shapes out of BEF attributes, shared by the tensor
// and corert kernels.
#ifndef ASYNCRT_KERNELS_TENSOR_ATTRIBUTES_H_
#define ASYNCRT_KERNELS_TENSOR_ATTRIBUTES_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <utility>
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

// A constant decoded once per file, with copies of it that other devices
// keep for the file's life (a model's weights on a GPU are copied there
// once, not per call). Thread-safe.
class DecodedConstant {
 public:
  explicit DecodedConstant(DenseHostTensor tensor)
      : tensor_(std::move(tensor)) {}
  const DenseHostTensor& tensor() const { return tensor_; }
  // The copy kept for `key` (a device's incarnation), made by `make` on
  // the first call, and again where `usable` says the kept one is not (a
  // copy that failed).
  std::shared_ptr<const void> GetOrMakeCopy(
      uint64_t key, const std::function<std::shared_ptr<const void>()>& make,
      const std::function<bool(const void*)>& usable) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (auto& [copy_key, copy] : copies_) {
      if (copy_key != key) continue;
      if (!usable(copy.get())) copy = make();
      return copy;
    }
    std::shared_ptr<const void> copy = make();
    if (copy != nullptr) copies_.emplace_back(key, copy);
    return copy;
  }

 private:
  DenseHostTensor tensor_;
  mutable std::mutex mutex_;
  // Few devices: a list.
  mutable std::vector<std::pair<uint64_t, std::shared_ptr<const void>>>
      copies_;
};

// The decoded constant of `dense` (as ConstantTensorFromAttribute).
absl::StatusOr<const DecodedConstant*> DecodedConstantOf(
    const bef::BefFile& file, const bef::Attribute& dense,
    HostAllocator& allocator);

// A string tensor of `shape` from `values`: one string (splatted) or one
// per element.
absl::StatusOr<StringHostTensor> StringTensorFromAttributes(
    const bef::BefFile& file, const bef::Attribute* shape,
    const bef::Attribute* values);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_TENSOR_ATTRIBUTES_H_
