// Load-time planning of BEF functions: for each function an immutable plan
// (per kernel its implementation, operands and results; per register its
// users and references; the ready lists, the call image, the schedule and
// the unboxed values) that every call reads. Private to lib/bef_executor;
// docs/executor.md describes the plan. Immutable after BefProgram::Load, so
// calls read it from any thread without synchronisation.
#ifndef ASYNCRT_LIB_BEF_EXECUTOR_EXECUTION_PLAN_H_
#define ASYNCRT_LIB_BEF_EXECUTOR_EXECUTION_PLAN_H_

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/bef_executor/function.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/host_context/kernel_registry.h"
#include "asyncrt/support/block_cache.h"
#include "lib/bef_executor/executor_common.h"

namespace asyncrt::internal {

//===--- BEF functions ----------------------------------------------------===//

template <typename T>
constexpr size_t AlignUp(size_t offset) {
  return (offset + alignof(T) - 1) / alignof(T) * alignof(T);
}

// Operands of a kernel on its unboxed entry: KernelPlan::unboxed_operands
// has one bit each.
constexpr size_t kMaxUnboxedOperands = UnboxedKernel::kMaxOperands;

// Call blocks are short-lived and come in few sizes: each thread keeps a
// few freed ones per class (64 bytes to 8 KiB, about a thousand registers),
// which saves glibc's malloc and free (about a tenth of a small call).
using CallBlockCache = BlockCache</*kMinBytes=*/64, /*kClasses=*/8,
                                  /*kPerClass=*/4>;

struct KernelPlan {
  // Set for a direct kernel (see PlanUnboxed): one on its unboxed entry
  // whose operands and result all live in the call's value slots. What
  // CallState::RunDirectKernels reads comes first: half a cache line.
  uint64_t (*direct_invoke)(uint64_t, uint64_t, uint64_t, uint64_t) = nullptr;
  // The value slots of the operands; the words past the operand count
  // repeat the first (the entry ignores them), so that every direct kernel
  // reads four.
  uint32_t operand_slots[kMaxUnboxedOperands] = {};
  uint32_t result_slot = 0;
  // With `unboxed_result`: the register's sole user, if it has one
  // (RegisterPlan::has_sole_user), else CallState::kNoKernel.
  uint32_t unboxed_sole_user = ~uint32_t{0};
  // What a kernel on its unboxed entry reads next.
  absl::Span<const uint32_t> operands;
  absl::Span<const uint32_t> results;
  // Set if the kernel runs on its unboxed entry (see PlanUnboxed): it reads
  // the operands marked in `unboxed_operands` from the call's value slots,
  // the others from their async values, and its result is a value slot if
  // `unboxed_result`.
  const UnboxedKernel* unboxed = nullptr;
  uint8_t unboxed_operands = 0;
  // The unboxed operands that are not function arguments: their registers
  // are null unless their definer passed on an error instead (which sends
  // the rest of the call to SlowUnboxedKernel).
  uint8_t checked_operands = 0;
  // Boxed operands that are not function arguments: each holds a
  // reference for this use.
  uint8_t owned_boxed_operands = 0;
  bool unboxed_result = false;
  const AsyncValue::TypeId* operand_types = nullptr;  // The entry's.
  AsyncKernelImplementation impl;
  uint32_t location;
  // What the kernel's frame shows. Its argument_is_shared marks operands
  // that are function arguments: the call holds their reference, so the
  // kernel must not drop one.
  KernelDescriptor descriptor;
  // Ready counts at the start of a call, when every argument is available
  // (argument operands then never count down) and when some is not.
  int32_t ready_count_with_arguments = 0;
  int32_t ready_count = 0;
  // See KernelStrictness: runs once any operand is defined, taking
  // placeholders for the others, and sees error operands.
  bool non_strict = false;
  // A non-strict kernel whose operands are all function arguments: when
  // they are available its visit is its only event (see CountVisits), so
  // the visit starts it without touching the count.
  bool visit_is_only_event_with_arguments = false;
  // With streams (see SplitUsersByStream): the kernel's stream id.
  uint32_t stream = 0;
  KernelStateSlot* state_slot = nullptr;  // Owned by the function.
};

struct RegisterPlan {
  // The common case in a chain: one strict user in the definer's stream,
  // one reference, no function result and no non-strict user.
  // DefineRegister then counts down `sole_user` and looks at nothing else.
  bool has_sole_user = false;
  uint32_t sole_user = 0;
  absl::Span<const uint32_t> users;         // Strict kernel per use.
  absl::Span<const uint32_t> result_slots;  // Function results it feeds.
  // Arguments live for the whole call anyway (the caller holds them): the
  // call keeps one reference instead of one per use.
  bool is_argument = false;
  bool has_non_strict_users = false;
  uint32_t references = 0;  // Held while the call runs; see DefineRegister.
  // Non-strict kernel per use: counted down when the register is defined,
  // available or not. Last: the hot path only reads the flag above.
  absl::Span<const uint32_t> non_strict_users;
  // Strict users in another stream than the register's definer (only in
  // functions compiled with streams): once ready they go to the work queue.
  absl::Span<const uint32_t> outline_users;
  // The value lives in the call's value slot, not in an async value (see
  // PlanUnboxed); the register itself holds null, or an error its definer
  // passed on instead of a value (one reference per use).
  bool is_unboxed = false;
  // A function argument whose users all take it unboxed: each call copies
  // its payload into its value slot (CallState::UnboxArguments); the
  // register keeps the argument's async value.
  bool is_unboxed_argument = false;
};

class BefFunction final : public Function {
 public:
  BefFunction(const BefProgram& program, const bef::Function& function)
      : Function(std::string(function.name),
                 TypeNames(program.file(), function.argument_types),
                 TypeNames(program.file(), function.result_types)),
        program_(program),
        decoded_(function) {}

  // Resolves kernels and function operands. Reports unknown kernels through
  // the host's diagnostic handler; returns how many there were.
  int Prepare(const std::vector<const Function*>& all_functions);

  bool has_non_strict_kernels() const {
    return std::any_of(kernels_.begin(), kernels_.end(),
                       [](const KernelPlan& k) { return k.non_strict; });
  }

  // Called once every function is prepared. Functions with streams follow
  // them (SplitUsersByStream) unless `dataflow_order`, which visits kernels
  // in program order (CountVisits); tfrt.sync functions have neither.
  // Otherwise the first ready kernel in program order runs first and its
  // users right after it, depth first.
  void ChooseSchedule(bool dataflow_order);

  // The layout of a call's block past the CallState header (offsets from
  // the block's start) and its size class, fixed per function.
  struct CallLayout {
    size_t ready_at = 0;
    size_t slots_at = 0;
    size_t values_at = 0;  // Past the image; room only with unboxed registers.
    size_t size = 0;
    uint32_t block_class = 0;
  };
  const CallLayout& call_layout() const { return call_layout_; }
  struct UnboxedArgument {
    uint32_t index;  // In the call's arguments.
    uint32_t reg;
    AsyncValue::TypeId type;
  };
  absl::Span<const UnboxedArgument> unboxed_arguments() const {
    return unboxed_arguments_;
  }
  // The block's contents from kCallRegistersAt at the start of a call: null
  // registers, each kernel's starting ready count, empty result slots.
  absl::Span<const unsigned char> CallImage(bool arguments_available) const {
    return arguments_available ? call_image_with_arguments_ : call_image_;
  }

  void Execute(const ExecutionContext& exec_ctx,
               absl::Span<AsyncValue* const> arguments,
               absl::Span<RCReference<AsyncValue>> results) const override;

  const BefProgram& program() const { return program_; }
  const bef::Function& decoded() const { return decoded_; }
  bool is_sync() const { return decoded_.kind == bef::FunctionKind::kSync; }
  bool has_streams() const { return has_streams_; }
  uint32_t stream_of(uint32_t kernel) const { return kernels_[kernel].stream; }

  const KernelPlan& kernel(uint32_t index) const { return kernels_[index]; }
  const RegisterPlan& register_plan(uint32_t reg) const {
    return registers_[reg];
  }
  uint32_t num_registers() const { return decoded_.num_registers; }
  uint32_t num_kernels() const { return kernels_.size(); }

 private:
  void BuildRegisterPlans();

  void BuildCallImages();

  // Registers that need no async value: defined by a kernel with an unboxed
  // entry (UnboxedKernel, made by ASYNCRT_KERNEL for functions of plain
  // values), read only by such kernels and as the type they take, and not
  // a function result; likewise arguments read only by such kernels, which
  // each call copies into their slots. Kernels that touch one run on their
  // unboxed entries; the others, and every other register, as before. An
  // error still travels as an async value, in the register itself.
  void PlanUnboxed();

  // The order TFRT's executor had for non-strict kernels: each kernel
  // counts one more event, its visit, and Execute visits the kernels in
  // program order, each visit followed by whatever it made ready. A kernel
  // thus runs once visited and its operands are there, or once they arrive
  // after its visit. A non-strict kernel runs at the second of its events
  // (visit or operand definition), as TFRT's did.
  void CountVisits();

  // How many of the kernel's operands are function arguments.
  int32_t ArgumentOperands(const KernelPlan& kernel) const;

  // With streams (recorded by the converter for every function but
  // tfrt.sync ones), scheduling follows TFRT's executor, whose order TFRT
  // programs observe under the single-threaded work queue: a kernel that
  // becomes ready runs on this thread only if it is in the stream of the
  // kernel that readied it; the others start on the work queue, one task
  // per stream. Users are pushed in program order and run last first. The
  // entry's stream plays the definer for arguments and for the kernels
  // ready at the start.
  void SplitUsersByStream();

  const BefProgram& program_;
  const bef::Function& decoded_;
  std::vector<KernelPlan> kernels_;
  std::vector<RegisterPlan> registers_;
  std::vector<uint32_t> pool_;
  std::vector<const Function*> function_pool_;
  std::vector<uint32_t> initially_ready_;
  // Ready at the start when every argument is available.
  std::vector<uint32_t> ready_with_arguments_;
  // With streams: the kernels of the two lists above that start on the
  // work queue.
  std::vector<uint32_t> initially_outline_;
  std::vector<uint32_t> outline_with_arguments_;
  std::vector<uint8_t> operand_is_argument_;
  CallLayout call_layout_;
  std::vector<unsigned char> call_image_;
  std::vector<unsigned char> call_image_with_arguments_;
  bool runs_in_order_ = false;                      // See RunInOrder.
  bool has_streams_ = false;                        // See SplitUsersByStream.
  bool visits_in_order_ = false;                    // See CountVisits.
  bool has_unboxed_ = false;                        // See PlanUnboxed.
  std::vector<UnboxedArgument> unboxed_arguments_;  // See PlanUnboxed.
  std::unique_ptr<KernelStateSlot[]> state_slots_;  // One per kernel.
};

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_BEF_EXECUTOR_EXECUTION_PLAN_H_
