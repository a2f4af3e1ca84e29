#include "lib/runtime/device_op_check.h"

#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/host_context/diagnostic.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/location.h"

namespace asyncrt {
namespace {

// The string attribute `name` of `kernel`, if it has one.
std::optional<absl::string_view> StringAttribute(const bef::BefFile& file,
                                                 const bef::Kernel& kernel,
                                                 absl::string_view name) {
  for (const bef::NamedAttribute& attribute : kernel.attributes) {
    if (file.string(attribute.name) != name) continue;
    const bef::Attribute& value = file.attribute(attribute.attribute);
    if (value.kind != bef::AttributeKind::kString) return std::nullopt;
    return value.bytes;
  }
  return std::nullopt;
}

// The op names `kernel` runs on its handler (operand 0).
std::vector<absl::string_view> OpNames(const bef::BefFile& file,
                                       const bef::Kernel& kernel,
                                       absl::string_view kernel_name) {
  if (kernel_name == "corert.executeop" ||
      kernel_name == "corert_sync.executeop" ||
      kernel_name == "corert.executeop.seq") {
    if (auto op = StringAttribute(file, kernel, "op_name")) return {*op};
    return {};
  }
  if (kernel_name != "corert.execute_sequence") return {};
  std::vector<absl::string_view> names;
  for (const bef::NamedAttribute& attribute : kernel.attributes) {
    if (file.string(attribute.name) != "op_names") continue;
    const bef::Attribute& list = file.attribute(attribute.attribute);
    if (list.kind != bef::AttributeKind::kAggregate) return {};
    for (uint32_t element : list.elements) {
      const bef::Attribute& name = file.attribute(element);
      if (name.kind == bef::AttributeKind::kString) {
        names.push_back(name.bytes);
      }
    }
  }
  return names;
}

// The handler `kernel` makes if it names a plug-in device's handler that
// never falls back (so an op it lacks cannot run), else null.
OpHandler* CheckedHandler(const bef::BefFile& file, const bef::Kernel& kernel,
                          absl::string_view kernel_name, CoreRuntime& core) {
  std::optional<absl::string_view> name;
  if (kernel_name == "corert.get_op_handler") {
    name = StringAttribute(file, kernel, "op_handler_name");
  } else if (kernel_name == "corert_sync.get_op_handler") {
    name = StringAttribute(file, kernel, "device_name");
  }
  if (!name) return nullptr;
  OpHandler* handler = core.GetOpHandler(*name);
  if (handler == nullptr || handler->fallback() != nullptr) return nullptr;
  Device* device = handler->registry_device().device;
  if (device == nullptr || device == &core.GetHostContext()->host_device()) {
    return nullptr;
  }
  return handler;
}

}  // namespace

absl::Status CheckDeviceOps(const BefProgram& program, CoreRuntime& core) {
  const bef::BefFile& file = program.file();
  HostContext& host = *core.GetHostContext();
  int missing = 0;
  std::string first;
  for (const bef::Function& function : file.functions()) {
    if (function.kind == bef::FunctionKind::kNative) continue;
    std::vector<OpHandler*> handler_in(function.num_registers, nullptr);
    for (const bef::Kernel& kernel : function.kernels) {
      const absl::string_view name = file.kernel_name(kernel.kernel_name);
      if (name == "corert.arena_op_handler") {
        // The same handler, with an arena.
        if (!kernel.operands.empty() && !kernel.results.empty() &&
            kernel.operands[0] < handler_in.size() &&
            kernel.results[0] < handler_in.size()) {
          handler_in[kernel.results[0]] = handler_in[kernel.operands[0]];
        }
        continue;
      }
      if (OpHandler* handler = CheckedHandler(file, kernel, name, core)) {
        if (!kernel.results.empty() && kernel.results[0] < handler_in.size()) {
          handler_in[kernel.results[0]] = handler;
        }
        continue;
      }
      if (kernel.operands.empty() || kernel.operands[0] >= handler_in.size() ||
          handler_in[kernel.operands[0]] == nullptr) {
        continue;
      }
      OpHandler* handler = handler_in[kernel.operands[0]];
      for (absl::string_view op : OpNames(file, kernel, name)) {
        absl::StatusOr<CoreRuntimeOp> made = handler->MakeOp(op);
        if (made.ok()) continue;
        std::optional<DecodedLocation> location;
        if (kernel.location < file.num_locations()) {
          const bef::Location at = file.location(kernel.location);
          location = DecodedLocation{
              std::string(at.filename), static_cast<int>(at.line),
              static_cast<int>(at.column), std::string(at.name)};
        }
        host.EmitError(DecodedDiagnostic(location, made.status()));
        if (missing++ == 0) first = std::string(made.status().message());
      }
    }
  }
  if (missing == 0) return absl::OkStatus();
  return absl::NotFoundError(
      absl::StrCat("the program runs ", missing, missing == 1 ? " op" : " ops",
                   " on a device that has no implementation of ",
                   missing == 1 ? "it" : "them", ": ", first,
                   missing == 1 ? "" : " (and more: see the diagnostics)"));
}

}  // namespace asyncrt
