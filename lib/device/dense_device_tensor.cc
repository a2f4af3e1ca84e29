#include "asyncrt/device/dense_device_tensor.h"

#include <cstring>
#include <mutex>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asyncrt/tensor/conversion_registry.h"

namespace asyncrt {

//===--- StreamDevice -----------------------------------------------------===//

StreamDevice::StreamDevice(DeviceAttributes attributes, HostContext* host)
    : Device(std::move(attributes)), host_(host) {
  RegisterDeviceTensors();
}

absl::Status StreamDevice::BeginCapture() {
  return absl::UnimplementedError(
      absl::StrCat(name(), " cannot record device graphs"));
}

absl::StatusOr<std::unique_ptr<DeviceGraph>> StreamDevice::EndCapture() {
  return absl::UnimplementedError(
      absl::StrCat(name(), " cannot record device graphs"));
}

StreamDevice* AsStreamDevice(Device* device) {
  return dynamic_cast<StreamDevice*>(device);
}
const StreamDevice* AsStreamDevice(const Device* device) {
  return dynamic_cast<const StreamDevice*>(device);
}

//===--- Buffers and tensors ----------------------------------------------===//

DeviceBuffer::~DeviceBuffer() {
  if (!memory_ || device_->FreesInStreamOrder()) return;
  // Work already enqueued may still read the memory: free it after that.
  // A device that is shut down has drained its stream.
  if (Stream* stream = device_->stream()) {
    FreeAfter(std::move(memory_), stream->RecordEvent());
  }
}

absl::StatusOr<DenseDeviceTensor> DenseDeviceTensor::Allocate(
    StreamDevice& device, const TensorMetadata& metadata) {
  std::optional<size_t> bytes = internal::DenseByteSize(metadata);
  if (!bytes) {
    return absl::InvalidArgumentError(
        absl::StrCat("no dense device tensor of ", metadata.DebugString(),
                     " on ", device.name()));
  }
  absl::StatusOr<DeviceMemory> memory = device.allocator().Allocate(*bytes);
  if (!memory.ok()) return memory.status();
  return DenseDeviceTensor(
      metadata, MakeRef<DeviceBuffer>(FormRef(&device), *std::move(memory)));
}

size_t DenseDeviceTensor::DataSizeInBytes() const {
  return internal::DenseByteSize(metadata()).value_or(0);
}

TensorType DenseDeviceTensorType() {
  static const TensorType type = TensorType::Register("DenseDevice");
  return type;
}

TensorType DenseDeviceTensor::tensor_type() const {
  return DenseDeviceTensorType();
}

void DenseDeviceTensor::Print(std::string* out) const {
  absl::StrAppend(out, "DenseDeviceTensor ", metadata().DebugString(),
                  ", device = ", device().name());
}

TensorType DefaultTensorType(const Device& device) {
  return AsStreamDevice(&device) ? DenseDeviceTensorType()
                                 : DenseHostTensorType();
}

//===--- Copies -----------------------------------------------------------===//

namespace {

// Sets `result` to `value` once an event recorded now on `stream` is done
// (or to the stream's error); `keep_alive` (the copy's source) lives until
// then.
template <typename T, typename KeepAlive>
void CompleteAfterStream(Stream& stream, AsyncValueRef<T> result, T value,
                         KeepAlive keep_alive) {
  AsyncValueRef<Chain> done = stream.RecordEvent()->done();
  AsyncValue* raw = done.GetAsyncValue();
  raw->AndThen([done = std::move(done), result = std::move(result),
                value = std::move(value),
                keep_alive = std::move(keep_alive)]() mutable {
    if (const absl::Status* error = done.GetAsyncValue()->GetErrorIfPresent()) {
      result.SetError(*error);
    } else {
      result.emplace(std::move(value));
    }
  });
}

template <typename T>
AsyncValueRef<T> CopyError(absl::Status status) {
  return AsyncValueRef<T>(MakeErrorAsyncValueRef(std::move(status)));
}

absl::Status ShutDownError(const Device& device) {
  return absl::FailedPreconditionError(
      absl::StrCat(device.name(), " is shut down"));
}

// Copies `bytes` from `src` into `destination` (a new tensor, or an error
// making it) on `device`'s copy stream for `direction`; the result is
// `destination` once the copy is done. `keep_alive` (the source, a staging
// buffer) lives until then.
template <typename T, typename Source>
AsyncValueRef<T> EnqueueCopyInto(StreamDevice& device, CopyDirection direction,
                                 absl::StatusOr<T> destination, const void* src,
                                 size_t bytes, Source keep_alive) {
  if (!destination.ok()) return CopyError<T>(destination.status());
  Stream* stream = device.copy_stream(direction);
  if (stream == nullptr) return CopyError<T>(ShutDownError(device));
  if (bytes > 0) {
    absl::Status status =
        device.EnqueueCopy(direction, destination->data(), src, bytes);
    if (!status.ok()) return CopyError<T>(std::move(status));
  }
  auto result = MakeUnconstructedAsyncValueRef<T>();
  CompleteAfterStream(*stream, result, *std::move(destination),
                      std::move(keep_alive));
  return result;
}

// Pinned host memory that a copy to or from the host goes through where
// the device asks for it (StagesHostCopies). The device is declared first,
// so it outlives the memory its allocator frees.
struct StagingBuffer {
  RCReference<StreamDevice> device;
  DeviceMemory memory;
};

// Pinned memory is page-locked (the OS cannot page it out), and a caching
// allocator keeps what it hands out: staging holds at most about this much
// of it at once, copies in flight and the host tensors that copies to the
// host left in pinned memory together (a model's weights, uploaded on its
// first call, would otherwise all be staged at once and stay cached).
constexpr int64_t kStagingBudgetBytes = int64_t{64} << 20;

// A staging buffer of `bytes`, or nullopt where the device stages nothing,
// the budget is spent or no pinned memory is left (the copy then uses the
// caller's memory: still correct, but a CUDA copy from pageable memory
// waits for its stream).
std::optional<StagingBuffer> Stage(StreamDevice& device, size_t bytes) {
  if (!device.StagesHostCopies() || bytes == 0) return std::nullopt;
  // Racing copies may pass the budget a little: it bounds, not accounts.
  if (device.host_allocator().GetStats().live_bytes +
          static_cast<int64_t>(bytes) >
      kStagingBudgetBytes) {
    return std::nullopt;
  }
  absl::StatusOr<DeviceMemory> memory = device.host_allocator().Allocate(bytes);
  if (!memory.ok()) return std::nullopt;
  return StagingBuffer{FormRef(&device), *std::move(memory)};
}

}  // namespace

AsyncValueRef<DenseDeviceTensor> CopyToDevice(const DenseHostTensor& src,
                                              StreamDevice& dst) {
  absl::StatusOr<DenseDeviceTensor> destination =
      DenseDeviceTensor::Allocate(dst, src.metadata());
  const size_t bytes = src.DataSizeInBytes();
  if (destination.ok()) {
    if (std::optional<StagingBuffer> staging = Stage(dst, bytes)) {
      // Into pinned memory here, so that the device's copy never blocks
      // this thread; the source may go at once.
      std::memcpy(staging->memory.data(), src.data(), bytes);
      const void* staged = staging->memory.data();
      return EnqueueCopyInto(dst, CopyDirection::kHostToDevice,
                             std::move(destination), staged, bytes,
                             *std::move(staging));
    }
  }
  return EnqueueCopyInto(dst, CopyDirection::kHostToDevice,
                         std::move(destination), src.data(), bytes,
                         src.CopyRef());
}

AsyncValueRef<DenseHostTensor> CopyToHost(const DenseDeviceTensor& src,
                                          HostContext* host) {
  StreamDevice& device = src.device();
  const size_t bytes = src.DataSizeInBytes();
  if (std::optional<StagingBuffer> staging = Stage(device, bytes)) {
    // Straight into pinned memory, which the new tensor keeps: it goes
    // back to the device's host allocator with the tensor.
    void* data = staging->memory.data();
    RCReference<HostBuffer> buffer = HostBuffer::CreateFromExternal(
        data, bytes, [staging = *std::move(staging)](void*, size_t) mutable {
          staging.memory.Free();
        });
    if (buffer) {
      return EnqueueCopyInto(device, CopyDirection::kDeviceToHost,
                             absl::StatusOr<DenseHostTensor>(DenseHostTensor(
                                 src.metadata(), std::move(buffer))),
                             src.data(), bytes, src.CopyRef());
    }
  }
  std::optional<DenseHostTensor> tensor =
      DenseHostTensor::CreateUninitialized(src.metadata(), *host->allocator());
  absl::StatusOr<DenseHostTensor> destination =
      tensor ? absl::StatusOr<DenseHostTensor>(std::move(*tensor))
             : absl::ResourceExhaustedError(absl::StrCat(
                   "out of host memory copying ", src.metadata().DebugString(),
                   " from ", device.name()));
  return EnqueueCopyInto(device, CopyDirection::kDeviceToHost,
                         std::move(destination), src.data(), bytes,
                         src.CopyRef());
}

AsyncValueRef<DenseDeviceTensor> CopyToDevice(const DenseDeviceTensor& src,
                                              StreamDevice& dst) {
  if (&src.device() == &dst) {
    return EnqueueCopyInto(dst, CopyDirection::kDeviceToDevice,
                           DenseDeviceTensor::Allocate(dst, src.metadata()),
                           src.data(), src.DataSizeInBytes(), src.CopyRef());
  }
  // Another device: through host memory, one copy after the other.
  AsyncValueRef<DenseHostTensor> staged = CopyToHost(src, dst.host());
  auto result = MakeIndirectAsyncValue();
  AsyncValue* raw = staged.GetAsyncValue();
  raw->AndThen([staged = std::move(staged), result,
                dst = FormRef(&dst)]() mutable {
    if (staged.IsError()) {
      result->ForwardTo(RCReference<AsyncValue>(staged));
      return;
    }
    result->ForwardTo(
        RCReference<AsyncValue>(CopyToDevice(staged.get(), *dst)));
  });
  return AsyncValueRef<DenseDeviceTensor>(std::move(result));
}

//===--- Registration -----------------------------------------------------===//

namespace {

// A conversion to a device: CopyToDevice of a `Source` tensor, or an error
// for a device without streams.
template <typename Source>
RCReference<AsyncValue> ToDevice(const Tensor& src, const Device&,
                                 const Device& dst_device, TensorType,
                                 const ExecutionContext&) {
  StreamDevice* dst = AsStreamDevice(const_cast<Device*>(&dst_device));
  if (dst == nullptr) {
    return MakeErrorAsyncValueRef(absl::StrCat(
        dst_device.name(), " holds no device tensors (it has no streams)"));
  }
  return CopyToDevice(static_cast<const Source&>(src), *dst);
}

RCReference<AsyncValue> DeviceToHost(const Tensor& src, const Device&,
                                     const Device&, TensorType,
                                     const ExecutionContext& exec_ctx) {
  return CopyToHost(static_cast<const DenseDeviceTensor&>(src),
                    exec_ctx.host());
}

}  // namespace

void RegisterDeviceTensors() {
  static std::once_flag once;
  std::call_once(once, [] {
    RegisterTensorPayloadType<DenseDeviceTensor>();
    TensorConversionRegistry& registry = TensorConversionRegistry::Global();
    registry.Register(DenseHostTensorType(), DenseDeviceTensorType(),
                      ToDevice<DenseHostTensor>);
    registry.Register(DenseDeviceTensorType(), DenseHostTensorType(),
                      DeviceToHost);
    registry.Register(DenseDeviceTensorType(), DenseDeviceTensorType(),
                      ToDevice<DenseDeviceTensor>);
  });
}

}  // namespace asyncrt
