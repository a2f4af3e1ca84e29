// The reference executor: what running a BEF function means, on the
// plainest general path. Every optimisation of the fast executor
// (bef_program.cc, docs/executor.md) must be invisible against it: same
// results, same errors, same diagnostics at the same locations.
//
// A call of a function:
//
//   1. Each argument defines its register.
//   2. A kernel is ready once each of its operands is available (a strict
//      kernel, the default), or once any one of them is defined (a
//      non-strict kernel, KernelStrictness::kNonStrict: control flow, which
//      receives a placeholder for each operand not yet defined). Kernels
//      without operands are ready at the start.
//   3. A ready kernel runs on the thread that made it ready. Each of its
//      results defines its register, which may make users ready: at once
//      if the value is available, otherwise on the thread that publishes it
//      (AndThen).
//   4. Execute returns once the calling thread has nothing left to run. A
//      result whose register is not defined yet is returned as an
//      IndirectAsyncValue, forwarded when it is.
//
// Errors. A strict kernel with an error operand does not run: each of its
// results is the first error operand. Once the request is cancelled, no
// kernel runs: the results of those not yet run (strict or not) are the
// request's Cancelled error. Neither case is reported: a kernel reports the
// errors it creates (AsyncKernelFrame::ReportError, at its location), and
// the executor reports a kernel that leaves a result unset or, in a
// tfrt.sync function, returns one not yet available.
//
// References. A register holds its value from its definition to its last
// use; each use takes a reference of its own (the last takes the
// register's), and drops it when its kernel is done. A value is thus
// unique at its last use unless a function result or someone outside the
// call holds it (AsyncKernelFrame::IsLastUseOfArg; never for function
// arguments, which the caller holds).
//
// tfrt.sync functions: with every argument available (and operands defined
// before use, as a converted program has them), each kernel runs once, in
// program order, on the calling thread. Otherwise they run as dataflow.
//
// Threading. Ready counts are atomic. Everything else a call shares between
// threads (registers, placeholders, results) is guarded by one mutex, which
// is never held while a kernel runs or a value is forwarded.
#include "lib/bef_executor/reference_executor.h"

#include <atomic>
#include <mutex>
#include <utility>

#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "lib/bef_executor/executor_common.h"

namespace asyncrt {

// The state of one call, shared by the threads that run its kernels. Each
// owner holds a reference: Execute, and each continuation or task that
// resumes the call later.
class ReferenceFunction::Call : public ReferenceCounted<Call> {
 public:
  Call(const ReferenceFunction& function, const ExecutionContext& exec_ctx,
       bool in_program_order)
      : program_(FormRef(&function.program_)),
        function_(function),
        exec_ctx_(exec_ctx),
        in_program_order_(in_program_order),
        ready_counts_(function.kernels_.size()),
        registers_(function.registers_.size()),
        results_(function.num_results()),
        traced_(tracing::IsEnabled(tracing::Level::kDebug)) {
    if (traced_) internal::BeginCallSpan(function, this);
    for (size_t k = 0; k < function.kernels_.size(); ++k) {
      ready_counts_[k].store(function.kernels_[k].ready_count,
                             std::memory_order_relaxed);
    }
    for (size_t reg = 0; reg < registers_.size(); ++reg) {
      const RegisterInfo& info = function.registers_[reg];
      registers_[reg].uses_left =
          info.strict_users.size() + info.non_strict_users.size();
    }
  }

  ~Call() {
    if (traced_) internal::EndCallSpan(function_, this);
    // Only if a value the call waited on was dropped unpublished.
    for (Result& result : results_) {
      if (result.promised) {
        result.promised->ForwardTo(
            MakeErrorAsyncValueRef("function result was never computed"));
      }
    }
  }

  // Defines register `reg` as `value`: forwards the placeholder that
  // non-strict users took before the definition, and the result that
  // Execute returned before it; then counts down the users. Kernels that
  // become ready are added to `ready`.
  void Define(uint32_t reg, RCReference<AsyncValue> value,
              std::vector<uint32_t>& ready) {
    const RegisterInfo& info = function_.registers_[reg];
    RCReference<IndirectAsyncValue> placeholder;
    std::vector<RCReference<IndirectAsyncValue>> promised;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Register& r = registers_[reg];
      r.defined = true;
      if (r.uses_left > 0) r.value = value;
      placeholder = std::move(r.placeholder);
      for (uint32_t index : info.result_indices) {
        Result& result = results_[index];
        if (result.promised) {
          promised.push_back(std::move(result.promised));
        } else {
          result.value = value;
        }
      }
    }
    // Forwarding runs the waiters' continuations, which may come back here.
    if (placeholder) placeholder->ForwardTo(value);
    for (auto& indirect : promised) indirect->ForwardTo(value);
    // In program order, kernels run in that order instead (see Execute).
    if (in_program_order_) return;
    // Users are pushed last first: the first in program order runs first.
    for (auto k = info.non_strict_users.rbegin();
         k != info.non_strict_users.rend(); ++k) {
      // Only the first definition starts it (later ones go below zero).
      if (ready_counts_[*k].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        ready.push_back(*k);
      }
    }
    if (info.strict_users.empty()) return;
    if (value->IsAvailable()) {
      CountDownStrictUsers(reg, ready);
      return;
    }
    AddRef();  // Dropped by the continuation.
    value->AndThen([this, reg] { ResumeAfter(reg); });
  }

  // Runs the ready kernels, last readied first, until none is left on this
  // thread.
  void RunReady(std::vector<uint32_t>& ready) {
    while (!ready.empty()) {
      const uint32_t k = ready.back();
      ready.pop_back();
      RunKernel(k, ready);
    }
  }

  void RunKernel(uint32_t k, std::vector<uint32_t>& ready) {
    const KernelInfo& kernel = function_.kernels_[k];
    const size_t num_operands = kernel.operands.size();
    const size_t num_results = kernel.results.size();
    // This kernel's uses: available values for a strict kernel; values,
    // possibly unavailable or placeholders, for a non-strict one.
    std::vector<RCReference<AsyncValue>> uses(num_operands);
    std::vector<AsyncValue*> arguments(num_operands);
    for (size_t i = 0; i < num_operands; ++i) {
      uses[i] = TakeUse(kernel.operands[i]);
      arguments[i] = uses[i].get();
    }
    AsyncValue* error = nullptr;
    if (!kernel.non_strict) {
      for (AsyncValue* argument : arguments) {
        if (argument->IsError()) {
          error = argument;
          break;
        }
      }
    }
    if (AsyncValue* cancelled =
            exec_ctx_.request_context()->GetCancelAsyncValue()) {
      error = cancelled;
    }
    std::vector<RCReference<AsyncValue>> results(num_results);
    if (error != nullptr) {
      // Passed on, not reported again: it was reported where it arose.
      for (auto& result : results) result = FormRef(error);
    } else {
      // The kernel's context carries its location, for the errors it
      // reports.
      ExecutionContext context = ExecutionContext::Borrow(
          exec_ctx_, Location(&function_.program_, kernel.location));
      AsyncKernelFrame frame(context, kernel.descriptor, arguments.data(),
                             num_operands, results.data(), num_results);
      {
        tracing::ScopedTrace trace(
            tracing::Level::kDebug, kernel.descriptor.name,
            internal::KernelTraceLocation(function_.program_, kernel.location));
        kernel.impl(&frame);
      }
      const bool is_sync = function_.decoded_.kind == bef::FunctionKind::kSync;
      for (const auto& result : results) {
        if (!result || (is_sync && result->IsUnavailable())) {
          internal::ReportBadResults(kernel.descriptor.name, frame,
                                     results.data(), num_results);
          break;
        }
      }
    }
    // The kernel's uses are over. One it took (AsyncKernelFrame::TakeArgAt,
    // which nulls its argument) is the kernel's to drop.
    for (size_t i = 0; i < num_operands; ++i) {
      if (arguments[i] == nullptr) (void)uses[i].release();
    }
    uses.clear();
    for (size_t i = 0; i < num_results; ++i) {
      Define(kernel.results[i], std::move(results[i]), ready);
    }
  }

  // Function result `index` (+1): its value if its register is defined,
  // else an indirect value that the definition forwards.
  RCReference<AsyncValue> TakeResult(size_t index) {
    std::lock_guard<std::mutex> lock(mutex_);
    Result& result = results_[index];
    if (result.value) return std::move(result.value);
    result.promised = MakeIndirectAsyncValue();
    return result.promised;
  }

 private:
  struct Register {
    bool defined = false;
    uint32_t uses_left = 0;         // Operand uses not yet taken.
    RCReference<AsyncValue> value;  // From definition to last use.
    // Given to non-strict users that ran before the definition.
    RCReference<IndirectAsyncValue> placeholder;
  };
  struct Result {
    RCReference<AsyncValue> value;  // Defined before Execute took it.
    RCReference<IndirectAsyncValue> promised;  // Taken before it was defined.
  };

  // A kernel's use of register `reg` (+1): its value, or, if not yet
  // defined (only a non-strict kernel runs before its operands are), a
  // placeholder the definition forwards.
  RCReference<AsyncValue> TakeUse(uint32_t reg) {
    std::lock_guard<std::mutex> lock(mutex_);
    Register& r = registers_[reg];
    --r.uses_left;
    if (!r.defined) {
      if (!r.placeholder) r.placeholder = MakeIndirectAsyncValue();
      return r.placeholder;
    }
    if (r.uses_left == 0) return std::move(r.value);  // The last use.
    return r.value;
  }

  void CountDownStrictUsers(uint32_t reg, std::vector<uint32_t>& ready) {
    const std::vector<uint32_t>& users = function_.registers_[reg].strict_users;
    for (auto k = users.rbegin(); k != users.rend(); ++k) {
      if (ready_counts_[*k].fetch_sub(1, std::memory_order_acq_rel) == 1) {
        ready.push_back(*k);
      }
    }
  }

  // Register `reg`'s value became available, on this (publishing) thread.
  void ResumeAfter(uint32_t reg) {
    // Continuations nest when publishing a value runs kernels that publish
    // others. Past this depth they continue from the work queue instead,
    // to bound the stack.
    constexpr int kMaxDepth = 32;
    static thread_local int depth = 0;
    if (depth >= kMaxDepth) {
      exec_ctx_.host()->work_queue().AddTask([this, reg] { Resume(reg); });
      return;
    }
    ++depth;
    Resume(reg);
    --depth;
  }
  void Resume(uint32_t reg) {
    std::vector<uint32_t> ready;
    CountDownStrictUsers(reg, ready);
    RunReady(ready);
    DropRef();  // The continuation's reference.
  }

  // Kernels may run after the caller dropped the program and its request.
  const RCReference<const BefProgram> program_;
  const ReferenceFunction& function_;
  const ExecutionContext exec_ctx_;  // Owns a reference to the request.
  const bool in_program_order_;
  std::vector<std::atomic<int32_t>> ready_counts_;  // One per kernel.
  std::mutex mutex_;
  std::vector<Register> registers_;  // Guarded by mutex_.
  std::vector<Result> results_;      // Guarded by mutex_.
  // Tracing, read once per call: kernel scopes and the call's span.
  const bool traced_;
};

ReferenceFunction::ReferenceFunction(const BefProgram& program,
                                     const bef::Function& function)
    : Function(std::string(function.name),
               internal::TypeNames(program.file(), function.argument_types),
               internal::TypeNames(program.file(), function.result_types)),
      program_(program),
      decoded_(function) {}

ReferenceFunction::~ReferenceFunction() = default;

int ReferenceFunction::Prepare(
    absl::Span<const Function* const> all_functions) {
  const bef::BefFile& file = program_.file();
  const KernelRegistry& registry = program_.host()->registry();
  registers_.resize(decoded_.num_registers);
  std::vector<bool> is_argument(decoded_.num_registers, false);
  for (uint32_t reg : decoded_.argument_registers) is_argument[reg] = true;
  for (size_t i = 0; i < decoded_.result_registers.size(); ++i) {
    registers_[decoded_.result_registers[i]].result_indices.push_back(i);
  }
  state_slots_ = std::make_unique<KernelStateSlot[]>(decoded_.kernels.size());
  kernels_.resize(decoded_.kernels.size());  // Filled in place: no moves.
  int unknown = 0;
  for (uint32_t k = 0; k < kernels_.size(); ++k) {
    const bef::Kernel& kernel = decoded_.kernels[k];
    KernelInfo& info = kernels_[k];
    const absl::string_view name = file.kernel_name(kernel.kernel_name);
    info.impl = registry.GetKernel(name);
    if (info.impl == nullptr) {
      ++unknown;
      internal::ReportUnknownKernel(program_, kernel, name);
    }
    info.non_strict = registry.IsNonStrict(name);
    info.location = kernel.location;
    info.operands = kernel.operands;
    info.results = kernel.results;
    if (info.non_strict) {
      info.ready_count = kernel.operands.empty() ? 0 : 1;
    } else {
      info.ready_count = kernel.operands.size();
    }
    for (uint32_t f : internal::FunctionOperands(file, kernel)) {
      info.functions.push_back(all_functions[f]);
    }
    for (uint32_t reg : kernel.operands) {
      info.operand_is_argument.push_back(is_argument[reg]);
      RegisterInfo& users = registers_[reg];
      (info.non_strict ? users.non_strict_users : users.strict_users)
          .push_back(k);
    }
    KernelDescriptor& descriptor = info.descriptor;
    descriptor.file = &file;
    descriptor.name = name;
    descriptor.attributes = kernel.attributes;
    descriptor.functions = info.functions;
    descriptor.state_slot = &state_slots_[k];
    // Function arguments are never at their last use: the caller holds
    // them.
    descriptor.argument_is_shared = info.operand_is_argument.data();
    // Returned results never reuse a spent argument's value (an
    // allocation the fast path saves; no one can tell).
    descriptor.maybe_spent_arguments = 0;
  }
  runs_in_order_ = decoded_.kind == bef::FunctionKind::kSync &&
                   internal::OperandsDefinedInOrder(decoded_);
  return unknown;
}

void ReferenceFunction::Execute(
    const ExecutionContext& exec_ctx, absl::Span<AsyncValue* const> arguments,
    absl::Span<RCReference<AsyncValue>> results) const {
  if (arguments.size() != num_arguments() || results.size() != num_results()) {
    internal::SetCallArityError(*this, arguments.size(), results);
    return;
  }
  bool arguments_available = true;
  for (AsyncValue* argument : arguments) {
    arguments_available &= argument->IsAvailable();
  }
  const bool in_program_order = runs_in_order_ && arguments_available;
  RCReference<Call> call = TakeRef(new Call(*this, exec_ctx, in_program_order));
  // Kernels without operands are ready at the start (pushed last first:
  // the first in program order runs first).
  std::vector<uint32_t> ready;
  for (size_t k = kernels_.size(); k-- > 0;) {
    if (kernels_[k].ready_count == 0) ready.push_back(k);
  }
  for (size_t i = 0; i < arguments.size(); ++i) {
    // The call's own reference: the caller may drop its own while the call
    // still runs.
    call->Define(decoded_.argument_registers[i], FormRef(arguments[i]), ready);
  }
  if (in_program_order) {
    // Nothing counts down (see Call::Define): each kernel runs once, its
    // operands defined by the arguments and the kernels before it.
    for (uint32_t k = 0; k < kernels_.size(); ++k) call->RunKernel(k, ready);
  } else {
    call->RunReady(ready);
  }
  for (size_t i = 0; i < results.size(); ++i) {
    results[i] = call->TakeResult(i);
  }
}

}  // namespace asyncrt
