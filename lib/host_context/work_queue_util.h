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
void BlockUntilAllReady(absl::Span<const RCReference<AsyncValue>> values);

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_HOST_CONTEXT_WORK_QUEUE_UTIL_H_
