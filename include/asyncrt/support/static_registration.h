// Static registration: how a library makes itself known by being linked.
//
// Kernel, op and native-function libraries, device backends and program
// translators each register from a static_registration.cc that the build
// links whole (asyncrt_kernel_library in cmake/AsyncrtHelpers.cmake), so
// that linking a library is all a binary does to use it. The pieces here
// are what those registries share: a macro that runs a statement at
// start-up, and the leaked, built-on-first-use containers that make static
// initialization order irrelevant.
#ifndef ASYNCRT_SUPPORT_STATIC_REGISTRATION_H_
#define ASYNCRT_SUPPORT_STATIC_REGISTRATION_H_

#include <algorithm>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"

// Runs the statement given when the enclosing library is loaded (before
// main, or at dlopen for a plug-in). Use at namespace scope.
#define ASYNCRT_STATIC_REGISTRATION(...) \
  ASYNCRT_STATIC_REGISTRATION_IMPL(__COUNTER__, __VA_ARGS__)
#define ASYNCRT_STATIC_REGISTRATION_IMPL(n, ...) \
  ASYNCRT_STATIC_REGISTRATION_IMPL2(n, __VA_ARGS__)
#define ASYNCRT_STATIC_REGISTRATION_IMPL2(n, ...)                          \
  [[maybe_unused]] static const bool asyncrt_static_registration_##n = [] { \
    __VA_ARGS__;                                                            \
    return true;                                                            \
  }()

namespace asyncrt::internal {

// The process-wide list of T that static initializers append to. Leaked.
// Thread-compatible: appends happen at start-up or while a plug-in loads.
// Instantiate it in one .cc file only, behind non-template functions, so a
// plug-in's registrations reach the binary's list, not a copy of its own.
template <typename T>
std::vector<T>& StaticList() {
  static auto* list = new std::vector<T>();
  return *list;
}

// A process-wide table from names to values (a registry of factories or
// translators). Thread-safe; leaked. Instantiate as StaticList says.
template <typename Value>
class NameTable {
 public:
  static NameTable& Get() {
    static auto* table = new NameTable;
    return *table;
  }

  // Sets `name` to `value`, replacing an earlier value.
  void Set(absl::string_view name, Value value) {
    std::lock_guard<std::mutex> lock(mutex_);
    values_[name] = value;
  }
  // The value of `name`, or Value() if none.
  Value Find(absl::string_view name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = values_.find(name);
    return it == values_.end() ? Value() : it->second;
  }
  // Every name, sorted.
  std::vector<std::string> Names() const {
    std::lock_guard<std::mutex> lock(mutex_);
    std::vector<std::string> names;
    for (const auto& [name, value] : values_) names.push_back(name);
    std::sort(names.begin(), names.end());
    return names;
  }

 private:
  mutable std::mutex mutex_;
  absl::flat_hash_map<std::string, Value> values_;
};

}  // namespace asyncrt::internal

#endif  // ASYNCRT_SUPPORT_STATIC_REGISTRATION_H_
