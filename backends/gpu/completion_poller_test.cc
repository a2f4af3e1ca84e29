// The CUDA plug-in's completion poller on fake events (plain C++, run with
// or without CUDA, also under ThreadSanitizer): a done event calls back
// while an older one of another stream is still pending; a stream's
// completions come in order; failures carry their message; Drain and the
// destructor wait for everything; a stress test of several adding threads
// and a "device" completing events in stream order.
#include "backends/gpu/completion_poller.h"

#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::gpu {
namespace {

using ::testing::ElementsAre;

struct FakeEvent {
  std::atomic<EventState> state{EventState::kPending};
  std::string message;
};

CompletionPoller::EventOps FakeOps(std::atomic<int>* released) {
  return {nullptr,
          [](void* event, AsyncRT_Code* code, std::string* message) {
            auto* fake = static_cast<FakeEvent*>(event);
            const EventState state = fake->state.load();
            if (state == EventState::kFailed) {
              *code = ASYNCRT_INVALID_ARGUMENT;
              *message = fake->message;
            }
            return state;
          },
          [released](void*) { released->fetch_add(1); }};
}

// Completes the events still pending when destroyed: declared after the
// poller, it runs before the poller's destructor waits for them, so that a
// failing test ends instead of hanging.
struct CompleteOnExit {
  std::vector<FakeEvent*> events;
  ~CompleteOnExit() {
    for (FakeEvent* event : events) {
      EventState pending = EventState::kPending;
      event->state.compare_exchange_strong(pending, EventState::kDone);
    }
  }
};

// What callbacks saw, in order.
struct Log {
  std::mutex mutex;
  std::vector<std::string> entries;
  void Add(std::string entry) {
    std::lock_guard<std::mutex> lock(mutex);
    entries.push_back(std::move(entry));
  }
  std::vector<std::string> Get() {
    std::lock_guard<std::mutex> lock(mutex);
    return entries;
  }
};

// A callback argument: the entry it logs.
struct Named {
  Log* log;
  std::string name;
};

void LogCallback(void* arg, AsyncRT_Code code, const char* message) {
  auto* named = static_cast<Named*>(arg);
  named->log->Add(code == ASYNCRT_OK
                      ? named->name
                      : named->name + " failed (" + std::to_string(code) +
                            "): " + std::string(message));
}

// Whether `log` has `size` entries within 10 s.
bool LogReaches(Log& log, size_t size) {
  for (int i = 0; i < 10000 && log.Get().size() < size; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return log.Get().size() >= size;
}

const int kStreamA = 1, kStreamB = 2;
const void* const kA = &kStreamA;
const void* const kB = &kStreamB;

TEST(CompletionPollerTest, ADoneEventIsNotHeldBehindAPendingOne) {
  std::atomic<int> released{0};
  Log log;
  FakeEvent slow, quick;
  Named slow_name{&log, "slow"}, quick_name{&log, "quick"};
  CompletionPoller poller(FakeOps(&released));
  CompleteOnExit complete{{&slow}};
  poller.Add(kA, &slow, LogCallback, &slow_name);
  quick.state = EventState::kDone;
  poller.Add(kB, &quick, LogCallback, &quick_name);
  ASSERT_TRUE(LogReaches(log, 1));
  EXPECT_THAT(log.Get(), ElementsAre("quick"));
  slow.state = EventState::kDone;
  poller.Drain();
  EXPECT_THAT(log.Get(), ElementsAre("quick", "slow"));
  EXPECT_EQ(released.load(), 2);
}

TEST(CompletionPollerTest, AStreamsCompletionsComeInOrder) {
  std::atomic<int> released{0};
  Log log;
  FakeEvent first, second;
  Named first_name{&log, "first"}, second_name{&log, "second"};
  CompletionPoller poller(FakeOps(&released));
  CompleteOnExit complete{{&first}};
  poller.Add(kA, &first, LogCallback, &first_name);
  // Done, but after a pending event of its stream.
  second.state = EventState::kDone;
  poller.Add(kA, &second, LogCallback, &second_name);
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_TRUE(log.Get().empty());
  first.state = EventState::kDone;
  poller.Drain();
  EXPECT_THAT(log.Get(), ElementsAre("first", "second"));
}

TEST(CompletionPollerTest, AFailedEventCallsBackWithItsCodeAndMessage) {
  std::atomic<int> released{0};
  Log log;
  FakeEvent event;
  event.message = "CUDA stream failed: cudaErrorIllegalAddress";
  event.state = EventState::kFailed;
  Named name{&log, "copy"};
  CompletionPoller poller(FakeOps(&released));
  poller.Add(kA, &event, LogCallback, &name);
  poller.Drain();
  EXPECT_THAT(
      log.Get(),
      ElementsAre("copy failed (" + std::to_string(ASYNCRT_INVALID_ARGUMENT) +
                  "): CUDA stream failed: cudaErrorIllegalAddress"));
  EXPECT_EQ(released.load(), 1);
}

TEST(CompletionPollerTest, TheDestructorWaitsForPendingCompletions) {
  std::atomic<int> released{0};
  Log log;
  FakeEvent event;
  Named name{&log, "late"};
  std::thread device([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    event.state = EventState::kDone;
  });
  {
    CompletionPoller poller(FakeOps(&released));
    poller.Add(kA, &event, LogCallback, &name);
  }
  EXPECT_THAT(log.Get(), ElementsAre("late"));
  device.join();
}

// Threads add events on three streams; a "device" thread completes each
// stream's events in order, the streams interleaved at random. Every
// callback comes once, a stream's in order.
TEST(CompletionPollerTest, ASleepingPollerWakesForTheNextCompletion) {
  // Without an idle spin the poller sleeps as soon as nothing is due; with
  // a short one it sleeps after it: either way an addition wakes it.
  for (const auto idle_spin :
       {std::chrono::microseconds(0), std::chrono::microseconds(500)}) {
    std::atomic<int> released{0};
    Log log;
    FakeEvent first, second;
    Named first_name{&log, "first"}, second_name{&log, "second"};
    CompletionPoller poller(FakeOps(&released), idle_spin);
    first.state = EventState::kDone;
    poller.Add(kA, &first, LogCallback, &first_name);
    poller.Drain();
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // Asleep.
    second.state = EventState::kDone;
    poller.Add(kA, &second, LogCallback, &second_name);
    poller.Drain();
    EXPECT_THAT(log.Get(), ElementsAre("first", "second"));
    EXPECT_EQ(released.load(), 2);
  }
}

// Every completion of every stream called back once, in each stream's
// order, as threads add and a "device" completes them; with the default
// idle spin and with none (the poller then sleeps between most additions).
class CompletionPollerStressTest
    : public ::testing::TestWithParam<std::chrono::microseconds> {};

INSTANTIATE_TEST_SUITE_P(IdleSpins, CompletionPollerStressTest,
                         ::testing::Values(CompletionPoller::kDefaultIdleSpin,
                                           std::chrono::microseconds(0)));

TEST_P(CompletionPollerStressTest, ConcurrentStreamsStress) {
  constexpr int kThreads = 4, kPerThread = 300, kStreams = 3;
  std::atomic<int> released{0};
  struct Stream {
    std::mutex mutex;
    std::vector<std::unique_ptr<FakeEvent>> events;  // In added order.
    std::vector<int> called;                         // Indices, as called.
  };
  Stream streams[kStreams];
  struct Arg {
    Stream* stream;
    int index;
  };
  std::vector<std::unique_ptr<Arg>> args(kThreads * kPerThread);
  std::atomic<bool> adding{true};
  CompletionPoller poller(FakeOps(&released), GetParam());
  std::thread device([&] {
    std::mt19937 rng(7);
    size_t done[kStreams] = {};
    for (;;) {
      const int s = static_cast<int>(rng() % kStreams);
      bool finished = !adding.load();
      {
        std::lock_guard<std::mutex> lock(streams[s].mutex);
        if (done[s] < streams[s].events.size()) {
          streams[s].events[done[s]++]->state = EventState::kDone;
        }
      }
      if (finished) {
        bool all = true;
        for (int k = 0; k < kStreams; ++k) {
          std::lock_guard<std::mutex> lock(streams[k].mutex);
          if (done[k] < streams[k].events.size()) all = false;
        }
        if (all) return;
      }
      std::this_thread::yield();
    }
  });
  std::vector<std::thread> adders;
  for (int t = 0; t < kThreads; ++t) {
    adders.emplace_back([&, t] {
      for (int i = 0; i < kPerThread; ++i) {
        Stream& stream = streams[(t + i) % kStreams];
        auto& arg = args[t * kPerThread + i];
        std::lock_guard<std::mutex> lock(stream.mutex);
        arg = std::make_unique<Arg>(
            Arg{&stream, static_cast<int>(stream.events.size())});
        stream.events.push_back(std::make_unique<FakeEvent>());
        // Added under the stream's lock: the poller sees a stream's
        // events in the order the device completes them.
        poller.Add(
            &stream, stream.events.back().get(),
            [](void* raw, AsyncRT_Code code, const char*) {
              auto* arg = static_cast<Arg*>(raw);
              EXPECT_EQ(code, ASYNCRT_OK);
              std::lock_guard<std::mutex> lock(arg->stream->mutex);
              arg->stream->called.push_back(arg->index);
            },
            arg.get());
      }
    });
  }
  for (std::thread& adder : adders) adder.join();
  adding = false;
  device.join();
  poller.Drain();
  int total = 0;
  for (Stream& stream : streams) {
    std::lock_guard<std::mutex> lock(stream.mutex);
    for (size_t i = 0; i < stream.called.size(); ++i) {
      ASSERT_EQ(stream.called[i], static_cast<int>(i));
    }
    EXPECT_EQ(stream.called.size(), stream.events.size());
    total += static_cast<int>(stream.called.size());
  }
  EXPECT_EQ(total, kThreads * kPerThread);
  EXPECT_EQ(released.load(), kThreads * kPerThread);
}

}  // namespace
}  // namespace asyncrt::gpu
