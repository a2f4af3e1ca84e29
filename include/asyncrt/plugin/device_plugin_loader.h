// Loads device plug-ins: shared libraries that implement the C API of
// asyncrt/c/device_plugin.h. Loading one adds its devices to a runtime
// (each a StreamDevice over the plug-in's memory, stream and copy
// functions, with an op handler named after the device: "SIM:0", and the
// first device's also after the type: "sim") and registers its kernels in
// the op registry for its device type.
//
// A plug-in that cannot be used is an error naming the file, and leaves
// nothing behind: a library that does not load, a missing
// AsyncRT_InitPlugin, an API version this runtime does not support, a
// device type that is already taken, a platform or device functions that
// are incomplete, an init or device creation that fails. The runtime stays
// as it was and usable.
//
// Ownership: the devices belong to the HostContext's DeviceManager (and to
// the tensors on them); a library that loaded is never unloaded (the op
// registry keeps its kernels for the process). Thread-safety: loading is
// thread-safe with respect to running ops, and two loads may run at once.
// Blocking: loading calls the plug-in's init and device creation.
#ifndef ASYNCRT_PLUGIN_DEVICE_PLUGIN_LOADER_H_
#define ASYNCRT_PLUGIN_DEVICE_PLUGIN_LOADER_H_

#include <cstdint>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/host_context/device.h"

namespace asyncrt {

class CoreRuntime;

struct LoadedDevicePlugin {
  std::string path;
  std::string platform_name;
  std::string device_type;
  // "major.minor.patch" of the API the plug-in was built with.
  std::string api_version;
  std::vector<RCReference<Device>> devices;
};

struct DevicePluginOptions {
  // The most device memory the runtime may use on a device, by the
  // device's name ("CUDA:0") or, for each device of a type, by the type
  // ("cuda"); a name wins over its type. Asked of the plug-in (API 1.3,
  // AsyncRT_Device::requested_memory_limit_bytes, so that its caching
  // stays within it too) and kept by the device's allocator whatever the
  // plug-in reports.
  std::map<std::string, uint64_t, std::less<>> memory_limits;
};

// Loads the plug-in at `path` into `runtime` (see above).
absl::StatusOr<LoadedDevicePlugin> LoadDevicePlugin(
    absl::string_view path, CoreRuntime& runtime,
    const DevicePluginOptions& options = {});

// The plug-in files `paths` name: each entry a file, or a directory whose
// `*.so` files are taken in name order; entries may hold several paths
// separated by ':' (ASYNCRT_PLUGIN_PATH's form). Empty entries are skipped;
// a path that does not exist is kept (loading it reports the error).
std::vector<std::string> ExpandPluginPaths(
    const std::vector<std::string>& paths);

// The environment variable that names plug-ins to load at start.
inline constexpr char kPluginPathEnvironmentVariable[] = "ASYNCRT_PLUGIN_PATH";

}  // namespace asyncrt

#endif  // ASYNCRT_PLUGIN_DEVICE_PLUGIN_LOADER_H_
