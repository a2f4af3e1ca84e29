#include "backends/gpu/completion_poller.h"

#include <chrono>
#include <string>
#include <utility>

#include "backends/gpu/cuda_device.h"

namespace asyncrt::gpu {

// How long the poller spins (yielding) on a completion before it sleeps
// between polls: longer than a typical model call, so that the answer
// comes within microseconds; a longer wait costs a poll per kSleep.
constexpr auto kSpin = std::chrono::milliseconds(2);
constexpr auto kSleep = std::chrono::microseconds(50);

CompletionPoller::CompletionPoller(int ordinal)
    : ordinal_(ordinal), thread_([this] { Run(); }) {}

CompletionPoller::~CompletionPoller() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  wake_.notify_one();
  thread_.join();
  UseDevice(ordinal_);
  for (cudaEvent_t event : free_events_) cudaEventDestroy(event);
}

cudaError_t CompletionPoller::Enqueue(cudaStream_t stream,
                                      AsyncRT_CallbackFn callback, void* arg) {
  cudaEvent_t event = nullptr;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!free_events_.empty()) {
      event = free_events_.back();
      free_events_.pop_back();
    }
  }
  if (event == nullptr) {
    cudaError_t error =
        cudaEventCreateWithFlags(&event, cudaEventDisableTiming);
    if (error != cudaSuccess) return error;
  }
  if (cudaError_t error = cudaEventRecord(event, stream);
      error != cudaSuccess) {
    std::lock_guard<std::mutex> lock(mutex_);
    free_events_.push_back(event);
    return error;
  }
  {
    std::lock_guard<std::mutex> lock(mutex_);
    pending_.push_back({event, callback, arg});
  }
  wake_.notify_one();
  return cudaSuccess;
}

void CompletionPoller::Drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  drained_.wait(lock, [&] { return pending_.empty() && !completing_; });
}

void CompletionPoller::Run() {
  UseDevice(ordinal_);
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || !pending_.empty(); });
    if (pending_.empty()) return;  // Stopping, and nothing is due.
    // One stream per device: events complete in the order they were
    // recorded, so the oldest is the one to wait for.
    Pending next = pending_.front();
    pending_.pop_front();
    completing_ = true;
    lock.unlock();
    Complete(next);
    lock.lock();
    completing_ = false;
    free_events_.push_back(next.event);
    if (pending_.empty()) drained_.notify_all();
  }
}

void CompletionPoller::Complete(const Pending& pending) {
  const auto start = std::chrono::steady_clock::now();
  cudaError_t error;
  while ((error = cudaEventQuery(pending.event)) == cudaErrorNotReady) {
    if (std::chrono::steady_clock::now() - start < kSpin) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(kSleep);
    }
  }
  if (error == cudaSuccess) {
    pending.callback(pending.arg, ASYNCRT_OK, nullptr);
    return;
  }
  const std::string message = std::string("CUDA stream failed: ") +
                              cudaGetErrorName(error) + ": " +
                              cudaGetErrorString(error);
  pending.callback(pending.arg, ASYNCRT_INTERNAL, message.c_str());
}

}  // namespace asyncrt::gpu
