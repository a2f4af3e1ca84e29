#include "asyncrt/device/stream.h"

#include <optional>

#include "asyncrt/host_context/concurrent_work_queue.h"

namespace asyncrt {

void DeviceEvent::Complete(absl::Status status) {
  if (status.ok()) {
    done_.emplace();
  } else {
    done_.SetError(std::move(status));
  }
}

AsyncValueRef<Chain> Stream::OnDone() {
  // The value outlives the event that held it.
  return RecordEvent()->done();
}

void RunOnBlockingPool(HostContext* host, absl::AnyInvocable<void() &&> task) {
  std::optional<TaskFunction> refused = host->work_queue().AddBlockingTask(
      [task = std::move(task)]() mutable { std::move(task)(); },
      /*allow_queuing=*/true);
  if (refused) (*refused)();
}

}  // namespace asyncrt
