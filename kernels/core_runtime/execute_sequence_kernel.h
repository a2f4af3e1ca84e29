// corert.execute_sequence (execute_sequence_kernel.cc): a chain of registry
// ops run as one kernel. Registered by RegisterCoreRuntimeKernels. Internal
// to the corert kernel library.
#ifndef ASYNCRT_KERNELS_CORE_RUNTIME_EXECUTE_SEQUENCE_KERNEL_H_
#define ASYNCRT_KERNELS_CORE_RUNTIME_EXECUTE_SEQUENCE_KERNEL_H_

#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

void RegisterExecuteSequenceKernel(KernelRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_CORE_RUNTIME_EXECUTE_SEQUENCE_KERNEL_H_
