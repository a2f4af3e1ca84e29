// Tests of the work queues ("s" and "mstd"), written once and run against
// both where the behaviour is shared, plus stress tests of the work-stealing
// pool (fan-out/fan-in of 100,000 tasks, Quiesce while tasks spawn tasks,
// blocking-pool saturation) that also run under ThreadSanitizer.
#include "asyncrt/host_context/concurrent_work_queue.h"

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <set>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/chain.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

//===--- Test infrastructure ----------------------------------------------===//

std::unique_ptr<ConcurrentWorkQueue> MakeQueue(absl::string_view spec) {
  auto queue = CreateWorkQueue(spec);
  EXPECT_TRUE(queue.ok()) << queue.status();
  return *std::move(queue);
}

// A gate that blocking tasks wait on, so tests can hold threads busy.
class Gate {
 public:
  void Open() {
    std::lock_guard<std::mutex> lock(mutex_);
    open_ = true;
    cv_.notify_all();
  }
  void Wait() {
    std::unique_lock<std::mutex> lock(mutex_);
    cv_.wait(lock, [&] { return open_; });
  }

 private:
  std::mutex mutex_;
  std::condition_variable cv_;
  bool open_ = false;
};

class WorkQueueTest : public ::testing::TestWithParam<const char*> {
 protected:
  std::unique_ptr<ConcurrentWorkQueue> queue_ = MakeQueue(GetParam());
};

INSTANTIATE_TEST_SUITE_P(AllQueues, WorkQueueTest,
                         ::testing::Values("s", "mstd:2", "mstd:4,2"),
                         [](const auto& info) {
                           std::string name = info.param;
                           for (char& c : name) {
                             if (c == ':' || c == ',') c = '_';
                           }
                           return name;
                         });

//===--- Shared behaviour
//---------------------------------------------------===//

TEST_P(WorkQueueTest, NameStartsWithTheSpec) {
  EXPECT_TRUE(absl::StartsWith(queue_->name(), GetParam())) << queue_->name();
}

TEST_P(WorkQueueTest, QuiesceRunsEveryTask) {
  std::atomic<int> count{0};
  for (int i = 0; i < 1000; ++i) {
    queue_->AddTask([&] { count.fetch_add(1, std::memory_order_relaxed); });
  }
  queue_->Quiesce();
  EXPECT_EQ(count.load(), 1000);
}

TEST_P(WorkQueueTest, QuiesceWaitsForTasksThatSpawnTasks) {
  std::atomic<int> count{0};
  // A binary tree of tasks, 2^12 - 1 in all, each spawning its children.
  std::function<void(int)> spawn = [&](int depth) {
    count.fetch_add(1, std::memory_order_relaxed);
    if (depth == 0) return;
    queue_->AddTask([&, depth] { spawn(depth - 1); });
    queue_->AddTask([&, depth] { spawn(depth - 1); });
  };
  queue_->AddTask([&] { spawn(11); });
  queue_->Quiesce();
  EXPECT_EQ(count.load(), (1 << 12) - 1);
}

TEST_P(WorkQueueTest, QuiesceWaitsForBlockingTasks) {
  std::atomic<int> count{0};
  for (int i = 0; i < 8; ++i) {
    auto refused = queue_->AddBlockingTask(
        [&] {
          std::this_thread::sleep_for(std::chrono::milliseconds(2));
          // Blocking work may hand results back to non-blocking work.
          queue_->AddTask([&] { count.fetch_add(1); });
        },
        /*allow_queuing=*/true);
    EXPECT_FALSE(refused.has_value());
  }
  queue_->Quiesce();
  EXPECT_EQ(count.load(), 8);
}

TEST_P(WorkQueueTest, AwaitReturnsWhenValuesBecomeAvailable) {
  auto a = MakeUnconstructedAsyncValueRef<int>();
  auto b = MakeUnconstructedAsyncValueRef<int>();
  queue_->AddTask([a] { a.emplace(1); });
  queue_->AddTask([a, b, this] {
    // b is computed by a task that this task adds, once a is ready.
    queue_->AddTask([a, b] { a.AndThen([a, b] { b.emplace(a.get() + 1); }); });
  });
  std::vector<RCReference<AsyncValue>> values = {a, b};
  queue_->Await(values);
  EXPECT_EQ(a.get(), 1);
  EXPECT_EQ(b.get(), 2);
}

TEST_P(WorkQueueTest, AwaitOnValuePublishedByAnotherThread) {
  auto value = MakeUnconstructedAsyncValueRef<int>();
  std::thread producer([value] {
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
    value.emplace(3);
  });
  std::vector<RCReference<AsyncValue>> values = {value};
  queue_->Await(values);
  EXPECT_EQ(value.get(), 3);
  producer.join();
}

// Await spins briefly before it sleeps: values published by another
// thread (directly, or by a task it adds) from at once to well past the
// spin must all be seen, none lost between the spin and the sleep.
TEST_P(WorkQueueTest, AwaitSeesValuesPublishedAroundItsSpin) {
  constexpr int kDelaysUs[] = {0, 5, 30, 45, 50, 55, 80, 200};
  constexpr int kRounds = 40;
  for (int round = 0; round < kRounds; ++round) {
    for (int delay_us : kDelaysUs) {
      auto direct = MakeUnconstructedAsyncValueRef<int>();
      auto by_task = MakeUnconstructedAsyncValueRef<int>();
      std::thread producer([&, direct, by_task, delay_us] {
        const auto start = std::chrono::steady_clock::now();
        while (std::chrono::steady_clock::now() - start <
               std::chrono::microseconds(delay_us)) {
        }
        direct.emplace(delay_us);
        queue_->AddTask([by_task, delay_us] { by_task.emplace(delay_us); });
      });
      std::vector<RCReference<AsyncValue>> values = {direct, by_task};
      queue_->Await(values);
      ASSERT_TRUE(direct.IsAvailable() && by_task.IsAvailable())
          << "round " << round << ", " << delay_us << " us";
      EXPECT_EQ(direct.get() + by_task.get(), 2 * delay_us);
      producer.join();
    }
  }
}

// Values that become available while Await looks at them: each one it
// finds unavailable gets its continuation, even if it is available by the
// time that is added ("s" once counted such a value and skipped its
// continuation, and waited forever).
TEST_P(WorkQueueTest, AwaitOnValuesPublishedWhileItStarts) {
  for (int round = 0; round < 50; ++round) {
    std::vector<AsyncValueRef<int>> refs;
    std::vector<RCReference<AsyncValue>> values;
    for (int i = 0; i < 2000; ++i) {
      refs.push_back(MakeUnconstructedAsyncValueRef<int>());
      values.push_back(refs.back());
    }
    std::atomic<bool> go{false};
    std::thread producer([&] {
      while (!go.load(std::memory_order_acquire)) {
      }
      for (auto& ref : refs) ref.emplace(1);
    });
    go.store(true, std::memory_order_release);
    queue_->Await(values);
    producer.join();
    for (const auto& value : values) ASSERT_TRUE(value->IsAvailable());
  }
}

TEST_P(WorkQueueTest, AwaitOnAvailableValuesReturnsAtOnce) {
  std::vector<RCReference<AsyncValue>> values = {
      MakeAvailableAsyncValueRef<int>(1), GetReadyChain(),
      MakeErrorAsyncValueRef("failed")};
  queue_->Await(values);
  EXPECT_TRUE(values[2]->IsError());
}

TEST_P(WorkQueueTest, TasksAddedFromManyThreadsAllRun) {
  std::atomic<int> count{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&] {
      for (int i = 0; i < 2500; ++i) {
        queue_->AddTask([&] { count.fetch_add(1, std::memory_order_relaxed); });
      }
    });
  }
  for (auto& producer : producers) producer.join();
  queue_->Quiesce();
  EXPECT_EQ(count.load(), 10000);
}

TEST_P(WorkQueueTest, NotInWorkerThreadFromOutside) {
  EXPECT_FALSE(queue_->IsInWorkerThread());
}

//===--- Single-threaded queue
//----------------------------------------------===//

TEST(SingleThreadedWorkQueueTest, TasksRunOnlyInsideQuiesceInFifoOrder) {
  auto queue = CreateSingleThreadedWorkQueue();
  std::vector<int> order;
  for (int i = 0; i < 5; ++i) queue->AddTask([&, i] { order.push_back(i); });
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  EXPECT_TRUE(order.empty());
  queue->Quiesce();
  EXPECT_EQ(order, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(queue->GetParallelismLevel(), 1);
}

TEST(SingleThreadedWorkQueueTest, TasksRunOnTheAwaitingThread) {
  auto queue = CreateSingleThreadedWorkQueue();
  std::thread::id ran_on;
  auto done = MakeUnconstructedAsyncValueRef<Chain>();
  queue->AddTask([&, done] {
    ran_on = std::this_thread::get_id();
    done.emplace();
  });
  std::vector<RCReference<AsyncValue>> values = {done};
  queue->Await(values);
  EXPECT_EQ(ran_on, std::this_thread::get_id());
}

//===--- Multi-threaded queue
//-----------------------------------------------===//

TEST(MultiThreadedWorkQueueTest, ParallelismAndWorkerIdentity) {
  auto queue = MakeQueue("mstd:3");
  EXPECT_EQ(queue->GetParallelismLevel(), 3);
  std::atomic<bool> in_worker{false};
  queue->AddTask([&] { in_worker = queue->IsInWorkerThread(); });
  queue->Quiesce();
  EXPECT_TRUE(in_worker.load());
}

TEST(MultiThreadedWorkQueueTest, WorkerIndexesAndBlockingThreads) {
  auto queue = MakeQueue("mstd:3");
  EXPECT_EQ(queue->CurrentWorkerIndex(), -1);
  EXPECT_FALSE(queue->IsInBlockingThread());
  // Many tasks, each recording the index of the worker running it.
  std::mutex mutex;
  std::set<int> indexes;
  for (int i = 0; i < 300; ++i) {
    queue->AddTask([&] {
      int index = queue->CurrentWorkerIndex();
      std::lock_guard<std::mutex> lock(mutex);
      indexes.insert(index);
    });
  }
  std::atomic<int> blocking_index{0};
  std::atomic<bool> in_blocking{false};
  std::atomic<bool> worker_in_blocking{true};
  queue->AddTask([&] { worker_in_blocking = queue->IsInBlockingThread(); });
  ASSERT_FALSE(queue
                   ->AddBlockingTask(
                       [&] {
                         blocking_index = queue->CurrentWorkerIndex();
                         in_blocking = queue->IsInBlockingThread();
                       },
                       /*allow_queuing=*/true)
                   .has_value());
  queue->Quiesce();
  ASSERT_FALSE(indexes.empty());
  EXPECT_GE(*indexes.begin(), 0);
  EXPECT_LT(*indexes.rbegin(), 3);
  EXPECT_EQ(blocking_index.load(), -1);
  EXPECT_TRUE(in_blocking.load());
  EXPECT_FALSE(worker_in_blocking.load());
  // Another queue's threads are not this queue's.
  auto other = MakeQueue("mstd:1");
  std::atomic<int> other_index{0};
  other->AddTask([&] { other_index = queue->CurrentWorkerIndex(); });
  other->Quiesce();
  EXPECT_EQ(other_index.load(), -1);
}

TEST(MultiThreadedWorkQueueTest, UsesSeveralThreads) {
  auto queue = MakeQueue("mstd:2");
  std::mutex mutex;
  std::set<std::thread::id> threads;
  std::atomic<int> arrived{0};
  for (int i = 0; i < 2; ++i) {
    queue->AddTask([&] {
      {
        std::lock_guard<std::mutex> lock(mutex);
        threads.insert(std::this_thread::get_id());
      }
      // Hold this worker until the other task has started elsewhere.
      arrived.fetch_add(1);
      while (arrived.load() < 2) std::this_thread::yield();
    });
  }
  queue->Quiesce();
  EXPECT_EQ(threads.size(), 2u);
}

TEST(MultiThreadedWorkQueueTest, FanOutFanIn100000Tasks) {
  auto queue = MakeQueue("mstd:2");
  constexpr int kTasks = 100000;
  std::atomic<int> remaining{kTasks};
  auto done = MakeUnconstructedAsyncValueRef<Chain>();
  queue->AddTask([&, done] {
    for (int i = 0; i < kTasks; ++i) {
      queue->AddTask([&, done] {
        if (remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
          done.emplace();
        }
      });
    }
  });
  std::vector<RCReference<AsyncValue>> values = {done};
  queue->Await(values);
  EXPECT_EQ(remaining.load(), 0);
  queue->Quiesce();
}

TEST(MultiThreadedWorkQueueTest, FullDequeRunsTasksInline) {
  // One worker adding more tasks than its deque holds: the surplus runs
  // inline and nothing is lost.
  auto queue = MakeQueue("mstd:1");
  std::atomic<int> count{0};
  queue->AddTask([&] {
    for (int i = 0; i < 5000; ++i) {
      queue->AddTask([&] { count.fetch_add(1, std::memory_order_relaxed); });
    }
  });
  queue->Quiesce();
  EXPECT_EQ(count.load(), 5000);
}

TEST(MultiThreadedWorkQueueTest, QuiesceWhileOutsideThreadsKeepAdding) {
  auto queue = MakeQueue("mstd:2");
  std::atomic<bool> stop{false};
  std::atomic<int> count{0};
  std::thread producer([&] {
    while (!stop.load()) {
      queue->AddTask([&] { count.fetch_add(1, std::memory_order_relaxed); });
    }
  });
  for (int i = 0; i < 20; ++i) {
    int before = count.load();
    queue->Quiesce();
    EXPECT_GE(count.load(), before);
  }
  stop = true;
  producer.join();
  queue->Quiesce();
}

TEST(MultiThreadedWorkQueueTest, ParksAndWakesRepeatedly) {
  // Gaps longer than the spin window make workers park; each task must
  // still be picked up.
  auto queue = MakeQueue("mstd:2");
  for (int i = 0; i < 20; ++i) {
    std::this_thread::sleep_for(std::chrono::microseconds(300));
    auto done = MakeUnconstructedAsyncValueRef<int>();
    queue->AddTask([done, i] { done.emplace(i); });
    std::vector<RCReference<AsyncValue>> values = {done};
    queue->Await(values);
    EXPECT_EQ(done.get(), i);
  }
}

TEST(MultiThreadedWorkQueueTest, DestroyWithIdleWorkersDoesNotHang) {
  for (int i = 0; i < 20; ++i) {
    auto queue = MakeQueue("mstd:4,2");
    std::atomic<int> count{0};
    queue->AddTask([&] { count.fetch_add(1); });
    queue.reset();  // Quiesces, stops the workers.
    EXPECT_EQ(count.load(), 1);
  }
}

//===--- Blocking pool
//--------------------------------------------------------===//

TEST(BlockingWorkQueueTest, RefusesWithoutQueuingWhenAllThreadsBusy) {
  auto queue = MakeQueue("mstd:1,2");
  Gate gate;
  std::atomic<int> started{0};
  for (int i = 0; i < 2; ++i) {
    auto refused = queue->AddBlockingTask(
        [&] {
          started.fetch_add(1);
          gate.Wait();
        },
        /*allow_queuing=*/false);
    EXPECT_FALSE(refused.has_value());
  }
  // Both threads are taken: a task that must start now is handed back.
  bool ran = false;
  auto refused =
      queue->AddBlockingTask([&] { ran = true; }, /*allow_queuing=*/false);
  ASSERT_TRUE(refused.has_value());
  // With queuing it waits for a free thread.
  std::atomic<bool> queued_ran{false};
  EXPECT_FALSE(queue
                   ->AddBlockingTask([&] { queued_ran = true; },
                                     /*allow_queuing=*/true)
                   .has_value());
  gate.Open();
  queue->Quiesce();
  EXPECT_EQ(started.load(), 2);
  EXPECT_TRUE(queued_ran.load());
  // The refused task was returned intact and can still run.
  (*refused)();
  EXPECT_TRUE(ran);
}

TEST(BlockingWorkQueueTest, BoundedQueueRefusesWhenFull) {
  MultiThreadedWorkQueueOptions options;
  options.num_threads = 1;
  options.max_blocking_threads = 1;
  options.max_queued_blocking_tasks = 3;
  auto queue = CreateMultiThreadedWorkQueue(options);
  Gate gate;
  std::atomic<int> ran{0};
  auto task = [&] {
    gate.Wait();
    ran.fetch_add(1);
  };
  int accepted = 0;
  for (int i = 0; i < 10; ++i) {
    if (!queue->AddBlockingTask(task, /*allow_queuing=*/true).has_value()) {
      ++accepted;
    }
  }
  EXPECT_EQ(accepted, 4);  // One running plus three queued.
  gate.Open();
  queue->Quiesce();
  EXPECT_EQ(ran.load(), 4);
}

TEST(BlockingWorkQueueTest, SaturationStress) {
  // Many producers flood a small blocking pool; every accepted task runs
  // exactly once and every refused task is handed back.
  auto queue = MakeQueue("mstd:2,4");
  std::atomic<int> ran{0};
  std::atomic<int> accepted{0};
  std::atomic<int> refused{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < 4; ++t) {
    producers.emplace_back([&] {
      for (int i = 0; i < 500; ++i) {
        auto rejected = queue->AddBlockingTask(
            [&] {
              std::this_thread::sleep_for(std::chrono::microseconds(20));
              ran.fetch_add(1);
            },
            /*allow_queuing=*/i % 2 == 0);
        (rejected ? refused : accepted).fetch_add(1);
      }
    });
  }
  for (auto& producer : producers) producer.join();
  queue->Quiesce();
  EXPECT_EQ(ran.load(), accepted.load());
  EXPECT_EQ(accepted.load() + refused.load(), 2000);
  EXPECT_GT(accepted.load(), 0);
}

TEST(BlockingWorkQueueTest, TasksAddedAroundTheSpinAllRunStress) {
  // Where a blocking thread spins for its next task before it sleeps
  // (ASYNCRT_BLOCKING_SPIN_US; the .blocking_spin test turns it on), tasks
  // added while it spins, as it gives up and after it sleeps, from outside
  // and from blocking tasks, all run exactly once.
  auto queue = MakeQueue("mstd:1,3");
  constexpr int kProducers = 3, kTasksEach = 300;
  std::atomic<int> ran{0};
  std::vector<std::thread> producers;
  for (int t = 0; t < kProducers; ++t) {
    producers.emplace_back([&, t] {
      uint32_t seed = 17 * t + 1;
      for (int i = 0; i < kTasksEach; ++i) {
        seed = seed * 1664525u + 1013904223u;
        // 0-100 us apart: on both sides of a 50 us spin's end.
        std::this_thread::sleep_for(std::chrono::microseconds(seed % 100));
        auto refused = queue->AddBlockingTask(
            [&, i] {
              ran.fetch_add(1);
              // Every tenth task adds one more from its blocking thread.
              if (i % 10 == 0) {
                EXPECT_FALSE(queue
                                 ->AddBlockingTask([&] { ran.fetch_add(1); },
                                                   /*allow_queuing=*/true)
                                 .has_value());
              }
            },
            /*allow_queuing=*/true);
        EXPECT_FALSE(refused.has_value());
      }
    });
  }
  for (auto& producer : producers) producer.join();
  queue->Quiesce();
  EXPECT_EQ(ran.load(), kProducers * (kTasksEach + kTasksEach / 10));
}

//===--- Creation by name
//---------------------------------------------------===//

TEST(CreateWorkQueueTest, ParsesSpecs) {
  EXPECT_EQ(MakeQueue("s")->GetParallelismLevel(), 1);
  EXPECT_EQ(MakeQueue("mstd:3")->GetParallelismLevel(), 3);
  EXPECT_EQ(MakeQueue("mstd:2,5")->name(), "mstd:2,5");
  EXPECT_GE(MakeQueue("mstd")->GetParallelismLevel(), 1);
}

TEST(CreateWorkQueueTest, RejectsMalformedSpecs) {
  for (const char* spec : {"", "x", "mstd:", "mstd:0", "mstd:-1", "mstd:2,",
                           "mstd:2,0", "mstd:a", "mstd:1,2,3", "s:1"}) {
    auto queue = CreateWorkQueue(spec);
    EXPECT_EQ(queue.status().code(), absl::StatusCode::kInvalidArgument)
        << spec;
    if (!queue.ok()) {
      EXPECT_NE(queue.status().message().find("invalid work queue type"),
                absl::string_view::npos);
    }
  }
}

}  // namespace
}  // namespace asyncrt
