// The reference executor (ExecutorMode::kReference): BEF functions run on
// the plainest general path, written to be read as the statement of the
// executor's semantics (docs/executor.md, "Semantics"). The fast executor
// (bef_program.cc) must give the same results and report the same errors;
// differential_test.cc checks it on random programs.
//
// BefProgram::Load makes these instead of its optimised functions when
// BefProgramOptions::mode is kReference; native functions are the same in
// both modes. Private to lib/bef_executor.
//
// Thread-safety: immutable after Prepare; calls may run concurrently.
#ifndef ASYNCRT_LIB_BEF_EXECUTOR_REFERENCE_EXECUTOR_H_
#define ASYNCRT_LIB_BEF_EXECUTOR_REFERENCE_EXECUTOR_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/types/span.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/bef_executor/function.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

class ReferenceFunction final : public Function {
 public:
  // `function` is a BEF or tfrt.sync function of `program`'s file.
  ReferenceFunction(const BefProgram& program, const bef::Function& function);
  ~ReferenceFunction() override;

  // Resolves each kernel's implementation, strictness and function operands
  // (`all_functions`: the program's functions in file order, themselves
  // reference functions). Reports unknown kernels as the fast executor does
  // and returns how many there were.
  int Prepare(absl::Span<const Function* const> all_functions);

  void Execute(const ExecutionContext& exec_ctx,
               absl::Span<AsyncValue* const> arguments,
               absl::Span<RCReference<AsyncValue>> results) const override;

 private:
  class Call;  // One call in flight (reference_executor.cc).

  struct KernelInfo {
    AsyncKernelImplementation impl = nullptr;
    bool non_strict = false;  // KernelStrictness::kNonStrict.
    uint32_t location = 0;
    absl::Span<const uint32_t> operands;  // Registers.
    absl::Span<const uint32_t> results;   // Registers.
    // At the start of a call: strict kernels wait for each operand use to
    // be available, non-strict ones for any one operand to be defined.
    int32_t ready_count = 0;
    std::vector<const Function*> functions;    // Function operands.
    std::vector<uint8_t> operand_is_argument;  // Per operand.
    KernelDescriptor descriptor;               // What its frame shows.
  };
  struct RegisterInfo {
    // One entry per use, in program order.
    std::vector<uint32_t> strict_users;
    std::vector<uint32_t> non_strict_users;
    std::vector<uint32_t> result_indices;  // The function results it is.
  };

  const BefProgram& program_;
  const bef::Function& decoded_;
  std::vector<KernelInfo> kernels_;
  std::vector<RegisterInfo> registers_;
  std::unique_ptr<KernelStateSlot[]> state_slots_;  // One per kernel.
  // A tfrt.sync function whose kernels only use values defined before them:
  // a call with available arguments runs each kernel once, in program order.
  bool runs_in_order_ = false;
};

}  // namespace asyncrt

#endif  // ASYNCRT_LIB_BEF_EXECUTOR_REFERENCE_EXECUTOR_H_
