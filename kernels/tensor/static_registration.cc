// Always linked (see asyncrt_kernel_library): linking asyncrt::tensor_kernels
// is what registers them.
#include "asyncrt/kernels/tensor_kernels.h"

ASYNCRT_STATIC_KERNEL_REGISTRATION(asyncrt::RegisterTensorKernels);
