#include "asyncrt/serving/batcher.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <string>
#include <vector>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace asyncrt::serving {
namespace {

// The rows of a request: the first dimension its inputs share; 0 if they
// do not (the request cannot join a batch).
int64_t RowsOf(const std::vector<ServingTensor>& inputs) {
  int64_t rows = -1;
  for (const ServingTensor& input : inputs) {
    absl::Span<const int64_t> dims = input.shape().GetDimensions();
    if (dims.empty() || (rows != -1 && dims[0] != rows)) return 0;
    rows = dims[0];
  }
  return std::max<int64_t>(rows, 0);
}

// Bytes of one row of `tensor` (all dimensions but the first).
size_t RowBytes(const DenseHostTensor& tensor) {
  const int64_t rows = tensor.shape().GetDimensionSize(0);
  return rows == 0 ? 0 : tensor.DataSizeInBytes() / rows;
}

// `dims` with its first dimension `rows`.
TensorShape WithRows(const TensorShape& shape, int64_t rows) {
  std::vector<int64_t> dims(shape.GetDimensions().begin(),
                            shape.GetDimensions().end());
  dims[0] = rows;
  return TensorShape(dims);
}

// `parts` (of one dtype, and one shape but the first dimension) stacked
// along the first dimension, then zero rows (empty strings) up to `rows`;
// null when out of memory.
std::optional<ServingTensor> Stack(absl::Span<const ServingTensor* const> parts,
                                   int64_t rows, HostAllocator& allocator) {
  const ServingTensor& first = *parts.front();
  const TensorShape shape = WithRows(first.shape(), rows);
  if (first.IsString()) {
    std::vector<std::string> strings;
    strings.reserve(shape.GetNumElements());
    for (const ServingTensor* part : parts) {
      for (const std::string& value : part->strings().strings()) {
        strings.push_back(value);
      }
    }
    strings.resize(shape.GetNumElements());
    std::optional<StringHostTensor> tensor =
        StringHostTensor::CreateFromStrings(shape, std::move(strings));
    if (!tensor) return std::nullopt;
    return ServingTensor(*std::move(tensor));
  }
  std::optional<DenseHostTensor> tensor = DenseHostTensor::CreateUninitialized(
      TensorMetadata(first.dtype(), shape), allocator);
  if (!tensor) return std::nullopt;
  char* out = static_cast<char*>(tensor->data());
  for (const ServingTensor* part : parts) {
    const DenseHostTensor& input = part->dense();
    std::memcpy(out, input.data(), input.DataSizeInBytes());
    out += input.DataSizeInBytes();
  }
  std::memset(out, 0,
              static_cast<char*>(tensor->data()) + tensor->DataSizeInBytes() -
                  out);
  return ServingTensor(std::move(*tensor));
}

// Rows [row, row + rows) of `tensor`; null when out of memory.
std::optional<ServingTensor> Rows(const ServingTensor& tensor, int64_t row,
                                  int64_t rows, HostAllocator& allocator) {
  const TensorShape shape = WithRows(tensor.shape(), rows);
  if (tensor.IsString()) {
    absl::Span<const std::string> all = tensor.strings().strings();
    const int64_t per_row = shape.GetNumElements() / std::max<int64_t>(rows, 1);
    std::optional<StringHostTensor> part = StringHostTensor::CreateFromStrings(
        shape, std::vector<std::string>(all.begin() + row * per_row,
                                        all.begin() + (row + rows) * per_row));
    if (!part) return std::nullopt;
    return ServingTensor(*std::move(part));
  }
  std::optional<DenseHostTensor> part = DenseHostTensor::CreateUninitialized(
      TensorMetadata(tensor.dtype(), shape), allocator);
  if (!part) return std::nullopt;
  const size_t row_bytes = RowBytes(tensor.dense());
  std::memcpy(part->data(),
              static_cast<const char*>(tensor.dense().data()) + row * row_bytes,
              rows * row_bytes);
  return ServingTensor(std::move(*part));
}

}  // namespace

Batcher::Batcher(Runtime& runtime, BatchingOptions options,
                 ServingMetrics* metrics)
    : runtime_(runtime), options_(std::move(options)), metrics_(metrics) {}

Batcher::~Batcher() {
  // The batches being filled run now; then everything finishes.
  std::vector<std::unique_ptr<Batch>> to_run;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::unique_ptr<Batch>> open;
    for (auto& [servable, batch] : open_) open.push_back(std::move(batch));
    open_.clear();
    for (auto& batch : open) Schedule(std::move(batch), to_run);
  }
  for (auto& batch : to_run) Run(std::move(batch));
  std::unique_lock<std::mutex> lock(mutex_);
  idle_.wait(lock, [this] { return running_ == 0 && waiting_.empty(); });
}

bool Batcher::Stacks(const Batch& batch, const Request& request) {
  const std::vector<ServingTensor>& first = batch.requests.front().inputs;
  if (first.size() != request.inputs.size()) return false;
  for (size_t i = 0; i < first.size(); ++i) {
    if (first[i].dtype() != request.inputs[i].dtype()) return false;
    absl::Span<const int64_t> a = first[i].shape().GetDimensions();
    absl::Span<const int64_t> b = request.inputs[i].shape().GetDimensions();
    if (a.size() != b.size() || !std::equal(a.begin() + 1, a.end(), b.begin() + 1)) {
      return false;
    }
  }
  return true;
}

void Batcher::Submit(std::shared_ptr<const Servable> servable,
                     std::vector<ServingTensor> inputs, InferenceDone done) {
  Request request;
  request.rows = RowsOf(inputs);
  if (request.rows == 0 || request.rows > options_.max_batch_size) {
    // Not batchable: on its own.
    RunInference(runtime_, std::move(servable), std::move(inputs),
                 std::move(done));
    return;
  }
  request.inputs = std::move(inputs);
  request.done = std::move(done);
  std::vector<std::unique_ptr<Batch>> to_run;
  bool refused = false;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<Batch>& open = open_[servable.get()];
    if (open && (!Stacks(*open, request) ||
                 open->rows + request.rows > options_.max_batch_size)) {
      Schedule(std::move(open), to_run);
    }
    if (!open && static_cast<int64_t>(waiting_.size()) >=
                     options_.max_enqueued_batches) {
      refused = true;
    } else {
      if (!open) {
        open = std::make_unique<Batch>();
        open->servable = servable;
        open->opened = DeadlineTimer::Clock::now();
        timer_.At(
            open->opened + absl::ToChronoNanoseconds(options_.batch_timeout),
            [this, key = servable.get(), batch = open.get()] {
              Close(key, batch);
            });
      }
      open->rows += request.rows;
      open->requests.push_back(std::move(request));
      if (open->rows >= options_.max_batch_size) {
        Schedule(std::move(open), to_run);
      }
    }
    if (!open) open_.erase(servable.get());
  }
  for (auto& batch : to_run) Run(std::move(batch));
  if (refused) {
    std::move(request.done)(absl::UnavailableError(
        "the batch queue is full: the server is overloaded"));
  }
}

void Batcher::Close(const Servable* servable, const Batch* batch) {
  std::vector<std::unique_ptr<Batch>> to_run;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = open_.find(servable);
    if (it == open_.end() || it->second.get() != batch) return;
    std::unique_ptr<Batch> closed = std::move(it->second);
    open_.erase(it);
    Schedule(std::move(closed), to_run);
  }
  for (auto& ready : to_run) Run(std::move(ready));
}

void Batcher::Schedule(std::unique_ptr<Batch> batch,
                       std::vector<std::unique_ptr<Batch>>& to_run) {
  if (running_ < options_.num_batch_threads) {
    ++running_;
    to_run.push_back(std::move(batch));
  } else {
    waiting_.push_back(std::move(batch));
  }
}

void Batcher::Finished() {
  std::unique_ptr<Batch> next;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!waiting_.empty()) {
      next = std::move(waiting_.front());
      waiting_.pop_front();
    } else {
      --running_;
    }
    idle_.notify_all();
  }
  if (next) Run(std::move(next));
}

void Batcher::Run(std::unique_ptr<Batch> owned) {
  std::shared_ptr<Batch> batch = std::move(owned);
  int64_t padded = batch->rows;
  for (int64_t size : options_.allowed_batch_sizes) {
    if (size >= batch->rows) {
      padded = size;
      break;
    }
  }
  if (metrics_) {
    metrics_->BatchRun(
        batch->servable->name, batch->servable->version, batch->rows,
        std::chrono::duration<double>(DeadlineTimer::Clock::now() -
                                      batch->opened)
            .count());
  }
  // The requests' inputs stacked, then zero rows up to the padded size.
  std::vector<ServingTensor> merged;
  const std::vector<ServingTensor>& first = batch->requests.front().inputs;
  for (size_t i = 0; i < first.size(); ++i) {
    std::vector<const ServingTensor*> parts;
    for (const Request& request : batch->requests) {
      parts.push_back(&request.inputs[i]);
    }
    std::optional<ServingTensor> tensor =
        Stack(parts, padded, *runtime_.host().allocator());
    if (!tensor) {
      for (Request& request : batch->requests) {
        std::move(request.done)(absl::ResourceExhaustedError(
            "out of host memory for a batch"));
      }
      return Finished();
    }
    merged.push_back(*std::move(tensor));
  }
  HostAllocator* allocator = runtime_.host().allocator();
  RunInference(
      runtime_, batch->servable, std::move(merged),
      [this, batch, padded, allocator](
          absl::StatusOr<std::vector<ServingTensor>> outputs) {
        absl::Status error = outputs.status();
        if (error.ok()) {
          for (size_t o = 0; o < outputs->size() && error.ok(); ++o) {
            absl::Span<const int64_t> dims =
                (*outputs)[o].shape().GetDimensions();
            if (dims.empty() || dims[0] != padded) {
              error = absl::FailedPreconditionError(absl::StrCat(
                  "output '", batch->servable->signature.outputs[o].name,
                  "' has shape [", absl::StrJoin(dims, ", "),
                  "]: batching needs outputs whose first dimension is the "
                  "batch's (", padded, ")"));
            }
          }
        }
        if (!error.ok()) {
          for (Request& request : batch->requests) {
            std::move(request.done)(error);
          }
          return Finished();
        }
        // Each request's rows of each output.
        int64_t row = 0;
        for (Request& request : batch->requests) {
          std::vector<ServingTensor> mine;
          absl::Status status;
          for (const ServingTensor& output : *outputs) {
            std::optional<ServingTensor> part =
                Rows(output, row, request.rows, *allocator);
            if (!part) {
              status = absl::ResourceExhaustedError("out of host memory");
              break;
            }
            mine.push_back(*std::move(part));
          }
          row += request.rows;
          if (status.ok()) {
            std::move(request.done)(std::move(mine));
          } else {
            std::move(request.done)(status);
          }
        }
        Finished();
      });
}

}  // namespace asyncrt::serving
