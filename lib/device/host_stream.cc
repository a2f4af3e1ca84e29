#include "asyncrt/device/host_stream.h"

#include <optional>
#include <utility>

#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/concurrent_work_queue.h"

namespace asyncrt {

HostStream::HostStream(Device& device, HostContext* host)
    : Stream(device), host_(host), thread_([this] { Run(); }) {}

HostStream::~HostStream() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_.notify_one();
  thread_.join();
}

void HostStream::Push(Item item) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    queue_.push_back(std::move(item));
  }
  ready_.notify_one();
}

void HostStream::Enqueue(absl::AnyInvocable<absl::Status() &&> work) {
  Item item;
  item.work = std::move(work);
  Push(std::move(item));
}

RCReference<DeviceEvent> HostStream::RecordEvent() {
  auto event = MakeRef<DeviceEvent>();
  Item item;
  item.record = event;
  Push(std::move(item));
  return event;
}

void HostStream::WaitForEvent(RCReference<DeviceEvent> event) {
  Item item;
  item.wait = std::move(event);
  Push(std::move(item));
}

void HostStream::AddCallback(
    absl::AnyInvocable<void(absl::Status) &&> callback) {
  Item item;
  item.callback = std::move(callback);
  Push(std::move(item));
}

absl::Status HostStream::status() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return status_;
}

void HostStream::Run() {
  for (;;) {
    Item item;
    absl::Status status;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      ready_.wait(lock, [this] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // Stopping, and drained.
      item = std::move(queue_.front());
      queue_.pop_front();
      status = status_;
    }
    absl::Status failure;
    if (item.work) {
      if (status.ok()) failure = std::move(item.work)();
    } else if (item.wait) {
      // This thread is the device's own: it may block on the event.
      BlockUntilReady(item.wait->done().GetAsyncValue());
      if (item.wait->done().IsError() && status.ok()) {
        failure = item.wait->done().GetError();
      }
    } else if (item.record) {
      RunOnBlockingPool(host_, [event = std::move(item.record), status]() mutable {
        event->Complete(status);
      });
    } else if (item.callback) {
      RunOnBlockingPool(host_, [callback = std::move(item.callback), status]() mutable {
        std::move(callback)(status);
      });
    }
    if (!failure.ok()) {
      std::lock_guard<std::mutex> lock(mutex_);
      if (status_.ok()) status_ = std::move(failure);
    }
  }
}

}  // namespace asyncrt
