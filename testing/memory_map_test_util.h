// Test-only: what the kernel says about the mapping that holds an address
// (/proc/self/smaps), for tests of where memory lives (huge pages,
// resident pages).
#ifndef ASYNCRT_TESTING_MEMORY_MAP_TEST_UTIL_H_
#define ASYNCRT_TESTING_MEMORY_MAP_TEST_UTIL_H_

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <optional>
#include <string>

namespace asyncrt::memory_test {

// The value of `field` ("VmFlags", "Rss", ...) of the mapping that contains
// `address`, as smaps prints it; nullopt if none does (or no /proc).
inline std::optional<std::string> MappingField(const void* address,
                                               const std::string& field) {
  const uintptr_t at = reinterpret_cast<uintptr_t>(address);
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool inside = false;
  while (std::getline(smaps, line)) {
    const size_t dash = line.find('-');
    const size_t space = line.find(' ');
    if (dash != std::string::npos && space != std::string::npos &&
        dash < space && line.find(':') > space) {
      const uintptr_t begin = std::strtoull(line.c_str(), nullptr, 16);
      const uintptr_t end = std::strtoull(line.c_str() + dash + 1, nullptr, 16);
      inside = begin <= at && at < end;
    } else if (inside && line.rfind(field + ":", 0) == 0) {
      return line.substr(field.size() + 1);
    }
  }
  return std::nullopt;
}

// Whether the kernel may back madvise(MADV_HUGEPAGE) regions with
// transparent huge pages here ("always" or "madvise").
inline bool TransparentHugePagesAvailable() {
  std::ifstream enabled("/sys/kernel/mm/transparent_hugepage/enabled");
  std::string modes;
  std::getline(enabled, modes);
  return modes.find("[always]") != std::string::npos ||
         modes.find("[madvise]") != std::string::npos;
}

// Whether the mapping holding `address` was advised for huge pages.
inline bool AdvisedHugePages(const void* address) {
  std::optional<std::string> flags = MappingField(address, "VmFlags");
  return flags && flags->find(" hg") != std::string::npos;
}

}  // namespace asyncrt::memory_test

#endif  // ASYNCRT_TESTING_MEMORY_MAP_TEST_UTIL_H_
