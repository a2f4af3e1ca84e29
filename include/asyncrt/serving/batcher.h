// Dynamic batching: requests for the same model version that arrive close
// together run as one batch. Their inputs are stacked along the first
// (batch) dimension, the batch is padded up to an allowed batch size, the
// model runs once, and each request gets its rows of every output back.
//
// A batch closes when it holds max_batch_size rows, or batch_timeout after
// its first request; at most num_batch_threads batches run at once, the
// others wait. A request that would exceed max_enqueued_batches waiting
// batches is refused with UNAVAILABLE ("the batch queue is full"), as TF
// Serving does. Requests whose inputs cannot stack with the open batch
// (another dtype or row shape, inputs with different row counts, more rows
// than a batch holds) start a batch of their own or run alone. A model
// whose outputs do not keep the batch dimension fails the whole batch
// with an error that says so.
//
// Ownership: borrows the runtime; holds the servables of its queued
// requests. Thread-safety: Submit is thread-safe. Blocking: the
// destructor waits for running batches.
#ifndef ASYNCRT_SERVING_BATCHER_H_
#define ASYNCRT_SERVING_BATCHER_H_

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/time/time.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/deadline_timer.h"
#include "asyncrt/serving/inference.h"
#include "asyncrt/serving/metrics.h"
#include "asyncrt/serving/model_repository.h"

namespace asyncrt::serving {

// TF Serving's batching parameters (--batching_parameters_file).
struct BatchingOptions {
  int64_t max_batch_size = 32;
  absl::Duration batch_timeout = absl::Milliseconds(1);
  int64_t max_enqueued_batches = 100;
  int num_batch_threads = 4;
  // Sizes a batch is padded up to (ascending; the last one
  // max_batch_size); empty: any size.
  std::vector<int64_t> allowed_batch_sizes;
};

class Batcher {
 public:
  // `metrics` (may be null) receives each batch's size and queue time.
  Batcher(Runtime& runtime, BatchingOptions options, ServingMetrics* metrics);
  ~Batcher();

  // Runs `inputs` (signature order) of `servable` within a batch; `done`
  // gets this request's rows of the outputs. Never blocks.
  void Submit(std::shared_ptr<const Servable> servable,
              std::vector<ServingTensor> inputs, InferenceDone done);

 private:
  struct Request {
    std::vector<ServingTensor> inputs;
    int64_t rows = 0;
    InferenceDone done;
  };
  struct Batch {
    std::shared_ptr<const Servable> servable;
    std::vector<Request> requests;
    int64_t rows = 0;
    DeadlineTimer::Clock::time_point opened;
  };

  // Whether `request` stacks with `batch` (same dtypes and row shapes).
  static bool Stacks(const Batch& batch, const Request& request);
  // Closes the open batch of `servable` (if it is still `batch`).
  void Close(const Servable* servable, const Batch* batch);
  // Requires mutex_: queues `batch` to run, or runs it.
  void Schedule(std::unique_ptr<Batch> batch,
                std::vector<std::unique_ptr<Batch>>& to_run);
  void Run(std::unique_ptr<Batch> batch);
  void Finished();

  Runtime& runtime_;
  const BatchingOptions options_;
  ServingMetrics* metrics_;
  std::mutex mutex_;
  // Guarded by mutex_: the batch being filled per servable, the closed
  // batches waiting for a thread, how many run.
  std::map<const Servable*, std::unique_ptr<Batch>> open_;
  std::deque<std::unique_ptr<Batch>> waiting_;
  int running_ = 0;
  std::condition_variable idle_;
  DeadlineTimer timer_;  // Last: its functions use the members above.
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_BATCHER_H_
