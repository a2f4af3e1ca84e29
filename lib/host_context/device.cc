#include "asyncrt/host_context/device.h"

namespace asyncrt {

RCReference<Device> DeviceManager::MaybeAddDevice(RCReference<Device> device) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto [it, inserted] = by_name_.try_emplace(device->name(), device);
  if (inserted) in_order_.push_back(std::move(device));
  return it->second;
}

RCReference<Device> DeviceManager::GetDevice(absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_name_.find(name);
  return it == by_name_.end() ? RCReference<Device>() : it->second;
}

std::vector<RCReference<Device>> DeviceManager::ListDevices() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_order_;
}

}  // namespace asyncrt
