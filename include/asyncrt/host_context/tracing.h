// Scoped tracing: nested "Scope:NAME" / "End Scope" lines on stdout, as
// TFRT's bef_executor prints them with --enable_tracing.
//
// Tracing is off unless a binary enables it (bef_executor does for
// --enable_tracing). A disabled scope costs one relaxed atomic load and a
// branch, so the executor traces every kernel unconditionally. Levels nest:
// kDefault shows functions, kVerbose adds core runtime ops, kDebug adds
// every kernel and the executor's and op dispatch's inner steps.
//
// Thread-safety: Enable/Disable are meant to be called before work starts;
// scopes may open and close on any thread. Lines from concurrent threads
// interleave (each line is written whole); nesting is only meaningful
// within one thread.
#ifndef ASYNCRT_HOST_CONTEXT_TRACING_H_
#define ASYNCRT_HOST_CONTEXT_TRACING_H_

#include <atomic>
#include <concepts>
#include <string>
#include <utility>

#include "absl/strings/string_view.h"

namespace asyncrt::tracing {

enum class Level : int { kDefault = 1, kVerbose = 2, kDebug = 3 };

namespace internal {
// 0 when tracing is off, else the enabled Level.
extern std::atomic<int> enabled_level;
}  // namespace internal

// Shows scopes of `level` and coarser from now on.
void Enable(Level level);
void Disable();

inline bool IsEnabled(Level level) {
  return internal::enabled_level.load(std::memory_order_relaxed) >=
         static_cast<int>(level);
}

// Write one line each, unconditionally; prefer ScopedTrace.
void BeginScope(absl::string_view name);
void EndScope();

// Opens a scope for its lifetime if `level` is enabled. The name may be a
// string or a callable returning one, called only when tracing is on (for
// names that cost something to build).
class ScopedTrace {
 public:
  ScopedTrace(Level level, absl::string_view name) : active_(IsEnabled(level)) {
    if (active_) [[unlikely]] BeginScope(name);
  }
  template <typename MakeName>
    requires std::invocable<MakeName&> &&
             std::convertible_to<std::invoke_result_t<MakeName&>, std::string>
  ScopedTrace(Level level, MakeName&& make_name) : active_(IsEnabled(level)) {
    if (active_) [[unlikely]] BeginScope(std::string(make_name()));
  }
  ~ScopedTrace() {
    if (active_) [[unlikely]] EndScope();
  }
  ScopedTrace(const ScopedTrace&) = delete;
  ScopedTrace& operator=(const ScopedTrace&) = delete;

 private:
  const bool active_;
};

}  // namespace asyncrt::tracing

#endif  // ASYNCRT_HOST_CONTEXT_TRACING_H_
