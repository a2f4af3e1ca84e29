#include "asyncrt/host_context/kernel_registry.h"

#include "asyncrt/support/static_registration.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>

#include "absl/strings/str_cat.h"

namespace asyncrt {

absl::Status KernelRegistry::AddKernel(absl::string_view name,
                                       KernelDefinition kernel,
                                       KernelStrictness strictness) {
  if (kernel.kernel == nullptr) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", name, "' registered with a null function"));
  }
  if (!kernels_.try_emplace(name, Entry{kernel, strictness}).second) {
    return absl::AlreadyExistsError(
        absl::StrCat("kernel '", name, "' is already registered"));
  }
  return absl::OkStatus();
}

AsyncKernelImplementation KernelRegistry::GetKernel(
    absl::string_view name) const {
  auto it = kernels_.find(name);
  return it == kernels_.end() ? nullptr : it->second.definition.kernel;
}

const UnboxedKernel* KernelRegistry::GetUnboxedKernel(
    absl::string_view name) const {
  auto it = kernels_.find(name);
  if (it == kernels_.end() ||
      it->second.strictness != KernelStrictness::kStrict) {
    return nullptr;
  }
  return it->second.definition.unboxed;
}

bool KernelRegistry::IsNonStrict(absl::string_view name) const {
  auto it = kernels_.find(name);
  return it != kernels_.end() &&
         it->second.strictness == KernelStrictness::kNonStrict;
}

std::vector<std::string> KernelRegistry::KernelNames() const {
  std::vector<std::string> names;
  names.reserve(kernels_.size());
  for (const auto& [name, kernel] : kernels_) names.push_back(name);
  std::sort(names.begin(), names.end());
  return names;
}

void MustAddKernel(KernelRegistry& registry, absl::string_view name,
                   KernelDefinition kernel, KernelStrictness strictness) {
  absl::Status status = registry.AddKernel(name, kernel, strictness);
  if (!status.ok()) {
    std::fprintf(stderr, "fatal: %s\n", std::string(status.message()).c_str());
    std::abort();
  }
}

namespace {
std::vector<KernelRegistration>& StaticRegistrations() {
  return internal::StaticList<KernelRegistration>();
}
}  // namespace

void AddStaticKernelRegistration(KernelRegistration registration) {
  StaticRegistrations().push_back(registration);
}

void RegisterStaticKernels(KernelRegistry& registry, size_t first) {
  const std::vector<KernelRegistration>& registrations = StaticRegistrations();
  for (size_t i = first; i < registrations.size(); ++i) {
    registrations[i](registry);
  }
}

size_t NumStaticKernelRegistrations() { return StaticRegistrations().size(); }

}  // namespace asyncrt
