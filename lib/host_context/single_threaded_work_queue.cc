// The "s" work queue: tasks run only on the thread that calls Await or
// Quiesce, in FIFO order. Deterministic, so tests and debugging see one
// schedule.
#include <condition_variable>
#include <deque>
#include <memory>
#include <mutex>

#include "asyncrt/host_context/concurrent_work_queue.h"
#include "lib/host_context/work_queue_util.h"

namespace asyncrt {
namespace {

class SingleThreadedWorkQueue final : public ConcurrentWorkQueue {
 public:
  ~SingleThreadedWorkQueue() override { Quiesce(); }

  absl::string_view name() const override { return "s"; }

  void AddTask(TaskFunction task) override {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
    }
    // Await may be waiting for a task added from another thread.
    cv_.notify_one();
  }

  // Blocking tasks are queued with the others: there is only one thread.
  std::optional<TaskFunction> AddBlockingTask(TaskFunction task,
                                              bool) override {
    AddTask(std::move(task));
    return std::nullopt;
  }

  void Await(absl::Span<const RCReference<AsyncValue>> values) override {
    // Counts values still unavailable, plus one for this call until every
    // continuation is added (one may run at once, on a value that became
    // available since it was counted: counting and adding in one pass,
    // never a value counted without its continuation). Shared with the
    // continuations, which may run on other threads after this returns.
    auto remaining = std::make_shared<int>(1);
    for (const auto& value : values) {
      if (!value->IsUnavailable()) continue;
      {
        std::lock_guard<std::mutex> lock(mutex_);
        ++*remaining;
      }
      value->AndThen([this, remaining] {
        std::lock_guard<std::mutex> lock(mutex_);
        if (--*remaining == 0) cv_.notify_all();
      });
    }
    std::unique_lock<std::mutex> lock(mutex_);
    --*remaining;
    while (*remaining > 0) {
      if (tasks_.empty()) {
        // Nothing to run here: the values wait on other threads (a task
        // added from outside, or work on another device), which are often
        // microseconds away: spin briefly, then sleep.
        lock.unlock();
        internal::SpinBriefly([&] {
          std::lock_guard<std::mutex> check(mutex_);
          return *remaining == 0 || !tasks_.empty();
        });
        lock.lock();
        if (*remaining > 0 && tasks_.empty()) cv_.wait(lock);
        continue;
      }
      RunOneTask(lock);
    }
  }

  void Quiesce() override {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!tasks_.empty()) RunOneTask(lock);
  }

  int GetParallelismLevel() const override { return 1; }
  bool IsInWorkerThread() const override { return false; }

 private:
  // Runs the oldest task with the lock released.
  void RunOneTask(std::unique_lock<std::mutex>& lock) {
    TaskFunction task = std::move(tasks_.front());
    tasks_.pop_front();
    lock.unlock();
    task();
    task = nullptr;
    lock.lock();
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  std::deque<TaskFunction> tasks_;  // Guarded by mutex_.
};

}  // namespace

std::unique_ptr<ConcurrentWorkQueue> CreateSingleThreadedWorkQueue() {
  return std::make_unique<SingleThreadedWorkQueue>();
}

}  // namespace asyncrt
