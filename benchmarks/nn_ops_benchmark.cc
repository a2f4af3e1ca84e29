// The heavy nn.* ops through the eager API, next to libtorch's CPU
// operators (also oneDNN/OpenMP underneath in Debian's build) on the same
// shapes, both with 2 intra-op threads, in the same run:
//
//   BM_Conv3x3/{asyncrt,torch}     ResNet-50 stage-1 3x3 conv: 1x64x56x56,
//                                  64 filters, pad 1, bias
//   BM_Conv1x1/{asyncrt,torch}     ResNet-50 1x1 expansion: 1x64x56x56 -> 256
//   BM_DepthwiseConv/{...}         MobileNetV2 depthwise 3x3: 1x144x56x56
//   BM_MatmulBert/{asyncrt,torch}  BERT-base FFN: [128, 768] x [768, 3072]
//   BM_Gelu/{asyncrt,torch}        exact (erf) GELU on BERT-base's FFN
//                                  activations, [128, 3072]
//   BM_Tanh/{asyncrt,torch}        tanh on the same shape
//
// Latency per call (nn::Threading::kLatency: one primitive gets the whole
// team). Primitives are looked up per call (oneDNN's cache), as eager ops
// are; compiled models will create them once.
#include <omp.h>

#include <memory>
#include <optional>
#include <random>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"
#include "benchmark/benchmark.h"

#ifdef ASYNCRT_HAVE_TORCH
#include <ATen/ATen.h>
#include <ATen/Parallel.h>
#endif

namespace asyncrt {
namespace {

constexpr int kThreads = 2;

std::vector<float> Random(size_t count) {
  std::mt19937 generator(7);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t dim : shape) count *= dim;
  return count;
}

struct Fixture {
  Fixture() {
    omp_set_num_threads(kThreads);
    nn::SetThreading(nn::Threading::kLatency);
    RuntimeOptions options;
    options.work_queue = "mstd:1";
    runtime = *Runtime::Create(options);
    core = &runtime->core_runtime();
    cpu = core->GetOpHandler("cpu");
    exec_ctx.emplace(*runtime->CreateExecutionContext());
  }
  TensorHandle Tensor(const std::vector<int64_t>& shape) {
    std::vector<float> values = Random(Count(shape));
    return *core->MakeDenseTensorHandle<float>(shape,
                                               absl::MakeConstSpan(values));
  }
  std::unique_ptr<Runtime> runtime;
  CoreRuntime* core = nullptr;
  OpHandler* cpu = nullptr;
  std::optional<ExecutionContext> exec_ctx;
};

void RunAsyncrt(benchmark::State& state, const char* op,
                const std::vector<std::vector<int64_t>>& shapes,
                const OpAttrs& attrs) {
  Fixture f;
  std::vector<TensorHandle> args;
  for (const auto& shape : shapes) args.push_back(f.Tensor(shape));
  OpAttrsRef frozen = attrs.Freeze();
  for (auto _ : state) {
    TensorHandle result;
    f.core->Execute(*f.exec_ctx, op, f.cpu, absl::MakeSpan(args), frozen,
                    absl::MakeSpan(&result, 1), nullptr);
    if (f.core->Await(result) == nullptr) {
      state.SkipWithError(result.GetErrorIfPresent()->ToString().c_str());
      return;
    }
  }
}

OpAttrs ConvAttrs(int64_t pad, int64_t group) {
  OpAttrs attrs;
  attrs.SetArray<int64_t>("pads", {pad, pad, pad, pad});
  attrs.Set("group", group);
  return attrs;
}

void BM_Conv3x3_asyncrt(benchmark::State& state) {
  RunAsyncrt(state, "nn.conv", {{1, 64, 56, 56}, {64, 64, 3, 3}, {64}},
             ConvAttrs(1, 1));
}
void BM_Conv1x1_asyncrt(benchmark::State& state) {
  RunAsyncrt(state, "nn.conv", {{1, 64, 56, 56}, {256, 64, 1, 1}, {256}},
             ConvAttrs(0, 1));
}
void BM_DepthwiseConv_asyncrt(benchmark::State& state) {
  RunAsyncrt(state, "nn.conv", {{1, 144, 56, 56}, {144, 1, 3, 3}, {144}},
             ConvAttrs(1, 144));
}
void BM_MatmulBert_asyncrt(benchmark::State& state) {
  RunAsyncrt(state, "nn.matmul", {{128, 768}, {768, 3072}}, OpAttrs());
}
void BM_Gelu_asyncrt(benchmark::State& state) {
  RunAsyncrt(state, "nn.gelu", {{128, 3072}}, OpAttrs());
}
void BM_Tanh_asyncrt(benchmark::State& state) {
  RunAsyncrt(state, "nn.tanh", {{128, 3072}}, OpAttrs());
}
BENCHMARK(BM_Conv3x3_asyncrt)->Name("BM_Conv3x3/asyncrt")->UseRealTime();
BENCHMARK(BM_Conv1x1_asyncrt)->Name("BM_Conv1x1/asyncrt")->UseRealTime();
BENCHMARK(BM_DepthwiseConv_asyncrt)
    ->Name("BM_DepthwiseConv/asyncrt")
    ->UseRealTime();
BENCHMARK(BM_MatmulBert_asyncrt)->Name("BM_MatmulBert/asyncrt")->UseRealTime();
BENCHMARK(BM_Gelu_asyncrt)->Name("BM_Gelu/asyncrt")->UseRealTime();
BENCHMARK(BM_Tanh_asyncrt)->Name("BM_Tanh/asyncrt")->UseRealTime();

#ifdef ASYNCRT_HAVE_TORCH
at::Tensor TorchTensor(const std::vector<int64_t>& shape) {
  std::vector<float> values = Random(Count(shape));
  return at::from_blob(values.data(), shape, at::kFloat).clone();
}

template <typename F>
void RunTorch(benchmark::State& state, F f) {
  at::set_num_threads(kThreads);
  at::InferenceMode guard;
  for (auto _ : state) {
    at::Tensor result = f();
    benchmark::DoNotOptimize(result.data_ptr());
  }
}

void Conv(benchmark::State& state, int64_t c, int64_t m, int64_t k, int64_t pad,
          int64_t group) {
  at::Tensor x = TorchTensor({1, c, 56, 56});
  at::Tensor w = TorchTensor({m, c / group, k, k});
  at::Tensor b = TorchTensor({m});
  RunTorch(state, [&] {
    return at::conv2d(x, w, b, /*stride=*/{1, 1}, /*padding=*/{pad, pad},
                      /*dilation=*/{1, 1}, group);
  });
}
void BM_Conv3x3_torch(benchmark::State& state) { Conv(state, 64, 64, 3, 1, 1); }
void BM_Conv1x1_torch(benchmark::State& state) {
  Conv(state, 64, 256, 1, 0, 1);
}
void BM_DepthwiseConv_torch(benchmark::State& state) {
  Conv(state, 144, 144, 3, 1, 144);
}
void BM_MatmulBert_torch(benchmark::State& state) {
  at::Tensor a = TorchTensor({128, 768});
  at::Tensor b = TorchTensor({768, 3072});
  RunTorch(state, [&] { return at::matmul(a, b); });
}
void BM_Gelu_torch(benchmark::State& state) {
  at::Tensor x = TorchTensor({128, 3072});
  RunTorch(state, [&] { return at::gelu(x); });
}
void BM_Tanh_torch(benchmark::State& state) {
  at::Tensor x = TorchTensor({128, 3072});
  RunTorch(state, [&] { return at::tanh(x); });
}
BENCHMARK(BM_Conv3x3_torch)->Name("BM_Conv3x3/torch")->UseRealTime();
BENCHMARK(BM_Conv1x1_torch)->Name("BM_Conv1x1/torch")->UseRealTime();
BENCHMARK(BM_DepthwiseConv_torch)
    ->Name("BM_DepthwiseConv/torch")
    ->UseRealTime();
BENCHMARK(BM_MatmulBert_torch)->Name("BM_MatmulBert/torch")->UseRealTime();
BENCHMARK(BM_Gelu_torch)->Name("BM_Gelu/torch")->UseRealTime();
BENCHMARK(BM_Tanh_torch)->Name("BM_Tanh/torch")->UseRealTime();
#endif  // ASYNCRT_HAVE_TORCH

}  // namespace
}  // namespace asyncrt

BENCHMARK_MAIN();
