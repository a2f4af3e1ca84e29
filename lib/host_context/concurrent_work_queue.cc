#include "asyncrt/host_context/concurrent_work_queue.h"

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "lib/host_context/work_queue_util.h"

namespace asyncrt {

absl::StatusOr<std::unique_ptr<ConcurrentWorkQueue>> CreateWorkQueue(
    absl::string_view spec) {
  if (spec == "s") return CreateSingleThreadedWorkQueue();
  auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid work queue type '", spec,
        "': expected 's', 'mstd', 'mstd:N' or 'mstd:N,M' with N, M > 0"));
  };
  std::vector<absl::string_view> parts =
      absl::StrSplit(spec, absl::MaxSplits(':', 1));
  if (parts[0] != "mstd") return invalid();
  MultiThreadedWorkQueueOptions options;
  if (parts.size() == 2) {
    std::vector<absl::string_view> counts = absl::StrSplit(parts[1], ',');
    if (counts.size() > 2) return invalid();
    int num_threads = 0;
    if (!absl::SimpleAtoi(counts[0], &num_threads) || num_threads <= 0) {
      return invalid();
    }
    options.num_threads = num_threads;
    if (counts.size() == 2) {
      int max_blocking = 0;
      if (!absl::SimpleAtoi(counts[1], &max_blocking) || max_blocking <= 0) {
        return invalid();
      }
      options.max_blocking_threads = max_blocking;
    }
  }
  return CreateMultiThreadedWorkQueue(options);
}

namespace internal {

std::chrono::microseconds AwaitSpin() {
  static const std::chrono::microseconds spin = [] {
    int64_t us = 50;
    if (const char* value = std::getenv("ASYNCRT_AWAIT_SPIN_US")) {
      if (!absl::SimpleAtoi(value, &us) || us < 0) us = 50;
    }
    return std::chrono::microseconds(us);
  }();
  return spin;
}

std::chrono::microseconds BlockingSpin() {
  static const std::chrono::microseconds spin = [] {
    int64_t us = std::thread::hardware_concurrency() >= 8 ? 50 : 0;
    if (const char* value = std::getenv("ASYNCRT_BLOCKING_SPIN_US")) {
      if (!absl::SimpleAtoi(value, &us) || us < 0) us = 0;
    }
    return std::chrono::microseconds(us);
  }();
  return spin;
}

void BlockUntilAllReady(absl::Span<const RCReference<AsyncValue>> values,
                        bool may_spin) {
  struct Latch {
    std::mutex mutex;
    std::condition_variable cv;
    int remaining = 0;
  };
  auto latch = std::make_shared<Latch>();
  std::vector<AsyncValue*> pending;
  for (const auto& value : values) {
    if (value->IsUnavailable()) pending.push_back(value.get());
  }
  if (pending.empty()) return;
  const bool ready = may_spin && SpinBriefly([&] {
    return std::none_of(pending.begin(), pending.end(), [](AsyncValue* value) {
      return value->IsUnavailable();
    });
  });
  if (ready) return;
  latch->remaining = static_cast<int>(pending.size());
  for (AsyncValue* value : pending) {
    value->AndThen([latch] {
      std::lock_guard<std::mutex> lock(latch->mutex);
      if (--latch->remaining == 0) latch->cv.notify_all();
    });
  }
  std::unique_lock<std::mutex> lock(latch->mutex);
  latch->cv.wait(lock, [&] { return latch->remaining == 0; });
}

}  // namespace internal
}  // namespace asyncrt
