#include "asyncrt/bef_executor/native_function.h"

#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"
#include "asyncrt/support/static_registration.h"

namespace asyncrt {

absl::Status NativeFunctionRegistry::Add(absl::string_view name,
                                         NativeFunctionImplementation fn) {
  if (!functions_.try_emplace(name, fn).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("native function '", name, "' is already registered"));
  }
  return absl::OkStatus();
}

NativeFunctionImplementation NativeFunctionRegistry::Get(
    absl::string_view name) const {
  auto it = functions_.find(name);
  return it == functions_.end() ? nullptr : it->second;
}

namespace {
std::vector<NativeFunctionRegistration>& StaticNativeFunctions() {
  return internal::StaticList<NativeFunctionRegistration>();
}
}  // namespace

void AddStaticNativeFunction(NativeFunctionRegistration registration) {
  StaticNativeFunctions().push_back(registration);
}

void RegisterStaticNativeFunctions(HostContext& host) {
  auto& registry = host.GetOrCreateSharedContext<NativeFunctionRegistry>();
  for (const NativeFunctionRegistration& registration :
       StaticNativeFunctions()) {
    absl::Status status = registry.Add(registration.name, registration.fn);
    if (!status.ok()) {
      std::fprintf(stderr, "fatal: %s\n",
                   std::string(status.message()).c_str());
      std::abort();
    }
  }
}

}  // namespace asyncrt
