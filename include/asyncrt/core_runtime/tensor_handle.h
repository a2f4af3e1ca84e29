// TensorHandle: the value eager ops take and return.
//
// A handle names a tensor that may not be computed yet: the device it lives
// on, its metadata (dtype and shape) and an async value holding the concrete
// tensor (DenseHostTensor, ScalarHostTensor, ...). The metadata is usually
// known at once, because the op's shape function computed it when the op was
// issued; ops without a shape function produce handles whose metadata
// becomes available with the tensor.
//
// Ownership: a handle owns one reference to its tensor value. Its device is
// borrowed: devices belong to the HostContext's DeviceManager, which, like
// the allocator that holds the tensor's bytes, must outlive every handle of
// that context (refcounting the device cost two atomic operations per eager
// op for nothing). Handles are move-only; CopyRef() shares the tensor. Thread-safety: a handle is a value; the async values it refers to
// are thread-safe.
#ifndef ASYNCRT_CORE_RUNTIME_TENSOR_HANDLE_H_
#define ASYNCRT_CORE_RUNTIME_TENSOR_HANDLE_H_

#include <string>
#include <utility>

#include "absl/base/optimization.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/device.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/tensor/tensor.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt {

class TensorHandle {
 public:
  TensorHandle() = default;  // A null handle; IsValid() is false.
  // Metadata known now.
  TensorHandle(Device* device, TensorMetadata metadata,
               RCReference<AsyncValue> tensor)
      : device_(device),
        tensor_(std::move(tensor)),
        has_inline_metadata_(true),
        metadata_(std::move(metadata)) {}
  // Metadata known when the tensor is: taken from the tensor itself.
  TensorHandle(Device* device, RCReference<AsyncValue> tensor)
      : device_(device), tensor_(std::move(tensor)) {}
  // A handle whose tensor and metadata are the error `error`.
  static TensorHandle CreateError(RCReference<AsyncValue> error);

  TensorHandle(TensorHandle&& other) noexcept = default;
  TensorHandle& operator=(TensorHandle&& other) noexcept = default;
  TensorHandle(const TensorHandle&) = delete;
  TensorHandle& operator=(const TensorHandle&) = delete;

  // Inline: graph ops copy the handles of arguments that stay shared.
  TensorHandle CopyRef() const { return TensorHandle(*this, CopyTag()); }

  bool IsValid() const { return tensor_ != nullptr; }
  // The tensor value (+0): a concrete host tensor, an error, or unavailable.
  AsyncValue* GetAsyncTensor() const { return tensor_.get(); }
  RCReference<AsyncValue> CopyTensorRef() const { return tensor_; }
  // The available tensor, or nullptr while unavailable or on error.
  const Tensor* GetAvailableTensor() const {
    return tensor_ && tensor_->IsConcrete() ? GetTensorIfPresent(*tensor_)
                                            : nullptr;
  }
  // The device the tensor lives on (borrowed); null for an error handle.
  Device* device() const { return device_; }

  // True once the metadata is known (always, if a shape function ran).
  // Inline, as GetAvailableMetadata: every op checks and reads its
  // arguments' metadata.
  bool IsMetadataAvailable() const {
    return has_inline_metadata_ || (tensor_ && tensor_->IsConcrete());
  }
  // Requires IsMetadataAvailable() and no error.
  const TensorMetadata& GetAvailableMetadata() const {
    if (ABSL_PREDICT_TRUE(has_inline_metadata_)) return metadata_;
    return GetTensorMetadata();
  }
  // The metadata as an async value (+1); an error if the tensor failed.
  AsyncValueRef<TensorMetadata> GetAsyncMetadata() const;

  // The error of the tensor, if it has failed.
  const absl::Status* GetErrorIfPresent() const {
    return tensor_ ? tensor_->GetErrorIfPresent() : nullptr;
  }

  // This tensor copied to `device`, as `type` or, without one, the type
  // the device holds (DefaultTensorType: dense host tensors on the host,
  // dense device tensors on a StreamDevice). The only way a tensor moves
  // between devices: ops never move their arguments. The copy starts once
  // the tensor is available and the new handle's tensor becomes available
  // when it is done; errors (the tensor's own, a conversion that does not
  // exist, out of memory on the device, a failed copy) arrive in the new
  // handle. The metadata carries over. Never blocks.
  TensorHandle TransferTo(const ExecutionContext& exec_ctx,
                          Device& device) const;
  TensorHandle TransferTo(const ExecutionContext& exec_ctx, Device& device,
                          TensorType type) const;

  // For the core runtime, after an op adopted this consumed handle's
  // reference for its result: lets go of the tensor without dropping the
  // reference. The handle is then invalid.
  void ForgetTakenTensor() { (void)tensor_.release(); }

  // Makes this handle TensorHandle(device, metadata, tensor) in place: a
  // graph kernel rewrites the handle of a register it reuses, and
  // assigning a new handle would move every field twice.
  void Reset(Device* device, const TensorMetadata& metadata,
             RCReference<AsyncValue> tensor) {
    device_ = device;
    tensor_ = std::move(tensor);
    has_inline_metadata_ = true;
    metadata_ = metadata;
  }

  // Prints the tensor if available ("DenseHostTensor dtype = ..."), the
  // error, or "future TensorHandle with metadata ...".
  void Print(std::string* out) const;
  std::string DebugString() const;

 private:
  struct CopyTag {};
  // GetAvailableMetadata for metadata that arrived with the tensor.
  const TensorMetadata& GetTensorMetadata() const;
  TensorHandle(const TensorHandle& other, CopyTag)
      : device_(other.device_),
        tensor_(other.tensor_),
        has_inline_metadata_(other.has_inline_metadata_),
        metadata_(other.metadata_) {}

  Device* device_ = nullptr;
  RCReference<AsyncValue> tensor_;
  // Set iff the metadata was computed ahead of the tensor; otherwise the
  // tensor's own metadata is used once it is available.
  bool has_inline_metadata_ = false;
  TensorMetadata metadata_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_CORE_RUNTIME_TENSOR_HANDLE_H_
