// Eager and graph-mode per-op overhead of the core runtime, next to
// libtorch's eager ops in the same run (when libtorch is installed).
//
//   BM_EagerAdd/asyncrt          CoreRuntime::Execute of a 1-element f32 add
//                                (name lookup, shape function, allocation,
//                                dispatch, result available)
//   BM_EagerAddPrepared/asyncrt  the same through a prepared CoreRuntimeOp
//   BM_EagerAdd/torch            at::add of two 1-element float tensors
//   BM_EagerAddPrepared/torch    at::add_out into an existing tensor
//   BM_GraphAdd100/asyncrt       a BEF function of 100 chained
//                                corert.executeop adds as the compiler
//                                emits it (-corert-fuse-op-sequences: one
//                                corert.execute_sequence), per op
//   BM_GraphAdd100/eager_loop    the same 100 adds as an eager loop, per op
//   BM_GraphAdd100/executeop     the same 100 corert.executeop unfused, as
//                                a TFRT program has them, per op
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"
#include "benchmark/benchmark.h"

#ifdef ASYNCRT_HAVE_TORCH
#include <ATen/ATen.h>
#endif

namespace asyncrt {
namespace {

constexpr int kChain = 100;

// The runtime an application embeds; the test ops (tfrt_test.add) and the
// corert kernels register themselves because this binary links them.
struct EagerFixture {
  EagerFixture() {
    RuntimeOptions options;
    // One worker: the host ops run inline on the calling thread anyway.
    options.work_queue = "mstd:1";
    embedded = *Runtime::Create(options);
    runtime = &embedded->core_runtime();
    cpu = runtime->GetOpHandler("cpu");
    exec_ctx.emplace(*embedded->CreateExecutionContext());
    float one = 1.0f;
    a = *runtime->MakeDenseTensorHandle<float>({1},
                                               absl::MakeConstSpan(&one, 1));
  }
  std::unique_ptr<Runtime> embedded;
  CoreRuntime* runtime = nullptr;
  OpHandler* cpu = nullptr;
  std::optional<ExecutionContext> exec_ctx;
  TensorHandle a;
};

void CheckAvailable(benchmark::State& state, const TensorHandle& result) {
  if (!result.GetAvailableTensor()) state.SkipWithError("result not ready");
}

void BM_EagerAdd_asyncrt(benchmark::State& state) {
  EagerFixture f;
  OpAttrsRef attrs;
  // Execute borrows its arguments, as at::add takes const references.
  TensorHandle args[2] = {f.a.CopyRef(), f.a.CopyRef()};
  for (auto _ : state) {
    TensorHandle result;
    f.runtime->Execute(*f.exec_ctx, "tfrt_test.add", f.cpu, args, attrs,
                       absl::MakeSpan(&result, 1), nullptr);
    CheckAvailable(state, result);
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EagerAddPrepared_asyncrt(benchmark::State& state) {
  EagerFixture f;
  CoreRuntimeOp add = *f.runtime->MakeOp("tfrt_test.add", f.cpu);
  OpAttrsRef attrs;
  TensorHandle args[2] = {f.a.CopyRef(), f.a.CopyRef()};
  for (auto _ : state) {
    TensorHandle result;
    add(*f.exec_ctx, args, attrs, absl::MakeSpan(&result, 1), nullptr);
    CheckAvailable(state, result);
  }
  state.SetItemsProcessed(state.iterations());
}

// The eager baseline for the graph benchmark: x = x + a, 100 times.
void BM_GraphAdd100_eager_loop(benchmark::State& state) {
  EagerFixture f;
  CoreRuntimeOp add = *f.runtime->MakeOp("tfrt_test.add", f.cpu);
  OpAttrsRef attrs;
  for (auto _ : state) {
    TensorHandle x = f.a.CopyRef();
    for (int i = 0; i < kChain; ++i) {
      TensorHandle args[2] = {std::move(x), f.a.CopyRef()};
      add(*f.exec_ctx, args, attrs, absl::MakeSpan(&x, 1), nullptr);
    }
    CheckAvailable(state, x);
  }
  state.SetItemsProcessed(state.iterations() * kChain);
}

// graph(%handler, %a) -> %x: 100 corert.executeop "tfrt_test.add"(%x, %a).
std::vector<uint8_t> BuildGraph() {
  bef::BefWriter w;
  uint32_t handler_type = w.AddType("!corert.ophandler");
  uint32_t handle_type = w.AddType("!corert.tensorhandle");
  uint32_t loc = w.AddLocation("bench.mlir", 1, 1);
  uint32_t executeop = w.AddKernelName("corert.executeop");
  uint32_t op_attrs_name = w.AddString("op_attrs");
  uint32_t op_func_attrs_name = w.AddString("op_func_attrs");
  uint32_t op_name_name = w.AddString("op_name");
  uint32_t empty = w.AddAggregateAttribute({});
  uint32_t add_name = w.AddStringAttribute("tfrt_test.add");
  uint32_t fn = w.DeclareFunction("graph", bef::FunctionKind::kBef,
                                  {handler_type, handle_type}, {handle_type});
  bef::FunctionBodySpec body;
  body.argument_registers = {0, 1};
  body.num_registers = 2;
  uint32_t x = 1;
  for (int i = 0; i < kChain; ++i) {
    bef::KernelSpec k;
    k.kernel_name = executeop;
    k.location = loc;
    k.operands = {0, x, 1};
    k.results = {body.num_registers};
    k.attributes = {{op_attrs_name, empty},
                    {op_func_attrs_name, empty},
                    {op_name_name, add_name}};
    body.kernels.push_back(k);
    x = body.num_registers++;
  }
  body.result_registers = {x};
  w.DefineFunction(fn, body);
  return *w.Finish();
}

void RunGraphAdd100(benchmark::State& state, std::vector<uint8_t> bef) {
  EagerFixture f;
  OpHandler* cpu = f.cpu;
  absl::StatusOr<RCReference<BefProgram>> loaded =
      f.embedded->LoadBef(std::move(bef));
  if (!loaded.ok()) {
    state.SkipWithError(std::string(loaded.status().message()).c_str());
    return;
  }
  const RCReference<BefProgram>& program = *loaded;
  const Function* graph = program->GetFunction("graph");
  auto handler = MakeAvailableAsyncValueRef<OpHandler*>(cpu);
  auto a = MakeAvailableAsyncValueRef<TensorHandle>(f.a.CopyRef());
  AsyncValue* args[] = {handler.GetAsyncValue(), a.GetAsyncValue()};
  std::vector<RCReference<AsyncValue>> results(1);
  for (auto _ : state) {
    graph->Execute(*f.exec_ctx, args, absl::MakeSpan(results));
    if (!results[0]->IsConcrete()) state.SkipWithError("graph failed");
    results[0].reset();
  }
  state.SetItemsProcessed(state.iterations() * kChain);
}

void BM_GraphAdd100_asyncrt(benchmark::State& state) {
#ifdef GRAPH_ADD100_BEF
  std::ifstream file(GRAPH_ADD100_BEF, std::ios::binary);
  std::vector<uint8_t> bef((std::istreambuf_iterator<char>(file)),
                           std::istreambuf_iterator<char>());
  RunGraphAdd100(state, std::move(bef));
#else
  state.SkipWithError("built without the compiler (no oneDNN)");
#endif
}

void BM_GraphAdd100_executeop(benchmark::State& state) {
  RunGraphAdd100(state, BuildGraph());
}

#ifdef ASYNCRT_HAVE_TORCH
void BM_EagerAdd_torch(benchmark::State& state) {
  at::Tensor a = at::ones({1}, at::kFloat);
  for (auto _ : state) {
    at::Tensor result = at::add(a, a);
    benchmark::DoNotOptimize(result.data_ptr());
  }
  state.SetItemsProcessed(state.iterations());
}

void BM_EagerAddPrepared_torch(benchmark::State& state) {
  at::Tensor a = at::ones({1}, at::kFloat);
  at::Tensor out = at::empty({1}, at::kFloat);
  for (auto _ : state) {
    at::add_out(out, a, a);
    benchmark::DoNotOptimize(out.data_ptr());
  }
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_EagerAdd_torch)->Name("BM_EagerAdd/torch");
BENCHMARK(BM_EagerAddPrepared_torch)->Name("BM_EagerAddPrepared/torch");
#endif

BENCHMARK(BM_EagerAdd_asyncrt)->Name("BM_EagerAdd/asyncrt");
BENCHMARK(BM_EagerAddPrepared_asyncrt)->Name("BM_EagerAddPrepared/asyncrt");
BENCHMARK(BM_GraphAdd100_asyncrt)->Name("BM_GraphAdd100/asyncrt");
BENCHMARK(BM_GraphAdd100_eager_loop)->Name("BM_GraphAdd100/eager_loop");
BENCHMARK(BM_GraphAdd100_executeop)->Name("BM_GraphAdd100/executeop");

}  // namespace
}  // namespace asyncrt

BENCHMARK_MAIN();
