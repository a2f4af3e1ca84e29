#ifndef ASYNCRT_KERNELS_TENSOR_KERNELS_H_
#define ASYNCRT_KERNELS_TENSOR_KERNELS_H_

#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

// Kernels of ts, tfrt_dht, tfrt_dht_sync, tfrt_sht and coo, and the test
// kernels that make host tensors (tfrt_test.const_dense_attr, ...).
void RegisterTensorKernels(KernelRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_TENSOR_KERNELS_H_
