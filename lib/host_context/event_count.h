// EventCount: lets idle workers park without missing a wake-up.
//
// Protocol, for a worker that found no work:
//   event.PrepareWait();          // announce the intent to park
//   if (work is visible) event.CancelWait(); else event.CommitWait();
// and for a producer, after making work visible:
//   event.NotifyOne();
//
// A sequentially consistent fence separates each side's write from its read
// (Dekker's pattern): PrepareWait fences after announcing the waiter, and the
// producer must fence (FullFence() below) after making work
// visible and before NotifyOne. Then either the worker's re-check sees the
// work, or the producer sees the waiter and wakes one. NotifyOne costs one
// load when nobody waits, the common case of a busy pool.
#ifndef ASYNCRT_LIB_HOST_CONTEXT_EVENT_COUNT_H_
#define ASYNCRT_LIB_HOST_CONTEXT_EVENT_COUNT_H_

#include <atomic>
#include <semaphore>

namespace asyncrt::internal {

// A sequentially consistent fence. On x86 GCC emits `mfence`, which also
// orders non-temporal and device memory and costs several times a locked
// instruction; a locked no-op on the stack is a full barrier for ordinary
// memory (Intel SDM 8.2.2; Linux's smp_mb and LLVM use it too) and is what
// the pool's Dekker-style checks need. Under ThreadSanitizer keep the
// standard fence.
inline void FullFence() {
#if defined(__x86_64__) && !defined(__SANITIZE_THREAD__)
  asm volatile("lock orl $0, (%%rsp)" ::: "memory", "cc");
#else
  std::atomic_thread_fence(std::memory_order_seq_cst);
#endif
}

// Sleeping is a semaphore (a futex on Linux): a notifier makes one system
// call, and only when a worker actually sleeps; the mutex and condition
// variable this replaced cost a notifier up to three (a contended lock, the
// signal, a contended unlock) and made it queue behind waking workers.
class EventCount {
 public:
  void PrepareWait() {
    waiters_.fetch_add(1, std::memory_order_relaxed);
    FullFence();
  }

  void CancelWait() { waiters_.fetch_sub(1, std::memory_order_relaxed); }

  // Blocks until a NotifyOne or NotifyAll that happens after PrepareWait.
  void CommitWait() {
    sleep_.acquire();
    signals_.fetch_sub(1, std::memory_order_relaxed);
    waiters_.fetch_sub(1, std::memory_order_relaxed);
  }

  // Wakes one prepared or committed waiter, if any. The caller has fenced
  // (see the protocol above).
  void NotifyOne() {
    if (waiters_.load(std::memory_order_relaxed) == 0) return;
    // A signal left over from a waiter that cancelled wakes the next waiter
    // spuriously; it re-checks for work and parks again. Signals are capped
    // at the number of waiters.
    int signals = signals_.load(std::memory_order_relaxed);
    do {
      if (signals >= waiters_.load(std::memory_order_relaxed)) return;
    } while (!signals_.compare_exchange_weak(signals, signals + 1,
                                             std::memory_order_relaxed));
    sleep_.release();
  }

  // Wakes every prepared or committed waiter.
  void NotifyAll() {
    FullFence();
    int signals = signals_.load(std::memory_order_relaxed);
    int missing;
    do {
      missing = waiters_.load(std::memory_order_relaxed) - signals;
      if (missing <= 0) return;
    } while (!signals_.compare_exchange_weak(signals, signals + missing,
                                             std::memory_order_relaxed));
    sleep_.release(missing);
  }

  int NumWaiters() const { return waiters_.load(std::memory_order_relaxed); }

 private:
  std::atomic<int> waiters_{0};
  // Signals given and not yet consumed by a waiter (<= waiters_).
  std::atomic<int> signals_{0};
  std::counting_semaphore<> sleep_{0};
};

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_HOST_CONTEXT_EVENT_COUNT_H_
