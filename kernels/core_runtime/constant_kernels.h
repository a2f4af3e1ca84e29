// The corert kernels that make constant tensor handles (constant_kernels.cc),
// registered by RegisterCoreRuntimeKernels. Internal to the corert kernel
// library.
#ifndef ASYNCRT_KERNELS_CORE_RUNTIME_CONSTANT_KERNELS_H_
#define ASYNCRT_KERNELS_CORE_RUNTIME_CONSTANT_KERNELS_H_

#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

void RegisterConstantTensorKernels(KernelRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_CORE_RUNTIME_CONSTANT_KERNELS_H_
