// Devices: what a scheduler and a user need to know about each processor
// that runs ops (the host CPU, GPUs, plug-in accelerators), and the
// registry that names them.
//
// A device has a short name ("CPU:0", "GPU:1": its type in capitals, a
// colon, its index among devices of that type) and a full name
// ("/device:CPU:0"); DeviceManager::FindDevice accepts either, with the
// type in any case. Its incarnation is a random non-zero number drawn when
// the device object is created, so a device that is initialised again (a
// plug-in reloaded, a GPU reset) never looks like the one before.
//
// Ownership: devices are reference-counted; a DeviceManager holds one
// reference to each device it lists. Thread-safety: a Device is immutable
// after construction; DeviceManager is thread-safe. Nothing here blocks
// beyond the manager's short internal lock.
#ifndef ASYNCRT_HOST_CONTEXT_DEVICE_H_
#define ASYNCRT_HOST_CONTEXT_DEVICE_H_

#include <cstdint>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

// Where a device sits, for placing work and copies near it.
struct DeviceLocality {
  // A direct connection to another device (NVLink, a shared PCIe switch).
  struct Link {
    std::string device;  // The other device's short name.
    std::string kind;    // "nvlink", "pcie", ...
    int strength = 0;    // Larger is faster; 0 when unknown.
  };
  int numa_node = -1;  // The host NUMA node nearest the device; -1 unknown.
  std::string bus_id;  // PCI bus id ("0000:17:00.0"); empty for the host.
  std::vector<Link> links;
};

struct DeviceAttributes {
  // Lower-case device type: "cpu", "gpu", or a plug-in's type. Letters,
  // digits and '_' only.
  std::string type;
  // Index among the devices of this type, from 0.
  int index = 0;
  // Bytes of memory the runtime may allocate on the device; 0 when unknown.
  uint64_t memory_limit_bytes = 0;
  DeviceLocality locality;
  // What the hardware is, for people: "NVIDIA H100 80GB HBM3, compute
  // capability 9.0", "AMD EPYC 9B45, 2 hardware threads".
  std::string physical_description;
};

class Device : public ReferenceCounted<Device> {
 public:
  // `attributes.type` must be a valid type (IsValidDeviceType).
  explicit Device(DeviceAttributes attributes);
  virtual ~Device() = default;

  // Unique within a DeviceManager: "CPU:0", "GPU:1".
  const std::string& name() const { return name_; }
  // "/device:CPU:0".
  std::string full_name() const { return "/device:" + name_; }
  // The device type, lower-case: "cpu", "gpu".
  const std::string& type() const { return attributes_.type; }
  int index() const { return attributes_.index; }
  uint64_t memory_limit_bytes() const { return attributes_.memory_limit_bytes; }
  const DeviceLocality& locality() const { return attributes_.locality; }
  const std::string& physical_description() const {
    return attributes_.physical_description;
  }
  // Never 0; differs between two Device objects of the same name.
  uint64_t incarnation() const { return incarnation_; }

  // One line for `bef_executor --list_devices`:
  //   /device:CPU:0 type=cpu memory_limit=23.4GiB numa_node=0 bus_id=-
  //   links=0 incarnation=0x3f2a9c01d4e5b677 "AMD EPYC 9B45, 2 threads"
  std::string DebugString() const;

  // Called once by the HostContext as it is destroyed, after its work has
  // quiesced and while its work queue still runs: a device with streams
  // drains and releases them here (their events complete on that queue's
  // blocking pool). The device object may live on (tensors still hold it)
  // and must then free memory without its streams.
  virtual void Shutdown() {}

 private:
  DeviceAttributes attributes_;
  std::string name_;
  uint64_t incarnation_;
};

// Types are lower-case letters, digits and '_', starting with a letter.
bool IsValidDeviceType(absl::string_view type);

// The type (lower-case) and index named by "CPU:0", "cpu:0",
// "/device:GPU:1", "/gpu:1" or "/job:localhost/replica:0/task:0/device:GPU:1"
// (TensorFlow's forms); InvalidArgument otherwise.
struct ParsedDeviceName {
  std::string type;
  int index = 0;
};
absl::StatusOr<ParsedDeviceName> ParseDeviceName(absl::string_view name);

// The host's CPU device, index 0: the machine's memory as its limit, the
// NUMA node it runs on, and the processor's model name.
DeviceAttributes HostCpuAttributes();

// Thread-safe registry of devices by name.
class DeviceManager {
 public:
  // Adds `device` unless a device of that name exists; returns the device
  // registered under the name either way (+1).
  RCReference<Device> MaybeAddDevice(RCReference<Device> device);

  // The device with short name `name` exactly (+1), or null.
  RCReference<Device> GetDevice(absl::string_view name) const;

  // The device named `name` in any form ParseDeviceName accepts (+1);
  // InvalidArgument for a malformed name, NotFound naming the devices
  // there are for an unknown one.
  absl::StatusOr<RCReference<Device>> FindDevice(absl::string_view name) const;

  // All devices, in the order they were added.
  std::vector<RCReference<Device>> ListDevices() const;

  // Device::Shutdown on every device, newest first (HostContext's
  // destructor).
  void ShutdownDevices();

 private:
  mutable std::mutex mutex_;
  // Guarded by mutex_.
  absl::flat_hash_map<std::string, RCReference<Device>> by_name_;
  std::vector<RCReference<Device>> in_order_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_DEVICE_H_
