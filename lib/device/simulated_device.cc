#include "asyncrt/device/simulated_device.h"

#include <cstring>
#include <utility>

#include "absl/strings/str_cat.h"

namespace asyncrt {
namespace {

DeviceAttributes SimulatedAttributes(const SimulatedDevice::Options& options) {
  DeviceAttributes attributes;
  attributes.type = options.type;
  attributes.index = options.index;
  attributes.memory_limit_bytes = options.memory_limit_bytes;
  attributes.physical_description = "simulated device (host memory)";
  return attributes;
}

std::string UpperName(const SimulatedDevice::Options& options) {
  std::string name;
  for (char c : options.type) name.push_back(c >= 'a' && c <= 'z' ? c - 32 : c);
  return absl::StrCat(name, ":", options.index);
}

}  // namespace

SimulatedDevice::SimulatedDevice(HostContext* host, Options options)
    : StreamDevice(SimulatedAttributes(options), host),
      allocator_(UpperName(options), options.memory_limit_bytes),
      host_allocator_(absl::StrCat(UpperName(options), " host"), 0),
      stream_(new HostStream(*this, host)) {}

SimulatedDevice::~SimulatedDevice() { Shutdown(); }

void SimulatedDevice::Shutdown() {
  // Drains the stream: its events complete on the host's blocking pool.
  delete stream_.exchange(nullptr, std::memory_order_acq_rel);
}

absl::Status SimulatedDevice::EnqueueCopy(CopyDirection, void* dst,
                                          const void* src, size_t bytes) {
  HostStream* stream = host_stream();
  if (stream == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(name(), " is shut down"));
  }
  stream->Enqueue([dst, src, bytes] {
    std::memcpy(dst, src, bytes);
    return absl::OkStatus();
  });
  return absl::OkStatus();
}

}  // namespace asyncrt
