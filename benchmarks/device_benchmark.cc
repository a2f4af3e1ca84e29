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
  PluginFixture() {
    RuntimeOptions options;
    options.work_queue = "mstd:1";
    options.device_plugins = {SIM_PLUGIN};
    options.device_plugins_from_environment = false;
    runtime = *Runtime::Create(options);
    core = &runtime->core_runtime();
    exec_ctx.emplace(*runtime->CreateExecutionContext());
    sim = runtime->host().device_manager().GetDevice("SIM:0").get();
  }
  std::unique_ptr<Runtime> runtime;
  CoreRuntime* core = nullptr;
  std::optional<ExecutionContext> exec_ctx;
  Device* sim = nullptr;
};

// Runs chains of kChain relus through `handler`, starting from `input` on
// `device`, each chain's end copied to the host and awaited.
void RunReluChains(benchmark::State& state, PluginFixture& f, OpHandler* handler,
                   Device& device) {
  std::vector<float> values(16, -1.0f);
  TensorHandle host_input =
      *f.core->MakeDenseTensorHandle<float>({16}, values);
  TensorHandle input = host_input.TransferTo(*f.exec_ctx, device);
  if (!f.core->Await(input)) return state.SkipWithError("transfer failed");
  absl::StatusOr<CoreRuntimeOp> relu = f.core->MakeOp("nn.relu", handler);
  if (!relu.ok()) return state.SkipWithError("no nn.relu");
  OpAttrsRef attrs = OpAttrs().Freeze();
  for (auto _ : state) {
    TensorHandle value = input.CopyRef();
    for (int i = 0; i < kChain; ++i) {
      TensorHandle result;
      (*relu)(*f.exec_ctx, absl::MakeSpan(&value, 1), attrs,
              absl::MakeSpan(&result, 1), nullptr, ArgumentUse::kConsume);
      value = std::move(result);
    }
    TensorHandle back =
        value.TransferTo(*f.exec_ctx, f.runtime->host().host_device());
    if (!f.core->Await(back)) return state.SkipWithError("relu failed");
  }
  state.SetItemsProcessed(state.iterations() * kChain);
}

void BM_PluginRelu_asyncrt(benchmark::State& state) {
  PluginFixture f;
  RunReluChains(state, f, f.core->GetOpHandler("SIM:0"), *f.sim);
}
BENCHMARK(BM_PluginRelu_asyncrt)->Name("BM_PluginRelu/asyncrt")->UseRealTime();

void BM_PluginRelu_cpu(benchmark::State& state) {
  PluginFixture f;
  RunReluChains(state, f, f.core->GetOpHandler("cpu"),
                f.runtime->host().host_device());
}
BENCHMARK(BM_PluginRelu_cpu)->Name("BM_PluginRelu/cpu_device")->UseRealTime();

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
