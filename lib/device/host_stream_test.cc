// Tests of Stream's semantics on HostStream: order, events, waits across
// streams, callbacks on the blocking pool, sticky errors, draining on
// destruction, and concurrent enqueues (run under ThreadSanitizer).
#include "asyncrt/device/host_stream.h"

#include <atomic>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/concurrent_work_queue.h"
#include "asyncrt/host_context/host_allocator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using ::testing::HasSubstr;

class HostStreamTest : public ::testing::TestWithParam<const char*> {
 protected:
  HostStreamTest()
      : host_(nullptr, CreateMallocAllocator(), *CreateWorkQueue(GetParam())) {}

  Device& device() { return host_.host_device(); }

  void Await(const AsyncValueRef<Chain>& value) {
    RCReference<AsyncValue> values[] = {value.CopyRef()};
    host_.Await(values);
  }

  HostContext host_;
};

INSTANTIATE_TEST_SUITE_P(Queues, HostStreamTest,
                         ::testing::Values("s", "mstd:2"),
                         [](const auto& info) {
                           return std::string(info.param) == "s" ? "s" : "mstd";
                         });

TEST_P(HostStreamTest, WorkRunsInOrderOnTheStreamsThread) {
  HostStream stream(device(), &host_);
  EXPECT_EQ(&stream.device(), &device());
  std::vector<int> order;
  std::thread::id stream_thread;
  for (int i = 0; i < 1000; ++i) {
    stream.Enqueue([&, i] {
      if (i == 0) stream_thread = std::this_thread::get_id();
      order.push_back(i);
      return absl::OkStatus();
    });
  }
  Await(stream.OnDone());
  ASSERT_EQ(order.size(), 1000u);
  for (int i = 0; i < 1000; ++i) EXPECT_EQ(order[i], i);
  EXPECT_NE(stream_thread, std::this_thread::get_id());
  EXPECT_TRUE(stream.status().ok());
}

TEST_P(HostStreamTest, AnEventCompletesOnlyAfterTheWorkBeforeIt) {
  HostStream stream(device(), &host_);
  absl::Notification release;
  std::atomic<bool> ran{false};
  stream.Enqueue([&] {
    release.WaitForNotification();
    ran = true;
    return absl::OkStatus();
  });
  RCReference<DeviceEvent> event = stream.RecordEvent();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(event->IsDone());
  release.Notify();
  Await(event->done());
  EXPECT_TRUE(ran);
  EXPECT_TRUE(event->IsDone());
  EXPECT_FALSE(event->done().IsError());
}

TEST_P(HostStreamTest, AStreamWaitsForAnotherStreamsEvent) {
  HostStream producer(device(), &host_);
  HostStream consumer(device(), &host_);
  absl::Notification release;
  std::atomic<int> produced{0};
  producer.Enqueue([&] {
    release.WaitForNotification();
    produced = 1;
    return absl::OkStatus();
  });
  consumer.WaitForEvent(producer.RecordEvent());
  int seen = -1;
  consumer.Enqueue([&] {
    seen = produced.load();
    return absl::OkStatus();
  });
  RCReference<DeviceEvent> consumed = consumer.RecordEvent();
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(consumed->IsDone());
  release.Notify();
  Await(consumed->done());
  EXPECT_EQ(seen, 1);
}

TEST_P(HostStreamTest, CallbacksRunOnTheBlockingPoolAfterTheWork) {
  HostStream stream(device(), &host_);
  std::atomic<bool> work_done{false};
  stream.Enqueue([&] {
    work_done = true;
    return absl::OkStatus();
  });
  auto called = MakeUnconstructedAsyncValueRef<Chain>();
  std::thread::id callback_thread;
  bool saw_work = false;
  absl::Status seen = absl::UnknownError("not called");
  bool in_blocking_pool = false;
  stream.AddCallback([&, called](absl::Status status) {
    callback_thread = std::this_thread::get_id();
    in_blocking_pool = host_.work_queue().IsInBlockingThread();
    saw_work = work_done.load();
    seen = status;
    called.emplace();
  });
  Await(called);
  EXPECT_TRUE(saw_work);
  EXPECT_TRUE(seen.ok()) << seen;
  if (std::string(GetParam()) != "s") {
    // The multi-threaded queue's blocking pool: neither the caller's
    // thread nor a worker.
    EXPECT_NE(callback_thread, std::this_thread::get_id());
    EXPECT_TRUE(in_blocking_pool);
  }
}

TEST_P(HostStreamTest, ErrorsAreStickyAndReachEventsAndCallbacks) {
  HostStream stream(device(), &host_);
  std::atomic<int> ran{0};
  stream.Enqueue([&] {
    ++ran;
    return absl::OkStatus();
  });
  RCReference<DeviceEvent> before = stream.RecordEvent();
  stream.Enqueue([] { return absl::InternalError("kernel fault"); });
  stream.Enqueue([&] {
    ++ran;  // Skipped: the stream has failed.
    return absl::OkStatus();
  });
  RCReference<DeviceEvent> after = stream.RecordEvent();
  auto called = MakeUnconstructedAsyncValueRef<Chain>();
  absl::Status seen;
  stream.AddCallback([&, called](absl::Status status) {
    seen = status;
    called.emplace();
  });
  Await(after->done());
  Await(called);
  Await(before->done());
  // The callback's task may still be letting go of its copy of the error
  // on the blocking pool. ThreadSanitizer has reported that release (in
  // absl::Status's reference count) against this thread's copy of the
  // stream's status below, once in many runs; the copies are independent,
  // so waiting for the pool keeps the report away without hiding a race
  // of ours.
  host_.Quiesce();
  EXPECT_FALSE(before->done().IsError());
  ASSERT_TRUE(after->done().IsError());
  EXPECT_THAT(after->done().GetError().message(), HasSubstr("kernel fault"));
  EXPECT_THAT(seen.message(), HasSubstr("kernel fault"));
  EXPECT_THAT(stream.status().message(), HasSubstr("kernel fault"));
  EXPECT_EQ(ran.load(), 1);
}

TEST_P(HostStreamTest, WaitingForAFailedEventFailsTheStream) {
  HostStream failing(device(), &host_);
  HostStream waiting(device(), &host_);
  failing.Enqueue([] { return absl::DataLossError("copy failed"); });
  waiting.WaitForEvent(failing.RecordEvent());
  bool ran = false;
  waiting.Enqueue([&] {
    ran = true;
    return absl::OkStatus();
  });
  AsyncValueRef<Chain> done = waiting.OnDone();
  Await(done);
  ASSERT_TRUE(done.IsError());
  EXPECT_THAT(done.GetError().message(), HasSubstr("copy failed"));
  EXPECT_FALSE(ran);
}

TEST_P(HostStreamTest, DestructionRunsWhatWasEnqueued) {
  std::atomic<int> ran{0};
  {
    HostStream stream(device(), &host_);
    for (int i = 0; i < 100; ++i) {
      stream.Enqueue([&] {
        ++ran;
        return absl::OkStatus();
      });
    }
  }
  EXPECT_EQ(ran.load(), 100);
}

TEST_P(HostStreamTest, EventsOutliveTheirStream) {
  RCReference<DeviceEvent> event;
  {
    HostStream stream(device(), &host_);
    stream.Enqueue([] { return absl::OkStatus(); });
    event = stream.RecordEvent();
  }
  Await(event->done());
  EXPECT_TRUE(event->IsDone());
}

// Several threads enqueue on two streams that wait for each other's events;
// every item runs once, each stream's items in each thread's order.
TEST_P(HostStreamTest, ConcurrentEnqueuesAndCrossWaitsStress) {
  HostStream a(device(), &host_);
  HostStream b(device(), &host_);
  constexpr int kThreads = 4, kItems = 500;
  std::vector<std::vector<int>> last_seen(2, std::vector<int>(kThreads, -1));
  std::atomic<int> out_of_order{0}, ran{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < kItems; ++i) {
        const int which = (i + t) % 2;
        HostStream& stream = which == 0 ? a : b;
        HostStream& other = which == 0 ? b : a;
        if (i % 50 == 0) stream.WaitForEvent(other.RecordEvent());
        stream.Enqueue([&, which, t, i] {
          // Only this stream's thread touches last_seen[which].
          if (last_seen[which][t] >= i) ++out_of_order;
          last_seen[which][t] = i;
          ++ran;
          return absl::OkStatus();
        });
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  AsyncValueRef<Chain> a_done = a.OnDone();
  AsyncValueRef<Chain> b_done = b.OnDone();
  Await(a_done);
  Await(b_done);
  EXPECT_EQ(ran.load(), kThreads * kItems);
  EXPECT_EQ(out_of_order.load(), 0);
}

}  // namespace
}  // namespace asyncrt
