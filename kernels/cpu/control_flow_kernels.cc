// Kernels of the tfrt dialect's control flow: call, if, cond, case,
// repeat.i32 and while. Bodies are BEF functions passed as function
// operands; their results may still be unavailable when the body returns,
// so loops continue from the continuation of the previous iteration.
#include <memory>
#include <mutex>
#include <vector>

#include "asyncrt/bef_executor/kernel_utils.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/resource_context.h"
#include "asyncrt/kernels/cpu_kernels.h"

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

void Call(RemainingArguments args, RemainingResults results,
          const Function* callee, const ExecutionContext& exec_ctx) {
  SetResults(results, CallFunction(*callee, exec_ctx, args.values()));
}

// tfrt.if %cond, %args... : then and else bodies as functions 0 and 1.
void If(bool condition, RemainingArguments args, RemainingResults results,
        RemainingFunctions branches, const ExecutionContext& exec_ctx) {
  const Function* branch = branches[condition ? 0 : 1];
  SetResults(results, CallFunction(*branch, exec_ctx, args.values()));
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
  const Function* body;
  ExecutionContext exec_ctx;
  std::vector<RCReference<IndirectAsyncValue>> outputs;
};

void ForwardAll(Loop& loop, const Values& values) {
  for (size_t i = 0; i < loop.outputs.size(); ++i) {
    loop.outputs[i]->ForwardTo(values[i]);
  }
}

void ForwardError(Loop& loop, AsyncValue* error) {
  for (auto& output : loop.outputs) output->ForwardTo(FormRef(error));
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
    std::vector<AsyncValue*> pending;
    for (const auto& value : next) {
      if (value->IsUnavailable()) pending.push_back(value.get());
    }
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

void RepeatI32(int32_t count, RemainingArguments args, RemainingResults results,
               const Function* body, const ExecutionContext& exec_ctx) {
  auto loop = std::make_shared<Loop>(Loop{body, exec_ctx, {}});
  Values state;
  for (size_t i = 0; i < args.size(); ++i) state.push_back(FormRef(args[i]));
  for (size_t i = 0; i < results.size(); ++i) {
    loop->outputs.push_back(MakeIndirectAsyncValue());
    results.Set(i, loop->outputs.back());
  }
  RepeatFrom(std::move(loop), count, std::move(state));
}

// tfrt.while: the body returns the loop values followed by the i1 that
// decides whether to run it again.
void WhileFrom(std::shared_ptr<Loop> loop, bool condition, Values state) {
  while (condition) {
    if (AsyncValue* cancelled =
            loop->exec_ctx.request_context()->GetCancelAsyncValue()) {
      ForwardError(*loop, cancelled);
      return;
    }
    Values next = CallFunction(*loop->body, loop->exec_ctx, Raw(state));
    std::vector<AsyncValue*> pending;
    for (const auto& value : next) {
      if (value->IsUnavailable()) pending.push_back(value.get());
    }
    if (!pending.empty()) {
      RunWhenReady(absl::MakeConstSpan(pending),
                   [loop, next = std::move(next)]() mutable {
                     if (AsyncValue* error = FirstError(next)) {
                       ForwardError(*loop, error);
                       return;
                     }
                     bool again = next.back()->get<bool>();
                     next.pop_back();
                     WhileFrom(std::move(loop), again, std::move(next));
                   });
      return;
    }
    if (AsyncValue* error = FirstError(next)) {
      ForwardError(*loop, error);
      return;
    }
    condition = next.back()->get<bool>();
    next.pop_back();
    state = std::move(next);
  }
  ForwardAll(*loop, state);
}

void While(bool condition, RemainingArguments args, RemainingResults results,
           const Function* body, const ExecutionContext& exec_ctx) {
  auto loop = std::make_shared<Loop>(Loop{body, exec_ctx, {}});
  Values state;
  for (size_t i = 0; i < args.size(); ++i) state.push_back(FormRef(args[i]));
  for (size_t i = 0; i < results.size(); ++i) {
    loop->outputs.push_back(MakeIndirectAsyncValue());
    results.Set(i, loop->outputs.back());
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
  auto cache = resources->GetOrCreateResource<OnceValues>(absl::StrCat(
      "tfrt.once:", reinterpret_cast<uintptr_t>(function)));
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

}  // namespace

void RegisterControlFlowKernels(KernelRegistry& registry) {
  auto add = [&](absl::string_view name, AsyncKernelImplementation kernel) {
    absl::Status status = registry.AddKernel(name, kernel);
    (void)status;
  };
  add("tfrt.call", ASYNCRT_KERNEL(Call));
  add("tfrt.if", ASYNCRT_KERNEL(If));
  add("tfrt.cond", ASYNCRT_KERNEL(If));
  add("tfrt.case", ASYNCRT_KERNEL(Case));
  add("tfrt.repeat.i32", ASYNCRT_KERNEL(RepeatI32));
  add("tfrt.while", ASYNCRT_KERNEL(While));
  add("tfrt.once", ASYNCRT_KERNEL(Once));
}

}  // namespace asyncrt
