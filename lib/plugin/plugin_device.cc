#include "lib/plugin/plugin_device.h"

#include <memory>
#include <mutex>
#include <utility>

#include "absl/strings/str_cat.h"

namespace asyncrt {

absl::Status StatusFromPlugin(AsyncRT_Code code, const char* message) {
  if (code == ASYNCRT_OK) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(code),
                      message ? message : "(no message)");
}

PluginPlatform::~PluginPlatform() {
  AsyncRT_Platform& platform = platform_.value;
  if (initialized_ && platform.struct_size >= ASYNCRT_PLATFORM_STRUCT_SIZE &&
      platform.destroy_platform != nullptr) {
    platform.destroy_platform(&platform);
  }
}

//===--- Memory -----------------------------------------------------------===//

class PluginDevice::Allocator final : public DeviceAllocator {
 public:
  Allocator(const PluginDevice& device, int64_t limit)
      : DeviceAllocator(device.name(), limit), device_(device) {}
  bool IsHostAccessible() const override { return false; }

 protected:
  void* AllocateRaw(size_t size, size_t alignment) override {
    return device_.platform().fns().allocate(device_.c_device(), size,
                                             alignment);
  }
  void DeallocateRaw(void* data, size_t size) override {
    device_.platform().fns().deallocate(device_.c_device(), data, size);
  }

 private:
  const PluginDevice& device_;
};

// The plug-in's pinned host memory (host_memory_allocate and
// _deallocate; without them, HostMemoryAllocator stands in).
class PluginDevice::HostAllocator final : public DeviceAllocator {
 public:
  explicit HostAllocator(const PluginDevice& device)
      : DeviceAllocator(absl::StrCat(device.name(), " host"), 0),
        device_(device) {}
  bool IsHostAccessible() const override { return true; }

 protected:
  void* AllocateRaw(size_t size, size_t alignment) override {
    return device_.platform().fns().host_memory_allocate(device_.c_device(),
                                                         size, alignment);
  }
  void DeallocateRaw(void* data, size_t size) override {
    device_.platform().fns().host_memory_deallocate(device_.c_device(), data,
                                                    size);
  }

 private:
  const PluginDevice& device_;
};

//===--- Streams and events -----------------------------------------------===//

namespace {

// A host function waiting for a plug-in's host_callback; handed to the
// blocking pool when called (the plug-in's thread must not wait for it).
struct PendingCallback {
  HostContext* host;
  absl::AnyInvocable<void(absl::Status) &&> callback;
};

void RunPendingCallback(void* arg, AsyncRT_Code code, const char* message) {
  std::unique_ptr<PendingCallback> pending(static_cast<PendingCallback*>(arg));
  HostContext* host = pending->host;
  RunOnBlockingPool(host, [pending = std::move(pending),
                           status = StatusFromPlugin(code, message)]() mutable {
    std::move(pending->callback)(std::move(status));
  });
}

// An event that is also one of the plug-in's, so that another stream of
// the platform can wait for it on the device.
class PluginEvent final : public DeviceEvent {
 public:
  PluginEvent(const PluginDevice& device, AsyncRT_Event event)
      : device_(FormRef(const_cast<PluginDevice*>(&device))), event_(event) {}
  ~PluginEvent() override {
    device_->platform().fns().destroy_event(device_->c_device(), event_);
  }
  const PluginDevice& device() const { return *device_; }
  AsyncRT_Event c_event() const { return event_; }

 private:
  RCReference<PluginDevice> device_;
  AsyncRT_Event event_;
};

}  // namespace

class PluginDevice::PluginStream final : public Stream {
 public:
  PluginStream(PluginDevice& device, AsyncRT_Stream stream)
      : Stream(device), device_(device), stream_(stream) {}
  // Drains the plug-in's stream, then frees it.
  ~PluginStream() override {
    fns().destroy_stream(device_.c_device(), stream_);
  }

  AsyncRT_Stream c_stream() const { return stream_; }

  // The error the runtime failed this stream with (see Fail), if any.
  absl::Status RuntimeError() {
    std::lock_guard<std::mutex> lock(mutex_);
    return error_;
  }

  RCReference<DeviceEvent> RecordEvent() override {
    AsyncRT_Event c_event = nullptr;
    AsyncRT_Status status;
    fns().create_event(device_.c_device(), &c_event, &status);
    if (status.status.ok()) {
      fns().record_event(device_.c_device(), stream_, c_event, &status);
      if (!status.status.ok()) {
        fns().destroy_event(device_.c_device(), c_event);
      }
    }
    RCReference<DeviceEvent> event;
    if (status.status.ok()) {
      event = MakeRef<PluginEvent>(device_, c_event);
    } else {
      event = MakeRef<DeviceEvent>();
      Fail(status.status);
    }
    AddCallback([event](absl::Status status) { event->Complete(status); });
    return event;
  }

  void WaitForEvent(RCReference<DeviceEvent> event) override {
    const auto* plugin_event = dynamic_cast<const PluginEvent*>(event.get());
    if (plugin_event != nullptr &&
        &plugin_event->device().platform() == &device_.platform()) {
      AsyncRT_Status status;
      fns().wait_for_event(device_.c_device(), stream_,
                           plugin_event->c_event(), &status);
      if (!status.status.ok()) Fail(status.status);
      return;
    }
    // Another backend's event: the plug-in cannot wait for it on the
    // device. One that is done orders nothing; one that failed fails this
    // stream, as a wait would.
    if (event->IsDone()) {
      if (const absl::Status* error = event->done().GetErrorIfPresent()) {
        Fail(*error);
      }
      return;
    }
    Fail(absl::UnimplementedError(absl::StrCat(
        device_.name(), " cannot wait on the device for another backend's "
        "event; copies between backends go through the host")));
  }

  void AddCallback(
      absl::AnyInvocable<void(absl::Status) &&> callback) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!error_.ok()) {
        // The runtime failed this stream itself (see Fail): report that.
        RunOnBlockingPool(device_.host(), [callback = std::move(callback),
                                           error = error_]() mutable {
          std::move(callback)(error);
        });
        return;
      }
    }
    auto* pending = new PendingCallback{device_.host(), std::move(callback)};
    AsyncRT_Status status;
    fns().host_callback(device_.c_device(), stream_, RunPendingCallback,
                        pending, &status);
    if (!status.status.ok()) {
      std::unique_ptr<PendingCallback> refused(pending);
      Fail(status.status);
      RunOnBlockingPool(device_.host(),
                        [refused = std::move(refused),
                         error = status.status]() mutable {
                          std::move(refused->callback)(error);
                        });
    }
  }

 private:
  const AsyncRT_DeviceFns& fns() const { return device_.platform().fns(); }

  // Errors the plug-in's stream does not know of (a call into it that
  // failed, a wait it cannot do) are sticky here, as its own are there.
  void Fail(absl::Status status) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (error_.ok()) error_ = std::move(status);
  }

  PluginDevice& device_;
  AsyncRT_Stream stream_;
  std::mutex mutex_;
  absl::Status error_;  // Guarded by mutex_.
};

//===--- The device -------------------------------------------------------===//

PluginDevice::PluginDevice(DeviceAttributes attributes, HostContext* host,
                           std::shared_ptr<PluginPlatform> platform,
                           AsyncRT_Device c_device)
    : StreamDevice(std::move(attributes), host),
      platform_(std::move(platform)),
      c_device_(c_device) {
  allocator_ = std::make_unique<Allocator>(
      *this, static_cast<int64_t>(memory_limit_bytes()));
  const AsyncRT_DeviceFns& fns = platform_->fns();
  if (fns.host_memory_allocate && fns.host_memory_deallocate) {
    host_allocator_ = std::make_unique<HostAllocator>(*this);
    pinned_host_memory_ = true;
  } else {
    host_allocator_ = std::make_unique<HostMemoryAllocator>(
        absl::StrCat(name(), " host"), 0);
  }
}

absl::StatusOr<RCReference<PluginDevice>> PluginDevice::Create(
    std::shared_ptr<PluginPlatform> platform, int ordinal, HostContext* host,
    uint64_t memory_limit_bytes) {
  const AsyncRT_Platform& c_platform = platform->platform();
  AsyncRT_Device c_device = {};
  c_device.struct_size = ASYNCRT_DEVICE_STRUCT_SIZE;
  c_device.ordinal = ordinal;
  c_device.numa_node = -1;
  c_device.requested_memory_limit_bytes = memory_limit_bytes;
  AsyncRT_Status status;
  c_platform.create_device(&c_platform, &c_device, &status);
  if (!status.status.ok()) {
    return absl::Status(
        status.status.code(),
        absl::StrCat("creating device ", ordinal, ": ",
                     status.status.message()));
  }
  DeviceAttributes attributes;
  attributes.type = c_platform.device_type;
  attributes.index = ordinal;
  attributes.memory_limit_bytes = c_device.memory_limit_bytes;
  // A plug-in of API 1.2 or older never saw the request: the runtime's
  // allocator keeps to it all the same.
  if (memory_limit_bytes != 0 &&
      (attributes.memory_limit_bytes == 0 ||
       attributes.memory_limit_bytes > memory_limit_bytes)) {
    attributes.memory_limit_bytes = memory_limit_bytes;
  }
  attributes.locality.numa_node = c_device.numa_node;
  if (c_device.bus_id) attributes.locality.bus_id = c_device.bus_id;
  attributes.physical_description =
      c_device.physical_description ? c_device.physical_description
                                    : c_platform.name;
  // From here the device owns c_device: its destructor destroys it.
  RCReference<PluginDevice> device = TakeRef(new PluginDevice(
      std::move(attributes), host, std::move(platform), c_device));
  AsyncRT_Stream c_stream = nullptr;
  device->platform().fns().create_stream(device->c_device(), &c_stream,
                                         &status);
  if (!status.status.ok()) {
    return absl::Status(status.status.code(),
                        absl::StrCat("creating the stream of ", device->name(),
                                     ": ", status.status.message()));
  }
  device->stream_.store(new PluginStream(*device, c_stream),
                        std::memory_order_release);
  // Copies to and from the host on streams of their own, so that they
  // overlap kernels (a plug-in that cannot make more streams copies on
  // the compute stream).
  for (std::atomic<PluginStream*>& copy_stream : device->copy_streams_) {
    AsyncRT_Stream c_copy_stream = nullptr;
    AsyncRT_Status copy_status;
    device->platform().fns().create_stream(device->c_device(), &c_copy_stream,
                                           &copy_status);
    if (!copy_status.status.ok()) break;
    copy_stream.store(new PluginStream(*device, c_copy_stream),
                      std::memory_order_release);
  }
  return device;
}

PluginDevice::~PluginDevice() {
  Shutdown();
  platform_->platform().destroy_device(&platform_->platform(), &c_device_);
}

void PluginDevice::Shutdown() {
  // Copies first: their queued waits are for the compute stream's events.
  for (std::atomic<PluginStream*>& copy_stream : copy_streams_) {
    delete copy_stream.exchange(nullptr, std::memory_order_acq_rel);
  }
  delete stream_.exchange(nullptr, std::memory_order_acq_rel);
}

std::optional<StreamDevice::BackendMemoryStats>
PluginDevice::GetBackendMemoryStats() {
  const AsyncRT_DeviceFns& fns = platform_->fns();
  // Only a 1.1 plug-in's struct has the member.
  if (fns.struct_size < ASYNCRT_DEVICE_FNS_1_1_STRUCT_SIZE ||
      fns.memory_stats == nullptr) {
    return std::nullopt;
  }
  AsyncRT_MemoryStats c_stats = {};
  c_stats.struct_size = ASYNCRT_MEMORY_STATS_STRUCT_SIZE;
  if (!fns.memory_stats(&c_device_, &c_stats)) return std::nullopt;
  BackendMemoryStats stats;
  stats.in_use_bytes = c_stats.in_use_bytes;
  stats.cached_bytes = c_stats.cached_bytes;
  stats.peak_reserved_bytes = c_stats.peak_reserved_bytes;
  stats.cache_hits = c_stats.cache_hits;
  stats.cache_misses = c_stats.cache_misses;
  return stats;
}

//===--- Graphs -----------------------------------------------------------===//

namespace {

class PluginGraph final : public DeviceGraph {
 public:
  PluginGraph(RCReference<PluginDevice> device, AsyncRT_Graph graph)
      : device_(std::move(device)), graph_(graph) {}
  ~PluginGraph() override {
    device_->platform().fns().destroy_graph(device_->c_device(), graph_);
  }
  absl::Status Launch() override {
    AsyncRT_Stream c_stream = device_->c_stream();
    if (c_stream == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat(device_->name(), " is shut down"));
    }
    AsyncRT_Status status;
    device_->platform().fns().launch_graph(device_->c_device(), c_stream,
                                           graph_, &status);
    return status.status;
  }

 private:
  RCReference<PluginDevice> device_;
  AsyncRT_Graph graph_;
};

}  // namespace

bool PluginDevice::SupportsGraphs() const {
  const AsyncRT_DeviceFns& fns = platform_->fns();
  // The loader checked that a plug-in has all four or none.
  return fns.struct_size >= ASYNCRT_DEVICE_FNS_STRUCT_SIZE &&
         fns.begin_capture != nullptr;
}

namespace {
// The device the calling thread records a graph on (between BeginCapture
// and EndCapture): its copies stay on the stream being recorded, which
// refuses host copies there.
thread_local const PluginDevice* t_capturing_device = nullptr;
}  // namespace

absl::Status PluginDevice::BeginCapture() {
  if (!SupportsGraphs()) return StreamDevice::BeginCapture();
  AsyncRT_Stream c_stream = this->c_stream();
  if (c_stream == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(name(), " is shut down"));
  }
  AsyncRT_Status status;
  platform_->fns().begin_capture(&c_device_, c_stream, &status);
  if (status.status.ok()) t_capturing_device = this;
  return status.status;
}

absl::StatusOr<std::unique_ptr<DeviceGraph>> PluginDevice::EndCapture() {
  if (!SupportsGraphs()) return StreamDevice::EndCapture();
  AsyncRT_Stream c_stream = this->c_stream();
  if (c_stream == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(name(), " is shut down"));
  }
  AsyncRT_Status status;
  AsyncRT_Graph graph = nullptr;
  if (t_capturing_device == this) t_capturing_device = nullptr;
  platform_->fns().end_capture(&c_device_, c_stream, &graph, &status);
  if (!status.status.ok()) return status.status;
  return std::make_unique<PluginGraph>(FormRef(this), graph);
}

Stream* PluginDevice::stream() {
  return stream_.load(std::memory_order_acquire);
}

AsyncRT_Stream PluginDevice::c_stream() const {
  PluginStream* stream = stream_.load(std::memory_order_acquire);
  return stream ? stream->c_stream() : nullptr;
}

PluginDevice::PluginStream* PluginDevice::CopyStreamFor(
    CopyDirection direction) const {
  if (direction == CopyDirection::kDeviceToDevice ||
      t_capturing_device == this) {
    return nullptr;
  }
  return copy_streams_[direction == CopyDirection::kHostToDevice ? 0 : 1].load(
      std::memory_order_acquire);
}

AsyncRT_Stream PluginDevice::c_copy_stream(CopyDirection direction) const {
  PluginStream* copy_stream = CopyStreamFor(direction);
  return copy_stream ? copy_stream->c_stream() : nullptr;
}

Stream* PluginDevice::copy_stream(CopyDirection direction) {
  if (PluginStream* copy_stream = CopyStreamFor(direction)) return copy_stream;
  return stream();
}

absl::Status PluginDevice::OrderAfterCompute(AsyncRT_Stream compute,
                                             AsyncRT_Stream copy) {
  // A plain event of the plug-in's, not a DeviceEvent: nothing on the
  // host waits for it.
  const AsyncRT_DeviceFns& fns = platform_->fns();
  AsyncRT_Event event = nullptr;
  AsyncRT_Status status;
  fns.create_event(&c_device_, &event, &status);
  if (!status.status.ok()) return status.status;
  fns.record_event(&c_device_, compute, event, &status);
  if (status.status.ok()) fns.wait_for_event(&c_device_, copy, event, &status);
  fns.destroy_event(&c_device_, event);
  return status.status;
}

absl::Status PluginDevice::EnqueueCopy(CopyDirection direction, void* dst,
                                       const void* src, size_t bytes) {
  PluginStream* compute = stream_.load(std::memory_order_acquire);
  if (compute == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(name(), " is shut down"));
  }
  AsyncRT_Stream c_stream = compute->c_stream();
  if (PluginStream* copy_stream = CopyStreamFor(direction)) {
    // The plug-in's wait below cannot carry a failure the runtime keeps
    // for the compute stream (a wait it could not do): a copy after it
    // fails as one on the compute stream would.
    if (absl::Status error = compute->RuntimeError(); !error.ok()) {
      return error;
    }
    // The copy's memory may have been the compute stream's work's until
    // now (freed in its order), and a source is written by work queued
    // there: start after that work.
    if (absl::Status status =
            OrderAfterCompute(c_stream, copy_stream->c_stream());
        !status.ok()) {
      return status;
    }
    c_stream = copy_stream->c_stream();
  }
  const AsyncRT_DeviceFns& fns = platform_->fns();
  AsyncRT_Status status;
  switch (direction) {
    case CopyDirection::kHostToDevice:
      fns.memcpy_htod(&c_device_, c_stream, dst, src, bytes, &status);
      break;
    case CopyDirection::kDeviceToHost:
      fns.memcpy_dtoh(&c_device_, c_stream, dst, src, bytes, &status);
      break;
    case CopyDirection::kDeviceToDevice:
      fns.memcpy_dtod(&c_device_, c_stream, dst, src, bytes, &status);
      break;
  }
  return status.status;
}

}  // namespace asyncrt
