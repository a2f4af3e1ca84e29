#include "asyncrt/host_context/device.h"

#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cassert>
#include <cctype>
#include <fstream>
#include <random>
#include <thread>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"

namespace asyncrt {
namespace {

// A random non-zero 64-bit number, different on every call: splitmix64 of
// a counter that starts at a random seed.
uint64_t NewIncarnation() {
  static std::atomic<uint64_t> state{[] {
    std::random_device device;
    return (static_cast<uint64_t>(device()) << 32) ^ device();
  }()};
  for (;;) {
    uint64_t z = state.fetch_add(0x9e3779b97f4a7c15ULL) + 0x9e3779b97f4a7c15ULL;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    z ^= z >> 31;
    if (z != 0) return z;
  }
}

std::string UpperCase(absl::string_view type) {
  return absl::AsciiStrToUpper(type);
}

}  // namespace

bool IsValidDeviceType(absl::string_view type) {
  if (type.empty() || !absl::ascii_islower(type[0])) return false;
  return std::all_of(type.begin(), type.end(), [](char c) {
    return absl::ascii_islower(c) || absl::ascii_isdigit(c) || c == '_';
  });
}

Device::Device(DeviceAttributes attributes)
    : attributes_(std::move(attributes)),
      name_(absl::StrCat(UpperCase(attributes_.type), ":", attributes_.index)),
      incarnation_(NewIncarnation()) {
  assert(IsValidDeviceType(attributes_.type) && attributes_.index >= 0);
}

std::string Device::DebugString() const {
  const DeviceLocality& where = attributes_.locality;
  // The largest binary unit that leaves at least 1.
  std::string memory = "unknown";
  if (const uint64_t bytes = attributes_.memory_limit_bytes; bytes != 0) {
    const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    double value = static_cast<double>(bytes);
    int unit = 0;
    while (value >= 1024.0 && unit < 4) {
      value /= 1024.0;
      ++unit;
    }
    memory = unit == 0 ? absl::StrCat(bytes, "B")
                       : absl::StrFormat("%.1f%s", value, units[unit]);
  }
  std::vector<std::string> links;
  for (const DeviceLocality::Link& link : where.links) {
    links.push_back(absl::StrCat(link.device, "/", link.kind));
  }
  return absl::StrFormat(
      "%s type=%s memory_limit=%s numa_node=%d bus_id=%s links=%s "
      "incarnation=0x%016x \"%s\"",
      full_name(), attributes_.type, memory, where.numa_node,
      where.bus_id.empty() ? "-" : where.bus_id,
      links.empty() ? "-" : absl::StrJoin(links, ","), incarnation_,
      attributes_.physical_description);
}

absl::StatusOr<ParsedDeviceName> ParseDeviceName(absl::string_view name) {
  auto invalid = [&] {
    return absl::InvalidArgumentError(absl::StrCat(
        "invalid device name '", name,
        "': expected TYPE:INDEX (\"CPU:0\") or /device:TYPE:INDEX"));
  };
  absl::string_view rest = name;
  // TensorFlow's full names: "/job:.../replica:.../task:.../device:GPU:0".
  if (size_t device = rest.rfind("/device:");
      device != absl::string_view::npos) {
    rest.remove_prefix(device + 8);
  } else {
    absl::ConsumePrefix(&rest, "/");
  }
  const size_t colon = rest.find(':');
  if (colon == absl::string_view::npos) return invalid();
  ParsedDeviceName parsed;
  parsed.type = absl::AsciiStrToLower(rest.substr(0, colon));
  absl::string_view index = rest.substr(colon + 1);
  if (!IsValidDeviceType(parsed.type) || index.empty() ||
      !std::all_of(index.begin(), index.end(), absl::ascii_isdigit) ||
      !absl::SimpleAtoi(index, &parsed.index)) {
    return invalid();
  }
  return parsed;
}

DeviceAttributes HostCpuAttributes() {
  DeviceAttributes attributes;
  attributes.type = "cpu";
  attributes.index = 0;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  if (pages > 0 && page_size > 0) {
    attributes.memory_limit_bytes =
        static_cast<uint64_t>(pages) * static_cast<uint64_t>(page_size);
  }
  unsigned cpu = 0, node = 0;
  if (getcpu(&cpu, &node) == 0) attributes.locality.numa_node = node;
  std::string model = "unknown processor";
  std::ifstream cpuinfo("/proc/cpuinfo");
  for (std::string line; std::getline(cpuinfo, line);) {
    if (absl::StartsWith(line, "model name")) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos) {
        model = std::string(absl::StripAsciiWhitespace(line.substr(colon + 1)));
      }
      break;
    }
  }
  attributes.physical_description = absl::StrCat(
      model, ", ", std::thread::hardware_concurrency(), " hardware threads");
  return attributes;
}

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

absl::StatusOr<RCReference<Device>> DeviceManager::FindDevice(
    absl::string_view name) const {
  absl::StatusOr<ParsedDeviceName> parsed = ParseDeviceName(name);
  if (!parsed.ok()) return parsed.status();
  const std::string short_name =
      absl::StrCat(UpperCase(parsed->type), ":", parsed->index);
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = by_name_.find(short_name);
  if (it != by_name_.end()) return it->second;
  std::vector<std::string> known;
  for (const RCReference<Device>& device : in_order_) {
    known.push_back(device->name());
  }
  return absl::NotFoundError(absl::StrCat(
      "no device '", name, "'; the devices are ", absl::StrJoin(known, ", ")));
}

std::vector<RCReference<Device>> DeviceManager::ListDevices() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return in_order_;
}

void DeviceManager::ShutdownDevices() {
  std::vector<RCReference<Device>> devices = ListDevices();
  for (auto it = devices.rbegin(); it != devices.rend(); ++it) {
    (*it)->Shutdown();
  }
}

}  // namespace asyncrt
