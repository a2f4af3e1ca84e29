#include "asyncrt/core_runtime/tensor_handle.h"

#include <cassert>

#include "absl/strings/str_cat.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/tensor/conversion_registry.h"

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

TensorHandle TensorHandle::TransferTo(const ExecutionContext& exec_ctx,
                                      Device& device) const {
  return TransferTo(exec_ctx, device, DefaultTensorType(device));
}

namespace {

// `tensor` (available) converted to `type` on `dst`.
RCReference<AsyncValue> ConvertAvailable(const RCReference<AsyncValue>& tensor,
                                         Device& src, Device& dst,
                                         TensorType type,
                                         const ExecutionContext& exec_ctx) {
  if (tensor->IsError()) return tensor;
  const Tensor* concrete = GetTensorIfPresent(*tensor);
  if (concrete == nullptr) return MakeErrorAsyncValueRef("not a tensor");
  return ConvertTensor(*concrete, src, dst, type, exec_ctx);
}

}  // namespace

TensorHandle TensorHandle::TransferTo(const ExecutionContext& exec_ctx,
                                      Device& device, TensorType type) const {
  if (!tensor_) {
    return CreateError(MakeErrorAsyncValueRef("invalid tensorhandle"));
  }
  Device& src = device_ ? *device_ : exec_ctx.host()->host_device();
  RCReference<AsyncValue> converted;
  if (tensor_->IsAvailable()) {
    converted = ConvertAvailable(tensor_, src, device, type, exec_ctx);
  } else {
    RCReference<IndirectAsyncValue> pending = MakeIndirectAsyncValue();
    converted = pending;
    tensor_->AndThen([tensor = tensor_, src = FormRef(&src),
                      dst = FormRef(&device), type, exec_ctx,
                      pending = std::move(pending)] {
      pending->ForwardTo(ConvertAvailable(tensor, *src, *dst, type, exec_ctx));
    });
  }
  if (converted->IsError()) return CreateError(std::move(converted));
  if (has_inline_metadata_) {
    return TensorHandle(&device, metadata_, std::move(converted));
  }
  return TensorHandle(&device, std::move(converted));
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
