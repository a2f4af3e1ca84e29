// Kernels of the tfrt dialect's control flow: call, if, cond, case,
// repeat.i32 and while. Bodies are BEF functions passed as function
// operands; their results may still be unavailable when the body returns,
// so loops continue from the continuation of the previous iteration.
#include <algorithm>
#include <deque>
#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/resource_context.h"
#include "asyncrt/kernels/tfrt_kernels.h"

namespace asyncrt {
namespace {

using Values = std::vector<RCReference<AsyncValue>>;

// Calls `function` with borrowed `arguments`; returns its results (+1).
Values CallFunction(const Function& function, const ExecutionContext& exec_ctx,
                    absl::Span<AsyncValue* const> arguments) {
  Values results(function.num_results());
  function.Execute(exec_ctx, arguments, absl::MakeSpan(results));
  return results;
}

std::vector<AsyncValue*> Raw(const Values& values) {
  std::vector<AsyncValue*> raw;
  raw.reserve(values.size());
  for (const auto& value : values) raw.push_back(value.get());
  return raw;
}

void SetResults(RemainingResults results, Values values) {
  for (size_t i = 0; i < values.size() && i < results.size(); ++i) {
    results.Set(i, std::move(values[i]));
  }
}

void SetFrameResults(AsyncKernelFrame* frame, Values values) {
  for (size_t i = 0; i < values.size() && i < frame->GetNumResults(); ++i) {
    frame->SetResultAt(i, std::move(values[i]));
  }
}

// Whether the frame has the `count` function operands a kernel needs; if not
// its results are an error.
[[gnu::noinline, gnu::cold]] bool ReportMissingFunctions(
    AsyncKernelFrame* frame, size_t count) {
  frame->ReportError(absl::InvalidArgumentError(
      absl::StrCat("kernel '", frame->kernel_name(), "' needs ", count,
                   " function operand", count == 1 ? "" : "s", ", has ",
                   frame->GetNumFunctions())));
  return false;
}

// Checked inline: tfrt.call pays it on every call.
inline bool HasFunctions(AsyncKernelFrame* frame, size_t count) {
  return ABSL_PREDICT_TRUE(frame->GetNumFunctions() >= count) ||
         ReportMissingFunctions(frame, count);
}

// Waits for `selector` (a value the kernel must know, such as a condition or
// a trip count) without waiting for anything else, then runs `body` with it.
// Until then the kernel's results are placeholders forwarded to `body`'s
// results; an error selector becomes every result.
template <typename Body>
void AfterSelector(AsyncKernelFrame* frame, AsyncValue* selector,
                   Body body) {
  if (selector->IsAvailable()) {
    if (selector->IsError()) {
      for (size_t i = 0; i < frame->GetNumResults(); ++i) {
        frame->SetResultAt(i, FormRef(selector));
      }
      return;
    }
    SetFrameResults(frame, body(selector));
    return;
  }
  std::vector<RCReference<IndirectAsyncValue>> outputs;
  for (size_t i = 0; i < frame->GetNumResults(); ++i) {
    outputs.push_back(MakeIndirectAsyncValue());
    frame->SetResultAt(i, outputs.back());
  }
  selector->AndThen([selector = FormRef(selector), outputs = std::move(outputs),
                     body = std::move(body)]() mutable {
    if (selector->IsError()) {
      for (auto& output : outputs) output->ForwardTo(selector);
      return;
    }
    Values values = body(selector.get());
    for (size_t i = 0; i < outputs.size(); ++i) {
      outputs[i]->ForwardTo(
          i < values.size()
              ? std::move(values[i])
              : MakeErrorAsyncValueRef("function returned too few results"));
    }
  });
}

// Borrowed arguments, kept alive for a kernel that continues later.
Values Keep(absl::Span<AsyncValue* const> arguments) {
  Values kept;
  kept.reserve(arguments.size());
  for (AsyncValue* argument : arguments) kept.push_back(FormRef(argument));
  return kept;
}

// tfrt.call @f(%args...): non-strict. The callee starts at once with
// whatever arguments exist; its kernels wait on the ones they use.
void Call(AsyncKernelFrame* frame) {
  if (!HasFunctions(frame, 1)) return;
  // The callee's results go straight to the frame (a call of the wrong
  // arity makes them errors).
  frame->GetFunctionAt(0)->Execute(frame->GetExecutionContext(),
                                   frame->GetArguments(), frame->GetResults());
}

// tfrt.if %cond, %args... : then and else bodies as functions 0 and 1.
// Non-strict: waits for the condition only.
void If(AsyncKernelFrame* frame) {
  if (!HasFunctions(frame, 2)) return;
  if (frame->GetNumArgs() == 0) {
    frame->ReportError(absl::InvalidArgumentError("tfrt.if needs a condition"));
    return;
  }
  AfterSelector(
      frame, frame->GetArgAt(0),
      [then_branch = frame->GetFunctionAt(0),
       else_branch = frame->GetFunctionAt(1),
       exec_ctx = ExecutionContext(frame->GetExecutionContext()),
       args = Keep(frame->GetArguments().subspan(1))](AsyncValue* condition) {
        return CallFunction(
            condition->get<bool>() ? *then_branch : *else_branch, exec_ctx,
            Raw(args));
      });
}

// tfrt.case %index [branches...] (%args): out-of-range picks the last.
void Case(int32_t index, RemainingArguments args, RemainingResults results,
          RemainingFunctions branches, const ExecutionContext& exec_ctx) {
  size_t pick = index < 0 || static_cast<size_t>(index) >= branches.size()
                    ? branches.size() - 1
                    : static_cast<size_t>(index);
  SetResults(results, CallFunction(*branches[pick], exec_ctx, args.values()));
}

// One loop, shared by its iterations' continuations.
struct Loop {
  Loop(const Function* body, const ExecutionContext& exec_ctx)
      : body(body), exec_ctx(exec_ctx) {}
  const Function* body;
  ExecutionContext exec_ctx;
  std::vector<RCReference<IndirectAsyncValue>> outputs;
  // tfrt.while: how many iterations may run at once, and the loop values of
  // those still running (oldest first). Only one continuation of a loop is
  // ever pending, so these need no lock.
  size_t parallel_iterations = 1;
  std::deque<Values> in_flight;
};

void ForwardAll(Loop& loop, const Values& values) {
  for (size_t i = 0; i < loop.outputs.size(); ++i) {
    loop.outputs[i]->ForwardTo(values[i]);
  }
}

void ForwardError(Loop& loop, AsyncValue* error) {
  for (auto& output : loop.outputs) output->ForwardTo(FormRef(error));
}

std::vector<AsyncValue*> Unavailable(const Values& values) {
  std::vector<AsyncValue*> pending;
  for (const auto& value : values) {
    if (value->IsUnavailable()) pending.push_back(value.get());
  }
  return pending;
}

// Sets up a loop kernel: its results are indirect values forwarded when the
// loop ends; returns the loop and its initial state (the arguments).
std::shared_ptr<Loop> StartLoop(RemainingArguments args,
                                RemainingResults results, const Function* body,
                                const ExecutionContext& exec_ctx,
                                Values& state) {
  auto loop = std::make_shared<Loop>(body, exec_ctx);
  for (size_t i = 0; i < args.size(); ++i) state.push_back(FormRef(args[i]));
  for (size_t i = 0; i < results.size(); ++i) {
    loop->outputs.push_back(MakeIndirectAsyncValue());
    results.Set(i, loop->outputs.back());
  }
  return loop;
}

AsyncValue* FirstError(const Values& values) {
  for (const auto& value : values) {
    if (value->IsError()) return value.get();
  }
  return nullptr;
}

// Runs the remaining `count` iterations of a repeat loop on `state`.
void RepeatFrom(std::shared_ptr<Loop> loop, int32_t count, Values state) {
  while (count > 0) {
    if (AsyncValue* cancelled =
            loop->exec_ctx.request_context()->GetCancelAsyncValue()) {
      ForwardError(*loop, cancelled);
      return;
    }
    Values next = CallFunction(*loop->body, loop->exec_ctx, Raw(state));
    --count;
    std::vector<AsyncValue*> pending = Unavailable(next);
    if (!pending.empty()) {
      // Continue once this iteration's values exist, on the thread that
      // publishes the last of them.
      RunWhenReady(absl::MakeConstSpan(pending),
                   [loop, count, next = std::move(next)]() mutable {
                     RepeatFrom(std::move(loop), count, std::move(next));
                   });
      return;
    }
    state = std::move(next);
  }
  ForwardAll(*loop, state);
}

// tfrt.repeat.i32 %count, %args...: non-strict; waits for the count only.
void RepeatI32(AsyncKernelFrame* frame) {
  if (!HasFunctions(frame, 1)) return;
  if (frame->GetNumArgs() == 0) {
    frame->ReportError(
        absl::InvalidArgumentError("tfrt.repeat.i32 needs a count"));
    return;
  }
  AfterSelector(
      frame, frame->GetArgAt(0),
      [body = frame->GetFunctionAt(0),
       exec_ctx = ExecutionContext(frame->GetExecutionContext()),
       state = Keep(frame->GetArguments().subspan(1)),
       num_results = frame->GetNumResults()](AsyncValue* count) mutable {
        auto loop = std::make_shared<Loop>(body, exec_ctx);
        Values outputs;
        for (size_t i = 0; i < num_results; ++i) {
          loop->outputs.push_back(MakeIndirectAsyncValue());
          outputs.push_back(loop->outputs.back());
        }
        RepeatFrom(std::move(loop), count->get<int32_t>(), std::move(state));
        return outputs;
      });
}

// tfrt.while: the body returns the loop values followed by the i1 that
// decides whether to run it again. The next iteration starts as soon as that
// i1 is known, with loop values that may still be computing, so up to
// `parallel_iterations` iterations overlap; before starting one more, the
// oldest running iteration must have produced all its values.
void WhileFrom(std::shared_ptr<Loop> loop, bool condition, Values state) {
  while (condition) {
    if (AsyncValue* cancelled =
            loop->exec_ctx.request_context()->GetCancelAsyncValue()) {
      ForwardError(*loop, cancelled);
      return;
    }
    if (loop->in_flight.size() >= loop->parallel_iterations) {
      std::vector<AsyncValue*> pending = Unavailable(loop->in_flight.front());
      if (!pending.empty()) {
        RunWhenReady(absl::MakeConstSpan(pending),
                     [loop, state = std::move(state)]() mutable {
                       WhileFrom(std::move(loop), true, std::move(state));
                     });
        return;
      }
      loop->in_flight.pop_front();
      continue;
    }
    Values next = CallFunction(*loop->body, loop->exec_ctx, Raw(state));
    RCReference<AsyncValue> again = std::move(next.back());
    next.pop_back();
    loop->in_flight.push_back(next);
    if (again->IsUnavailable()) {
      AsyncValue* raw = again.get();
      raw->AndThen([loop, again = std::move(again),
                    next = std::move(next)]() mutable {
        if (again->IsError()) {
          ForwardError(*loop, again.get());
          return;
        }
        WhileFrom(std::move(loop), again->get<bool>(), std::move(next));
      });
      return;
    }
    if (again->IsError()) {
      ForwardError(*loop, again.get());
      return;
    }
    condition = again->get<bool>();
    state = std::move(next);
  }
  ForwardAll(*loop, state);
}

void While(bool condition, RemainingArguments args, RemainingResults results,
           const Function* body, AsyncKernelFrame* frame,
           const ExecutionContext& exec_ctx) {
  Values state;
  auto loop = StartLoop(args, results, body, exec_ctx, state);
  if (const bef::Attribute* parallel =
          frame->GetAttribute("parallel_iterations")) {
    if (parallel->IsScalar() && static_cast<int64_t>(parallel->bits) > 1) {
      loop->parallel_iterations =
          static_cast<size_t>(std::min<uint64_t>(parallel->bits, 1 << 16));
    }
  }
  WhileFrom(std::move(loop), condition, std::move(state));
}

// tfrt.once @f(args): the first call in a resource context runs @f; every
// call gets its results. The results are created as indirect values before
// the function runs, so a concurrent or reentrant call never waits on a
// lock.
void Once(RemainingArguments args, RemainingResults results,
          const Function* function, const ExecutionContext& exec_ctx) {
  ResourceContext* resources = exec_ctx.resource_context();
  if (resources == nullptr) {
    SetResults(results, CallFunction(*function, exec_ctx, args.values()));
    return;
  }
  struct OnceValues {
    std::mutex mutex;
    bool started = false;                                 // Guarded.
    std::vector<RCReference<IndirectAsyncValue>> values;  // Guarded.
  };
  auto cache = resources->GetOrCreateResource<OnceValues>(
      absl::StrCat("tfrt.once:", reinterpret_cast<uintptr_t>(function)));
  if (!cache.ok()) {
    for (size_t i = 0; i < results.size(); ++i) {
      results.Set(i, EmitErrorAsync(exec_ctx, cache.status()));
    }
    return;
  }
  bool first = false;
  std::vector<RCReference<IndirectAsyncValue>> values;
  {
    std::lock_guard<std::mutex> lock((*cache)->mutex);
    if (!(*cache)->started) {
      (*cache)->started = true;
      first = true;
      for (size_t i = 0; i < function->num_results(); ++i) {
        (*cache)->values.push_back(MakeIndirectAsyncValue());
      }
    }
    values = (*cache)->values;
  }
  for (size_t i = 0; i < results.size() && i < values.size(); ++i) {
    results.Set(i, values[i]);
  }
  if (first) {
    Values computed = CallFunction(*function, exec_ctx, args.values());
    for (size_t i = 0; i < values.size(); ++i) {
      values[i]->ForwardTo(std::move(computed[i]));
    }
  }
}

// tfrt.parallel_for.i32 / parallel_call.i32: runs the body on blocks of
// [start, end) of `block_size` elements, the first on this thread and the
// others as work-queue tasks. The body receives (block start, block end,
// args...). The result chain is available once every block's results are,
// or an error if any block failed.
AsyncValueRef<Chain> ParallelFor(int32_t start, int32_t end, int32_t block_size,
                                 RemainingArguments args, const Function* body,
                                 const ExecutionContext& exec_ctx) {
  if (block_size <= 0) {
    return AsyncValueRef<Chain>(EmitErrorAsync(
        exec_ctx, absl::InvalidArgumentError(absl::StrCat(
                      "block size must be positive, got ", block_size))));
  }
  if (end <= start) return GetReadyChain();
  struct Blocks {
    std::atomic<int64_t> remaining;
    std::mutex mutex;
    RCReference<AsyncValue> error;  // Guarded by mutex.
    AsyncValueRef<Chain> done = MakeUnconstructedAsyncValueRef<Chain>();
    void Finish() {
      if (remaining.fetch_sub(1, std::memory_order_acq_rel) != 1) return;
      if (error) {
        done.SetError(error->GetError());
      } else {
        done.emplace();
      }
    }
  };
  const int64_t total = int64_t{end} - start;
  const int64_t num_blocks = (total + block_size - 1) / block_size;
  auto blocks = std::make_shared<Blocks>();
  blocks->remaining.store(num_blocks, std::memory_order_relaxed);
  std::vector<RCReference<AsyncValue>> shared_args;
  for (size_t i = 0; i < args.size(); ++i)
    shared_args.push_back(FormRef(args[i]));
  auto run_block = [blocks, body, exec_ctx, shared_args](int32_t begin,
                                                         int32_t finish) {
    auto begin_value = MakeAvailableAsyncValueRef<int32_t>(begin);
    auto end_value = MakeAvailableAsyncValueRef<int32_t>(finish);
    std::vector<AsyncValue*> body_args = {begin_value.GetAsyncValue(),
                                          end_value.GetAsyncValue()};
    for (const auto& arg : shared_args) body_args.push_back(arg.get());
    Values results = CallFunction(*body, exec_ctx, body_args);
    std::vector<AsyncValue*> pending = Raw(results);
    RunWhenReady(absl::MakeConstSpan(pending),
                 [blocks, results = std::move(results)] {
                   if (AsyncValue* error = FirstError(results)) {
                     std::lock_guard<std::mutex> lock(blocks->mutex);
                     if (!blocks->error) blocks->error = FormRef(error);
                   }
                   blocks->Finish();
                 });
  };
  AsyncValueRef<Chain> done = blocks->done;
  for (int64_t b = 1; b < num_blocks; ++b) {
    int32_t begin = static_cast<int32_t>(start + b * block_size);
    int32_t finish = static_cast<int32_t>(
        std::min<int64_t>(end, begin + int64_t{block_size}));
    EnqueueWork(exec_ctx.host(),
                [run_block, begin, finish] { run_block(begin, finish); });
  }
  run_block(start, static_cast<int32_t>(
                       std::min<int64_t>(end, start + int64_t{block_size})));
  return done;
}

}  // namespace

void RegisterControlFlowKernels(KernelRegistry& registry) {
  auto add = [&](absl::string_view name, KernelDefinition kernel) {
    MustAddKernel(registry, name, kernel);
  };
  // Non-strict: they start before their operands are available and pass
  // errors on to their bodies (see KernelStrictness).
  auto add_non_strict = [&](absl::string_view name,
                            AsyncKernelImplementation kernel) {
    MustAddKernel(registry, name, kernel, KernelStrictness::kNonStrict);
  };
  add_non_strict("tfrt.call", Call);
  add_non_strict("tfrt.if", If);
  add_non_strict("tfrt.cond", If);
  add_non_strict("tfrt.repeat.i32", RepeatI32);
  add("tfrt.case", ASYNCRT_KERNEL(Case));
  add("tfrt.while", ASYNCRT_KERNEL(While));
  add("tfrt.once", ASYNCRT_KERNEL(Once));
  add("tfrt.parallel_for.i32", ASYNCRT_KERNEL(ParallelFor));
  add("tfrt.parallel_call.i32", ASYNCRT_KERNEL(ParallelFor));
}

}  // namespace asyncrt
