// Op handler factories: how a device backend plugs its op handler into the
// core runtime. A backend (backends/cpu registers "cpu") registers a factory
// for its device type when it is linked; CoreRuntime::CreateOpHandler,
// corert.create_*_op_handler and RuntimeOptions::devices make handlers
// through it, so the core runtime names no device.
//
// Thread-safety: registration and lookup are thread-safe (registration
// normally happens in static initializers).
#ifndef ASYNCRT_CORE_RUNTIME_OP_HANDLER_FACTORY_H_
#define ASYNCRT_CORE_RUNTIME_OP_HANDLER_FACTORY_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "asyncrt/support/static_registration.h"

namespace asyncrt {

class CoreRuntime;
class OpHandler;

// Makes the op handler of one device type on `runtime` (which owns it, see
// CoreRuntime::AddOpHandler), falling back to `fallback` (may be null) for
// ops the device lacks.
using OpHandlerFactory = OpHandler* (*)(CoreRuntime* runtime,
                                        OpHandler* fallback);

// Makes `factory` the one for `device_type`, replacing an earlier one.
void RegisterOpHandlerFactory(absl::string_view device_type,
                              OpHandlerFactory factory);
// The factory for `device_type`, or nullptr if no backend registered one.
OpHandlerFactory FindOpHandlerFactory(absl::string_view device_type);
// Device types with a factory, sorted.
std::vector<std::string> RegisteredDeviceTypes();

}  // namespace asyncrt

// Registers `factory` for `device_type` at static-initialization time. Use
// only in a backend's static_registration.cc.
#define ASYNCRT_STATIC_OP_HANDLER_FACTORY(device_type, factory) \
  ASYNCRT_STATIC_REGISTRATION(                                  \
      ::asyncrt::RegisterOpHandlerFactory(device_type, factory))

#endif  // ASYNCRT_CORE_RUNTIME_OP_HANDLER_FACTORY_H_
