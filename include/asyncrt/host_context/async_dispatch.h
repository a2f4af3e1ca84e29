// Waiting on groups of async values and handing work to the work queue.
#ifndef ASYNCRT_HOST_CONTEXT_ASYNC_DISPATCH_H_
#define ASYNCRT_HOST_CONTEXT_ASYNC_DISPATCH_H_

#include <atomic>
#include <type_traits>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/functional/any_invocable.h"
#include "absl/types/span.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/host_context.h"

namespace asyncrt {

namespace internal {
void RunWhenReadySlow(absl::Span<AsyncValue* const> values,
                      absl::AnyInvocable<void()> callee);
}  // namespace internal

// Runs `callee` once every value in `values` is available (concrete or
// error). If all already are, runs it inline on the calling thread without
// allocating; otherwise on the thread that publishes the last one. The values
// are borrowed (+0) and need only stay alive until the call returns.
template <typename F>
void RunWhenReady(absl::Span<AsyncValue* const> values, F&& callee) {
  for (AsyncValue* value : values) {
    if (value->IsUnavailable()) {
      internal::RunWhenReadySlow(values, std::forward<F>(callee));
      return;
    }
  }
  callee();
}

template <typename F>
void RunWhenReady(absl::Span<const RCReference<AsyncValue>> values,
                  F&& callee) {
  absl::InlinedVector<AsyncValue*, 8> raw;
  raw.reserve(values.size());
  for (const auto& value : values) raw.push_back(value.get());
  RunWhenReady(absl::MakeConstSpan(raw), std::forward<F>(callee));
}

// Blocks the calling thread until `value` is available. Must not be called
// from a work-queue worker thread whose progress the value depends on; use
// HostContext::Await to let a single-threaded queue run its tasks.
void BlockUntilReady(AsyncValue* value);

// Runs `work` on the host's non-blocking work queue. Thread-safe.
template <typename F>
void EnqueueWork(HostContext* host, F&& work) {
  host->work_queue().AddTask(std::forward<F>(work));
}

// Runs `work` on the host's work queue and returns its result as an async
// value. `work` returns R or absl::StatusOr<R>.
template <typename F, typename R = std::invoke_result_t<F>>
auto EnqueueWorkWithResult(HostContext* host, F&& work) {
  if constexpr (internal::IsStatusOr<R>::value) {
    using T = typename R::value_type;
    auto result = MakeUnconstructedAsyncValueRef<T>();
    host->work_queue().AddTask(
        [result, work = std::forward<F>(work)]() mutable {
          result.emplace(work());
        });
    return result;
  } else {
    auto result = MakeUnconstructedAsyncValueRef<R>();
    host->work_queue().AddTask(
        [result, work = std::forward<F>(work)]() mutable {
          result.emplace(work());
        });
    return result;
  }
}

// Runs blocking `work` on the host's blocking pool, queuing it if no thread
// is free. Returns false if the pool refused it (queue full). Thread-safe.
template <typename F>
[[nodiscard]] bool EnqueueBlockingWork(HostContext* host, F&& work) {
  return !host->work_queue()
              .AddBlockingTask(std::forward<F>(work), /*allow_queuing=*/true)
              .has_value();
}

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_ASYNC_DISPATCH_H_
