// The C++ side of a loaded device plug-in: its platform (the library and
// the function tables it filled in) and its devices, StreamDevices whose
// memory, stream and copies call the plug-in's C functions.
//
// Internal to the plug-in loader (device_plugin_loader.cc).
//
// Ownership: each PluginDevice holds its PluginPlatform (shared), so the
// platform, and destroy_platform, outlive every device; the HostContext's
// DeviceManager and device tensors hold the devices. Thread-safety: as
// StreamDevice. Blocking: Shutdown and destruction wait for the plug-in's
// stream to drain.
#ifndef ASYNCRT_LIB_PLUGIN_PLUGIN_DEVICE_H_
#define ASYNCRT_LIB_PLUGIN_PLUGIN_DEVICE_H_

#include <atomic>
#include <memory>
#include <string>

#include "absl/functional/any_invocable.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asyncrt/c/device_plugin.h"
#include "asyncrt/device/device_allocator.h"
#include "asyncrt/device/stream_device.h"

// What the runtime passes as an AsyncRT_Status.
struct AsyncRT_Status {
  absl::Status status;
};

namespace asyncrt {

// absl::Status of a plug-in's code and message.
absl::Status StatusFromPlugin(AsyncRT_Code code, const char* message);

class PluginPlatform {
 public:
  PluginPlatform(std::string path, void* library)
      : path_(std::move(path)), library_(library) {}
  // Calls destroy_platform if the plug-in initialized.
  ~PluginPlatform();

  const std::string& path() const { return path_; }
  void* library() const { return library_; }
  // Filled in by the plug-in's init; stable addresses.
  AsyncRT_Platform& platform() { return platform_.value; }
  AsyncRT_DeviceFns& fns() { return fns_.value; }
  const AsyncRT_DeviceFns& fns() const { return fns_.value; }
  void set_initialized() { initialized_ = true; }

 private:
  std::string path_;
  void* library_;
  // Room for a newer plug-in's larger structs: it fills them in before the
  // runtime can refuse it by version.
  template <typename T>
  union Growable {
    T value;
    unsigned char room[1024];
  };
  static_assert(sizeof(AsyncRT_Platform) <= 1024);
  static_assert(sizeof(AsyncRT_DeviceFns) <= 1024);
  Growable<AsyncRT_Platform> platform_ = {};
  Growable<AsyncRT_DeviceFns> fns_ = {};
  bool initialized_ = false;
};

class PluginDevice final : public StreamDevice {
 public:
  // Creates the plug-in's device `ordinal` (create_device), its compute
  // stream and, where the plug-in can, a copy stream per host direction.
  // `memory_limit_bytes` (0: none) is asked of the plug-in, and caps the
  // device's memory limit whatever the plug-in reports.
  static absl::StatusOr<RCReference<PluginDevice>> Create(
      std::shared_ptr<PluginPlatform> platform, int ordinal, HostContext* host,
      uint64_t memory_limit_bytes = 0);
  // Shuts down, then destroy_device.
  ~PluginDevice() override;

  DeviceAllocator& allocator() override { return *allocator_; }
  DeviceAllocator& host_allocator() override { return *host_allocator_; }
  Stream* stream() override;
  // A stream per direction for copies to and from the host, where the
  // plug-in could create them (else stream()).
  Stream* copy_stream(CopyDirection direction) override;
  absl::Status EnqueueCopy(CopyDirection direction, void* dst, const void* src,
                           size_t bytes) override;
  // Where the plug-in has pinned host memory (host_memory_allocate).
  bool StagesHostCopies() const override { return pinned_host_memory_; }
  void Shutdown() override;
  // The C API's contract (deallocate, device_plugin.h).
  bool FreesInStreamOrder() const override { return true; }
  // The plug-in's memory_stats (API 1.1), where it has one.
  std::optional<BackendMemoryStats> GetBackendMemoryStats() override;
  // The plug-in's begin_capture and friends (API 1.2), where it has them.
  bool SupportsGraphs() const override;
  absl::Status BeginCapture() override;
  absl::StatusOr<std::unique_ptr<DeviceGraph>> EndCapture() override;

  const AsyncRT_Device* c_device() const { return &c_device_; }
  // The plug-in's compute stream; null once shut down.
  AsyncRT_Stream c_stream() const;
  // The plug-in's copy stream for `direction`; null where there is none.
  AsyncRT_Stream c_copy_stream(CopyDirection direction) const;
  const PluginPlatform& platform() const { return *platform_; }

 private:
  class Allocator;
  class HostAllocator;
  class PluginStream;

  PluginDevice(DeviceAttributes attributes, HostContext* host,
               std::shared_ptr<PluginPlatform> platform,
               AsyncRT_Device c_device);

  std::shared_ptr<PluginPlatform> platform_;
  AsyncRT_Device c_device_;
  std::unique_ptr<DeviceAllocator> allocator_;
  std::unique_ptr<DeviceAllocator> host_allocator_;
  // The copy stream of `direction`, or null where copies in that direction
  // run on stream_ (within the device; no copy stream; this thread is
  // recording a graph; shut down).
  PluginStream* CopyStreamFor(CopyDirection direction) const;
  // Makes `copy` wait for the work enqueued on the compute stream so far.
  absl::Status OrderAfterCompute(AsyncRT_Stream compute, AsyncRT_Stream copy);

  bool pinned_host_memory_ = false;
  std::atomic<PluginStream*> stream_{nullptr};  // Owned: the compute stream.
  // Owned: host-to-device and device-to-host copies.
  std::atomic<PluginStream*> copy_streams_[2] = {nullptr, nullptr};
};

}  // namespace asyncrt

#endif  // ASYNCRT_LIB_PLUGIN_PLUGIN_DEVICE_H_
