// What a device plug-in costs, next to what the same work costs without it,
// in the same run (the example simulated accelerator, loaded through the C
// API, whose stream is a thread of its own):
//
//   BM_PluginRelu/asyncrt      nn.relu of 16 f32 on SIM:0 (dispatch through
//                              the C boundary, output allocation in the
//                              plug-in's memory, the kernel enqueued on its
//                              stream), per op, in chains of 100 whose end
//                              is copied back to the host
//   BM_PluginRelu/cpu_device   the same chain on the built-in CPU device
//   BM_PluginDispatch/asyncrt  a copying op of 16 f32 on a synchronous
//                              plug-in's device, per op, in chains of 1,000
//                              (it runs as enqueued, no stream thread, its
//                              memory from the C heap): the runtime's and the C
//                              boundary's cost per op, what an eager GPU op
//                              adds to its kernel launch
//   BM_PluginDispatch/cpu_device  nn.identity, the same chain on the CPU
//   BM_RoundTrip/asyncrt/N     N bytes host -> SIM:0 -> host, asynchronous
//                              copies on the plug-in's stream, awaited
//   BM_RoundTrip/memcpy/N      two memcpy of the same N bytes
#include <cstring>
#include <memory>
#include <optional>
#include <vector>

#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/runtime/runtime.h"
#include "benchmark/benchmark.h"

namespace asyncrt {
namespace {

constexpr int kChain = 100;

struct PluginFixture {
  explicit PluginFixture(const char* plugin = SIM_PLUGIN,
                         const char* device = "SIM:0") {
    RuntimeOptions options;
    options.work_queue = "mstd:1";
    options.device_plugins = {plugin};
    options.device_plugins_from_environment = false;
    runtime = *Runtime::Create(options);
    core = &runtime->core_runtime();
    exec_ctx.emplace(*runtime->CreateExecutionContext());
    sim = runtime->host().device_manager().GetDevice(device).get();
  }
  std::unique_ptr<Runtime> runtime;
  CoreRuntime* core = nullptr;
  std::optional<ExecutionContext> exec_ctx;
  Device* sim = nullptr;
};

// Runs chains of `chain` `op`s through `handler`, starting from `input` on
// `device`, each chain's end copied to the host and awaited.
void RunChains(benchmark::State& state, PluginFixture& f, const char* op,
               OpHandler* handler, Device& device, int chain = kChain) {
  std::vector<float> values(16, -1.0f);
  TensorHandle host_input =
      *f.core->MakeDenseTensorHandle<float>({16}, values);
  TensorHandle input = host_input.TransferTo(*f.exec_ctx, device);
  if (!f.core->Await(input)) return state.SkipWithError("transfer failed");
  absl::StatusOr<CoreRuntimeOp> relu = f.core->MakeOp(op, handler);
  if (!relu.ok()) return state.SkipWithError(relu.status().ToString().c_str());
  OpAttrsRef attrs = OpAttrs().Freeze();
  for (auto _ : state) {
    TensorHandle value = input.CopyRef();
    for (int i = 0; i < chain; ++i) {
      TensorHandle result;
      (*relu)(*f.exec_ctx, absl::MakeSpan(&value, 1), attrs,
              absl::MakeSpan(&result, 1), nullptr, ArgumentUse::kConsume);
      value = std::move(result);
    }
    TensorHandle back =
        value.TransferTo(*f.exec_ctx, f.runtime->host().host_device());
    if (!f.core->Await(back)) return state.SkipWithError("the op failed");
  }
  state.SetItemsProcessed(state.iterations() * chain);
}

void BM_PluginRelu_asyncrt(benchmark::State& state) {
  PluginFixture f;
  RunChains(state, f, "nn.relu", f.core->GetOpHandler("SIM:0"), *f.sim);
}
BENCHMARK(BM_PluginRelu_asyncrt)->Name("BM_PluginRelu/asyncrt")->UseRealTime();

void BM_PluginRelu_cpu(benchmark::State& state) {
  PluginFixture f;
  RunChains(state, f, "nn.relu", f.core->GetOpHandler("cpu"),
            f.runtime->host().host_device());
}
BENCHMARK(BM_PluginRelu_cpu)->Name("BM_PluginRelu/cpu_device")->UseRealTime();

// Long chains: the copy back and its wake-ups at each chain's end (tens of
// microseconds) amortized below 0.05 us per op.
constexpr int kDispatchChain = 1000;

absl::Status SameMetadata(ArgumentMetadata args, const OpAttrs&,
                          absl::Span<TensorMetadata> results) {
  results[0] = args[0];
  return absl::OkStatus();
}

void BM_PluginDispatch_asyncrt(benchmark::State& state) {
  // The test plug-in's kernel has no op library: its shape function here.
  static const bool registered = [] {
    OpRegistry::Global().AddOp("test_plugin.identity", SameMetadata);
    return true;
  }();
  (void)registered;
  PluginFixture f(TEST_PLUGIN, "SYNCDEV:0");
  RunChains(state, f, "test_plugin.identity", f.core->GetOpHandler("SYNCDEV:0"),
            *f.sim, kDispatchChain);
}
BENCHMARK(BM_PluginDispatch_asyncrt)
    ->Name("BM_PluginDispatch/asyncrt")
    ->UseRealTime();

void BM_PluginDispatch_cpu(benchmark::State& state) {
  PluginFixture f;
  RunChains(state, f, "nn.identity", f.core->GetOpHandler("cpu"),
            f.runtime->host().host_device(), kDispatchChain);
}
BENCHMARK(BM_PluginDispatch_cpu)
    ->Name("BM_PluginDispatch/cpu_device")
    ->UseRealTime();

void BM_RoundTrip_asyncrt(benchmark::State& state) {
  PluginFixture f;
  auto* sim = AsStreamDevice(f.sim);
  const int64_t floats = state.range(0) / 4;
  auto source = DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF32, TensorShape({floats})),
      *f.runtime->host().allocator());
  std::memset(source->data(), 1, source->DataSizeInBytes());
  for (auto _ : state) {
    AsyncValueRef<DenseDeviceTensor> on_device = CopyToDevice(*source, *sim);
    RCReference<AsyncValue> wait[] = {on_device};
    f.runtime->Await(wait);
    AsyncValueRef<DenseHostTensor> back =
        CopyToHost(*on_device, &f.runtime->host());
    wait[0] = back;
    f.runtime->Await(wait);
    if (back.IsError()) return state.SkipWithError("copy failed");
    benchmark::DoNotOptimize(back->data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RoundTrip_asyncrt)
    ->Name("BM_RoundTrip/asyncrt")
    ->Arg(64 << 10)
    ->Arg(4 << 20)
    ->UseRealTime();

void BM_RoundTrip_memcpy(benchmark::State& state) {
  const size_t bytes = state.range(0);
  std::vector<char> source(bytes, 1), device(bytes), back(bytes);
  for (auto _ : state) {
    std::memcpy(device.data(), source.data(), bytes);
    benchmark::ClobberMemory();
    std::memcpy(back.data(), device.data(), bytes);
    benchmark::DoNotOptimize(back.data());
  }
  state.SetBytesProcessed(state.iterations() * state.range(0));
  state.SetItemsProcessed(state.iterations());
}
BENCHMARK(BM_RoundTrip_memcpy)
    ->Name("BM_RoundTrip/memcpy")
    ->Arg(64 << 10)
    ->Arg(4 << 20)
    ->UseRealTime();

}  // namespace
}  // namespace asyncrt

BENCHMARK_MAIN();
