// A lazy trace as the compiler takes it, and its compilation to BEF. Internal
// to asyncrt::lazy (lazy_tensor.cc builds traces; this header keeps MLIR
// out of it).
//
// Thread-safety: CompileTrace may run on several threads at once (each call
// has its own MLIR context). Blocking: it compiles (milliseconds).
#ifndef ASYNCRT_COMPILER_LAZY_TRACE_COMPILER_H_
#define ASYNCRT_COMPILER_LAZY_TRACE_COMPILER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt::lazy::internal {

// A value of a trace: parameter `index` (op == kParameter) or result
// `index` of op `op` (an index into Trace::ops, always an earlier one).
struct TraceRef {
  static constexpr int32_t kParameter = -1;
  int32_t op = kParameter;
  int32_t index = 0;
};

struct TraceOp {
  std::string op_name;  // A registry op ("nn.add", "tfrt_test.add").
  OpAttrsRef attrs;
  std::vector<TraceRef> operands;
  std::vector<TensorMetadata> results;  // From the shape function.
};

// A trace on one device, its ops in an order where operands come first.
struct Trace {
  std::string device;  // Short name; "CPU:0" is the host.
  std::vector<TensorMetadata> parameters;
  std::vector<TraceOp> ops;
  std::vector<TraceRef> outputs;
};

// The name of the compiled trace's function.
inline constexpr char kTraceFunction[] = "trace";

// BEF for `trace`: a function kTraceFunction taking the parameters (tensor
// handles on the trace's device) and returning the outputs there. Ops the
// nn dialect has become nn ops (then fused, laid out and planned as a
// model's); others nn.runtime_op. InvalidArgument with the compiler's
// diagnostics on failure.
absl::StatusOr<std::vector<uint8_t>> CompileTrace(const Trace& trace);

// The module CompileTrace starts from, as text (for tests and debugging).
absl::StatusOr<std::string> PrintTrace(const Trace& trace);

}  // namespace asyncrt::lazy::internal

#endif  // ASYNCRT_COMPILER_LAZY_TRACE_COMPILER_H_
