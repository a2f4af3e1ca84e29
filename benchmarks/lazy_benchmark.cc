// Lazy tensors against AsyncRT's eager ops in the same run, per iteration of
// a loop of small ops (after the first, compiling, iteration).
// benchmarks/lazy/torch_peer.py appends PyTorch's eager loop and the same
// loop traced and frozen by TorchScript to the JSON file.
//
//   BM_LazyChain50/asyncrt        50 elementwise ops on 1,024 floats,
//                                 recorded, Barrier, Await
//   BM_LazyChain50/asyncrt_eager  the same ops called eagerly
//   BM_LazyChain50/asyncrt_replay lazy without the trace compiler (each
//                                 trace replayed op by op)
//   BM_LazyMlp/asyncrt            3 layers (matmul with bias, GELU, layer
//                                 norm) of width 256 at batch 1
//   BM_LazyMlp/asyncrt_eager      the same eagerly
//   BM_LazyMlp/asyncrt_replay     lazy without the trace compiler
//   BM_LazyCacheHit100            a 100-op trace found in the cache: the
//                                 `hit_us` counter is the walk of the
//                                 recorded graph into its key and the lookup
#include <cstring>
#include <initializer_list>
#include <memory>
#include <random>
#include <vector>

#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/lazy/lazy_tensor.h"
#include "asyncrt/runtime/runtime.h"
#include "benchmark/benchmark.h"

namespace asyncrt {
namespace {

using lazy::LazyContext;
using lazy::LazyTensor;

constexpr int kChainOps = 50;
constexpr int kChainElements = 1024;
constexpr int kMlpWidth = 256;
constexpr int kMlpLayers = 3;

std::unique_ptr<Runtime> MakeRuntime() {
  RuntimeOptions options;
  // Ops run on the calling thread, as asyncrt-run's latency mode.
  options.work_queue = "s";
  return *Runtime::Create(options);
}

DenseHostTensor Random(Runtime& runtime, std::vector<int64_t> shape,
                       uint32_t seed) {
  std::optional<DenseHostTensor> tensor = DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF32, shape), *runtime.host().allocator());
  std::mt19937 random(seed);
  std::uniform_real_distribution<float> uniform(-0.5f, 0.5f);
  for (float& value : tensor->elements<float>()) value = uniform(random);
  return *std::move(tensor);
}

// One op of the chain: (name, whether it reads the constant operand).
struct ChainOp {
  const char* name;
  bool binary;
};
constexpr ChainOp kChain[] = {{"nn.add", true},
                              {"nn.mul", true},
                              {"nn.relu", false},
                              {"nn.sub", true},
                              {"nn.neg", false}};

// Eager calls through the core runtime, by name (what an eager user writes).
struct Eager {
  explicit Eager(Runtime& runtime)
      : core(runtime.core_runtime()),
        cpu(core.GetOpHandler("cpu")),
        exec_ctx(*runtime.CreateExecutionContext()) {}
  // The arguments are borrowed (copied handles, on the stack).
  TensorHandle Call(const char* op, std::initializer_list<TensorHandle*> args,
                    const OpAttrsRef& attrs = OpAttrsRef()) {
    TensorHandle borrowed[4];
    size_t count = 0;
    for (TensorHandle* arg : args) borrowed[count++] = arg->CopyRef();
    TensorHandle result;
    core.Execute(exec_ctx, op, cpu, absl::MakeSpan(borrowed, count), attrs,
                 absl::MakeSpan(&result, 1), nullptr);
    return result;
  }
  CoreRuntime& core;
  OpHandler* cpu;
  ExecutionContext exec_ctx;
};

void BM_LazyChain50_asyncrt_eager(benchmark::State& state) {
  auto runtime = MakeRuntime();
  Eager eager(*runtime);
  TensorHandle x =
      eager.core.MakeTensorHandle(Random(*runtime, {kChainElements}, 1));
  TensorHandle c =
      eager.core.MakeTensorHandle(Random(*runtime, {kChainElements}, 2));
  for (auto _ : state) {
    TensorHandle h = x.CopyRef();
    for (int i = 0; i < kChainOps; ++i) {
      const ChainOp& op = kChain[i % std::size(kChain)];
      h = op.binary ? eager.Call(op.name, {&h, &c}) : eager.Call(op.name, {&h});
    }
    if (eager.core.Await(h) == nullptr) state.SkipWithError("eager failed");
  }
}

// `compile`: false replays the trace op by op (no trace compiler, as in a
// runtime-only build): what compiling (fusion, the buffer plan) adds.
void LazyChain50(benchmark::State& state, bool compile) {
  auto runtime = MakeRuntime();
  auto context =
      *LazyContext::Create(*runtime, lazy::LazyOptions{.compile = compile});
  LazyTensor x = *context->FromHost(Random(*runtime, {kChainElements}, 1));
  LazyTensor c = *context->FromHost(Random(*runtime, {kChainElements}, 2));
  for (auto _ : state) {
    LazyTensor h = x;
    for (int i = 0; i < kChainOps; ++i) {
      const ChainOp& op = kChain[i % std::size(kChain)];
      h = op.binary ? *context->Call(op.name, {h, c})
                    : *context->Call(op.name, {h});
    }
    if (!context->Barrier().ok() || !h.Await().ok()) {
      state.SkipWithError("lazy failed");
    }
  }
  state.counters["compilations"] =
      static_cast<double>(context->cache_stats().misses);
}

struct MlpWeights {
  std::vector<DenseHostTensor> weights, biases, scales, shifts;
};

MlpWeights MakeMlp(Runtime& runtime) {
  MlpWeights mlp;
  for (int layer = 0; layer < kMlpLayers; ++layer) {
    mlp.weights.push_back(Random(runtime, {kMlpWidth, kMlpWidth}, 10 + layer));
    mlp.biases.push_back(Random(runtime, {kMlpWidth}, 20 + layer));
    mlp.scales.push_back(Random(runtime, {kMlpWidth}, 30 + layer));
    mlp.shifts.push_back(Random(runtime, {kMlpWidth}, 40 + layer));
  }
  return mlp;
}

OpAttrsRef LayerNormAttrs() {
  OpAttrs attrs;
  attrs.Set<int64_t>("axis", -1);
  return attrs.Freeze();
}

void BM_LazyMlp_asyncrt_eager(benchmark::State& state) {
  auto runtime = MakeRuntime();
  Eager eager(*runtime);
  MlpWeights mlp = MakeMlp(*runtime);
  std::vector<TensorHandle> w, b, g, s;
  for (int layer = 0; layer < kMlpLayers; ++layer) {
    w.push_back(eager.core.MakeTensorHandle(std::move(mlp.weights[layer])));
    b.push_back(eager.core.MakeTensorHandle(std::move(mlp.biases[layer])));
    g.push_back(eager.core.MakeTensorHandle(std::move(mlp.scales[layer])));
    s.push_back(eager.core.MakeTensorHandle(std::move(mlp.shifts[layer])));
  }
  TensorHandle x =
      eager.core.MakeTensorHandle(Random(*runtime, {1, kMlpWidth}, 3));
  OpAttrsRef norm = LayerNormAttrs();
  for (auto _ : state) {
    TensorHandle h = x.CopyRef();
    for (int layer = 0; layer < kMlpLayers; ++layer) {
      h = eager.Call("nn.matmul", {&h, &w[layer], &b[layer]});
      h = eager.Call("nn.gelu", {&h});
      h = eager.Call("nn.layer_normalization", {&h, &g[layer], &s[layer]},
                     norm);
    }
    if (eager.core.Await(h) == nullptr) state.SkipWithError("eager failed");
  }
}

void LazyMlp(benchmark::State& state, bool compile) {
  auto runtime = MakeRuntime();
  auto context =
      *LazyContext::Create(*runtime, lazy::LazyOptions{.compile = compile});
  MlpWeights mlp = MakeMlp(*runtime);
  std::vector<LazyTensor> w, b, g, s;
  for (int layer = 0; layer < kMlpLayers; ++layer) {
    w.push_back(*context->FromHost(std::move(mlp.weights[layer])));
    b.push_back(*context->FromHost(std::move(mlp.biases[layer])));
    g.push_back(*context->FromHost(std::move(mlp.scales[layer])));
    s.push_back(*context->FromHost(std::move(mlp.shifts[layer])));
  }
  LazyTensor x = *context->FromHost(Random(*runtime, {1, kMlpWidth}, 3));
  OpAttrs norm;
  norm.Set<int64_t>("axis", -1);
  for (auto _ : state) {
    LazyTensor h = x;
    for (int layer = 0; layer < kMlpLayers; ++layer) {
      h = *context->Call("nn.matmul", {h, w[layer], b[layer]});
      h = *context->Call("nn.gelu", {h});
      h = *context->Call("nn.layer_normalization", {h, g[layer], s[layer]},
                         norm);
    }
    if (!context->Barrier().ok() || !h.Await().ok()) {
      state.SkipWithError("lazy failed");
    }
  }
  state.counters["compilations"] =
      static_cast<double>(context->cache_stats().misses);
}

// 100 ops on one-element tensors, so that finding the trace is most of an
// iteration; the counter isolates it.
void BM_LazyCacheHit100(benchmark::State& state) {
  auto runtime = MakeRuntime();
  auto context = *LazyContext::Create(*runtime);
  LazyTensor x = *context->FromHost(Random(*runtime, {1}, 1));
  for (auto _ : state) {
    LazyTensor h = x;
    for (int i = 0; i < 100; ++i) h = *context->Call("nn.add", {h, x});
    if (!context->Barrier().ok()) state.SkipWithError("lazy failed");
  }
  lazy::LazyCacheStats stats = context->cache_stats();
  if (stats.hits > 0) {
    state.counters["hit_us"] =
        absl::ToDoubleMicroseconds(stats.hit_time) / stats.hits;
  }
}

void BM_LazyChain50_asyncrt(benchmark::State& state) {
  LazyChain50(state, true);
}
void BM_LazyChain50_asyncrt_replay(benchmark::State& state) {
  LazyChain50(state, false);
}
void BM_LazyMlp_asyncrt(benchmark::State& state) { LazyMlp(state, true); }
void BM_LazyMlp_asyncrt_replay(benchmark::State& state) {
  LazyMlp(state, false);
}

BENCHMARK(BM_LazyChain50_asyncrt)->Name("BM_LazyChain50/asyncrt");
BENCHMARK(BM_LazyChain50_asyncrt_replay)
    ->Name("BM_LazyChain50/asyncrt_replay");
BENCHMARK(BM_LazyChain50_asyncrt_eager)->Name("BM_LazyChain50/asyncrt_eager");
BENCHMARK(BM_LazyMlp_asyncrt)->Name("BM_LazyMlp/asyncrt");
BENCHMARK(BM_LazyMlp_asyncrt_replay)->Name("BM_LazyMlp/asyncrt_replay");
BENCHMARK(BM_LazyMlp_asyncrt_eager)->Name("BM_LazyMlp/asyncrt_eager");
BENCHMARK(BM_LazyCacheHit100);

}  // namespace
}  // namespace asyncrt

BENCHMARK_MAIN();
