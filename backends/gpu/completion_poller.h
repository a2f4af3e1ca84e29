// How the CUDA plug-in learns that a stream's work is done: a thread per
// GPU that polls CUDA events recorded after the work (cudaEventQuery),
// spinning while completions are due and sleeping once none are. CUDA's
// own host callbacks (cudaStreamAddCallback) pass through its callback
// thread and cost about 45 us more per completion; the poller answers
// within a few microseconds of the GPU, for one host core kept busy while
// a GPU has work whose completion someone awaits (as CUDA's spin-wait
// synchronization does). ASYNCRT_CUDA_COMPLETION=callback uses CUDA's
// callbacks instead.
//
// Internal to the plug-in. Ownership: each CudaDevice owns one. Thread-
// safety: Enqueue from any thread. Blocking: the destructor waits for the
// pending completions (their work must finish) and joins the thread.
#ifndef ASYNCRT_BACKENDS_GPU_COMPLETION_POLLER_H_
#define ASYNCRT_BACKENDS_GPU_COMPLETION_POLLER_H_

#include <cuda_runtime.h>

#include <condition_variable>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "asyncrt/c/device_plugin.h"

namespace asyncrt::gpu {

class CompletionPoller {
 public:
  explicit CompletionPoller(int ordinal);
  ~CompletionPoller();
  CompletionPoller(const CompletionPoller&) = delete;
  CompletionPoller& operator=(const CompletionPoller&) = delete;

  // Calls `callback(arg, code, message)` on the poller's thread once the
  // work enqueued on `stream` so far is done (with the stream's error if
  // it failed). An error means nothing was enqueued.
  cudaError_t Enqueue(cudaStream_t stream, AsyncRT_CallbackFn callback,
                      void* arg);
  // Blocks until every completion enqueued so far has called back (for a
  // stream being destroyed: the runtime's callbacks come before it goes).
  void Drain();

 private:
  struct Pending {
    cudaEvent_t event;
    AsyncRT_CallbackFn callback;
    void* arg;
  };
  void Run();
  // Waits for `pending`'s event (spinning, then sleeping) and calls back.
  void Complete(const Pending& pending);

  const int ordinal_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable drained_;
  std::deque<Pending> pending_;           // Guarded by mutex_.
  bool completing_ = false;               // Guarded by mutex_: one is running.
  std::vector<cudaEvent_t> free_events_;  // Guarded by mutex_.
  bool stopping_ = false;                 // Guarded by mutex_.
  std::thread thread_;
};

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_COMPLETION_POLLER_H_
