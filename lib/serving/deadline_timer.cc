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
  bool earliest;
  Handle handle{deadline, 0};
  {
    std::lock_guard<std::mutex> lock(mutex_);
    handle.id = next_id_++;
    auto it = pending_.emplace(std::make_pair(deadline, handle.id),
                               std::move(fn))
                  .first;
    earliest = it == pending_.begin();
  }
  if (earliest) changed_.notify_one();
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
    if (pending_.empty()) {
      changed_.wait(lock);
      continue;
    }
    auto first = pending_.begin();
    if (first->first.first > Clock::now()) {
      changed_.wait_until(lock, first->first.first);
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
