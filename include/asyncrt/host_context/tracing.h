// Tracing: scopes around functions, kernels and ops, written two ways.
//
//  - Text: nested "Scope:NAME" / "End Scope" lines on stdout, as TFRT's
//    bef_executor prints them with --enable_tracing (Enable(level)).
//  - Chrome trace: a JSON trace event file that Perfetto and
//    chrome://tracing open (StartChromeTrace(path) ... StopChromeTrace()):
//    a complete event per scope (kernel, eager op) with its name, source
//    location and thread, and an async span per function call.
//
// Tracing is off unless a binary turns it on. A disabled scope costs one
// relaxed atomic load and a branch, and the executor reads that flag once
// per call, so its untraced loops carry no tracing code at all. Levels nest:
// kDefault shows functions, kVerbose adds core runtime ops, kDebug adds
// every kernel and the executor's and op dispatch's inner steps. A Chrome
// trace records every level.
//
// Thread-safety: Enable/Disable and Start/StopChromeTrace are meant to be
// called before work starts and after it ends; scopes may open and close on
// any thread. Text lines from concurrent threads interleave (each line is
// written whole); nesting is only meaningful within one thread. Chrome
// events go to per-thread buffers (an uncontended lock each); StopChromeTrace
// blocks while it writes the file.
#ifndef ASYNCRT_HOST_CONTEXT_TRACING_H_
#define ASYNCRT_HOST_CONTEXT_TRACING_H_

#include <atomic>
#include <concepts>
#include <cstdint>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace asyncrt::tracing {

enum class Level : int { kDefault = 1, kVerbose = 2, kDebug = 3 };

namespace internal {
// 0 when nothing traces, else the finest Level any output wants.
extern std::atomic<int> enabled_level;
}  // namespace internal

// Prints text scopes of `level` and coarser from now on.
void Enable(Level level);
// Stops the text scopes (a Chrome trace in progress goes on).
void Disable();

inline bool IsEnabled(Level level) {
  return internal::enabled_level.load(std::memory_order_relaxed) >=
         static_cast<int>(level);
}

// Starts recording every scope for a Chrome trace written to `path` by
// StopChromeTrace. The file is created now: an unwritable path is an error
// here. FailedPrecondition if a trace is already being recorded.
absl::Status StartChromeTrace(const std::string& path);
// Stops recording and writes the file. OkStatus if no trace was started.
absl::Status StopChromeTrace();
bool IsChromeTraceActive();

// Write one scope line / record one event each; prefer ScopedTrace.
// `location` ("file:line:col", may be empty) goes into the Chrome event.
void BeginScope(Level level, absl::string_view name,
                absl::string_view location = {});
void EndScope(Level level);

// An asynchronous span (a function call that may finish on another thread):
// Chrome async events sharing `id`. No text output. Call only when
// IsEnabled(Level::kDefault).
void BeginAsyncSpan(absl::string_view name, uint64_t id);
void EndAsyncSpan(absl::string_view name, uint64_t id);

// Opens a scope for its lifetime if `level` is enabled. The name may be a
// string or a callable returning one, called only when tracing is on (for
// names that cost something to build).
class ScopedTrace {
 public:
  ScopedTrace(Level level, absl::string_view name,
              absl::string_view location = {})
      : level_(level), active_(IsEnabled(level)) {
    if (active_) [[unlikely]]
      BeginScope(level, name, location);
  }
  template <typename MakeName>
  requires std::invocable<MakeName&> &&
      std::convertible_to<std::invoke_result_t<MakeName&>, std::string>
      ScopedTrace(Level level, MakeName&& make_name)
      : level_(level), active_(IsEnabled(level)) {
    if (active_) [[unlikely]]
      BeginScope(level, std::string(make_name()));
  }
  ~ScopedTrace() {
    if (active_) [[unlikely]]
      EndScope(level_);
  }
  ScopedTrace(const ScopedTrace&) = delete;
  ScopedTrace& operator=(const ScopedTrace&) = delete;

 private:
  const Level level_;
  const bool active_;
};

}  // namespace asyncrt::tracing

#endif  // ASYNCRT_HOST_CONTEXT_TRACING_H_
