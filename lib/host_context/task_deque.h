// TaskDeque: the per-worker deque of the work-stealing pool.
//
// Operations on the front are done only by the owning worker (PushFront,
// PopFront) and are lock-free. Operations on the back (PushBack for tasks
// submitted from other threads, PopBackBatch for thieves) may come from any
// thread and are serialized by a spin lock, so the owner never waits on it;
// TryPushBack gives up instead of waiting for it.
//
// Algorithm: a fixed-capacity ring of slots, each with an atomic state
// (empty, busy, ready). A party claims a slot by moving its state to busy
// with a compare-and-swap, so the owner and a thief racing for the last task
// cannot both take it; the winner then moves the index. Tasks live in
// [back_, front_) modulo the capacity. The same scheme as Eigen's RunQueue,
// which TensorFlow's and TFRT's pools use.
#ifndef ASYNCRT_LIB_HOST_CONTEXT_TASK_DEQUE_H_
#define ASYNCRT_LIB_HOST_CONTEXT_TASK_DEQUE_H_

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>

#include "asyncrt/host_context/concurrent_work_queue.h"
#include "lib/host_context/work_queue_util.h"

namespace asyncrt::internal {

// A spin lock for the deque's back end, which is held for a
// slot write or a batch of at most a few moves. std::mutex parks a waiter in
// the kernel and makes the holder pay a wake-up system call on unlock; here
// a waiter spins and, past a short spin, yields (the holder may have been
// preempted on an oversubscribed machine). Meets Lockable.
class SpinLock {
 public:
  // One exchange, no test first: a read would bring the line in shared and
  // the exchange then pay a second coherence miss to own it.
  bool try_lock() { return !locked_.exchange(true, std::memory_order_acquire); }
  void lock() {
    while (!try_lock()) {
      for (int spins = 0; locked_.load(std::memory_order_relaxed); ++spins) {
        if (spins < kSpinsBeforeYield) {
          CpuRelax();
        } else {
          std::this_thread::yield();
        }
      }
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  static constexpr int kSpinsBeforeYield = 64;
  std::atomic<bool> locked_{false};
};

template <unsigned kCapacity>
class TaskDeque {
  static_assert(kCapacity >= 4 && (kCapacity & (kCapacity - 1)) == 0,
                "capacity must be a power of two");
  static constexpr unsigned kMask = kCapacity - 1;

 public:
  TaskDeque() {
    for (Slot& slot : slots_)
      slot.state.store(kEmpty, std::memory_order_relaxed);
  }
  TaskDeque(const TaskDeque&) = delete;
  TaskDeque& operator=(const TaskDeque&) = delete;

  // Owner only. Moves `task` in and returns true, or returns false (leaving
  // `task` untouched) if the deque is full.
  bool PushFront(TaskFunction& task) {
    unsigned front = front_.load(std::memory_order_relaxed);
    Slot& slot = slots_[front & kMask];
    uint8_t state = slot.state.load(std::memory_order_relaxed);
    if (state != kEmpty || !slot.state.compare_exchange_strong(
                               state, kBusy, std::memory_order_acquire)) {
      return false;
    }
    front_.store(front + 1, std::memory_order_relaxed);
    slot.task = std::move(task);
    slot.state.store(kReady, std::memory_order_release);
    return true;
  }

  // Owner only. Takes the most recently pushed front task.
  bool PopFront(TaskFunction* out) {
    unsigned front = front_.load(std::memory_order_relaxed);
    Slot& slot = slots_[(front - 1) & kMask];
    uint8_t state = slot.state.load(std::memory_order_relaxed);
    if (state != kReady || !slot.state.compare_exchange_strong(
                               state, kBusy, std::memory_order_acquire)) {
      return false;
    }
    *out = std::move(slot.task);
    front_.store(front - 1, std::memory_order_relaxed);
    slot.state.store(kEmpty, std::memory_order_release);
    return true;
  }

  enum class PushResult { kPushed, kFull, kBusy };

  // Any thread. Like PushFront, at the back; waits while another thread
  // holds the back end.
  bool PushBack(TaskFunction& task) {
    std::lock_guard<SpinLock> lock(back_lock_);
    return PushBackLocked(task);
  }

  // Any thread. Like PushBack, but returns kBusy at once, leaving `task`
  // untouched, if another thread holds the back end: a submitter then tries
  // another deque rather than sleep on this one's lock behind a thief.
  PushResult TryPushBack(TaskFunction& task) {
    std::unique_lock<SpinLock> lock(back_lock_, std::try_to_lock);
    if (!lock.owns_lock()) return PushResult::kBusy;
    return PushBackLocked(task) ? PushResult::kPushed : PushResult::kFull;
  }

  // Tasks pushed at the back so far. Counted before the task can be taken,
  // so a reader that sees a task's completion also sees its push.
  uint64_t PushedBackCount() const {
    return pushed_back_.load(std::memory_order_acquire);
  }

  // Any thread. Takes up to `max_tasks` of the oldest tasks (about half of
  // what is queued, at least one) under one lock, so a thief pays for the
  // lock once per batch rather than once per task. Returns how many were
  // taken into `out`.
  int PopBackBatch(TaskFunction* out, int max_tasks) {
    if (Empty()) return 0;
    std::unique_lock<SpinLock> lock(back_lock_, std::try_to_lock);
    if (!lock.owns_lock()) return 0;
    unsigned back = back_.load(std::memory_order_relaxed);
    unsigned size = front_.load(std::memory_order_relaxed) - back;
    // `size` is a snapshot of a racing owner's index; clamp it.
    if (size > kCapacity) size = 1;
    int want = std::clamp(static_cast<int>(size / 2), 1, max_tasks);
    int taken = 0;
    for (; taken < want; ++taken) {
      Slot& slot = slots_[(back + taken) & kMask];
      uint8_t state = slot.state.load(std::memory_order_relaxed);
      if (state != kReady || !slot.state.compare_exchange_strong(
                                 state, kBusy, std::memory_order_acquire)) {
        break;
      }
      out[taken] = std::move(slot.task);
      back_.store(back + taken + 1, std::memory_order_relaxed);
      slot.state.store(kEmpty, std::memory_order_release);
    }
    return taken;
  }

  // Lets a test hold the back end as a thief would.
  SpinLock& back_lock_for_testing() { return back_lock_; }

  // Approximate: may be stale by the time the caller acts on it. The pool
  // closes the race with a fence in its parking protocol.
  bool Empty() const {
    return front_.load(std::memory_order_relaxed) ==
           back_.load(std::memory_order_relaxed);
  }

 private:
  enum : uint8_t { kEmpty, kBusy, kReady };

  bool PushBackLocked(TaskFunction& task) {
    unsigned back = back_.load(std::memory_order_relaxed);
    Slot& slot = slots_[(back - 1) & kMask];
    // The slot was last touched by a consumer on another core: claim it with
    // one compare-and-swap (no plain read first, which would cost a second
    // coherence miss). It is not empty only when the deque is full.
    uint8_t state = kEmpty;
    if (!slot.state.compare_exchange_strong(state, kBusy,
                                            std::memory_order_acquire)) {
      return false;
    }
    pushed_back_.store(pushed_back_.load(std::memory_order_relaxed) + 1,
                       std::memory_order_release);
    back_.store(back - 1, std::memory_order_relaxed);
    slot.task = std::move(task);
    slot.state.store(kReady, std::memory_order_release);
    return true;
  }

  struct Slot {
    std::atomic<uint8_t> state;
    TaskFunction task;
  };

  // Written only by the owner.
  alignas(64) std::atomic<unsigned> front_{0};
  // Written only under back_lock_.
  alignas(64) std::atomic<unsigned> back_{0};
  std::atomic<uint64_t> pushed_back_{0};
  SpinLock back_lock_;
  std::array<Slot, kCapacity> slots_;
};

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_HOST_CONTEXT_TASK_DEQUE_H_
