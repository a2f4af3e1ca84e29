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
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/support/static_registration.h"

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

// A second entry point for kernels of plain values (a function of up to
// four scalars returning one, each trivially copyable and at most 8 bytes),
// made by ASYNCRT_KERNEL. The executor keeps such values unboxed, in the
// call's registers, when every kernel that reads them has one too (see
// docs/executor.md): no async value, reference count or frame per kernel.
// Immutable and static.
struct UnboxedKernel {
  // Most operands an unboxed entry takes.
  static constexpr size_t kMaxOperands = 4;
  // Runs the kernel on operand values passed as bits (each value in the
  // low bytes of its word, little-endian; words past num_operands are
  // ignored) and returns the result's bits the same way.
  uint64_t (*invoke)(uint64_t, uint64_t, uint64_t, uint64_t);
  // Operand i's payload type and the result's (AsyncValue::TypeIdOf).
  const AsyncValue::TypeId* operand_types;
  uint32_t num_operands;
  AsyncValue::TypeId result_type;
  uint32_t result_size;  // sizeof the result type: 1 to 8.
  // A new available async value holding the result in `bits`.
  AsyncValue* (*box)(uint64_t bits);
};

// What ASYNCRT_KERNEL makes: the kernel and, for kernels of plain values,
// their unboxed entry. Converts to the AsyncKernelImplementation.
struct KernelDefinition {
  // Implicit: a plain kernel function is a definition without an unboxed
  // entry.
  constexpr KernelDefinition(AsyncKernelImplementation kernel,
                             const UnboxedKernel* unboxed = nullptr)
      : kernel(kernel), unboxed(unboxed) {}
  constexpr operator AsyncKernelImplementation() const { return kernel; }

  AsyncKernelImplementation kernel;
  const UnboxedKernel* unboxed;
};

class KernelRegistry {
 public:
  // Registers `kernel` under `name`. AlreadyExists if the name is taken.
  absl::Status AddKernel(
      absl::string_view name, KernelDefinition kernel,
      KernelStrictness strictness = KernelStrictness::kStrict);

  // The kernel registered under `name`, or nullptr.
  AsyncKernelImplementation GetKernel(absl::string_view name) const;
  // Its unboxed entry, or nullptr (none, unknown, or non-strict).
  const UnboxedKernel* GetUnboxedKernel(absl::string_view name) const;

  // Whether `name` is registered as non-strict (false if unknown).
  bool IsNonStrict(absl::string_view name) const;

  // Names of all registered kernels, sorted.
  std::vector<std::string> KernelNames() const;

 private:
  struct Entry {
    KernelDefinition definition;
    KernelStrictness strictness;
  };
  absl::flat_hash_map<std::string, Entry> kernels_;
};

// Adds a kernel that must not already be registered: a name registered twice
// in one registry is a programming error (two libraries claiming one op),
// so it prints the conflict and aborts, in release builds too.
void MustAddKernel(KernelRegistry& registry, absl::string_view name,
                   KernelDefinition kernel,
                   KernelStrictness strictness = KernelStrictness::kStrict);

// A function that registers a library's kernels.
using KernelRegistration = void (*)(KernelRegistry& registry);

// Adds `registration` to the process-wide list that RegisterStaticKernels
// applies. Called from static initializers only (see ASYNCRT_STATIC_KERNEL_
// REGISTRATION); thread-compatible.
void AddStaticKernelRegistration(KernelRegistration registration);

// Applies the static registrations from the `first`-th on (all by default)
// to `registry`. A binary that dlopens plug-ins applies only theirs:
// NumStaticKernelRegistrations() before the dlopen is their `first`.
void RegisterStaticKernels(KernelRegistry& registry, size_t first = 0);
size_t NumStaticKernelRegistrations();

}  // namespace asyncrt

// Registers `fn` (a KernelRegistration) at static-initialization time. Use
// only in a library's static_registration.cc, built as an always-linked
// object library.
#define ASYNCRT_STATIC_KERNEL_REGISTRATION(fn) \
  ASYNCRT_STATIC_REGISTRATION(::asyncrt::AddStaticKernelRegistration(fn))

#endif  // ASYNCRT_HOST_CONTEXT_KERNEL_REGISTRY_H_
