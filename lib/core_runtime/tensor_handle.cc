#include "asyncrt/core_runtime/tensor_handle.h"

#include <cassert>

#include "absl/strings/str_cat.h"

namespace asyncrt {

TensorHandle TensorHandle::CreateError(RCReference<AsyncValue> error) {
  assert(error && error->IsError());
  return TensorHandle(nullptr, std::move(error));
}

const TensorMetadata& TensorHandle::GetTensorMetadata() const {
  const Tensor* tensor = GetAvailableTensor();
  assert(tensor && "GetAvailableMetadata() before the metadata is known");
  return tensor->metadata();
}

AsyncValueRef<TensorMetadata> TensorHandle::GetAsyncMetadata() const {
  if (has_inline_metadata_) {
    return MakeAvailableAsyncValueRef<TensorMetadata>(metadata_);
  }
  auto metadata = MakeUnconstructedAsyncValueRef<TensorMetadata>();
  tensor_->AndThen([tensor = tensor_, metadata] {
    if (const absl::Status* error = tensor->GetErrorIfPresent()) {
      metadata.SetError(*error);
      return;
    }
    const Tensor* t = GetTensorIfPresent(*tensor);
    if (!t) {
      metadata.SetError(absl::InternalError("not a tensor"));
      return;
    }
    metadata.emplace(t->metadata());
  });
  return metadata;
}

void TensorHandle::Print(std::string* out) const {
  if (!tensor_) {
    out->append("<null TensorHandle>");
    return;
  }
  if (const absl::Status* error = tensor_->GetErrorIfPresent()) {
    absl::StrAppend(out, "<error: ", error->message(), ">");
    return;
  }
  if (const Tensor* tensor = GetAvailableTensor()) {
    tensor->Print(out);
    return;
  }
  out->append("future TensorHandle");
  if (has_inline_metadata_) {
    absl::StrAppend(out, " with metadata ", metadata_.DebugString());
  }
}

std::string TensorHandle::DebugString() const {
  std::string out;
  Print(&out);
  return out;
}

}  // namespace asyncrt
