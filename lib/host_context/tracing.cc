#include "asyncrt/host_context/tracing.h"

#include <cstdio>
#include <string>

namespace asyncrt::tracing {
namespace internal {
std::atomic<int> enabled_level{0};
}  // namespace internal

void Enable(Level level) {
  internal::enabled_level.store(static_cast<int>(level),
                                std::memory_order_relaxed);
}

void Disable() { internal::enabled_level.store(0, std::memory_order_relaxed); }

void BeginScope(absl::string_view name) {
  // One write per line keeps lines from different threads whole.
  std::string line = "Scope:";
  line.append(name.data(), name.size());
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stdout);
}

void EndScope() { std::fputs("End Scope\n", stdout); }

}  // namespace asyncrt::tracing
