// Calls functions at deadlines, on a thread of its own: the model server's
// request timeouts. A request answered in time cancels its function, so
// that the timer holds only the requests still running. Adding a function
// wakes the thread only if its deadline is earlier than the thread's next
// wake-up (at most kIdleWait away): a server's equal timeouts cost no
// thread wake-up per request.
//
// Ownership: owns its thread; the destructor drops the functions not yet
// run. Thread-safety: thread-safe. Blocking: the destructor joins.
#ifndef ASYNCRT_SERVING_DEADLINE_TIMER_H_
#define ASYNCRT_SERVING_DEADLINE_TIMER_H_

#include <chrono>
#include <cstdint>
#include <condition_variable>
#include <map>
#include <mutex>
#include <thread>
#include <utility>

#include "absl/functional/any_invocable.h"

namespace asyncrt::serving {

class DeadlineTimer {
 public:
  using Clock = std::chrono::steady_clock;

  DeadlineTimer();
  ~DeadlineTimer();

  // What Cancel needs to find a function again.
  struct Handle {
    Clock::time_point deadline;
    uint64_t id = 0;  // 0: no function.
  };

  // Calls `fn` at `deadline` (at once if it has passed), on the timer's
  // thread: `fn` must be quick.
  Handle At(Clock::time_point deadline, absl::AnyInvocable<void() &&> fn);
  // Drops the function of `handle` if it has not started. Returns whether
  // it did.
  bool Cancel(const Handle& handle);

 private:
  void Run();

  static constexpr Clock::duration kIdleWait = std::chrono::seconds(1);

  std::mutex mutex_;
  std::condition_variable changed_;
  // When the thread next looks at pending_ (guarded by mutex_).
  Clock::time_point wake_at_ = Clock::time_point::min();
  // Guarded by mutex_: by deadline, then in order of arrival.
  std::map<std::pair<Clock::time_point, uint64_t>,
           absl::AnyInvocable<void() &&>>
      pending_;
  uint64_t next_id_ = 1;
  bool stopping_ = false;
  std::thread thread_;  // Last: starts once the members above exist.
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_DEADLINE_TIMER_H_
