// The frame path's out-of-line entries (see frame_path_inl.h).
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "lib/bef_executor/frame_path_inl.h"

namespace asyncrt::internal {

void CallState::RunKernel(uint32_t index, KernelSite& site, Worklist& ready) {
  const uint32_t next = RunKernelInline(index, site, ready);
  if (next != kNoKernel) ready.kernels.push_back(next);
}

[[gnu::noinline]] uint32_t CallState::RunWideKernel(const KernelPlan& kernel,
                                                    KernelSite& site,
                                                    Worklist& ready) {
  std::vector<AsyncValue*> arguments(kernel.operands.size());
  std::vector<RCReference<AsyncValue>> results(kernel.results.size());
  return RunKernelWith(kernel, arguments.data(), results.data(), site, ready);
}

}  // namespace asyncrt::internal
