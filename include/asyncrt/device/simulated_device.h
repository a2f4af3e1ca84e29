// SimulatedDevice: a StreamDevice made of host parts, for tests and
// benchmarks of everything above the device interface (device tensors,
// copies, placement, per-device dispatch) without hardware. Its memory is
// host memory behind a DeviceAllocator with a limit, its stream a
// HostStream, its copies memcpy calls run in order on that stream.
//
// Its tensors are DenseDeviceTensors like any device's: that their bytes
// happen to be host-readable is never used outside the device's own work.
//
// Ownership, thread-safety and blocking: as StreamDevice (stream_device.h).
#ifndef ASYNCRT_DEVICE_SIMULATED_DEVICE_H_
#define ASYNCRT_DEVICE_SIMULATED_DEVICE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <string>

#include "asyncrt/device/device_allocator.h"
#include "asyncrt/device/host_stream.h"
#include "asyncrt/device/stream_device.h"

namespace asyncrt {

class SimulatedDevice final : public StreamDevice {
 public:
  struct Options {
    std::string type = "sim";
    int index = 0;
    uint64_t memory_limit_bytes = uint64_t{1} << 30;
  };
  SimulatedDevice(HostContext* host, Options options);
  ~SimulatedDevice() override;

  DeviceAllocator& allocator() override { return allocator_; }
  DeviceAllocator& host_allocator() override { return host_allocator_; }
  Stream* stream() override { return stream_.load(std::memory_order_acquire); }
  // The same stream, to enqueue host functions as the device's kernels.
  HostStream* host_stream() { return stream_.load(std::memory_order_acquire); }
  absl::Status EnqueueCopy(CopyDirection direction, void* dst, const void* src,
                           size_t bytes) override;
  void Shutdown() override;

 private:
  HostMemoryAllocator allocator_;
  HostMemoryAllocator host_allocator_;
  std::atomic<HostStream*> stream_;  // Owned; null once shut down.
};

}  // namespace asyncrt

#endif  // ASYNCRT_DEVICE_SIMULATED_DEVICE_H_
