// Native functions: C++ functions that BEF programs call like BEF functions
// (`func.func @f(...) attributes {tfrt.native}` declares one by name).
#ifndef ASYNCRT_BEF_EXECUTOR_NATIVE_FUNCTION_H_
#define ASYNCRT_BEF_EXECUTOR_NATIVE_FUNCTION_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/support/static_registration.h"

namespace asyncrt {

// Receives borrowed (+0) arguments, possibly unavailable, and must set every
// result (+1), possibly to values published later.
using NativeFunctionImplementation = void (*)(
    const ExecutionContext& exec_ctx, absl::Span<AsyncValue* const> arguments,
    absl::Span<RCReference<AsyncValue>> results);

// Names to native functions. A HostContext shared context: one per host.
// Registration happens before programs load (thread-compatible).
class NativeFunctionRegistry {
 public:
  explicit NativeFunctionRegistry(HostContext*) {}

  // AlreadyExists if `name` is taken.
  absl::Status Add(absl::string_view name, NativeFunctionImplementation fn);
  // nullptr if unknown.
  NativeFunctionImplementation Get(absl::string_view name) const;

 private:
  absl::flat_hash_map<std::string, NativeFunctionImplementation> functions_;
};

// A name and its implementation, for static registration.
struct NativeFunctionRegistration {
  const char* name;
  NativeFunctionImplementation fn;
};

// Adds `registration` to the process-wide list that
// RegisterStaticNativeFunctions applies. Called from static initializers
// only (ASYNCRT_STATIC_NATIVE_FUNCTION); thread-compatible.
void AddStaticNativeFunction(NativeFunctionRegistration registration);

// Adds every statically registered native function to `host`'s registry.
// A name registered twice is a programming error: it prints the conflict
// and aborts.
void RegisterStaticNativeFunctions(HostContext& host);

}  // namespace asyncrt

// Registers the native function `fn` under `name` at static-initialization
// time; use only in a library's static_registration.cc.
#define ASYNCRT_STATIC_NATIVE_FUNCTION(name, fn) \
  ASYNCRT_STATIC_REGISTRATION(::asyncrt::AddStaticNativeFunction({name, fn}))

#endif  // ASYNCRT_BEF_EXECUTOR_NATIVE_FUNCTION_H_
