#include "asyncrt/host_context/async_dispatch.h"

#include <atomic>
#include <condition_variable>
#include <memory>
#include <mutex>

namespace asyncrt {
namespace internal {

void RunWhenReadySlow(absl::Span<AsyncValue* const> values,
                      absl::AnyInvocable<void()> callee) {
  struct Countdown {
    explicit Countdown(int count, absl::AnyInvocable<void()> callee)
        : remaining(count), callee(std::move(callee)) {}
    std::atomic<int> remaining;
    absl::AnyInvocable<void()> callee;
  };
  int unavailable = 0;
  for (AsyncValue* value : values) unavailable += value->IsUnavailable();
  // One extra count held by this function, so the callee cannot run (and
  // the countdown cannot be freed) while we are still registering waiters.
  auto* countdown = new Countdown(unavailable + 1, std::move(callee));
  auto count_down = [countdown] {
    if (countdown->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      countdown->callee();
      delete countdown;
    }
  };
  int registered = 0;
  for (AsyncValue* value : values) {
    if (registered == unavailable) break;
    if (value->IsUnavailable()) {
      ++registered;
      value->AndThen(count_down);
    }
  }
  // Values that became available between the two scans were counted but
  // not registered; release their counts too.
  for (; registered < unavailable; ++registered) count_down();
  count_down();
}

}  // namespace internal

void BlockUntilReady(AsyncValue* value) {
  if (value->IsAvailable()) return;
  struct Latch {
    std::mutex mutex;
    std::condition_variable cv;
    bool ready = false;
  };
  auto latch = std::make_shared<Latch>();
  value->AndThen([latch] {
    std::lock_guard<std::mutex> lock(latch->mutex);
    latch->ready = true;
    latch->cv.notify_all();
  });
  std::unique_lock<std::mutex> lock(latch->mutex);
  latch->cv.wait(lock, [&] { return latch->ready; });
}

}  // namespace asyncrt
