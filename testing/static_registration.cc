// Always linked (see asyncrt_kernel_library): linking asyncrt::test_kernels
// is what registers the test kernels, ops and native functions.
#include "asyncrt/bef_executor/native_function.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/host_context/kernel_registry.h"
#include "testing/test_kernels.h"

ASYNCRT_STATIC_KERNEL_REGISTRATION(asyncrt::RegisterTestKernels);
ASYNCRT_STATIC_KERNEL_REGISTRATION(asyncrt::RegisterTestTensorKernels);
ASYNCRT_STATIC_OP_REGISTRATION(asyncrt::RegisterTestOps);

namespace {
[[maybe_unused]] const bool native_functions_registered = [] {
  for (const asyncrt::NativeFunctionRegistration& registration :
       asyncrt::TestNativeFunctions()) {
    asyncrt::AddStaticNativeFunction(registration);
  }
  return true;
}();
}  // namespace
