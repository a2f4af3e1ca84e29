#include "backends/gpu/completion_poller.h"

#include <algorithm>
#include <chrono>
#include <utility>
#include <vector>

namespace asyncrt::gpu {

// How long the poller spins (yielding) after the last completion or
// addition before it sleeps between rounds while completions are due
// (longer than a typical model call, so that the answer comes within
// microseconds; a longer wait costs a round per kSleep). With none due it
// spins idle_spin_ (so that the next one, added within a model call's
// time, needs no wake-up: on the fake CUDA an eager round trip 22 -> 9 us).
constexpr auto kSpin = std::chrono::milliseconds(2);
constexpr auto kSleep = std::chrono::microseconds(50);

CompletionPoller::CompletionPoller(EventOps ops,
                                   std::chrono::microseconds idle_spin)
    : ops_(std::move(ops)), idle_spin_(idle_spin), thread_([this] { Run(); }) {}

CompletionPoller::~CompletionPoller() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
}

void CompletionPoller::Add(const void* stream, void* event,
                           AsyncRT_CallbackFn callback, void* arg) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    added_.push_back({stream, event, callback, arg});
  }
  wake_.notify_one();
}

void CompletionPoller::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [&] { return added_.empty() && polled_ == 0; });
}

void CompletionPoller::Run() {
  if (ops_.start_thread) ops_.start_thread();
  using Clock = std::chrono::steady_clock;
  // Taken from added_, in the order they were added; this thread's only.
  std::vector<Pending> polled;
  // Streams with a pending event in this round: their later events wait.
  std::vector<const void*> held_streams;
  Clock::time_point last_news = Clock::now();
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    if (polled.empty()) {
      // Nothing due: stay awake (yielding) until idle_spin_ after the last
      // news, then sleep. The next completion of a burst (an eager chain's
      // copy back, a model's next call) then finds the poller awake
      // instead of waiting for its wake-up.
      while (added_.empty() && !stopping_ &&
             Clock::now() - last_news < idle_spin_) {
        lock.unlock();
        std::this_thread::yield();
        lock.lock();
      }
      wake_.wait(lock, [&] { return stopping_ || !added_.empty(); });
      if (added_.empty()) return;  // Stopping, and nothing is due.
    }
    if (!added_.empty()) {
      polled.insert(polled.end(), added_.begin(), added_.end());
      added_.clear();
      last_news = Clock::now();
    }
    polled_ = polled.size();
    lock.unlock();
    // Every event whose stream has nothing pending before it: done ones
    // call back, the rest stay for the next round.
    held_streams.clear();
    size_t kept = 0;
    for (Pending& pending : polled) {
      const bool held = std::find(held_streams.begin(), held_streams.end(),
                                  pending.stream) != held_streams.end();
      AsyncRT_Code code = ASYNCRT_INTERNAL;
      std::string message;
      const EventState state = held
                                   ? EventState::kPending
                                   : ops_.query(pending.event, &code, &message);
      if (state == EventState::kPending) {
        if (!held) held_streams.push_back(pending.stream);
        polled[kept++] = pending;
        continue;
      }
      if (state == EventState::kDone) {
        pending.callback(pending.arg, ASYNCRT_OK, nullptr);
      } else {
        pending.callback(pending.arg, code, message.c_str());
      }
      ops_.release(pending.event);
      last_news = Clock::now();
    }
    polled.resize(kept);
    lock.lock();
    polled_ = polled.size();
    if (polled.empty()) {
      if (added_.empty()) drained_.notify_all();
      continue;
    }
    if (!added_.empty()) continue;
    if (Clock::now() - last_news < kSpin) {
      lock.unlock();
      std::this_thread::yield();
      lock.lock();
    } else {
      // Woken early by an addition.
      wake_.wait_for(lock, kSleep, [&] { return !added_.empty(); });
    }
  }
}

}  // namespace asyncrt::gpu
