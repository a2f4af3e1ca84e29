// Finds, when a program loads, the ops it runs on a plug-in device that has
// no implementation of them, instead of failing its calls one op at a time.
//
// Internal to the runtime library; not installed. Thread-compatible: reads
// the program and the core runtime's handlers; never blocks.
#ifndef ASYNCRT_LIB_RUNTIME_DEVICE_OP_CHECK_H_
#define ASYNCRT_LIB_RUNTIME_DEVICE_OP_CHECK_H_

#include "absl/status/status.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/core_runtime/core_runtime.h"

namespace asyncrt {

// Checks each op of `program` whose handler is known where it is used: a
// corert.executeop (corert_sync.executeop, corert.executeop.seq) or an op
// of corert.execute_sequence whose handler operand comes, in the same
// function, from corert.get_op_handler (or corert_sync.get_op_handler,
// through corert.arena_op_handler too) naming a handler registered now
// that runs ops on a device of a plug-in with no fallback handler. Each op
// the handler cannot make is reported through the host's diagnostic
// handler at its location; the result is then NotFound naming the first
// and the count. Handlers named by other means, registered later or
// falling back (the CPU's, as TFRT's programs expect: its unknown ops are
// errors of their calls) are left to run time.
absl::Status CheckDeviceOps(const BefProgram& program, CoreRuntime& core);

}  // namespace asyncrt

#endif  // ASYNCRT_LIB_RUNTIME_DEVICE_OP_CHECK_H_
