// Always linked (see asyncrt_kernel_library): linking asyncrt::tfrt_kernels
// is what registers them.
#include "asyncrt/kernels/tfrt_kernels.h"

ASYNCRT_STATIC_KERNEL_REGISTRATION(asyncrt::RegisterBasicKernels);
ASYNCRT_STATIC_KERNEL_REGISTRATION(asyncrt::RegisterControlFlowKernels);
