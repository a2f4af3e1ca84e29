// The CPU backend: the op handler of the "cpu" device type, which runs the
// op registry's "cpu" implementations on the host device and falls back to
// another handler for ops without one. Linking asyncrt::cpu_backend
// registers its factory (op_handler_factory.h); asyncrt::runtime links it.
#ifndef ASYNCRT_BACKENDS_CPU_OP_HANDLER_H_
#define ASYNCRT_BACKENDS_CPU_OP_HANDLER_H_

namespace asyncrt {

class CoreRuntime;
class OpHandler;

// A new CPU op handler owned by `runtime`; `fallback` may be null (ops the
// registry has no CPU implementation of then fail with NotFound).
OpHandler* CreateCpuOpHandler(CoreRuntime* runtime, OpHandler* fallback);

}  // namespace asyncrt

#endif  // ASYNCRT_BACKENDS_CPU_OP_HANDLER_H_
