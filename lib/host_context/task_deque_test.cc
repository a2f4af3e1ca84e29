// Tests of the work-stealing deque: owner LIFO and thief FIFO order,
// capacity, batch steals, pushes that never wait, and a stress test where the owner pushes and pops
// while thieves steal and outsiders push at the back: every task runs
// exactly once.
#include "lib/host_context/task_deque.h"

#include <atomic>
#include <thread>
#include <vector>

#include "gtest/gtest.h"

namespace asyncrt::internal {
namespace {

TaskFunction Recorder(std::vector<int>* log, int id) {
  return [log, id] { log->push_back(id); };
}

TEST(TaskDequeTest, OwnerIsLifoThiefIsFifo) {
  TaskDeque<8> deque;
  std::vector<int> log;
  for (int i = 0; i < 4; ++i) {
    TaskFunction task = Recorder(&log, i);
    ASSERT_TRUE(deque.PushFront(task));
  }
  TaskFunction task;
  ASSERT_TRUE(deque.PopFront(&task));
  task();
  TaskFunction stolen[1];
  ASSERT_EQ(deque.PopBackBatch(stolen, 1), 1);
  stolen[0]();
  EXPECT_EQ(log, (std::vector<int>{3, 0}));
}

TEST(TaskDequeTest, PushBackGoesBehindTheOldest) {
  TaskDeque<8> deque;
  std::vector<int> log;
  TaskFunction front = Recorder(&log, 1);
  TaskFunction back = Recorder(&log, 2);
  ASSERT_TRUE(deque.PushFront(front));
  ASSERT_TRUE(deque.PushBack(back));
  TaskFunction task;
  while (deque.PopFront(&task)) task();
  EXPECT_EQ(log, (std::vector<int>{1, 2}));
  EXPECT_TRUE(deque.Empty());
}

TEST(TaskDequeTest, FullDequeRefusesAndKeepsTheTask) {
  TaskDeque<4> deque;
  std::vector<int> log;
  for (int i = 0; i < 4; ++i) {
    TaskFunction task = Recorder(&log, i);
    ASSERT_TRUE(deque.PushFront(task));
  }
  TaskFunction extra = Recorder(&log, 99);
  EXPECT_FALSE(deque.PushFront(extra));
  EXPECT_FALSE(deque.PushBack(extra));
  ASSERT_TRUE(extra);  // Not moved from.
  extra();
  EXPECT_EQ(log, (std::vector<int>{99}));
}

TEST(TaskDequeTest, TryPushBackNeverWaitsForTheBackEnd) {
  using PushResult = TaskDeque<4>::PushResult;
  TaskDeque<4> deque;
  std::vector<int> log;
  TaskFunction first = Recorder(&log, 1);
  EXPECT_EQ(deque.TryPushBack(first), PushResult::kPushed);
  EXPECT_EQ(deque.PushedBackCount(), 1u);

  // Another thread holding the back end (as a thief does while it steals)
  // makes the push busy at once, leaving the task with the caller.
  std::atomic<bool> held{false}, release{false};
  std::thread thief([&] {
    std::lock_guard<SpinLock> lock(deque.back_lock_for_testing());
    held.store(true);
    while (!release.load()) std::this_thread::yield();
  });
  while (!held.load()) std::this_thread::yield();
  TaskFunction second = Recorder(&log, 2);
  EXPECT_EQ(deque.TryPushBack(second), PushResult::kBusy);
  ASSERT_TRUE(second);  // Not moved from.
  release.store(true);
  thief.join();

  EXPECT_EQ(deque.TryPushBack(second), PushResult::kPushed);
  for (int i = 3; i <= 4; ++i) {
    TaskFunction task = Recorder(&log, i);
    ASSERT_EQ(deque.TryPushBack(task), PushResult::kPushed);
  }
  TaskFunction extra = Recorder(&log, 99);
  EXPECT_EQ(deque.TryPushBack(extra), PushResult::kFull);
  ASSERT_TRUE(extra);
  EXPECT_EQ(deque.PushedBackCount(), 4u);
  TaskFunction task;
  while (deque.PopFront(&task)) task();
  EXPECT_EQ(log, (std::vector<int>{1, 2, 3, 4}));
}

TEST(TaskDequeTest, BatchStealTakesAboutHalf) {
  TaskDeque<64> deque;
  std::vector<int> log;
  for (int i = 0; i < 20; ++i) {
    TaskFunction task = Recorder(&log, i);
    ASSERT_TRUE(deque.PushFront(task));
  }
  TaskFunction batch[16];
  int taken = deque.PopBackBatch(batch, 16);
  EXPECT_EQ(taken, 10);
  for (int i = 0; i < taken; ++i) batch[i]();
  EXPECT_EQ(log, (std::vector<int>{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}));
  TaskFunction empty_batch[4];
  TaskDeque<8> empty;
  EXPECT_EQ(empty.PopBackBatch(empty_batch, 4), 0);
}

TEST(TaskDequeStressTest, EveryTaskRunsExactlyOnce) {
  constexpr int kOwnerTasks = 200000;
  constexpr int kOutsideTasks = 20000;
  constexpr int kThieves = 2;
  TaskDeque<256> deque;
  std::vector<std::atomic<int>> runs(kOwnerTasks + kOutsideTasks);
  std::atomic<int> executed{0};
  auto make_task = [&](int id) -> TaskFunction {
    return [&, id] {
      runs[id].fetch_add(1, std::memory_order_relaxed);
      executed.fetch_add(1, std::memory_order_relaxed);
    };
  };
  const int total = kOwnerTasks + kOutsideTasks;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThieves; ++t) {
    threads.emplace_back([&] {
      TaskFunction batch[8];
      while (executed.load(std::memory_order_relaxed) < total) {
        int taken = deque.PopBackBatch(batch, 8);
        for (int i = 0; i < taken; ++i) {
          batch[i]();
          batch[i] = nullptr;
        }
      }
    });
  }
  // Two outsiders, one waiting for the back end and one never waiting.
  for (int pusher = 0; pusher < 2; ++pusher) {
    threads.emplace_back([&, pusher] {
      for (int i = pusher; i < kOutsideTasks; i += 2) {
        TaskFunction task = make_task(kOwnerTasks + i);
        if (pusher == 0) {
          while (!deque.PushBack(task)) std::this_thread::yield();
        } else {
          while (deque.TryPushBack(task) !=
                 TaskDeque<256>::PushResult::kPushed) {
            std::this_thread::yield();
          }
        }
      }
    });
  }
  // The owner: pushes, and pops every few pushes (racing the thieves for
  // the last tasks); runs what it cannot push.
  TaskFunction popped;
  for (int i = 0; i < kOwnerTasks; ++i) {
    TaskFunction task = make_task(i);
    if (!deque.PushFront(task)) task();
    if (i % 3 == 0 && deque.PopFront(&popped)) {
      popped();
      popped = nullptr;
    }
  }
  while (executed.load(std::memory_order_relaxed) < total) {
    if (deque.PopFront(&popped)) {
      popped();
      popped = nullptr;
    }
  }
  for (auto& thread : threads) thread.join();
  for (int id = 0; id < total; ++id) ASSERT_EQ(runs[id].load(), 1) << id;
  EXPECT_TRUE(deque.Empty());
  EXPECT_EQ(deque.PushedBackCount(), static_cast<uint64_t>(kOutsideTasks));
}

}  // namespace
}  // namespace asyncrt::internal
