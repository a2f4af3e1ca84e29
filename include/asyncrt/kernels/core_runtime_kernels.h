#ifndef ASYNCRT_KERNELS_CORE_RUNTIME_KERNELS_H_
#define ASYNCRT_KERNELS_CORE_RUNTIME_KERNELS_H_

#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

class OpRegistry;

// Kernels of the corert dialect (and the tfrt_test kernels that handle
// tensor handles and op attributes).
void RegisterCoreRuntimeKernels(KernelRegistry& registry);

// The CPU test ops (tfrt_test.add, ...) in `registry`; RegisterTestOpsOnce
// adds them to OpRegistry::Global() once per process.
void RegisterTestOps(OpRegistry& registry);
void RegisterTestOpsOnce();

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_CORE_RUNTIME_KERNELS_H_
