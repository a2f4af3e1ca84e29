#include "asyncrt/backends/cpu_op_handler.h"

#include <memory>

#include "absl/strings/str_cat.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_registry.h"

namespace asyncrt {
namespace {

class CpuOpHandler final : public OpHandler {
 public:
  CpuOpHandler(CoreRuntime* runtime, OpHandler* fallback)
      : OpHandler("cpu", runtime, fallback) {
    // CoreRuntime::Execute runs registry ops of this device without a
    // MakeOp call (the eager fast path).
    set_registry_device({OpRegistry::DeviceTypeId("cpu"),
                         &runtime->GetHostContext()->host_device()});
  }

  absl::StatusOr<CoreRuntimeOp> MakeOp(absl::string_view op_name) override {
    const RegistryDevice& target = registry_device();
    const OpEntry* entry = OpRegistry::Global().Find(op_name);
    const OpImplementation* implementation =
        entry ? entry->FindImplementation(target.device_type_id) : nullptr;
    if (implementation) {
      return CoreRuntimeOp(entry, implementation, target.device);
    }
    if (fallback()) return fallback()->MakeOp(op_name);
    return absl::NotFoundError(
        absl::StrCat(op_name, " was not supported by CpuOpHandler."));
  }
};

}  // namespace

OpHandler* CreateCpuOpHandler(CoreRuntime* runtime, OpHandler* fallback) {
  return runtime->AddOpHandler(
      std::make_unique<CpuOpHandler>(runtime, fallback));
}

}  // namespace asyncrt
