// Kernels of the corert dialect: op handlers, corert.executeop (graph mode
// through the op registry eager execution uses), tensor handles, op
// attributes, composite ops and corert control flow.
//
// Linking asyncrt::core_runtime_kernels registers them in every Runtime
// (static registration); RegisterCoreRuntimeKernels is for hosts built by
// hand (tests, benchmarks).
#ifndef ASYNCRT_KERNELS_CORE_RUNTIME_KERNELS_H_
#define ASYNCRT_KERNELS_CORE_RUNTIME_KERNELS_H_

#include <memory>

#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

// The payload of !corert.opattrs registers: op attributes a program builds
// with corert.op_attrs_set.* before freezing them.
using OpAttrsHolder = std::shared_ptr<OpAttrs>;

void RegisterCoreRuntimeKernels(KernelRegistry& registry);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_CORE_RUNTIME_KERNELS_H_
