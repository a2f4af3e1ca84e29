// Work queue benchmarks: AsyncRT's "mstd" pool side by side with its peers,
// Eigen's NonBlockingThreadPool and oneTBB (task_arena + task_group), each
// with 2 worker threads, in the same run.
//
// Benchmarks are named BM_<Case>/<peer>, peer in {asyncrt, eigen, tbb};
// benchmarks/summarize.py pairs them up. Cases:
//   SpawnFromWorker   one task on the pool spawns kTasks empty tasks;
//                     per task.
//   SpawnFromOutside  the benchmark thread submits kTasks empty tasks;
//                     per task.
//   FanOutFanIn       the benchmark thread submits kTasks empty tasks and
//                     waits for the last; per fan-out (the whole batch).
//   HandOff           the benchmark thread submits one task that sets a flag
//                     and spins until it sees it; per round trip.
//
// Completion is always detected the same way for every peer: each task
// decrements an atomic counter and the benchmark thread spins (with pause and
// periodic yield) until it reads zero. No peer's own quiesce/wait is used in
// the timed loop, so no peer gets a cheaper or dearer join than another.
//
// kTasks exceeds the per-worker deque capacity of AsyncRT and Eigen (1024
// each): once a deque is full both run the task inline on the submitting
// thread, while TBB's queues grow without bound. That is part of what the
// spawn cases measure, as it is what a user of each library would get.
#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>
#include <thread>
#include <utility>

#include "asyncrt/host_context/concurrent_work_queue.h"
#include "benchmark/benchmark.h"

#ifdef ASYNCRT_HAVE_EIGEN
#include <unsupported/Eigen/CXX11/ThreadPool>
#endif
#ifdef ASYNCRT_HAVE_TBB
#include <oneapi/tbb/global_control.h>
#include <oneapi/tbb/task_arena.h>
#include <oneapi/tbb/task_group.h>
#endif

namespace {

constexpr int kNumThreads = 2;
constexpr int64_t kTasks = 10000;

using Clock = std::chrono::steady_clock;

inline void CpuPause() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield" ::: "memory");
#endif
}

// Spins until `done()` holds. Yields every 64 polls: on a 2-vCPU machine the
// waiter shares the cores with the 2 workers it waits for, and a pure spin
// would steal their time slices.
template <typename Pred>
inline void SpinUntil(Pred done) {
  for (uint32_t i = 1; !done(); ++i) {
    CpuPause();
    if (i % 64 == 0) std::this_thread::yield();
  }
}

inline void WaitForZero(const std::atomic<int64_t>& pending) {
  SpinUntil([&] { return pending.load(std::memory_order_acquire) == 0; });
}

//===--- Pools under test -------------------------------------------------===//
// Each offers Submit (from a thread outside the pool) and Spawn (from inside
// one of its tasks), mapped onto the call a user of that library would make.

class AsyncrtPool {
 public:
  AsyncrtPool()
      : queue_(asyncrt::CreateMultiThreadedWorkQueue(
            {.num_threads = kNumThreads})) {}

  template <typename F>
  void Submit(F f) {
    queue_->AddTask(std::move(f));
  }
  // AddTask pushes to the calling worker's own deque when called on a worker.
  template <typename F>
  void Spawn(F f) {
    queue_->AddTask(std::move(f));
  }

 private:
  std::unique_ptr<asyncrt::ConcurrentWorkQueue> queue_;
};

#ifdef ASYNCRT_HAVE_EIGEN
class EigenPool {
 public:
  EigenPool() : pool_(kNumThreads) {}

  template <typename F>
  void Submit(F f) {
    pool_.Schedule(std::move(f));
  }
  // Schedule pushes to the calling worker's own queue when called on a
  // worker.
  template <typename F>
  void Spawn(F f) {
    pool_.Schedule(std::move(f));
  }

 private:
  Eigen::ThreadPool pool_;
};
#endif  // ASYNCRT_HAVE_EIGEN

#ifdef ASYNCRT_HAVE_TBB
class TbbPool {
 public:
  // TBB caps its workers at hardware_concurrency - 1 (1 on a 2-vCPU machine)
  // unless told otherwise; raise the cap so the arena gets 2 workers like the
  // other pools. No slot is reserved for an external thread: the benchmark
  // thread only submits and waits, as with the other pools.
  TbbPool()
      : control_(tbb::global_control::max_allowed_parallelism, kNumThreads + 1),
        arena_(kNumThreads, /*reserved_for_masters=*/0) {
    arena_.initialize();
  }
  // Every task belongs to group_; wait for the group so no task outlives the
  // arena.
  ~TbbPool() {
    arena_.execute([this] { group_.wait(); });
  }

  // enqueue is TBB's call for handing work to an arena from outside it.
  template <typename F>
  void Submit(F f) {
    arena_.enqueue(group_.defer(std::move(f)));
  }
  // run from inside a task spawns into the worker's local deque.
  template <typename F>
  void Spawn(F f) {
    group_.run(std::move(f));
  }

 private:
  tbb::global_control control_;
  tbb::task_arena arena_;
  tbb::task_group group_;
};
#endif  // ASYNCRT_HAVE_TBB

//===--- Reporting --------------------------------------------------------===//

// Wall time of the whole timed loop, measured here rather than taken from
// the library so that the per-task figure is exact for every peer.
class LoopTimer {
 public:
  LoopTimer() : start_(Clock::now()) {}
  double ElapsedNs() const {
    return std::chrono::duration<double, std::nano>(Clock::now() - start_)
        .count();
  }

 private:
  Clock::time_point start_;
};

// Reports `items_per_iteration` items per iteration: items_per_second (what
// summarize.py reads) and the same figure as ns per item in `counter_name`.
void ReportPerItem(benchmark::State& state, const LoopTimer& timer,
                   int64_t items_per_iteration, const char* counter_name) {
  const int64_t items = state.iterations() * items_per_iteration;
  state.SetItemsProcessed(items);
  if (items > 0) state.counters[counter_name] = timer.ElapsedNs() / items;
}

//===--- Cases ------------------------------------------------------------===//

template <typename Pool>
void BM_SpawnFromWorker(benchmark::State& state) {
  Pool pool;
  std::atomic<int64_t> pending{0};
  LoopTimer timer;
  for (auto _ : state) {
    // The root counts itself so that the iteration ends only after it has
    // returned, not merely after its last child ran.
    pending.store(kTasks + 1, std::memory_order_relaxed);
    pool.Submit([&pool, &pending] {
      for (int64_t i = 0; i < kTasks; ++i) {
        pool.Spawn(
            [&pending] { pending.fetch_sub(1, std::memory_order_release); });
      }
      pending.fetch_sub(1, std::memory_order_release);
    });
    WaitForZero(pending);
  }
  ReportPerItem(state, timer, kTasks, "ns_per_task");
}

// Submits kTasks empty tasks from this (outside) thread and waits for all.
template <typename Pool>
void FanOutAndWait(Pool& pool, std::atomic<int64_t>& pending) {
  pending.store(kTasks, std::memory_order_relaxed);
  for (int64_t i = 0; i < kTasks; ++i) {
    pool.Submit(
        [&pending] { pending.fetch_sub(1, std::memory_order_release); });
  }
  WaitForZero(pending);
}

template <typename Pool>
void BM_SpawnFromOutside(benchmark::State& state) {
  Pool pool;
  std::atomic<int64_t> pending{0};
  LoopTimer timer;
  for (auto _ : state) FanOutAndWait(pool, pending);
  ReportPerItem(state, timer, kTasks, "ns_per_task");
}

// Same traffic as SpawnFromOutside, but the figure of merit is the latency of
// the whole fan-out + join as the caller sees it, so no items are reported:
// summarize.py then uses the time per iteration (per fan-out).
template <typename Pool>
void BM_FanOutFanIn(benchmark::State& state) {
  Pool pool;
  std::atomic<int64_t> pending{0};
  LoopTimer timer;
  for (auto _ : state) FanOutAndWait(pool, pending);
  const int64_t tasks = state.iterations() * kTasks;
  if (tasks > 0) state.counters["ns_per_task"] = timer.ElapsedNs() / tasks;
}

// Hot hand-off: the round trip stays well inside the pools' spin windows, so
// this measures a spinning worker picking up a task, not a wake from sleep.
template <typename Pool>
void BM_HandOff(benchmark::State& state) {
  Pool pool;
  std::atomic<bool> flag{false};
  LoopTimer timer;
  for (auto _ : state) {
    flag.store(false, std::memory_order_relaxed);
    pool.Submit([&flag] { flag.store(true, std::memory_order_release); });
    SpinUntil([&] { return flag.load(std::memory_order_acquire); });
  }
  ReportPerItem(state, timer, 1, "ns_per_round_trip");
}

// Registers BM_<Case>/<peer> for every available peer, peers of one case
// next to each other in the output.
#ifdef ASYNCRT_HAVE_EIGEN
#define ASYNCRT_BENCH_EIGEN(fn, name) \
  BENCHMARK_TEMPLATE(fn, EigenPool)->Name(name "/eigen")->UseRealTime();
#else
#define ASYNCRT_BENCH_EIGEN(fn, name)
#endif
#ifdef ASYNCRT_HAVE_TBB
#define ASYNCRT_BENCH_TBB(fn, name) \
  BENCHMARK_TEMPLATE(fn, TbbPool)->Name(name "/tbb")->UseRealTime();
#else
#define ASYNCRT_BENCH_TBB(fn, name)
#endif
#define ASYNCRT_BENCH_ALL(fn)                                               \
  BENCHMARK_TEMPLATE(fn, AsyncrtPool)->Name(#fn "/asyncrt")->UseRealTime(); \
  ASYNCRT_BENCH_EIGEN(fn, #fn)                                              \
  ASYNCRT_BENCH_TBB(fn, #fn)

ASYNCRT_BENCH_ALL(BM_SpawnFromWorker)
ASYNCRT_BENCH_ALL(BM_SpawnFromOutside)
ASYNCRT_BENCH_ALL(BM_FanOutFanIn)
ASYNCRT_BENCH_ALL(BM_HandOff)

}  // namespace

BENCHMARK_MAIN();
