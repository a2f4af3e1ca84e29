// Executor benchmarks: BEF programs built with BefWriter (no MLIR), run by
// the executor, side by side in the same run with
//   /floor   the same computation as a hand-written C++ chain of indirect
//            calls through the same kernels' calling convention (values in
//            async values): the lower bound for an interpreter that keeps
//            every value in an async value (unboxed kernels go below it);
//   /tbb     the same graph as a oneTBB flow::graph (the dataflow peer).
//
// Cases (per kernel or per call):
//   SerialChain100     100 dependent tfrt.add.i32 kernels in one function.
//   Independent100     100 independent kernels, each adding two constants.
//   FanOutJoin100      one value fanned out to 100 adds, joined by one
//                      100-input kernel.
//   CallOverhead       calling a function whose body is one kernel.
#include <atomic>
#include <cstdio>
#include <string>
#include <memory>
#include <optional>
#include <vector>

#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/tracing.h"
#include "asyncrt/runtime/runtime.h"
#include "benchmark/benchmark.h"

#ifdef ASYNCRT_HAVE_TBB
#include <oneapi/tbb/flow_graph.h>
#include <oneapi/tbb/global_control.h>
#endif

namespace asyncrt {
namespace {

constexpr int kNodes = 100;

int32_t SumAll(RemainingArguments args) {
  int32_t sum = 0;
  for (size_t i = 0; i < args.size(); ++i) sum += args[i]->get<int32_t>();
  return sum;
}

// The program: one function per case.
std::vector<uint8_t> BuildProgram() {
  bef::BefWriter w;
  uint32_t i32 = w.AddType("i32");
  uint32_t loc = w.AddLocation("bench.mlir", 1, 1);
  uint32_t add = w.AddKernelName("tfrt.add.i32");
  uint32_t constant = w.AddKernelName("tfrt.constant.i32");
  uint32_t call = w.AddKernelName("tfrt.call");
  uint32_t sum = w.AddKernelName("bench.sum");
  uint32_t value_name = w.AddString("value");
  uint32_t one_attr = w.AddI32Attribute(1);

  auto kernel = [&](uint32_t name, std::vector<uint32_t> operands,
                    uint32_t result) {
    bef::KernelSpec k;
    k.kernel_name = name;
    k.location = loc;
    k.operands = std::move(operands);
    k.results = {result};
    return k;
  };
  auto constant_kernel = [&](uint32_t result) {
    bef::KernelSpec k = kernel(constant, {}, result);
    k.attributes = {{value_name, one_attr}};
    return k;
  };

  uint32_t chain_fn =
      w.DeclareFunction("chain", bef::FunctionKind::kBef, {i32}, {i32});
  uint32_t independent_fn =
      w.DeclareFunction("independent", bef::FunctionKind::kBef, {i32}, {});
  uint32_t fan_fn =
      w.DeclareFunction("fan", bef::FunctionKind::kBef, {i32}, {i32});
  uint32_t one_fn =
      w.DeclareFunction("one", bef::FunctionKind::kBef, {i32}, {i32});
  uint32_t caller_fn =
      w.DeclareFunction("caller", bef::FunctionKind::kBef, {i32}, {i32});

  {  // chain(%x): x + x + ... (100 adds).
    bef::FunctionBodySpec body;
    body.argument_registers = {0};
    body.num_registers = 1;
    for (int i = 0; i < kNodes; ++i) {
      body.kernels.push_back(
          kernel(add, {body.num_registers - 1, 0}, body.num_registers));
      ++body.num_registers;
    }
    body.result_registers = {body.num_registers - 1};
    w.DefineFunction(chain_fn, body);
  }
  {  // independent(%x): 100 x adds of the argument with itself.
    bef::FunctionBodySpec body;
    body.argument_registers = {0};
    body.num_registers = 1;
    for (int i = 0; i < kNodes; ++i) {
      body.kernels.push_back(kernel(add, {0, 0}, body.num_registers++));
    }
    w.DefineFunction(independent_fn, body);
  }
  {  // fan(%x): 100 adds of x, then one 100-input sum.
    bef::FunctionBodySpec body;
    body.argument_registers = {0};
    body.num_registers = 1;
    std::vector<uint32_t> parts;
    for (int i = 0; i < kNodes; ++i) {
      parts.push_back(body.num_registers);
      body.kernels.push_back(kernel(add, {0, 0}, body.num_registers++));
    }
    body.kernels.push_back(kernel(sum, parts, body.num_registers));
    body.result_registers = {body.num_registers++};
    w.DefineFunction(fan_fn, body);
  }
  {  // one(%x) = x + x
    bef::FunctionBodySpec body;
    body.argument_registers = {0};
    body.num_registers = 2;
    body.kernels.push_back(kernel(add, {0, 0}, 1));
    body.result_registers = {1};
    w.DefineFunction(one_fn, body);
  }
  {  // caller(%x) = tfrt.call @one(%x)
    bef::FunctionBodySpec body;
    body.argument_registers = {0};
    body.num_registers = 2;
    bef::KernelSpec k = kernel(call, {0}, 1);
    k.functions = {one_fn};
    body.kernels.push_back(k);
    body.result_registers = {1};
    w.DefineFunction(caller_fn, body);
  }
  (void)constant_kernel;
  return *w.Finish();
}

// The runtime an application embeds, on the caller's thread ("s"): its
// linked tfrt kernels register themselves, plus the benchmark's own sum.
struct Fixture {
  Fixture() {
    RuntimeOptions options;
    options.work_queue = std::string("s");
    options.devices.clear();
    runtime = *Runtime::Create(options);
    (void)runtime->host().registry().AddKernel("bench.sum",
                                               ASYNCRT_KERNEL(SumAll));
    program = *runtime->LoadBef(BuildProgram());
    exec_ctx.emplace(*runtime->CreateExecutionContext());
  }
  std::unique_ptr<Runtime> runtime;
  RCReference<BefProgram> program;
  std::optional<ExecutionContext> exec_ctx;
};

void RunFunction(benchmark::State& state, const char* name, int items) {
  Fixture fixture;
  const Function* function = fixture.program->GetFunction(name);
  const ExecutionContext& exec_ctx = *fixture.exec_ctx;
  auto input = MakeAvailableAsyncValueRef<int32_t>(1);
  AsyncValue* args[] = {input.GetAsyncValue()};
  std::vector<RCReference<AsyncValue>> results(function->num_results());
  for (auto _ : state) {
    function->Execute(exec_ctx, args, absl::MakeSpan(results));
    benchmark::DoNotOptimize(results.data());
    for (auto& result : results) result.reset();
  }
  state.SetItemsProcessed(state.iterations() * items);
}

void BM_SerialChain100_asyncrt(benchmark::State& state) {
  RunFunction(state, "chain", kNodes);
}
// The cost of a Chrome trace (--trace_file): the serial chain with every
// kernel recorded, against the same chain untraced in this binary (the
// "peer" is AsyncRT without tracing). Fixed iterations bound the trace's
// memory (100 events per call).
void BM_SerialChain100Traced_asyncrt(benchmark::State& state) {
  std::string path = "/tmp/asyncrt_executor_benchmark_trace.json";
  if (!tracing::StartChromeTrace(path).ok()) {
    state.SkipWithError("cannot write the trace file");
    return;
  }
  RunFunction(state, "chain", kNodes);
  (void)tracing::StopChromeTrace();
  std::remove(path.c_str());
}
void BM_SerialChain100Traced_untraced(benchmark::State& state) {
  RunFunction(state, "chain", kNodes);
}

void BM_Independent100_asyncrt(benchmark::State& state) {
  RunFunction(state, "independent", kNodes);
}
void BM_FanOutJoin100_asyncrt(benchmark::State& state) {
  RunFunction(state, "fan", kNodes + 1);
}
void BM_CallOverhead_asyncrt(benchmark::State& state) {
  // Per call of a 1-kernel function through tfrt.call, minus nothing: the
  // figure includes the caller's own kernel and the callee's add.
  RunFunction(state, "caller", 1);
}

//===--- The floor: hand-written chains of indirect calls
//-------------------===//

using Kernel = RCReference<AsyncValue> (*)(AsyncValue* a, AsyncValue* b);

RCReference<AsyncValue> AddKernel(AsyncValue* a, AsyncValue* b) {
  return MakeAvailableAsyncValueRef<int32_t>(a->get<int32_t>() +
                                             b->get<int32_t>());
}

void BM_SerialChain100_floor(benchmark::State& state) {
  volatile Kernel kernel = &AddKernel;  // Keep the call indirect.
  auto input = MakeAvailableAsyncValueRef<int32_t>(1);
  for (auto _ : state) {
    RCReference<AsyncValue> acc = input;
    for (int i = 0; i < kNodes; ++i) {
      acc = kernel(acc.get(), input.GetAsyncValue());
    }
    benchmark::DoNotOptimize(acc.get());
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}

void BM_Independent100_floor(benchmark::State& state) {
  volatile Kernel kernel = &AddKernel;
  auto input = MakeAvailableAsyncValueRef<int32_t>(1);
  std::vector<RCReference<AsyncValue>> values(kNodes);
  for (auto _ : state) {
    for (int i = 0; i < kNodes; ++i) {
      values[i] = kernel(input.GetAsyncValue(), input.GetAsyncValue());
    }
    benchmark::DoNotOptimize(values.data());
    for (auto& value : values) value.reset();
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}

#ifdef ASYNCRT_HAVE_TBB
// The same graphs as flow::graph: continue_node chains with values passed
// through function_nodes of int.
void BM_SerialChain100_tbb(benchmark::State& state) {
  tbb::flow::graph graph;
  std::vector<std::unique_ptr<tbb::flow::function_node<int, int>>> nodes;
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(std::make_unique<tbb::flow::function_node<int, int>>(
        graph, tbb::flow::serial, [](int x) { return x + 1; }));
    if (i > 0) tbb::flow::make_edge(*nodes[i - 1], *nodes[i]);
  }
  for (auto _ : state) {
    nodes[0]->try_put(1);
    graph.wait_for_all();
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}

void BM_Independent100_tbb(benchmark::State& state) {
  tbb::flow::graph graph;
  tbb::flow::broadcast_node<int> source(graph);
  std::vector<std::unique_ptr<tbb::flow::function_node<int, int>>> nodes;
  for (int i = 0; i < kNodes; ++i) {
    nodes.push_back(std::make_unique<tbb::flow::function_node<int, int>>(
        graph, tbb::flow::serial, [](int x) { return x + x; }));
    tbb::flow::make_edge(source, *nodes[i]);
  }
  for (auto _ : state) {
    source.try_put(1);
    graph.wait_for_all();
  }
  state.SetItemsProcessed(state.iterations() * kNodes);
}
#endif

BENCHMARK(BM_SerialChain100_asyncrt)->Name("BM_SerialChain100/asyncrt");
BENCHMARK(BM_SerialChain100_floor)->Name("BM_SerialChain100/floor");
#ifdef ASYNCRT_HAVE_TBB
BENCHMARK(BM_SerialChain100_tbb)->Name("BM_SerialChain100/tbb");
#endif
BENCHMARK(BM_SerialChain100Traced_asyncrt)
    ->Name("BM_SerialChain100Traced/asyncrt")
    ->Iterations(2000);
BENCHMARK(BM_SerialChain100Traced_untraced)
    ->Name("BM_SerialChain100Traced/untraced")
    ->Iterations(2000);
BENCHMARK(BM_Independent100_asyncrt)->Name("BM_Independent100/asyncrt");
BENCHMARK(BM_Independent100_floor)->Name("BM_Independent100/floor");
#ifdef ASYNCRT_HAVE_TBB
BENCHMARK(BM_Independent100_tbb)->Name("BM_Independent100/tbb");
#endif
BENCHMARK(BM_FanOutJoin100_asyncrt)->Name("BM_FanOutJoin100/asyncrt");
BENCHMARK(BM_CallOverhead_asyncrt)->Name("BM_CallOverhead/asyncrt");

}  // namespace
}  // namespace asyncrt

BENCHMARK_MAIN();
