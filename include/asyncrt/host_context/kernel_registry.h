// KernelRegistry: names of kernels to the C++ functions that run them.
//
// Each HostContext owns a registry. Kernel libraries register into it
// explicitly (RegisterXxxKernels(KernelRegistry&)) or through the static
// registration list, which the binary applies with RegisterStaticKernels.
// Registration happens before execution starts: the registry is
// thread-compatible (lookups may run concurrently with each other, not with
// registration).
#ifndef ASYNCRT_HOST_CONTEXT_KERNEL_REGISTRY_H_
#define ASYNCRT_HOST_CONTEXT_KERNEL_REGISTRY_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace asyncrt {

// Defined by the executor (asyncrt/bef_executor/kernel_frame.h).
class AsyncKernelFrame;

// An asynchronous kernel: reads its arguments and attributes from the frame
// and sets its results, now or later.
using AsyncKernelImplementation = void (*)(AsyncKernelFrame* frame);

// How the executor starts a kernel.
enum class KernelStrictness {
  // Runs once every operand is available; an error operand skips the kernel
  // and becomes its results.
  kStrict,
  // Runs as soon as one operand exists (control flow: tfrt.call, tfrt.if,
  // tfrt.repeat.i32). Operands may be unavailable, even placeholders for
  // values not yet produced, or errors: the kernel must wait on what it needs
  // and pass the rest on.
  kNonStrict,
};

class KernelRegistry {
 public:
  // Registers `kernel` under `name`. AlreadyExists if the name is taken.
  absl::Status AddKernel(
      absl::string_view name, AsyncKernelImplementation kernel,
      KernelStrictness strictness = KernelStrictness::kStrict);

  // The kernel registered under `name`, or nullptr.
  AsyncKernelImplementation GetKernel(absl::string_view name) const;

  // Whether `name` is registered as non-strict (false if unknown).
  bool IsNonStrict(absl::string_view name) const;

  // Names of all registered kernels, sorted.
  std::vector<std::string> KernelNames() const;

 private:
  struct Entry {
    AsyncKernelImplementation kernel;
    KernelStrictness strictness;
  };
  absl::flat_hash_map<std::string, Entry> kernels_;
};

// Adds a kernel that must not already be registered: a name registered twice
// in one registry is a programming error (two libraries claiming one op),
// so it prints the conflict and aborts, in release builds too.
void MustAddKernel(KernelRegistry& registry, absl::string_view name,
                   AsyncKernelImplementation kernel,
                   KernelStrictness strictness = KernelStrictness::kStrict);

// A function that registers a library's kernels.
using KernelRegistration = void (*)(KernelRegistry& registry);

// Adds `registration` to the process-wide list that RegisterStaticKernels
// applies. Called from static initializers only (see ASYNCRT_STATIC_KERNEL_
// REGISTRATION); thread-compatible.
void AddStaticKernelRegistration(KernelRegistration registration);

// Applies every static registration to `registry`.
void RegisterStaticKernels(KernelRegistry& registry);

}  // namespace asyncrt

// Registers `fn` (a KernelRegistration) at static-initialization time. Use
// only in a library's static_registration.cc, built as an always-linked
// object library.
#define ASYNCRT_STATIC_KERNEL_REGISTRATION(fn) \
  ASYNCRT_STATIC_KERNEL_REGISTRATION_IMPL(fn, __COUNTER__)
#define ASYNCRT_STATIC_KERNEL_REGISTRATION_IMPL(fn, n) \
  ASYNCRT_STATIC_KERNEL_REGISTRATION_IMPL2(fn, n)
#define ASYNCRT_STATIC_KERNEL_REGISTRATION_IMPL2(fn, n)                   \
  [[maybe_unused]] static const bool asyncrt_kernel_registered_##n = [] { \
    ::asyncrt::AddStaticKernelRegistration(fn);                           \
    return true;                                                          \
  }()

#endif  // ASYNCRT_HOST_CONTEXT_KERNEL_REGISTRY_H_
