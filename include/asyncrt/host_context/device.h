// Devices known to a HostContext. The host itself is "CPU:0".
#ifndef ASYNCRT_HOST_CONTEXT_DEVICE_H_
#define ASYNCRT_HOST_CONTEXT_DEVICE_H_

#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

class Device : public ReferenceCounted<Device> {
 public:
  Device(std::string name, std::string type)
      : name_(std::move(name)), type_(std::move(type)) {}
  virtual ~Device() = default;

  // Unique within a DeviceManager, e.g. "CPU:0", "GPU:1".
  const std::string& name() const { return name_; }
  // The device kind, e.g. "cpu", "gpu".
  const std::string& type() const { return type_; }

 private:
  std::string name_;
  std::string type_;
};

// Thread-safe registry of devices by name.
class DeviceManager {
 public:
  // Adds `device` unless a device of that name exists; returns the device
  // registered under the name either way (+1).
  RCReference<Device> MaybeAddDevice(RCReference<Device> device);

  // The device named `name` (+1), or null.
  RCReference<Device> GetDevice(absl::string_view name) const;

  // All devices, in the order they were added.
  std::vector<RCReference<Device>> ListDevices() const;

 private:
  mutable std::mutex mutex_;
  // Guarded by mutex_.
  absl::flat_hash_map<std::string, RCReference<Device>> by_name_;
  std::vector<RCReference<Device>> in_order_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_DEVICE_H_
