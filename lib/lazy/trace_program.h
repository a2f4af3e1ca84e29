// A lazy trace made runnable (internal to asyncrt::lazy): compiled to BEF by
// the registered trace compiler, or, without one, replayed op by op through
// prepared ops.
//
// Ownership: shared; a run holds its program until its results are
// computed, so the cache may drop it meanwhile. Thread-safety: immutable
// once made; Run may be called from several threads at once. Blocking:
// Create compiles (milliseconds); Run never blocks.
#ifndef ASYNCRT_LIB_LAZY_TRACE_PROGRAM_H_
#define ASYNCRT_LIB_LAZY_TRACE_PROGRAM_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/lazy/trace.h"
#include "asyncrt/runtime/runtime.h"

namespace asyncrt::lazy::internal {

class TraceProgram : public std::enable_shared_from_this<TraceProgram> {
 public:
  // Compiles `trace` with `compiler` if it is not null, else prepares its
  // ops for a replay. Errors: the compiler's, a device without an op
  // handler, an op the device's handler cannot make.
  static absl::StatusOr<std::shared_ptr<const TraceProgram>> Create(
      const Trace& trace, Runtime& runtime, TraceCompilerFn compiler);

  // Starts the program on `arguments` (async values of TensorHandles on the
  // trace's device, possibly still being computed; borrowed). Returns one
  // async value of a TensorHandle per trace output, available as each is
  // computed, or an error.
  std::vector<RCReference<AsyncValue>> Run(
      Runtime& runtime, absl::Span<AsyncValue* const> arguments) const;

  bool is_compiled() const { return function_ != nullptr; }

 private:
  struct Step {
    CoreRuntimeOp op;
    OpAttrsRef attrs;
    std::vector<TraceRef> operands;
    size_t num_results;
  };

  // Runs the replay once every argument is available.
  void Replay(const ExecutionContext& exec_ctx,
              absl::Span<AsyncValue* const> arguments,
              absl::Span<const RCReference<IndirectAsyncValue>> outputs) const;

  // Compiled: the program and its trace function.
  RCReference<BefProgram> program_;
  const Function* function_ = nullptr;
  // Replayed: the prepared ops and where the outputs are.
  std::vector<Step> steps_;
  std::vector<TraceRef> outputs_;
};

}  // namespace asyncrt::lazy::internal

#endif  // ASYNCRT_LIB_LAZY_TRACE_PROGRAM_H_
