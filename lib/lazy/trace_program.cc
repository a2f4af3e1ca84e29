// Lazy traces, compiled or replayed (trace_program.h), and the trace
// compiler registry (asyncrt/lazy/trace.h).
#include "lib/lazy/trace_program.h"

#include <algorithm>
#include <atomic>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"

namespace asyncrt::lazy {
namespace {

std::atomic<TraceCompilerFn> registered_compiler{nullptr};

}  // namespace

void RegisterTraceCompiler(TraceCompilerFn compiler) {
  registered_compiler.store(compiler, std::memory_order_release);
}

TraceCompilerFn GetTraceCompiler() {
  return registered_compiler.load(std::memory_order_acquire);
}

namespace internal {

absl::StatusOr<std::shared_ptr<const TraceProgram>> TraceProgram::Create(
    const Trace& trace, Runtime& runtime, TraceCompilerFn compiler) {
  auto program = std::make_shared<TraceProgram>();
  if (compiler != nullptr) {
    absl::StatusOr<std::vector<uint8_t>> bef = compiler(trace);
    if (!bef.ok()) return bef.status();
    absl::StatusOr<RCReference<BefProgram>> loaded =
        runtime.LoadBef(*std::move(bef));
    if (!loaded.ok()) return loaded.status();
    program->function_ = (*loaded)->GetFunction(kTraceFunction);
    if (program->function_ == nullptr) {
      return absl::InternalError(
          absl::StrCat("the compiled trace has no function ", kTraceFunction));
    }
    program->program_ = *std::move(loaded);
    return program;
  }
  // The host's op handler is "cpu"; a plug-in's device's is its name.
  const std::string handler_name =
      trace.device == "CPU:0" ? "cpu" : trace.device;
  OpHandler* handler = runtime.core_runtime().GetOpHandler(handler_name);
  if (handler == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no op handler for device ", trace.device));
  }
  for (const TraceOp& op : trace.ops) {
    absl::StatusOr<CoreRuntimeOp> prepared = handler->MakeOp(op.op_name);
    if (!prepared.ok()) return prepared.status();
    program->steps_.push_back(
        Step{*std::move(prepared), op.attrs, op.operands, op.results.size()});
  }
  program->outputs_ = trace.outputs;
  return program;
}

std::vector<RCReference<AsyncValue>> TraceProgram::Run(
    Runtime& runtime, absl::Span<AsyncValue* const> arguments) const {
  std::vector<RCReference<AsyncValue>> results;
  if (function_ != nullptr) {
    results = runtime.Call(*function_, arguments);
    // The program stays while it runs, even if the cache drops it (a
    // program that finished inline, the common case, needs nothing).
    const bool finished =
        std::all_of(results.begin(), results.end(),
                    [](const RCReference<AsyncValue>& result) {
                      return result->IsAvailable();
                    });
    if (!finished) RunWhenReady(results, [keep = shared_from_this()] {});
    return results;
  }
  absl::StatusOr<ExecutionContext> exec_ctx = runtime.CreateExecutionContext();
  if (!exec_ctx.ok()) {
    results.assign(outputs_.size(), MakeErrorAsyncValueRef(exec_ctx.status()));
    return results;
  }
  std::vector<RCReference<IndirectAsyncValue>> outputs;
  for (size_t i = 0; i < outputs_.size(); ++i) {
    outputs.push_back(MakeIndirectAsyncValue());
    results.push_back(outputs.back());
  }
  // Arguments computed by earlier traces may still be running.
  std::vector<RCReference<AsyncValue>> held;
  for (AsyncValue* argument : arguments) held.push_back(FormRef(argument));
  AsyncValue* const* raw = arguments.data();
  RunWhenReady(absl::MakeConstSpan(raw, arguments.size()),
               [keep = shared_from_this(), exec_ctx = *std::move(exec_ctx),
                held = std::move(held), outputs = std::move(outputs)] {
                 std::vector<AsyncValue*> values;
                 for (const auto& value : held) values.push_back(value.get());
                 keep->Replay(exec_ctx, values, outputs);
               });
  return results;
}

void TraceProgram::Replay(
    const ExecutionContext& exec_ctx, absl::Span<AsyncValue* const> arguments,
    absl::Span<const RCReference<IndirectAsyncValue>> outputs) const {
  std::vector<TensorHandle> parameters;
  for (AsyncValue* argument : arguments) {
    if (argument->IsError()) {
      for (const auto& output : outputs) output->ForwardTo(FormRef(argument));
      return;
    }
    parameters.push_back(argument->get<TensorHandle>().CopyRef());
  }
  std::vector<std::vector<TensorHandle>> values(steps_.size());
  auto value_of = [&](const TraceRef& ref) -> const TensorHandle& {
    return ref.op == TraceRef::kParameter ? parameters[ref.index]
                                          : values[ref.op][ref.index];
  };
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& step = steps_[i];
    std::vector<TensorHandle> operands;
    for (const TraceRef& ref : step.operands) {
      operands.push_back(value_of(ref).CopyRef());
    }
    values[i].resize(step.num_results);
    step.op(exec_ctx, absl::MakeSpan(operands), step.attrs,
            absl::MakeSpan(values[i]), nullptr);
  }
  for (size_t i = 0; i < outputs_.size(); ++i) {
    outputs[i]->ForwardTo(MakeAvailableAsyncValueRef<TensorHandle>(
        value_of(outputs_[i]).CopyRef()));
  }
}

}  // namespace internal
}  // namespace asyncrt::lazy
