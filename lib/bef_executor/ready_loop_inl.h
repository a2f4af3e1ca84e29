// The inline ready loop: ready kernels run on the calling thread, most
// recent first, each kernel's sole ready user next. The streams and
// in-order schedules and the offload of wide graphs are in ready_loop.cc.
#ifndef ASYNCRT_LIB_BEF_EXECUTOR_READY_LOOP_INL_H_
#define ASYNCRT_LIB_BEF_EXECUTOR_READY_LOOP_INL_H_

#include "lib/bef_executor/frame_path_inl.h"

namespace asyncrt::internal {

// A thread with more ready kernels than this hands the older half to the
// work queue as one task, so wide graphs use more than one core without
// paying a task per kernel. Below it, running inline is cheaper.
constexpr size_t kOffloadThreshold = 16;

template <bool kInlineKernels>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CallState::RunReadyUntraced(
    Worklist& ready) {
  if (function_.has_streams()) return RunStreams(ready);
  auto& kernels = ready.kernels;
  bool may_offload = true;
  KernelSite site(exec_ctx_);
  while (!kernels.empty()) {
    if (ABSL_PREDICT_FALSE(kernels.size() > kOffloadThreshold) && may_offload) {
      may_offload = OffloadOlderHalf(kernels);
    }
    if constexpr (kInlineKernels) {
      uint32_t next = kernels.pop_back();
      do {
        next = RunKernelInline(next, site, ready);
      } while (next != kNoKernel);
    } else {
      RunKernel(kernels.pop_back(), site, ready);
    }
  }
}

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_BEF_EXECUTOR_READY_LOOP_INL_H_
