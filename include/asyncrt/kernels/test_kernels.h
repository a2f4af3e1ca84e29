// Test kernels of the `tfrt_test` dialect, linked into bef_executor.
#ifndef ASYNCRT_KERNELS_TEST_KERNELS_H_
#define ASYNCRT_KERNELS_TEST_KERNELS_H_

#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

void RegisterTestKernels(KernelRegistry& registry);
// native_add, native_async_add, native_error, native_sink, ...
void RegisterTestNativeFunctions(HostContext& host);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_TEST_KERNELS_H_
