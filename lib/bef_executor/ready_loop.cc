// The ready loop's schedules: streams (TFRT's stream order), program order
// for tfrt.sync functions, visit order for non-strict kernels, and the
// offload of the older half of a wide graph to the work queue.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "lib/bef_executor/ready_loop_inl.h"

namespace asyncrt::internal {

void CallState::RunStreams(Worklist& ready) {
  // As TFRT's BEFExecutor::ProcessReadyKernels.
  if (ready.kernels.empty()) SwitchStream(ready);
  if (!ready.outline.empty()) OffloadStreams(ready);
  KernelSite site(exec_ctx_);
  while (!ready.kernels.empty()) {
    uint32_t next = ready.kernels.pop_back();
    // A kernel handed back by the one before runs next, as it would have
    // after a push and a pop: the worklist is not empty meanwhile, so only
    // the offload check falls between the two.
    while ((next = RunKernelInline(next, site, ready)) != kNoKernel) {
      if (!ready.outline.empty()) OffloadStreams(ready);
    }
    if (ready.kernels.empty()) SwitchStream(ready);
    if (!ready.outline.empty()) OffloadStreams(ready);
  }
}

void CallState::SwitchStream(Worklist& ready) {
  if (ready.outline.empty()) return;
  const uint32_t stream = function_.stream_of(ready.outline.front());
  // std::partition, not a stable one: TFRT's order.
  auto split = std::partition(
      ready.outline.begin(), ready.outline.end(),
      [&](uint32_t k) { return function_.stream_of(k) != stream; });
  ready.kernels.assign(split, ready.outline.end());
  ready.outline.erase(split, ready.outline.end());
}

[[gnu::noinline]] void CallState::OffloadStreams(Worklist& ready) {
  auto& outline = ready.outline;
  if (ScopedRunOnCallingThread::Active()) {
    // One stream after another, on this thread.
    Worklist task_ready;
    task_ready.kernels.assign(outline.begin(), outline.end());
    outline.clear();
    RunReady(task_ready);
    return;
  }
  std::sort(outline.begin(), outline.end(), [&](uint32_t a, uint32_t b) {
    return function_.stream_of(a) < function_.stream_of(b);
  });
  ConcurrentWorkQueue& queue = exec_ctx_.host()->work_queue();
  for (auto begin = outline.begin(); begin != outline.end();) {
    const uint32_t stream = function_.stream_of(*begin);
    auto end = std::find_if(begin, outline.end(), [&](uint32_t k) {
      return function_.stream_of(k) != stream;
    });
    Worklist task_ready;
    task_ready.kernels.assign(begin, end);
    AddRef();  // Released by the task.
    queue.AddTask([this, task_ready = std::move(task_ready)]() mutable {
      RunReady(task_ready);
      DropRef();
    });
    begin = end;
  }
  outline.clear();
}

void CallState::RunInOrder() {
  // Kernels still count their users down; nobody needs the ready list.
  Worklist unused;
  KernelSite site(exec_ctx_);
  for (uint32_t k = 0, n = function_.num_kernels(); k < n; ++k) {
    RunKernel(k, site, unused);
    unused.kernels.clear();
  }
}

void CallState::VisitInOrder(Worklist& ready, bool arguments_available) {
  for (uint32_t k = 0, n = function_.num_kernels(); k < n; ++k) {
    // A strict kernel whose count is 1 waits only for this visit (see
    // CountDownOne); a non-strict one may be counted below zero by others,
    // unless no other event can reach it.
    const KernelPlan& kernel = function_.kernel(k);
    const bool ready_now =
        kernel.non_strict
            ? (arguments_available &&
               kernel.visit_is_only_event_with_arguments) ||
                  ReadyCount(k).fetch_sub(1, std::memory_order_acq_rel) == 1
            : CountDownOne(k);
    if (ready_now) {
      ready.kernels.push_back(k);
      RunReady(ready);
    }
  }
}

void CallState::RunReady(Worklist& ready) {
  if (ABSL_PREDICT_FALSE(trace_kernels_)) return RunReadyTraced(ready);
  RunReadyUntraced</*kInlineKernels=*/true>(ready);
}

void CallState::RunReadyTraced(Worklist& ready) {
  tracing::ScopedTrace trace(tracing::Level::kDebug,
                             "BEFExecutor::ProcessReadyKernels");
  RunReadyUntraced</*kInlineKernels=*/false>(ready);
}

bool CallState::OffloadOlderHalf(KernelStack& kernels) {
  if (exec_ctx_.host()->work_queue().GetParallelismLevel() <= 1 ||
      ScopedRunOnCallingThread::Active()) {
    return false;
  }
  // The front holds the oldest (least cache-warm) kernels.
  const size_t half = kernels.size() / 2;
  Worklist batch;
  batch.kernels.assign(kernels.begin(), kernels.begin() + half);
  kernels.erase_bottom(half);
  AddRef();  // Released by the task.
  exec_ctx_.host()->work_queue().AddTask(
      [this, batch = std::move(batch)]() mutable {
        RunReady(batch);
        DropRef();
      });
  return true;
}

}  // namespace asyncrt::internal

