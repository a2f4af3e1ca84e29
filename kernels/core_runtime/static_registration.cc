// Always linked (see asyncrt_kernel_library): linking
// asyncrt::core_runtime_kernels is what registers them.
#include "asyncrt/kernels/core_runtime_kernels.h"

ASYNCRT_STATIC_KERNEL_REGISTRATION(asyncrt::RegisterCoreRuntimeKernels);
