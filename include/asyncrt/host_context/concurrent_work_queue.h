// ConcurrentWorkQueue: where AsyncRT runs tasks.
//
// A work queue has two parts. Non-blocking tasks are short computations that
// never wait on locks, I/O or other tasks; they run on the non-blocking pool.
// Blocking tasks (file I/O, device synchronization, sleeping) run on a
// separate pool so they cannot starve non-blocking work.
//
// Implementations, created by name with CreateWorkQueue:
//   "s"          single-threaded: tasks are queued and run only on the thread
//                that calls Await or Quiesce, in FIFO order.
//   "mstd"       multi-threaded: a work-stealing pool of N =
//   "mstd:N"     hardware_concurrency (or N) non-blocking workers, and up to
//   "mstd:N,M"   M (default 64) blocking threads started on demand.
#ifndef ASYNCRT_HOST_CONTEXT_CONCURRENT_WORK_QUEUE_H_
#define ASYNCRT_HOST_CONTEXT_CONCURRENT_WORK_QUEUE_H_

#include <memory>
#include <optional>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

// A unit of work. Move-only; small callables are stored inline.
using TaskFunction = absl::AnyInvocable<void()>;

class ConcurrentWorkQueue {
 public:
  virtual ~ConcurrentWorkQueue() = default;

  // The name this queue was created with, e.g. "mstd:2,8".
  virtual absl::string_view name() const = 0;

  // Enqueues a non-blocking task. Thread-safe; never blocks. A task added
  // from one of this queue's workers goes to that worker's own deque (run
  // LIFO by the worker, stolen FIFO by others); from any other thread it goes
  // to a randomly chosen worker. If that deque is full the task runs inline
  // on the calling thread.
  virtual void AddTask(TaskFunction task) = 0;

  // Enqueues a blocking task. Thread-safe; never blocks. With
  // `allow_queuing`, the task waits in a bounded queue if every blocking
  // thread is busy; without it, the task must start at once on a free or new
  // thread. Returns the task back if it was refused (queue full, or no
  // thread could be had).
  [[nodiscard]] virtual std::optional<TaskFunction> AddBlockingTask(
      TaskFunction task, bool allow_queuing) = 0;

  // Blocks until every value in `values` (borrowed) is available. The
  // single-threaded queue runs its tasks on the calling thread meanwhile.
  // Must not be called from a worker thread of this queue.
  virtual void Await(absl::Span<const RCReference<AsyncValue>> values) = 0;

  // Blocks until every task added before the call, and every task those add
  // in turn, has finished, blocking tasks included. Must not be called from a
  // worker thread of this queue.
  virtual void Quiesce() = 0;

  // Number of non-blocking tasks that can run at the same time.
  virtual int GetParallelismLevel() const = 0;

  // True when called from one of this queue's non-blocking workers.
  virtual bool IsInWorkerThread() const = 0;

  // The calling non-blocking worker's index in [0, GetParallelismLevel()),
  // or -1 on any other thread.
  virtual int CurrentWorkerIndex() const { return -1; }

  // True when called from one of this queue's blocking-task threads.
  virtual bool IsInBlockingThread() const { return false; }
};

// Creates a work queue from a spec ("s", "mstd", "mstd:N", "mstd:N,M").
// Returns InvalidArgument for an unknown or malformed spec.
absl::StatusOr<std::unique_ptr<ConcurrentWorkQueue>> CreateWorkQueue(
    absl::string_view spec);

std::unique_ptr<ConcurrentWorkQueue> CreateSingleThreadedWorkQueue();

struct MultiThreadedWorkQueueOptions {
  int num_threads = 0;            // 0: std::thread::hardware_concurrency().
  int max_blocking_threads = 64;  // Started on demand, kept until shutdown.
  int max_queued_blocking_tasks = 1024;
  // Workers that find no work spin (checking for work) before parking, at
  // most this many at a time (0: one per four workers, at least one).
  int max_spinning_workers = 0;
};
std::unique_ptr<ConcurrentWorkQueue> CreateMultiThreadedWorkQueue(
    const MultiThreadedWorkQueueOptions& options);

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_CONCURRENT_WORK_QUEUE_H_
