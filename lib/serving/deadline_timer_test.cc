// DeadlineTimer: functions run at their deadlines, in deadline order,
// whatever the order they were added in; pending ones are dropped on
// destruction.
#include "asyncrt/serving/deadline_timer.h"

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/serving/serving_test_util.h"

namespace asyncrt::serving {
namespace {

using Clock = DeadlineTimer::Clock;

TEST(DeadlineTimerTest, RunsInDeadlineOrderNotBefore) {
  DeadlineTimer timer;
  std::mutex mutex;
  std::vector<int> order;
  testing::Notification done;
  const Clock::time_point start = Clock::now();
  std::atomic<bool> early{false};
  auto at = [&](int ms, int id) {
    timer.At(start + std::chrono::milliseconds(ms), [&, ms, id] {
      if (Clock::now() < start + std::chrono::milliseconds(ms)) early = true;
      std::lock_guard<std::mutex> lock(mutex);
      order.push_back(id);
      if (order.size() == 3) done.Notify();
    });
  };
  at(30, 3);
  at(10, 1);
  at(20, 2);
  done.WaitForNotification();
  EXPECT_THAT(order, ::testing::ElementsAre(1, 2, 3));
  EXPECT_FALSE(early.load());
}

TEST(DeadlineTimerTest, PendingFunctionsAreDroppedOnDestruction) {
  std::atomic<int> ran{0};
  {
    DeadlineTimer timer;
    timer.At(Clock::now() + std::chrono::hours(1), [&] { ran.fetch_add(1); });
  }
  EXPECT_EQ(ran.load(), 0);
}

TEST(DeadlineTimerTest, CancelledFunctionsNeverRunAndAreReleased) {
  DeadlineTimer timer;
  auto held = std::make_shared<int>(7);
  std::atomic<int> ran{0};
  DeadlineTimer::Handle handle = timer.At(
      Clock::now() + std::chrono::milliseconds(20),
      [&, held] { ran.fetch_add(1); });
  EXPECT_EQ(held.use_count(), 2);
  EXPECT_TRUE(timer.Cancel(handle));
  EXPECT_EQ(held.use_count(), 1);  // The function is gone at once.
  EXPECT_FALSE(timer.Cancel(handle));
  EXPECT_FALSE(timer.Cancel(DeadlineTimer::Handle{}));
  testing::Notification later;
  timer.At(Clock::now() + std::chrono::milliseconds(40),
           [&] { later.Notify(); });
  later.WaitForNotification();
  EXPECT_EQ(ran.load(), 0);
}

}  // namespace
}  // namespace asyncrt::serving
