// How the CUDA plug-in learns that a stream's work is done: a thread per
// GPU that polls events recorded after the work (cudaEventQuery), spinning
// while completions are due and for a while (2 ms by default) after the
// last one, then sleeping (so a burst's next completion, an eager chain's
// or a model call's, finds it awake). CUDA's own host
// callbacks (cudaStreamAddCallback) pass through its callback thread and
// cost about 45 us more per completion; the poller answers within a few
// microseconds of the GPU, for one host core kept busy while a GPU has
// work whose completion someone awaits (as CUDA's spin-wait
// synchronization does). ASYNCRT_CUDA_COMPLETION=callback uses CUDA's
// callbacks instead.
//
// A device has several streams (compute, and a copy stream per host
// direction), whose events complete in any order: every due event is
// polled on each round, so a quick copy's completion never waits behind a
// long kernel's. A stream's own completions are called back in the order
// they were added.
//
// The poller is plain C++ (the events are opaque; EventOps says how to
// query them), so that it is tested everywhere, with or without CUDA.
//
// Internal to the plug-in. Ownership: each CudaDevice owns one. Thread-
// safety: Add and Drain from any thread. Blocking: Drain and the
// destructor wait for the pending completions (their work must finish);
// the destructor joins the thread.
#ifndef ASYNCRT_BACKENDS_GPU_COMPLETION_POLLER_H_
#define ASYNCRT_BACKENDS_GPU_COMPLETION_POLLER_H_

#include <chrono>
#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>

#include "asyncrt/c/device_plugin.h"

namespace asyncrt::gpu {

enum class EventState { kPending, kDone, kFailed };

class CompletionPoller {
 public:
  // What the poller does with events; all called on the poller's thread.
  struct EventOps {
    // Once, before the first poll (CUDA: make the device current).
    std::function<void()> start_thread;
    // The event's state; when kFailed, `*code` and `*message` say why.
    std::function<EventState(void* event, AsyncRT_Code* code,
                             std::string* message)>
        query;
    // The event is done with (CUDA: back to the device's pool).
    std::function<void(void* event)> release;
  };

  // How long the poller stays awake (spinning, yielding its core) with
  // nothing due after the last completion or addition, before it sleeps.
  static constexpr std::chrono::microseconds kDefaultIdleSpin{2000};

  explicit CompletionPoller(
      EventOps ops, std::chrono::microseconds idle_spin = kDefaultIdleSpin);
  ~CompletionPoller();
  CompletionPoller(const CompletionPoller&) = delete;
  CompletionPoller& operator=(const CompletionPoller&) = delete;

  // Calls `callback(arg, code, message)` on the poller's thread once
  // `event` (recorded on `stream` after the work) is done: ASYNCRT_OK, or
  // the query's code and message if it failed. Completions of
  // one `stream` are called back in the order they were added.
  void Add(const void* stream, void* event, AsyncRT_CallbackFn callback,
           void* arg);
  // Blocks until every completion added so far has called back (for a
  // stream being destroyed: the runtime's callbacks come before it goes).
  void Drain();

 private:
  struct Pending {
    const void* stream;
    void* event;
    AsyncRT_CallbackFn callback;
    void* arg;
  };
  void Run();

  const EventOps ops_;
  const std::chrono::microseconds idle_spin_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<Pending> added_;  // Guarded by mutex_: not yet polled.
  size_t polled_ = 0;          // Guarded by mutex_: taken, not called back.
  bool stopping_ = false;      // Guarded by mutex_.
  std::thread thread_;
};

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_COMPLETION_POLLER_H_
