// A call's life: its block, pinning, registers with non-strict users,
// continuations, placeholders and results, and BefFunction::Execute.
#include "lib/bef_executor/call_state.h"

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "lib/bef_executor/call_state_inl.h"

namespace asyncrt::internal {

static thread_local CallBlockCache call_block_cache;

CallState* CallState::Create(const BefFunction& function,
                             const ExecutionContext& exec_ctx,
                             bool arguments_available) {
  const BefFunction::CallLayout& layout = function.call_layout();
  void* memory = kBlockCacheEnabled
                     ? call_block_cache.Allocate(layout.block_class)
                     : ::operator new(layout.size);
  auto* state = new (memory) CallState(function, exec_ctx);
  state->block_class_ = layout.block_class;
  char* base = static_cast<char*>(memory);
  CopyCallImage(base + kCallRegistersAt,
                function.CallImage(arguments_available));
  state->registers_ = reinterpret_cast<AsyncValue**>(base + kCallRegistersAt);
  state->ready_counts_ = reinterpret_cast<int32_t*>(base + layout.ready_at);
  state->result_slots_ = reinterpret_cast<uintptr_t*>(base + layout.slots_at);
  state->unboxed_values_ = reinterpret_cast<uint64_t*>(base + layout.values_at);
  return state;
}

CallState::CallState(const BefFunction& function,
                     const ExecutionContext& exec_ctx)
    : function_(function),
      exec_ctx_(ExecutionContext::Borrow(exec_ctx, exec_ctx.location())) {
  is_sync_ = function.is_sync();
  if (ABSL_PREDICT_FALSE(trace_kernels_))
    internal::BeginCallSpan(function, this);
}

void CallState::Pin() {
  exec_ctx_ = ExecutionContext(exec_ctx_);
  // Kernels may still run after the caller has its results and drops the
  // program: keep it alive until the call is over.
  function_.program().AddRef();
  pinned_ = true;
}

void CallState::Destroy() {
  if (ABSL_PREDICT_FALSE(trace_kernels_)) {
    internal::EndCallSpan(function_, this);
  }
  // Other registers hold no references by now: each use released its own.
  for (uint32_t reg : function_.decoded().argument_registers) {
    Register(reg).load(std::memory_order_relaxed)->DropRef();
  }
  for (size_t i = 0, n = function_.num_results(); i < n; ++i) {
    uintptr_t slot = ResultSlot(i).load(std::memory_order_acquire);
    if (slot != 0 && slot != kResultDefined) {
      // Only reachable if a value the graph waited on was dropped without
      // ever being published.
      auto* pending = reinterpret_cast<IndirectAsyncValue*>(slot);
      pending->ForwardTo(
          MakeErrorAsyncValueRef("function result was never computed"));
      pending->DropRef();
    }
  }
  const BefProgram& program = function_.program();
  const uint32_t block_class = block_class_;
  const bool pinned = pinned_;
  this->~CallState();
  if (kBlockCacheEnabled) {
    call_block_cache.Free(this, block_class);
  } else {
    ::operator delete(this);
  }
  if (pinned) program.DropRef();
}

// DefineRegister for a register that non-strict kernels use: they count down
// when it is defined, and one may have left a placeholder in it.
void CallState::DefineForNonStrictUsers(uint32_t reg, AsyncValue* value,
                                        Worklist& ready, bool count_down,
                                        bool before_kernels) {
  const RegisterPlan& plan = function_.register_plan(reg);
  const uint32_t uses = plan.references;  // At least the non-strict uses.
  if (uses > 1) value->AddRef(uses - 1);
  const bool available = value->IsAvailable();
  // Held until this function returns: the reference a placeholder keeps for
  // its definer, so it outlives users that are already done with it.
  RCReference<AsyncValue> definer_reference;
  AsyncValue* placeholder = nullptr;
  if (before_kernels) {
    // No user can have left a placeholder.
    Register(reg).store(value, std::memory_order_release);
  } else if (!Register(reg).compare_exchange_strong(
                 placeholder, value, std::memory_order_acq_rel)) {
    // A non-strict user got here first. Its placeholder already holds the
    // register's references; `value` keeps one, owned by the placeholder.
    definer_reference = TakeRef(placeholder);
    if (uses > 1) value->DropRef(uses - 1);
    static_cast<IndirectAsyncValue*>(placeholder)->ForwardTo(TakeRef(value));
    value = placeholder;
  }
  PublishResultSlots(plan, value);
  if (!count_down) return;
  // Reversed onto the LIFO worklist: the first in program order runs
  // first. (Functions with non-strict kernels have no streams.)
  for (auto it = plan.non_strict_users.rbegin();
       it != plan.non_strict_users.rend(); ++it) {
    // Counts may go below zero: only the event that reaches zero starts
    // the kernel (the first operand, or the second event with visits).
    if (ReadyCount(*it).fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ready.kernels.push_back(*it);
    }
  }
  CountDownStrictUsers(plan, reg, value, available, ready);
}

// Continuations nest when publishing a value runs a kernel that publishes
// another. Past this depth they go to the work queue instead of the stack.
constexpr int kMaxInlineDepth = 32;
static thread_local int inline_depth = 0;

void CallState::ResumeAfter(uint32_t reg) {
  if (inline_depth >= kMaxInlineDepth) {
    exec_ctx_.host()->work_queue().AddTask([this, reg] {
      Worklist ready;
      CountDownUsers(reg, ready);
      RunReady(ready);
      DropRef();
    });
    return;
  }
  ++inline_depth;
  Worklist ready;
  CountDownUsers(reg, ready);
  RunReady(ready);
  --inline_depth;
  DropRef();
}

void CallState::CountDownUsers(uint32_t reg, Worklist& ready) {
  CountDown(function_.register_plan(reg), ready);
}

[[gnu::noinline]] void CallState::CountDownOutline(const RegisterPlan& plan,
                                                   Worklist& ready) {
  for (uint32_t user : plan.outline_users) {
    if (CountDownOne(user)) ready.outline.push_back(user);
  }
}

AsyncValue* CallState::MakePlaceholder(uint32_t reg) {
  AsyncValue* value = nullptr;
  // The placeholder carries every reference the register would have had, so
  // that users treat it as the register's value, plus one for the definer.
  const uint32_t references = function_.register_plan(reg).references + 1;
  AsyncValue* placeholder = MakeIndirectAsyncValue().release();
  placeholder->AddRef(references - 1);
  if (Register(reg).compare_exchange_strong(value, placeholder,
                                            std::memory_order_acq_rel)) {
    return placeholder;
  }
  placeholder->DropRef(references);  // Defined in the meantime.
  return value;
}

RCReference<AsyncValue> CallState::TakeResult(size_t index, uint32_t reg) {
  // Either this takes the result slot's reference, or (when the register is
  // not defined yet) the definer hands it to the indirect value below.
  if (AsyncValue* value = Register(reg).load(std::memory_order_acquire)) {
    return TakeRef(value);
  }
  RCReference<IndirectAsyncValue> pending = MakeIndirectAsyncValue();
  // The slot holds its own reference until the definer forwards it (and
  // drops it, possibly before the exchange below even returns).
  pending->AddRef();
  uintptr_t expected = 0;
  if (ResultSlot(index).compare_exchange_strong(
          expected, reinterpret_cast<uintptr_t>(pending.get()),
          std::memory_order_acq_rel)) {
    return pending;
  }
  pending->DropRef();
  // Defined in the meantime.
  return TakeRef(Register(reg).load(std::memory_order_acquire));
}

void BefFunction::Execute(const ExecutionContext& exec_ctx,
                          absl::Span<AsyncValue* const> arguments,
                          absl::Span<RCReference<AsyncValue>> results) const {
  // Callers are kernels reading an untrusted file: a call with the wrong
  // number of arguments or results is an error value, not a crash.
  if (ABSL_PREDICT_FALSE(arguments.size() != num_arguments() ||
                         results.size() != num_results())) {
    internal::SetCallArityError(*this, arguments.size(), results);
    return;
  }
  // The common case: every argument is available. Ready counts then start
  // without the argument operands, so arguments never count down (one
  // atomic operation less per use).
  bool arguments_available = true;
  for (AsyncValue* argument : arguments) {
    arguments_available &= argument->IsAvailable();
  }
  CallState* state = CallState::Create(*this, exec_ctx, arguments_available);
  // Before any argument is defined: a pending one may run kernels on the
  // thread that publishes it as soon as it is.
  if (!unboxed_arguments_.empty()) {
    state->UnboxArguments(arguments, arguments_available);
  }
  const std::vector<uint32_t>& initially_ready =
      arguments_available ? ready_with_arguments_ : initially_ready_;
  const std::vector<uint32_t>& initially_outline =
      arguments_available ? outline_with_arguments_ : initially_outline_;
  CallState::Worklist ready;
  ready.kernels.assign(initially_ready.begin(), initially_ready.end());
  if (ABSL_PREDICT_FALSE(!initially_outline.empty())) {
    ready.outline.assign(initially_outline.begin(), initially_outline.end());
  }
  const uint32_t* argument_registers = decoded_.argument_registers.data();
  for (size_t i = 0; i < arguments.size(); ++i) {
    // The call's own reference (not borrowed as the context is: a kernel
    // must never see an argument its caller still holds as unique).
    state->DefineRegister(argument_registers[i], arguments[i]->AddRef(), ready,
                          /*count_down=*/!arguments_available,
                          /*before_kernels=*/arguments_available);
  }
  if (runs_in_order_ && arguments_available) {
    // No chains order a sync function's side effects: program order does.
    state->RunInOrder();
  } else if (visits_in_order_) {
    if (!ready.kernels.empty()) state->RunReady(ready);
    state->VisitInOrder(ready, arguments_available);
  } else {
    state->RunReady(ready);
  }
  const uint32_t* result_registers = decoded_.result_registers.data();
  for (size_t i = 0; i < results.size(); ++i) {
    results[i] = state->TakeResult(i, result_registers[i]);
  }
  state->DropRef();
}

}  // namespace asyncrt::internal
