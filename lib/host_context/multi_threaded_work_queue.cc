// The "mstd" work queue: a work-stealing non-blocking pool plus an on-demand
// blocking pool. Design notes are in docs/host_context.md ("Work queues").
#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/concurrent_work_queue.h"
#include "lib/host_context/event_count.h"
#include "lib/host_context/task_deque.h"
#include "lib/host_context/work_queue_util.h"

namespace asyncrt {
namespace {

// Per-thread xorshift generator for picking workers and steal victims.
uint32_t NextRandom() {
  thread_local uint64_t state =
      std::hash<std::thread::id>()(std::this_thread::get_id()) | 1;
  state ^= state << 13;
  state ^= state >> 7;
  state ^= state << 17;
  return static_cast<uint32_t>(state >> 32);
}

//===--- Non-blocking pool ------------------------------------------------===//

class NonBlockingPool {
 public:
  NonBlockingPool(int num_threads, int max_spinning)
      : max_spinning_(max_spinning) {
    workers_.reserve(num_threads);
    for (int i = 0; i < num_threads; ++i) {
      workers_.push_back(std::make_unique<Worker>());
    }
    for (int i = 0; i < num_threads; ++i) {
      workers_[i]->thread = std::thread([this, i] { WorkerLoop(i); });
    }
  }

  // Stops the workers. Tasks still queued are destroyed without running.
  ~NonBlockingPool() {
    stop_.store(true, std::memory_order_relaxed);
    internal::FullFence();
    event_.NotifyAll();
    for (auto& worker : workers_) worker->thread.join();
  }

  void AddTask(TaskFunction task) {
    if (current_pool == this) {
      Worker& worker = *workers_[current_index];
      // Count the submission before the task becomes stealable, so that a
      // Quiesce can never see its completion without its submission.
      worker.submitted.store(
          worker.submitted.load(std::memory_order_relaxed) + 1,
          std::memory_order_release);
      if (!worker.deque.PushFront(task)) {
        RunInline(task);
        return;
      }
    } else if (!PushFromOutside(task)) {
      external_inline_submitted_.fetch_add(1, std::memory_order_release);
      RunInline(task);
      return;
    }
    // Wake a parked worker unless one is already spinning: a spinner finds
    // the task within its spin window, and waking costs tens of
    // microseconds. Waiters first: while every worker is busy that line
    // stays unwritten (cached here), while spinning_ changes constantly.
    internal::FullFence();
    if (event_.NumWaiters() != 0 &&
        spinning_.load(std::memory_order_relaxed) == 0) {
      event_.NotifyOne();
    }
  }

  // Blocks until all tasks submitted before the call (and tasks they add)
  // have finished.
  void Quiesce() const {
    internal::Backoff backoff;
    while (!IsQuiescent()) backoff.Wait();
  }

  // True if every task submitted so far has finished. Reads completion
  // counts before submission counts: every completed task was submitted
  // earlier, so equal sums mean nothing was pending when the completions
  // were read.
  bool IsQuiescent() const {
    uint64_t completed = inline_completed_.load(std::memory_order_acquire);
    for (const auto& worker : workers_) {
      completed += worker->completed.load(std::memory_order_acquire);
    }
    uint64_t submitted = SubmittedCount();
    return completed == submitted;
  }

  uint64_t SubmittedCount() const {
    uint64_t submitted = external_inline_submitted_.load(std::memory_order_acquire);
    for (const auto& worker : workers_) {
      submitted += worker->submitted.load(std::memory_order_acquire) +
                   worker->deque.PushedBackCount();
    }
    return submitted;
  }

  int num_threads() const { return static_cast<int>(workers_.size()); }
  // Workers not parked (running or spinning for tasks); racy, a hint.
  int BusyWorkers() const { return num_threads() - event_.NumWaiters(); }
  bool IsInWorkerThread() const { return current_pool == this; }
  int CurrentIndex() const { return current_pool == this ? current_index : -1; }

 private:
  static constexpr unsigned kDequeCapacity = 1024;
  static constexpr int kMaxStealBatch = 16;
  // Spin roughly as long as waking a parked thread takes: a worker that
  // spins that long and finds nothing loses at most 2x against an oracle.
  static constexpr auto kSpinDuration = std::chrono::microseconds(50);

  struct Worker {
    internal::TaskDeque<kDequeCapacity> deque;
    std::thread thread;
    // Written only by this worker; read by Quiesce.
    alignas(64) std::atomic<uint64_t> submitted{0};
    std::atomic<uint64_t> completed{0};
  };

  // A task from a thread outside the pool goes to the back of the first
  // deque, from a random one on, whose back end no thief holds (oneTBB's
  // lanes do the same): a submitter blocked on a mutex costs two system
  // calls. Only when every deque is busy does it wait for one. Returns
  // false if every deque is full.
  bool PushFromOutside(TaskFunction& task) {
    using PushResult = internal::TaskDeque<kDequeCapacity>::PushResult;
    const size_t n = workers_.size();
    const size_t start = NextRandom() % n;
    size_t busy = n;
    for (size_t i = 0; i < n; ++i) {
      const size_t index = (start + i) % n;
      PushResult result = workers_[index]->deque.TryPushBack(task);
      if (result == PushResult::kPushed) return true;
      if (result == PushResult::kBusy && busy == n) busy = index;
    }
    return busy != n && workers_[busy]->deque.PushBack(task);
  }

  void RunInline(TaskFunction& task) {
    task();
    task = nullptr;
    inline_completed_.fetch_add(1, std::memory_order_release);
  }

  void Run(Worker& worker, TaskFunction& task) {
    task();
    // Destroy what the task captured before counting it complete, so
    // Quiesce also waits for those destructors.
    task = nullptr;
    worker.completed.store(worker.completed.load(std::memory_order_relaxed) + 1,
                           std::memory_order_release);
  }

  // Steals a batch of the oldest tasks from a random victim: the first goes
  // to `out`, the rest to our own deque.
  bool Steal(int self, TaskFunction* out) {
    const size_t n = workers_.size();
    const size_t start = NextRandom() % n;
    for (size_t i = 0; i < n; ++i) {
      size_t victim = (start + i) % n;
      if (static_cast<int>(victim) == self) continue;
      TaskFunction batch[kMaxStealBatch];
      int taken = workers_[victim]->deque.PopBackBatch(batch, kMaxStealBatch);
      if (taken == 0) continue;
      *out = std::move(batch[0]);
      Worker& worker = *workers_[self];
      for (int t = 1; t < taken; ++t) {
        // Our deque had no front work (we are stealing), so this only fails
        // if outside submitters filled it meanwhile: then run it here.
        if (!worker.deque.PushFront(batch[t])) Run(worker, batch[t]);
      }
      return true;
    }
    return false;
  }

  bool FindWork(int self, TaskFunction* out) {
    return workers_[self]->deque.PopFront(out) || Steal(self, out);
  }

  bool AllDequesEmpty() const {
    for (const auto& worker : workers_) {
      if (!worker->deque.Empty()) return false;
    }
    return true;
  }

  bool TryStartSpinning() {
    int spinning = spinning_.load(std::memory_order_relaxed);
    while (spinning < max_spinning_) {
      if (spinning_.compare_exchange_weak(spinning, spinning + 1,
                                          std::memory_order_relaxed)) {
        return true;
      }
    }
    return false;
  }

  bool SpinForWork(int self, TaskFunction* out) {
    auto deadline = std::chrono::steady_clock::now() + kSpinDuration;
    for (unsigned i = 1;; ++i) {
      if (FindWork(self, out)) return true;
      if (stop_.load(std::memory_order_relaxed)) return false;
      internal::CpuRelax();
      if (i % 32 == 0 && std::chrono::steady_clock::now() > deadline) {
        return false;
      }
    }
  }

  void WorkerLoop(int index) {
    current_pool = this;
    current_index = index;
    Worker& worker = *workers_[index];
    TaskFunction task;
    while (true) {
      if (FindWork(index, &task)) {
        Run(worker, task);
        continue;
      }
      if (TryStartSpinning()) {
        bool found = SpinForWork(index, &task);
        int was_spinning = spinning_.fetch_sub(1, std::memory_order_relaxed);
        if (found) {
          // The last spinner leaving with work: hand the spinning role to a
          // parked worker if more work is queued, so bursts keep flowing.
          internal::FullFence();
          if (was_spinning == 1 && !AllDequesEmpty()) event_.NotifyOne();
          Run(worker, task);
          continue;
        }
      }
      // Work that is queued but could not be taken (a thief or submitter
      // held the back end): retry without touching the waiter count, which
      // every submitter reads.
      if (!AllDequesEmpty() && !stop_.load(std::memory_order_relaxed)) {
        internal::CpuRelax();
        continue;
      }
      event_.PrepareWait();
      if (stop_.load(std::memory_order_relaxed)) {
        event_.CancelWait();
        return;
      }
      if (!AllDequesEmpty()) {
        event_.CancelWait();
        continue;
      }
      event_.CommitWait();
    }
  }

  static thread_local const NonBlockingPool* current_pool;
  static thread_local int current_index;

  std::vector<std::unique_ptr<Worker>> workers_;
  const int max_spinning_;
  alignas(64) std::atomic<int> spinning_{0};
  // Outside submissions that found every deque full and ran inline (the
  // others are counted by the deque that took them).
  alignas(64) std::atomic<uint64_t> external_inline_submitted_{0};
  alignas(64) std::atomic<uint64_t> inline_completed_{0};
  std::atomic<bool> stop_{false};
  // Its own line: submitters read it on every task.
  alignas(64) internal::EventCount event_;
};

thread_local const NonBlockingPool* NonBlockingPool::current_pool = nullptr;
thread_local int NonBlockingPool::current_index = -1;

//===--- Blocking pool ----------------------------------------------------===//

// A thread that finishes a task and finds none waits BlockingSpin()
// (yielding) for the next before it sleeps, one thread at a time and only
// while no other thread of the pool is running a task and `may_spin()`:
// a device's completions come in bursts and round trips (an eager op's
// result awaited, a served model's next request), and a completion that
// finds a thread awake is run without the 5-25 us a sleeping thread's
// wake-up takes on a VM.
class BlockingPool {
 public:
  BlockingPool(int max_threads, int max_queued, std::function<bool()> may_spin)
      : max_threads_(max_threads),
        max_queued_(max_queued),
        may_spin_(std::move(may_spin)) {}

  // Stops the threads after they finish the tasks already accepted.
  ~BlockingPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stop_ = true;
      stopping_.store(true, std::memory_order_release);
    }
    work_cv_.notify_all();
    for (auto& thread : threads_) thread.join();
  }

  std::optional<TaskFunction> Add(TaskFunction task, bool allow_queuing) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (stop_) return task;
    const int queued = static_cast<int>(queue_.size());
    if (idle_threads_ > queued) {
      Accept(std::move(task));
      // A spinning thread takes the first queued task without a wake-up.
      const bool spinner_takes_it = spinning_threads_ > queued;
      lock.unlock();
      if (!spinner_takes_it) work_cv_.notify_one();
      return std::nullopt;
    }
    if (static_cast<int>(threads_.size()) < max_threads_) {
      // The new thread starts with this task, so it never counts against
      // the queue's capacity.
      ++pending_;
      ++accepted_;
      threads_.emplace_back(
          [this, first = std::move(task)]() mutable { ThreadLoop(first); });
      return std::nullopt;
    }
    if (allow_queuing && queued < max_queued_) {
      Accept(std::move(task));
      return std::nullopt;
    }
    return task;
  }

  void Quiesce() {
    std::unique_lock<std::mutex> lock(mutex_);
    quiesce_cv_.wait(lock, [&] { return pending_ == 0; });
  }

  bool IsQuiescent() {
    std::lock_guard<std::mutex> lock(mutex_);
    return pending_ == 0;
  }

  uint64_t SubmittedCount() {
    std::lock_guard<std::mutex> lock(mutex_);
    return accepted_;
  }

  bool IsInPoolThread() const { return current_blocking_pool == this; }

 private:
  void Accept(TaskFunction task) {
    queue_.push_back(std::move(task));
    queued_.store(queue_.size(), std::memory_order_release);
    ++pending_;
    ++accepted_;
  }

  // With the lock held and nothing queued: spins (the lock released) until
  // a task is queued, the pool stops or the spin is over.
  void SpinForTask(std::unique_lock<std::mutex>& lock) {
    // Another of the pool's threads still working (a host stream draining,
    // a blocking kernel) may want the core.
    auto may_spin = [&] {
      return running_.load(std::memory_order_acquire) == 0 && may_spin_();
    };
    const std::chrono::microseconds spin = internal::BlockingSpin();
    if (spinning_threads_ > 0 || spin.count() == 0 || !may_spin()) return;
    ++spinning_threads_;
    lock.unlock();
    internal::SpinFor(spin, [&] {
      return queued_.load(std::memory_order_acquire) != 0 ||
             stopping_.load(std::memory_order_acquire) || !may_spin();
    });
    lock.lock();
    // A task queued from here on finds no spinner and wakes a thread; one
    // queued before is in queue_, which the caller's wait checks first.
    --spinning_threads_;
  }

  void ThreadLoop(TaskFunction& first) {
    current_blocking_pool = this;
    running_.fetch_add(1, std::memory_order_acq_rel);
    first();
    first = nullptr;
    running_.fetch_sub(1, std::memory_order_acq_rel);
    std::unique_lock<std::mutex> lock(mutex_);
    if (--pending_ == 0) quiesce_cv_.notify_all();
    while (true) {
      ++idle_threads_;
      if (queue_.empty() && !stop_) SpinForTask(lock);
      work_cv_.wait(lock, [&] { return stop_ || !queue_.empty(); });
      --idle_threads_;
      if (queue_.empty()) return;  // Stopping.
      TaskFunction task = std::move(queue_.front());
      queue_.pop_front();
      queued_.store(queue_.size(), std::memory_order_release);
      running_.fetch_add(1, std::memory_order_acq_rel);
      lock.unlock();
      task();
      task = nullptr;
      running_.fetch_sub(1, std::memory_order_acq_rel);
      lock.lock();
      if (--pending_ == 0) quiesce_cv_.notify_all();
    }
  }

  const int max_threads_;
  const int max_queued_;
  const std::function<bool()> may_spin_;
  // queue_.size() and stop_, read by a spinning thread without the lock.
  std::atomic<size_t> queued_{0};
  std::atomic<bool> stopping_{false};
  std::atomic<int> running_{0};  // Threads running a task.
  std::mutex mutex_;
  std::condition_variable work_cv_;
  std::condition_variable quiesce_cv_;
  // All guarded by mutex_.
  std::deque<TaskFunction> queue_;
  std::vector<std::thread> threads_;
  int idle_threads_ = 0;      // Spinning or asleep, waiting for a task.
  int spinning_threads_ = 0;  // Of those, spinning (SpinForTask).
  int64_t pending_ = 0;  // Accepted and not yet finished.
  uint64_t accepted_ = 0;
  bool stop_ = false;
  static thread_local const BlockingPool* current_blocking_pool;
};

thread_local const BlockingPool* BlockingPool::current_blocking_pool = nullptr;

//===--- The work queue ---------------------------------------------------===//

class MultiThreadedWorkQueue final : public ConcurrentWorkQueue {
 public:
  MultiThreadedWorkQueue(int num_threads, int max_spinning,
                         int max_blocking_threads, int max_queued_blocking)
      : name_(absl::StrCat("mstd:", num_threads, ",", max_blocking_threads)),
        non_blocking_(num_threads, max_spinning),
        // As Await: spin only while every worker is parked.
        blocking_(max_blocking_threads, max_queued_blocking,
                  [this] { return non_blocking_.BusyWorkers() == 0; }) {}

  ~MultiThreadedWorkQueue() override { Quiesce(); }

  absl::string_view name() const override { return name_; }

  void AddTask(TaskFunction task) override {
    non_blocking_.AddTask(std::move(task));
  }

  std::optional<TaskFunction> AddBlockingTask(TaskFunction task,
                                              bool allow_queuing) override {
    return blocking_.Add(std::move(task), allow_queuing);
  }

  void Await(absl::Span<const RCReference<AsyncValue>> values) override {
    assert(!IsInWorkerThread() && "Await called from a worker thread");
    // Spin only while every worker is parked: the values then wait on
    // another thread or a device, and spinning takes nothing from the
    // pool (while it computes a model, the wait is long and its workers
    // want the cores).
    internal::BlockUntilAllReady(values, non_blocking_.BusyWorkers() == 0);
  }

  void Quiesce() override {
    assert(!IsInWorkerThread() && "Quiesce called from a worker thread");
    // Tasks of each pool may add tasks to the other: repeat until a pass
    // sees no new submission to either.
    while (true) {
      uint64_t before =
          non_blocking_.SubmittedCount() + blocking_.SubmittedCount();
      non_blocking_.Quiesce();
      blocking_.Quiesce();
      uint64_t after =
          non_blocking_.SubmittedCount() + blocking_.SubmittedCount();
      if (before == after && non_blocking_.IsQuiescent()) return;
    }
  }

  int GetParallelismLevel() const override {
    return non_blocking_.num_threads();
  }

  bool IsInWorkerThread() const override {
    return non_blocking_.IsInWorkerThread();
  }

  int CurrentWorkerIndex() const override {
    return non_blocking_.CurrentIndex();
  }

  bool IsInBlockingThread() const override {
    return blocking_.IsInPoolThread();
  }

 private:
  std::string name_;
  NonBlockingPool non_blocking_;
  BlockingPool blocking_;
};

}  // namespace

std::unique_ptr<ConcurrentWorkQueue> CreateMultiThreadedWorkQueue(
    const MultiThreadedWorkQueueOptions& options) {
  int num_threads = options.num_threads;
  if (num_threads <= 0) {
    num_threads = std::max(1u, std::thread::hardware_concurrency());
  }
  int max_spinning = options.max_spinning_workers;
  if (max_spinning <= 0) max_spinning = std::max(1, num_threads / 4);
  return std::make_unique<MultiThreadedWorkQueue>(
      num_threads, max_spinning, std::max(1, options.max_blocking_threads),
      std::max(0, options.max_queued_blocking_tasks));
}

}  // namespace asyncrt
