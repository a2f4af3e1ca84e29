// The test-only kernel, op and native-function library: the `tfrt_test`
// dialect's kernels (scalar, async, tensor and core-runtime test kernels),
// the tfrt_test.* ops on the CPU, and native_add & co. Linked by
// bef_executor, the tests, examples and benchmarks; never by a production
// library. Linking asyncrt::test_kernels registers everything statically;
// the functions below are for hosts built by hand.
#ifndef ASYNCRT_TESTING_TEST_KERNELS_H_
#define ASYNCRT_TESTING_TEST_KERNELS_H_

#include "absl/types/span.h"
#include "asyncrt/bef_executor/native_function.h"
#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

class OpRegistry;

// tfrt_test.* kernels of scalars, chains and async values.
void RegisterTestKernels(KernelRegistry& registry);
// tfrt_test.* kernels of host tensors and core-runtime values
// (slice_inplace, const_dense_attr, error_tensorhandle, corert.op_attrs_*).
void RegisterTestTensorKernels(KernelRegistry& registry);
// The CPU test ops (tfrt_test.add, tfrt_test.matmul, ...).
void RegisterTestOps(OpRegistry& registry);
// native_add, native_async_add, native_error, native_sink, ...
absl::Span<const NativeFunctionRegistration> TestNativeFunctions();

}  // namespace asyncrt

#endif  // ASYNCRT_TESTING_TEST_KERNELS_H_
