// Always linked (see asyncrt_kernel_library): linking asyncrt::cpu_backend
// is what makes the "cpu" device type available.
#include "asyncrt/backends/cpu_op_handler.h"
#include "asyncrt/core_runtime/op_handler_factory.h"

ASYNCRT_STATIC_OP_HANDLER_FACTORY("cpu", asyncrt::CreateCpuOpHandler);
