// Helpers shared by the work queue implementations.
#ifndef ASYNCRT_LIB_HOST_CONTEXT_WORK_QUEUE_UTIL_H_
#define ASYNCRT_LIB_HOST_CONTEXT_WORK_QUEUE_UTIL_H_

#include <algorithm>
#include <chrono>
#include <thread>

#include "absl/types/span.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt::internal {

// Tells the CPU this is a spin-wait loop (saves power, yields the core to a
// hyperthread sibling).
inline void CpuRelax() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// How long a thread that awaits values spins (yielding its core) before it
// sleeps: a value due within microseconds (a device's completion, a short
// task on another thread) is then seen without the wake-up a sleeping
// thread needs, 5-25 us on a VM (most of an eager GPU round trip), and the
// thread's core stays awake for what it does next. A wait longer than
// this costs at most this much of a core, once per Await. 50 us, or
// ASYNCRT_AWAIT_SPIN_US (read once; 0 turns the spin off).
std::chrono::microseconds AwaitSpin();

// How long a blocking-pool thread that finished its task waits (yielding)
// for the next before it sleeps, so that a device's next completion is run
// without a wake-up. 50 us on machines of 8 cores or more; none on
// smaller ones, where the spinning thread takes a core from the caller or
// a device's own thread (the example plug-in's relu chains: 110 -> 170 us
// on 2 cores). ASYNCRT_BLOCKING_SPIN_US sets it (read once; 0: off).
std::chrono::microseconds BlockingSpin();

// Spins (yielding) until `done()` or `duration` has passed; returns
// `done()`'s last answer.
template <typename Done>
bool SpinFor(std::chrono::microseconds duration, const Done& done) {
  const auto deadline = std::chrono::steady_clock::now() + duration;
  while (!done()) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::yield();
  }
  return true;
}

// SpinFor(AwaitSpin(), done).
template <typename Done>
bool SpinBriefly(const Done& done) {
  return SpinFor(AwaitSpin(), done);
}

// Exponential backoff for polling loops that wait on other threads: yields
// first, then sleeps from 10 us up to 1 ms.
class Backoff {
 public:
  void Wait() {
    if (++attempts_ <= 16) {
      std::this_thread::yield();
      return;
    }
    std::this_thread::sleep_for(sleep_);
    sleep_ = std::min(sleep_ * 2, std::chrono::microseconds(1000));
  }

 private:
  int attempts_ = 0;
  std::chrono::microseconds sleep_{10};
};

// Blocks the calling thread until every value is available.
// With `may_spin`, spins first (SpinBriefly); a caller whose spinning would
// take a core from busy workers passes false.
void BlockUntilAllReady(absl::Span<const RCReference<AsyncValue>> values,
                        bool may_spin = true);

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_HOST_CONTEXT_WORK_QUEUE_UTIL_H_
