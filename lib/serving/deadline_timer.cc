#include "asyncrt/serving/deadline_timer.h"

namespace asyncrt::serving {

DeadlineTimer::DeadlineTimer() : thread_([this] { Run(); }) {}

DeadlineTimer::~DeadlineTimer() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  changed_.notify_one();
  thread_.join();
}

DeadlineTimer::Handle DeadlineTimer::At(Clock::time_point deadline,
                                        absl::AnyInvocable<void() &&> fn) {
  bool wake;
  Handle handle{deadline, 0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    handle.id = next_id_++;
    pending_.emplace(std::make_pair(deadline, handle.id), std::move(fn));
    // The thread wakes at wake_at_ anyway: only an earlier deadline needs
    // it sooner. (A server's timeouts are equal and answered in time: in
    // steady state no request wakes the thread.)
    wake = deadline < wake_at_;
    if (wake) wake_at_ = deadline;
  }
  if (wake) changed_.notify_one();
  return handle;
}

bool DeadlineTimer::Cancel(const Handle& handle) {
  if (handle.id == 0) return false;
  absl::AnyInvocable<void() &&> dropped;  // Destroyed outside the lock.
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = pending_.find(std::make_pair(handle.deadline, handle.id));
  if (it == pending_.end()) return false;
  dropped = std::move(it->second);
  pending_.erase(it);
  return true;
}

void DeadlineTimer::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    const Clock::time_point now = Clock::now();
    auto first = pending_.begin();
    if (pending_.empty() || first->first.first > now) {
      // Idle, it looks again after a while rather than waiting for a
      // wake-up per new function.
      wake_at_ = pending_.empty() ? now + kIdleWait
                                  : std::min(first->first.first, now + kIdleWait);
      changed_.wait_until(lock, wake_at_);
      continue;
    }
    absl::AnyInvocable<void() &&> fn = std::move(first->second);
    pending_.erase(first);
    lock.unlock();
    std::move(fn)();
    lock.lock();
  }
}

}  // namespace asyncrt::serving
