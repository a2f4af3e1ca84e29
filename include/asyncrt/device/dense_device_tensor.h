// Dense tensors in a device's memory, and the asynchronous copies that move
// tensors between the host and devices.
//
// A DenseDeviceTensor is (device, buffer, dtype, shape), row-major like a
// DenseHostTensor. Its bytes are not readable on the host: CopyToHost them.
// The buffer is reference-counted; when the last reference goes, its memory
// returns to the device's allocator once the work already enqueued on the
// device's stream (which may still read it) is done: FreeAfter an event
// recorded then; or at once on a device whose allocator reuses memory in
// stream order (StreamDevice::FreesInStreamOrder).
//
// Copies complete an async value and never block a host thread: a copy is
// enqueued on the stream of the device involved (of the source for
// device-to-host, of the destination otherwise) and its result becomes
// available, or an error, when an event recorded after it completes (on the
// host's blocking pool). Sources stay alive until then. Copies between
// devices of two backends go through host memory.
//
// Tensors produced by a device's ops are available as soon as the op is
// enqueued: every reader is ordered after the writer on the device's stream
// (stream_device.h), so waiting for the device would only add latency.
//
// Thread-safety: tensors are thread-compatible values; buffers and the copy
// functions are thread-safe. Blocking: none.
#ifndef ASYNCRT_DEVICE_DENSE_DEVICE_TENSOR_H_
#define ASYNCRT_DEVICE_DENSE_DEVICE_TENSOR_H_

#include <cstddef>
#include <string>

#include "absl/status/statusor.h"
#include "asyncrt/device/device_allocator.h"
#include "asyncrt/device/stream_device.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/support/ref_count.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/tensor.h"

namespace asyncrt {

// One allocation of a device's memory, shared by the tensors that view it.
class DeviceBuffer : public ReferenceCounted<DeviceBuffer> {
 public:
  DeviceBuffer(RCReference<StreamDevice> device, DeviceMemory memory)
      : device_(std::move(device)), memory_(std::move(memory)) {}
  // Frees the memory after the device's queued work (see above).
  ~DeviceBuffer();

  StreamDevice& device() const { return *device_; }
  // A device address.
  void* data() const { return memory_.data(); }
  size_t size() const { return memory_.size(); }

 private:
  RCReference<StreamDevice> device_;
  DeviceMemory memory_;
};

class DenseDeviceTensor final : public Tensor {
 public:
  // A tensor of `metadata` in `buffer`, which must hold its bytes.
  DenseDeviceTensor(const TensorMetadata& metadata,
                    RCReference<DeviceBuffer> buffer)
      : Tensor(metadata), buffer_(std::move(buffer)) {}

  // A tensor of `metadata` in new, uninitialized memory of `device`.
  // ResourceExhausted (naming the device) when it does not fit;
  // InvalidArgument for string tensors, which have no dense bytes.
  static absl::StatusOr<DenseDeviceTensor> Allocate(
      StreamDevice& device, const TensorMetadata& metadata);

  DenseDeviceTensor(DenseDeviceTensor&&) = default;
  DenseDeviceTensor& operator=(DenseDeviceTensor&&) = default;
  DenseDeviceTensor CopyRef() const {
    return DenseDeviceTensor(metadata(), buffer_);
  }

  StreamDevice& device() const { return buffer_->device(); }
  const RCReference<DeviceBuffer>& buffer() const { return buffer_; }
  void* data() const { return buffer_->data(); }
  size_t DataSizeInBytes() const;

  TensorType tensor_type() const override;
  // "DenseDeviceTensor dtype = f32, shape = [2, 2], device = SIM:0"; the
  // values are in device memory.
  void Print(std::string* out) const override;

 private:
  RCReference<DeviceBuffer> buffer_;
};

// The tensor type of DenseDeviceTensor, "DenseDevice".
TensorType DenseDeviceTensorType();

// The tensor type a transfer to `device` produces: DenseDevice on a
// StreamDevice, DenseHost on the host.
TensorType DefaultTensorType(const Device& device);

// Copies `src` (available) into new memory of `dst`. The result is
// available once the copy is done, or an error (out of memory, a failed
// copy). Host tensors other than dense ones convert first (see
// ConvertTensor).
AsyncValueRef<DenseDeviceTensor> CopyToDevice(const DenseHostTensor& src,
                                              StreamDevice& dst);
// Copies a device tensor to another device (of the same backend: one copy
// on the device; of another: through host memory).
AsyncValueRef<DenseDeviceTensor> CopyToDevice(const DenseDeviceTensor& src,
                                              StreamDevice& dst);
// Copies `src` into a new host tensor from `host`'s allocator.
AsyncValueRef<DenseHostTensor> CopyToHost(const DenseDeviceTensor& src,
                                          HostContext* host);

// Makes device tensors known to the tensor registries: GetTensorIfPresent
// finds them, and TensorConversionRegistry::Global() converts DenseHost to
// DenseDevice, DenseDevice to DenseHost and DenseDevice to DenseDevice with
// the copies above. Idempotent and thread-safe; every StreamDevice calls it
// when constructed.
void RegisterDeviceTensors();

}  // namespace asyncrt

#endif  // ASYNCRT_DEVICE_DENSE_DEVICE_TENSOR_H_
