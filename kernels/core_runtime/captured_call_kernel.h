// corert.captured_call (captured_call_kernel.cc): a device-only function
// recorded once as a device graph and replayed. Registered by
// RegisterCoreRuntimeKernels. Internal to the corert kernel library.
#ifndef ASYNCRT_KERNELS_CORE_RUNTIME_CAPTURED_CALL_KERNEL_H_
#define ASYNCRT_KERNELS_CORE_RUNTIME_CAPTURED_CALL_KERNEL_H_

#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

void RegisterCapturedCallKernel(KernelRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_CORE_RUNTIME_CAPTURED_CALL_KERNEL_H_
