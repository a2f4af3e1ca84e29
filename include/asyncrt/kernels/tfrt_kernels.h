// Kernels of the `tfrt` dialect (kernel name = op name): scalars, chains
// and control flow. Linking asyncrt::tfrt_kernels registers them in every
// Runtime (static registration); the functions below are for hosts built
// by hand (tests, benchmarks).
#ifndef ASYNCRT_KERNELS_TFRT_KERNELS_H_
#define ASYNCRT_KERNELS_TFRT_KERNELS_H_

#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

// tfrt.new.chain, merge.chains, constant.*, add/div/minimum/multiply.*,
// equal/lessequal, cast.*, print.*.
void RegisterBasicKernels(KernelRegistry& registry);
// tfrt.call, if, cond, case, repeat.i32, while.
void RegisterControlFlowKernels(KernelRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_TFRT_KERNELS_H_
