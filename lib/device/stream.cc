#include "asyncrt/device/stream.h"

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

}  // namespace asyncrt
