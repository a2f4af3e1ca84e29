// Calls functions at deadlines, on a thread of its own: the model server's
// request timeouts. A function that is no longer needed is left to run
// and find its request answered (it is cheap), rather than cancelled.
//
// Ownership: owns its thread; the destructor drops the functions not yet
// run. Thread-safety: thread-safe. Blocking: the destructor joins.
#ifndef ASYNCRT_SERVING_DEADLINE_TIMER_H_
#define ASYNCRT_SERVING_DEADLINE_TIMER_H_

#include <chrono>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>

#include "absl/functional/any_invocable.h"

namespace asyncrt::serving {

class DeadlineTimer {
 public:
  using Clock = std::chrono::steady_clock;

  DeadlineTimer();
  ~DeadlineTimer();

  // Calls `fn` at `deadline` (at once if it has passed), on the timer's
  // thread: `fn` must be quick.
  void At(Clock::time_point deadline, absl::AnyInvocable<void() &&> fn);

 private:
  void Run();

  std::mutex mutex_;
  std::condition_variable changed_;
  // Guarded by mutex_.
  std::multimap<Clock::time_point, absl::AnyInvocable<void() &&>> pending_;
  bool stopping_ = false;
  std::thread thread_;  // Last: starts once the members above exist.
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_DEADLINE_TIMER_H_
