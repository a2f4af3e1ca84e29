// corert.execute_sequence(%handler, %args...): a chain of registry ops run
// one after another in one kernel (-corert-fuse-op-sequences makes it from
// corert.executeop chains; corert_ops.td has the attributes).
//
// Once per site (its KernelState): each op prepared on the handler of the
// site's first call, its frozen attributes and shape memo, and where each
// operand comes from and when each value is read for the last time.
// Per call: the ops' results live in handles on this kernel's stack, never
// in registers; each is dropped at its last use, given to the op that
// reads it (which may write its own result into that buffer). An op whose
// arguments are computed takes the one-pass path (RunConcrete); any other
// takes the general call, which waits for arguments still being computed
// and passes errors on, so results and errors are those of the chain of
// corert.executeop the sequence replaces.
#include "kernels/core_runtime/execute_sequence_kernel.h"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/fixed_array.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/shape_memo.h"
#include "kernels/core_runtime/op_kernel_support.h"

namespace asyncrt {
namespace {

using bef::AttributeKind;

struct SequenceStep {
  std::string op_name;
  OpAttrsRef attrs;
  absl::StatusOr<CoreRuntimeOp> op = absl::UnknownError("not prepared");
  ShapeMemo memo;  // This op's shape answers at this site.
  OpSiteCache site_cache;      // This op's implementation's, at this site.
  uint32_t first_operand = 0;  // Into ExecuteSequenceState::operands.
  uint32_t num_operands = 0;
  // Bit k: operand k is its value's last read in the sequence (once per
  // step for a value read twice): an earlier op's result, dropped after
  // the step, or an argument, given up too when this kernel is its
  // register's last use.
  uint64_t result_last_reads = 0;
  uint64_t argument_last_reads = 0;
};

struct ExecuteSequenceState final : KernelState {
  absl::Status status;  // Of the attributes; the kernel fails if not OK.
  absl::Status ops_status;  // The first op `handler` could not prepare.
  OpHandler* handler = nullptr;  // Of the first call: `steps` ran on it.
  size_t num_arguments = 0;      // Handles, after the handler operand.
  std::vector<uint32_t> operands;  // Arguments, then each op's result.
  // Where each operand's handle is during a call: an argument register's
  // (index < num_arguments) or a result slot (num_arguments + slot). Slots
  // are reused once their value was read for the last time, so a chain
  // needs two.
  std::vector<uint32_t> operand_slots;
  std::vector<uint32_t> result_slots;  // Per op.
  size_t num_slots = 0;
  size_t max_operands = 0;         // Of any op.
  size_t num_steps = 0;
  std::unique_ptr<SequenceStep[]> steps;  // ShapeMemo does not move.
  // Every op's result metadata per argument metadata (shape functions are
  // pure): a call whose arguments' shapes were seen runs each op with its
  // shape known, without looking it up per op.
  mutable ShapeMemo shapes;  // Thread-safe (shape_memo.h).

};

// The i32 array attribute `name` (a BEF array; `[]` is an empty
// aggregate).
std::optional<absl::Span<const int32_t>> I32Array(AsyncKernelFrame* frame,
                                                  absl::string_view name) {
  const bef::Attribute* attribute = frame->GetAttribute(name);
  if (attribute == nullptr) return std::nullopt;
  if (attribute->kind == AttributeKind::kAggregate &&
      attribute->elements.empty()) {
    return absl::Span<const int32_t>();
  }
  if (attribute->kind != AttributeKind::kArray ||
      attribute->element_kind != AttributeKind::kI32) {
    return std::nullopt;
  }
  return attribute->array<int32_t>();
}

// Reads the site's attributes (BEF from anywhere: everything checked) and
// prepares its ops on `handler`.
absl::Status Prepare(AsyncKernelFrame* frame, OpHandler* handler,
                     ExecuteSequenceState& state) {
  const bef::BefFile& file = frame->bef_file();
  const bef::Attribute* names = frame->GetAttribute("op_names");
  const bef::Attribute* op_attrs = frame->GetAttribute("op_attrs");
  std::optional<absl::Span<const int32_t>> counts =
      I32Array(frame, "op_operand_counts");
  std::optional<absl::Span<const int32_t>> operands =
      I32Array(frame, "op_operands");
  auto invalid = [](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("corert.execute_sequence: ", why));
  };
  if (names == nullptr || names->kind != AttributeKind::kAggregate ||
      names->elements.empty() || op_attrs == nullptr ||
      op_attrs->kind != AttributeKind::kAggregate || !counts || !operands) {
    return invalid(
        "needs op_names, op_attrs, op_operand_counts and op_operands");
  }
  const size_t num_steps = names->elements.size();
  if (op_attrs->elements.size() != num_steps || counts->size() != num_steps) {
    return invalid("needs op_attrs and op_operand_counts for each op");
  }
  if (frame->GetNumResults() != 1) return invalid("has one result");
  state.handler = handler;
  state.num_arguments = frame->GetNumArgs() - 1;
  state.num_steps = num_steps;
  state.steps = std::make_unique<SequenceStep[]>(num_steps);
  state.operands.assign(operands->begin(), operands->end());

  // The last read of each value: (step, operand position).
  const size_t num_values = state.num_arguments + num_steps;
  std::vector<std::pair<uint32_t, uint32_t>> last_read(
      num_values, {UINT32_MAX, 0});
  size_t next_operand = 0;
  for (size_t s = 0; s < num_steps; ++s) {
    SequenceStep& step = state.steps[s];
    const bef::Attribute& name = file.attribute(names->elements[s]);
    if (name.kind != AttributeKind::kString) {
      return invalid("op_names must be strings");
    }
    step.op_name = std::string(name.bytes);
    OpAttrs attrs;
    size_t next_function = 0;  // None: the pass leaves function attributes.
    absl::Status status = AddAttributePairs(
        frame, attrs, &file.attribute(op_attrs->elements[s]), next_function);
    if (!status.ok()) return status;
    step.attrs = attrs.empty() ? OpAttrsRef() : attrs.Freeze();
    if ((*counts)[s] < 0 ||
        next_operand + (*counts)[s] > state.operands.size()) {
      return invalid("op_operand_counts do not match op_operands");
    }
    step.first_operand = static_cast<uint32_t>(next_operand);
    step.num_operands = static_cast<uint32_t>((*counts)[s]);
    state.max_operands = std::max<size_t>(state.max_operands, step.num_operands);
    for (uint32_t k = 0; k < step.num_operands; ++k) {
      const int32_t index = state.operands[next_operand++];
      if (index < 0 || static_cast<size_t>(index) >= state.num_arguments + s) {
        return invalid(absl::StrCat("op ", s, " (", step.op_name,
                                    ") reads value ", index,
                                    ", not an argument or an earlier result"));
      }
      last_read[index] = {static_cast<uint32_t>(s), k};
    }
    step.op = CoreRuntime::GetOrCreate(frame->GetHostContext())
                  .MakeOp(step.op_name, handler);
    if (!step.op.ok() && state.ops_status.ok()) {
      state.ops_status = step.op.status();
    }
  }
  if (next_operand != state.operands.size()) {
    return invalid("op_operand_counts do not match op_operands");
  }
  // Slots: an op's result takes a free one before the slots of what it
  // reads last are freed (the op reads its arguments while it writes its
  // result).
  std::vector<uint32_t> slot_of(num_values);
  std::vector<uint32_t> free_slots;
  state.operand_slots.resize(state.operands.size());
  state.result_slots.resize(num_steps);
  for (size_t i = 0; i < state.num_arguments; ++i) {
    slot_of[i] = static_cast<uint32_t>(i);
  }
  for (size_t s = 0; s < num_steps; ++s) {
    SequenceStep& step = state.steps[s];
    uint32_t slot;
    if (free_slots.empty()) {
      slot = static_cast<uint32_t>(state.num_arguments + state.num_slots++);
    } else {
      slot = free_slots.back();
      free_slots.pop_back();
    }
    for (uint32_t k = 0; k < step.num_operands; ++k) {
      const uint32_t index = state.operands[step.first_operand + k];
      state.operand_slots[step.first_operand + k] = slot_of[index];
      if (index >= state.num_arguments && last_read[index].first == s &&
          last_read[index].second == k) {
        free_slots.push_back(slot_of[index]);
      }
    }
    slot_of[state.num_arguments + s] = slot;
    state.result_slots[s] = slot;
  }
  for (size_t index = 0; index < num_values; ++index) {
    const auto [s, k] = last_read[index];
    if (s == UINT32_MAX || k >= 64) continue;
    (index < state.num_arguments ? state.steps[s].argument_last_reads
                                 : state.steps[s].result_last_reads) |=
        uint64_t{1} << k;
  }
  return absl::OkStatus();
}

void ExecuteSequence(AsyncKernelFrame* frame) {
  const BufferArena* arena = nullptr;
  OpHandler* handler = frame->GetNumArgs() >= 1
                           ? OpHandlerOperand(frame->GetArgAt(0), arena)
                           : nullptr;
  if (handler == nullptr) {
    return frame->ReportError(
        absl::InvalidArgumentError("the first operand must be an op handler"));
  }
  const ExecuteSequenceState* state =
      frame->GetOrCreateState<ExecuteSequenceState>([&] {
        auto made = std::make_unique<ExecuteSequenceState>();
        made->status = Prepare(frame, handler, *made);
        return made;
      });
  if (!state->status.ok()) return frame->ReportError(state->status);
  const size_t num_arguments = state->num_arguments;
  for (size_t i = 1; i <= num_arguments; ++i) {
    if (!frame->GetArgAt(i)->IsType<TensorHandle>()) {
      return frame->ReportError(absl::InvalidArgumentError(
          absl::StrCat("argument ", i, " is not a !corert.tensorhandle")));
    }
  }
  // Another handler than the first call's (rare: graphs keep theirs) gets
  // its ops prepared afresh, for this call.
  std::vector<CoreRuntimeOp> other_ops;
  if (ABSL_PREDICT_FALSE(state->handler != handler)) {
    CoreRuntime& runtime = CoreRuntime::GetOrCreate(frame->GetHostContext());
    for (size_t s = 0; s < state->num_steps; ++s) {
      absl::StatusOr<CoreRuntimeOp> op =
          runtime.MakeOp(state->steps[s].op_name, handler);
      if (!op.ok()) return frame->ReportError(op.status());
      other_ops.push_back(*std::move(op));
    }
  } else if (!state->ops_status.ok()) {
    return frame->ReportError(state->ops_status);
  }

  const ExecutionContext& exec_ctx = frame->GetExecutionContext();
  const size_t num_steps = state->num_steps;
  // The handles by slot: the argument registers', then the results'.
  absl::FixedArray<TensorHandle, 4> results(state->num_slots);
  absl::FixedArray<TensorHandle*, 8> slots(num_arguments + state->num_slots);
  for (size_t i = 0; i < num_arguments; ++i) {
    slots[i] = &frame->GetArgAt(i + 1)->get<TensorHandle>();
  }
  for (size_t i = 0; i < state->num_slots; ++i) {
    slots[num_arguments + i] = &results[i];
  }
  absl::FixedArray<TensorHandle*, 8> args(state->max_operands);
  TensorHandle* result = nullptr;
  // The ops' shapes if these arguments' were seen; else collected, to be
  // remembered when every op computes.
  absl::FixedArray<const TensorMetadata*, 4> argument_metadata(num_arguments);
  bool arguments_computed = true;
  for (size_t i = 0; i < num_arguments; ++i) {
    AsyncValue* tensor = slots[i]->GetAsyncTensor();
    if (tensor == nullptr || !tensor->IsConcrete()) {
      arguments_computed = false;
      break;
    }
    argument_metadata[i] = &slots[i]->GetAvailableMetadata();
  }
  const TensorMetadata* shapes =
      arguments_computed ? state->shapes.Find(argument_metadata) : nullptr;
  std::optional<std::vector<TensorMetadata>> seen_arguments, seen_results;
  if (arguments_computed && shapes == nullptr) {
    seen_arguments.emplace();
    for (const TensorMetadata* metadata : argument_metadata) {
      seen_arguments->push_back(*metadata);
    }
    seen_results.emplace();
  }
  for (size_t s = 0; s < num_steps; ++s) {
    SequenceStep& step = state->steps[s];
    const CoreRuntimeOp& op = other_ops.empty() ? *step.op : other_ops[s];
    const uint32_t* operand_slots =
        state->operand_slots.data() + step.first_operand;
    for (uint32_t k = 0; k < step.num_operands; ++k) {
      args[k] = slots[operand_slots[k]];
    }
    // Bit k: given to the op, which may reuse its buffer. As RunOp does,
    // only computed tensors: an error or a pending one stays shared. An
    // argument only where this kernel is its register's last use.
    uint64_t consumed = 0;
    uint64_t last_reads = step.result_last_reads;
    for (uint64_t reads = step.argument_last_reads; reads != 0;
         reads &= reads - 1) {
      const uint32_t k = std::countr_zero(reads);
      if (frame->IsLastUseOfArg(operand_slots[k] + 1)) {
        last_reads |= uint64_t{1} << k;
      }
    }
    for (uint64_t reads = last_reads; reads != 0; reads &= reads - 1) {
      const uint32_t k = std::countr_zero(reads);
      AsyncValue* tensor = args[k]->GetAsyncTensor();
      if (tensor != nullptr && tensor->IsConcrete()) {
        consumed |= uint64_t{1} << k;
      }
    }
    const absl::Span<const TensorHandle* const> step_args(args.data(),
                                                          step.num_operands);
    result = slots[state->result_slots[s]];
    const bool ran =
        shapes != nullptr
            ? op.RunConcrete(exec_ctx, step_args, consumed, step.attrs,
                             shapes[s], *result, arena, &step.site_cache)
            : op.RunConcrete(exec_ctx, step_args, consumed, step.attrs, *result,
                             step.memo, arena, &step.site_cache);
    if (!ran) {
      op(exec_ctx, step_args, consumed, step.attrs, absl::MakeSpan(result, 1),
         nullptr, arena);
    }
    if (seen_results) {
      AsyncValue* tensor = result->GetAsyncTensor();
      if (tensor != nullptr && tensor->IsConcrete()) {
        seen_results->push_back(result->GetAvailableMetadata());
      } else {
        seen_results.reset();  // Not all known now: nothing remembered.
      }
    }
    // Earlier results read for the last time go now (their buffers may be
    // the next op's to reuse); a given-up argument's register is cleared
    // as corert.executeop clears it.
    for (uint64_t reads = step.result_last_reads | consumed; reads != 0;
         reads &= reads - 1) {
      *args[std::countr_zero(reads)] = TensorHandle();
    }
  }

  if (seen_results) {
    absl::FixedArray<const TensorMetadata*, 4> keys(num_arguments);
    for (size_t i = 0; i < num_arguments; ++i) keys[i] = &(*seen_arguments)[i];
    state->shapes.Record(keys, *seen_results);
  }

  TensorHandle handle = std::move(*result);
  AsyncValue* tensor = handle.GetAsyncTensor();
  if (tensor->IsAvailable()) {
    frame->SetResultAt(0, SettleHandle(std::move(handle), frame->GetArguments(),
                                       exec_ctx));
    return;
  }
  // Settles later: an error then is new unless it is an argument's.
  auto held = std::make_shared<std::vector<RCReference<AsyncValue>>>();
  for (AsyncValue* value : frame->GetArguments()) {
    if (value != nullptr) held->push_back(FormRef(value));
  }
  RCReference<IndirectAsyncValue> pending = MakeIndirectAsyncValue();
  frame->SetResultAt(0, pending);
  tensor->AndThen([pending, handle = std::move(handle), held,
                   ctx = exec_ctx]() mutable {
    std::vector<AsyncValue*> arguments;
    for (const RCReference<AsyncValue>& value : *held) {
      arguments.push_back(value.get());
    }
    pending->ForwardTo(SettleHandle(std::move(handle), arguments, ctx));
  });
}

}  // namespace

void RegisterExecuteSequenceKernel(KernelRegistry& registry) {
  MustAddKernel(registry, "corert.execute_sequence", ExecuteSequence);
}

}  // namespace asyncrt
