// Test helpers for devices.
#ifndef ASYNCRT_TESTING_DEVICE_TEST_UTIL_H_
#define ASYNCRT_TESTING_DEVICE_TEST_UTIL_H_

#include "asyncrt/device/stream_device.h"
#include "asyncrt/host_context/host_context.h"

namespace asyncrt::testing {

// Blocks until the work queued on `device` and what its completion set off
// are done: a completion on the blocking pool may drop the last reference
// to a buffer, whose free then queues one more event on the stream, so a
// few rounds of draining reach the end of such chains. Then a test can
// check that no device memory is live.
inline void DrainDevice(HostContext& host, StreamDevice& device) {
  for (int round = 0; round < 4; ++round) {
    host.Quiesce();
    for (Stream* stream :
         {device.stream(), device.copy_stream(CopyDirection::kHostToDevice),
          device.copy_stream(CopyDirection::kDeviceToHost)}) {
      if (stream == nullptr) continue;
      RCReference<AsyncValue> done[] = {stream->OnDone()};
      host.Await(done);
    }
  }
  host.Quiesce();
}

}  // namespace asyncrt::testing

#endif  // ASYNCRT_TESTING_DEVICE_TEST_UTIL_H_
