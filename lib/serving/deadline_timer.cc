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

void DeadlineTimer::At(Clock::time_point deadline,
                       absl::AnyInvocable<void() &&> fn) {
  bool earliest;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = pending_.emplace(deadline, std::move(fn));
    earliest = it == pending_.begin();
  }
  if (earliest) changed_.notify_one();
}

void DeadlineTimer::Run() {
  std::unique_lock<std::mutex> lock(mutex_);
  while (!stopping_) {
    if (pending_.empty()) {
      changed_.wait(lock);
      continue;
    }
    auto first = pending_.begin();
    if (first->first > Clock::now()) {
      changed_.wait_until(lock, first->first);
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
