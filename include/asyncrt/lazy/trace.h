// A lazy trace as a trace compiler takes it, and the registry of trace
// compilers.
//
// LazyContext (lazy_tensor.h) turns the recorded ops a barrier or a read
// needs into a Trace. The optimizing trace compiler (asyncrt::lazy_compiler:
// the nn dialect, the model pipeline's fusions and buffer plan, BEF) registers
// itself when it is linked; without it (runtime-only builds) a trace replays
// its ops one by one through prepared ops, unfused but with the same cache.
//
// Thread-safety: registration happens at static initialization;
// GetTraceCompiler may be called from any thread. A TraceCompilerFn may be
// called from several threads at once.
#ifndef ASYNCRT_LAZY_TRACE_H_
#define ASYNCRT_LAZY_TRACE_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt::lazy {

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

// The name of the function a trace compiler's BEF must define: it takes
// the parameters (tensor handles on the trace's device) and returns the
// outputs there.
inline constexpr char kTraceFunction[] = "trace";

// Compiles a trace to BEF; an error with the compiler's diagnostics.
using TraceCompilerFn =
    absl::StatusOr<std::vector<uint8_t>> (*)(const Trace& trace);

// Makes `compiler` the one lazy contexts use (the last registration wins).
void RegisterTraceCompiler(TraceCompilerFn compiler);
// The registered compiler, or null (traces are then replayed).
TraceCompilerFn GetTraceCompiler();

}  // namespace asyncrt::lazy

#endif  // ASYNCRT_LAZY_TRACE_H_
