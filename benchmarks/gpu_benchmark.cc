// The CUDA backend against CUDA itself, on the same GPU in the same run:
//
//   BM_GpuRelu/asyncrt          nn.relu of 16 f32 on CUDA:0 through eager
//                               AsyncRT (dispatch, the C boundary, output
//                               allocation from the stream-ordered pool,
//                               launch), per op, in chains of 100 ending in
//                               a copy of the result to the host, awaited
//   BM_GpuRelu/cuda_launch      the same kernel launched bare
//                               (cudaLaunchKernel) 100 times on one
//                               preallocated buffer, then the same copy and
//                               cudaStreamSynchronize
//   BM_GpuRelu1000/...          the same in chains of 1,000: the chain's
//                               end (the copy back and its wake-ups, tens
//                               of microseconds) under 0.05 us per op
//   BM_GpuDispatch/asyncrt      nn.identity on CUDA:0 in chains of 1,000:
//                               the plug-in aliases its input, so no
//                               allocation and no launch: the runtime's
//                               dispatch and the C boundary alone, on the
//                               GPU machine's host (no peer; what of the
//                               relu's difference is not the launch)
//   BM_GpuRoundTrip/asyncrt     one relu and its result copied back and
//                               awaited: the completion path (CUDA's
//                               callback, the blocking pool, the waiter)
//   BM_GpuRoundTrip/cuda_launch one launch, copy, cudaStreamSynchronize
//   BM_GpuGemm4096/asyncrt/T    nn.matmul of two 4096 x 4096 T matrices on
//                               device tensors (T: f16, bf16), 50 per
//                               wait for the stream
//   BM_GpuGemm4096/cublaslt/T   cublasLtMatmul called directly, same sizes
//                               and count, on cudaMalloc's memory
//   BM_GpuGemm4096/cublaslt_pool/f16  the same on memory from the device's
//                               default pool (cudaMallocFromPoolAsync), as
//                               the plug-in allocates: whether where the
//                               matrices live explains a difference
//   BM_GpuModel/asyncrt/M_f16   model M (resnet50, mobilenetv2, bert: the
//                               BERT-base encoder at sequence 128) compiled
//                               for CUDA:0 in f16 with synthetic weights,
//                               batch 1: the f32 input copied
//                               from the host, the model, the output copied
//                               back and awaited; per call. Its peers,
//                               PyTorch eager and torch.compile on the same
//                               GPU, come from benchmarks/gpu/torch_peer.py
//                               (same names, merged by summarize.py).
//
// Without a GPU every benchmark reports the error and is left out of the
// summary. ASYNCRT_CUDA_PLUGIN overrides the plug-in's path.
#include <cublasLt.h>
#include <cuda_runtime.h>

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/device/stream_device.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/tensor/dtype.h"
#include "backends/gpu/cuda_kernels.h"
#include "backends/gpu/gpu_models.h"
#include "benchmark/benchmark.h"

namespace asyncrt {
namespace {

constexpr int kChain = 100;
constexpr int kGemmsPerWait = 50;
constexpr int64_t kGemmSize = 4096;

std::string PluginPath() {
  const char* path = std::getenv("ASYNCRT_CUDA_PLUGIN");
  return path != nullptr ? path : CUDA_PLUGIN;
}

struct GpuFixture {
  // `work_queue` "s": every kernel on the calling thread, so that the
  // benchmark's CPU time is all of the host's work.
  explicit GpuFixture(const char* work_queue = "mstd:1") {
    RuntimeOptions options;
    options.work_queue = work_queue;
    options.device_plugins = {PluginPath()};
    options.device_plugins_from_environment = false;
    absl::StatusOr<std::unique_ptr<Runtime>> created = Runtime::Create(options);
    if (!created.ok()) {
      error = std::string(created.status().message());
      return;
    }
    runtime = *std::move(created);
    core = &runtime->core_runtime();
    exec_ctx.emplace(*runtime->CreateExecutionContext());
    gpu = runtime->host().device_manager().GetDevice("CUDA:0").get();
    handler = core->GetOpHandler("CUDA:0");
  }
  // Waits for everything enqueued on the GPU's stream.
  bool Drain() {
    RCReference<DeviceEvent> event =
        AsStreamDevice(gpu)->stream()->RecordEvent();
    RCReference<AsyncValue> done[] = {event->done()};
    runtime->host().Await(done);
    return !done[0]->IsError();
  }
  std::string error;
  std::unique_ptr<Runtime> runtime;
  CoreRuntime* core = nullptr;
  std::optional<ExecutionContext> exec_ctx;
  Device* gpu = nullptr;
  OpHandler* handler = nullptr;
};

#define CHECK_CUDA_OR_SKIP(call)                       \
  if (cudaError_t e = (call); e != cudaSuccess) {      \
    return state.SkipWithError(cudaGetErrorString(e)); \
  }

//===--- Per-op overhead --------------------------------------------------===//

void RunEagerChain(benchmark::State& state, const char* op, int chain) {
  GpuFixture f;
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  std::vector<float> values(16, -1.0f);
  TensorHandle input = f.core->MakeDenseTensorHandle<float>({16}, values)
                           ->TransferTo(*f.exec_ctx, *f.gpu);
  if (!f.core->Await(input)) return state.SkipWithError("transfer failed");
  absl::StatusOr<CoreRuntimeOp> relu = f.core->MakeOp(op, f.handler);
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

void RunBareRelu(benchmark::State& state, int chain) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    return state.SkipWithError("no CUDA GPU");
  }
  cudaStream_t stream;
  CHECK_CUDA_OR_SKIP(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  float *x = nullptr, *y = nullptr, *host = nullptr;
  CHECK_CUDA_OR_SKIP(cudaMalloc(&x, 64));
  CHECK_CUDA_OR_SKIP(cudaMalloc(&y, 64));
  CHECK_CUDA_OR_SKIP(cudaMallocHost(&host, 64));
  for (auto _ : state) {
    for (int i = 0; i < chain; ++i) {
      gpu::LaunchUnary(gpu::UnaryOp::kRelu, gpu::GpuDType::kF32, i % 2 ? y : x,
                       i % 2 ? x : y, 16, 0, 0, stream);
    }
    cudaMemcpyAsync(host, y, 64, cudaMemcpyDeviceToHost, stream);
    CHECK_CUDA_OR_SKIP(cudaStreamSynchronize(stream));
  }
  state.SetItemsProcessed(state.iterations() * chain);
  cudaFreeHost(host);
  cudaFree(y);
  cudaFree(x);
  cudaStreamDestroy(stream);
}

void BM_GpuRelu_asyncrt(benchmark::State& state) {
  RunEagerChain(state, "nn.relu", kChain);
}
BENCHMARK(BM_GpuRelu_asyncrt)->Name("BM_GpuRelu/asyncrt")->UseRealTime();
void BM_GpuRelu_bare(benchmark::State& state) { RunBareRelu(state, kChain); }
BENCHMARK(BM_GpuRelu_bare)->Name("BM_GpuRelu/cuda_launch")->UseRealTime();

constexpr int kLongChain = 1000;
void BM_GpuRelu1000_asyncrt(benchmark::State& state) {
  RunEagerChain(state, "nn.relu", kLongChain);
}
BENCHMARK(BM_GpuRelu1000_asyncrt)
    ->Name("BM_GpuRelu1000/asyncrt")
    ->UseRealTime();
void BM_GpuRelu1000_bare(benchmark::State& state) {
  RunBareRelu(state, kLongChain);
}
BENCHMARK(BM_GpuRelu1000_bare)
    ->Name("BM_GpuRelu1000/cuda_launch")
    ->UseRealTime();
void BM_GpuDispatch_asyncrt(benchmark::State& state) {
  RunEagerChain(state, "nn.identity", kLongChain);
}
BENCHMARK(BM_GpuDispatch_asyncrt)
    ->Name("BM_GpuDispatch/asyncrt")
    ->UseRealTime();

void BM_GpuRoundTrip_asyncrt(benchmark::State& state) {
  RunEagerChain(state, "nn.relu", 1);
}
BENCHMARK(BM_GpuRoundTrip_asyncrt)
    ->Name("BM_GpuRoundTrip/asyncrt")
    ->UseRealTime();
void BM_GpuRoundTrip_bare(benchmark::State& state) { RunBareRelu(state, 1); }
BENCHMARK(BM_GpuRoundTrip_bare)
    ->Name("BM_GpuRoundTrip/cuda_launch")
    ->UseRealTime();

//===--- GEMM -------------------------------------------------------------===//

// The operands' values, uniform in [-1, 1), the same for AsyncRT and the
// peer (a GPU's matrix units draw power, and so clock, by the data).
std::vector<float> GemmValues() {
  std::vector<float> values(kGemmSize * kGemmSize);
  uint32_t seed = 1;
  for (float& v : values) {
    seed = seed * 1664525u + 1013904223u;
    v = static_cast<float>(seed >> 8) / (1 << 24) * 2.f - 1.f;
  }
  return values;
}

void BM_GpuGemm_asyncrt(benchmark::State& state, DType dtype) {
  GpuFixture f;
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  // Random values (never zeros, which run faster than real data), cast on
  // the host and copied to the GPU.
  const std::vector<float> values = GemmValues();
  OpAttrs cast_attrs;
  cast_attrs.Set("to", dtype);
  OpAttrsRef cast_frozen = cast_attrs.Freeze();
  auto upload = [&] {
    TensorHandle host =
        *f.core->MakeDenseTensorHandle<float>({kGemmSize, kGemmSize}, values);
    TensorHandle typed;
    f.core->Execute(*f.exec_ctx, "nn.cast", f.core->GetOpHandler("cpu"),
                    absl::MakeSpan(&host, 1), cast_frozen,
                    absl::MakeSpan(&typed, 1), nullptr);
    return typed.TransferTo(*f.exec_ctx, *f.gpu);
  };
  TensorHandle ha = upload();
  TensorHandle hb = upload();
  if (!f.core->Await(ha) || !f.core->Await(hb)) {
    return state.SkipWithError("uploading the operands failed");
  }
  absl::StatusOr<CoreRuntimeOp> matmul = f.core->MakeOp("nn.matmul", f.handler);
  if (!matmul.ok()) return state.SkipWithError("no nn.matmul");
  OpAttrsRef attrs = OpAttrs().Freeze();
  for (auto _ : state) {
    for (int i = 0; i < kGemmsPerWait; ++i) {
      TensorHandle args[2] = {ha.CopyRef(), hb.CopyRef()};
      TensorHandle result;
      (*matmul)(*f.exec_ctx, absl::MakeSpan(args), attrs,
                absl::MakeSpan(&result, 1), nullptr, ArgumentUse::kConsume);
      if (i == kGemmsPerWait - 1 && !f.core->Await(result)) {
        return state.SkipWithError("matmul failed");
      }
    }
    if (!f.Drain()) return state.SkipWithError("the stream failed");
  }
  state.SetItemsProcessed(state.iterations() * kGemmsPerWait);
  state.counters["TFLOPS"] = benchmark::Counter(
      2.0 * kGemmSize * kGemmSize * kGemmSize * kGemmsPerWait * 1e-12,
      benchmark::Counter::kIsIterationInvariantRate);
}
BENCHMARK_CAPTURE(BM_GpuGemm_asyncrt, f16, DType::kF16)
    ->Name("BM_GpuGemm4096/asyncrt/f16")
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_GpuGemm_asyncrt, bf16, DType::kBF16)
    ->Name("BM_GpuGemm4096/asyncrt/bf16")
    ->UseRealTime();

// `from_pool`: the matrices in memory of the device's default pool (as
// the plug-in's), not cudaMalloc's.
void BM_GpuGemm_cublaslt(benchmark::State& state, DType dtype, bool from_pool) {
  int devices = 0;
  if (cudaGetDeviceCount(&devices) != cudaSuccess || devices == 0) {
    return state.SkipWithError("no CUDA GPU");
  }
  const cudaDataType_t type = dtype == DType::kF16 ? CUDA_R_16F : CUDA_R_16BF;
  const size_t bytes = kGemmSize * kGemmSize * 2;
  void *a, *b, *d, *workspace;
  const size_t workspace_bytes = 32u << 20;
  cudaStream_t stream;
  CHECK_CUDA_OR_SKIP(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking));
  cudaMemPool_t pool;
  CHECK_CUDA_OR_SKIP(cudaDeviceGetDefaultMemPool(&pool, 0));
  auto allocate = [&](void** memory) {
    return from_pool ? cudaMallocFromPoolAsync(memory, bytes, pool, stream)
                     : cudaMalloc(memory, bytes);
  };
  CHECK_CUDA_OR_SKIP(allocate(&a));
  CHECK_CUDA_OR_SKIP(allocate(&b));
  CHECK_CUDA_OR_SKIP(allocate(&d));
  CHECK_CUDA_OR_SKIP(cudaStreamSynchronize(stream));
  CHECK_CUDA_OR_SKIP(cudaMalloc(&workspace, workspace_bytes));
  {
    // The same values as the AsyncRT case, rounded the same way.
    const std::vector<float> values = GemmValues();
    std::vector<uint16_t> host(values.size());
    for (size_t k = 0; k < values.size(); ++k) {
      host[k] = dtype == DType::kF16 ? Half::FromFloat(values[k]).bits
                                     : BFloat16::FromFloat(values[k]).bits;
    }
    cudaMemcpy(a, host.data(), bytes, cudaMemcpyHostToDevice);
    cudaMemcpy(b, host.data(), bytes, cudaMemcpyHostToDevice);
  }
  cublasLtHandle_t handle;
  cublasLtCreate(&handle);
  cublasLtMatmulDesc_t desc;
  cublasLtMatmulDescCreate(&desc, CUBLAS_COMPUTE_32F, CUDA_R_32F);
  cublasLtMatrixLayout_t layout;
  cublasLtMatrixLayoutCreate(&layout, type, kGemmSize, kGemmSize, kGemmSize);
  cublasLtMatmulPreference_t preference;
  cublasLtMatmulPreferenceCreate(&preference);
  uint64_t max_workspace = workspace_bytes;
  cublasLtMatmulPreferenceSetAttribute(preference,
                                       CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES,
                                       &max_workspace, sizeof(max_workspace));
  cublasLtMatmulHeuristicResult_t result = {};
  int results = 0;
  cublasLtMatmulAlgoGetHeuristic(handle, desc, layout, layout, layout, layout,
                                 preference, 1, &result, &results);
  if (results == 0) return state.SkipWithError("no cuBLASLt algorithm");
  const float alpha = 1.f, beta = 0.f;
  for (auto _ : state) {
    for (int i = 0; i < kGemmsPerWait; ++i) {
      cublasLtMatmul(handle, desc, &alpha, b, layout, a, layout, &beta, d,
                     layout, d, layout, &result.algo, workspace,
                     workspace_bytes, stream);
    }
    CHECK_CUDA_OR_SKIP(cudaStreamSynchronize(stream));
  }
  state.SetItemsProcessed(state.iterations() * kGemmsPerWait);
  state.counters["TFLOPS"] = benchmark::Counter(
      2.0 * kGemmSize * kGemmSize * kGemmSize * kGemmsPerWait * 1e-12,
      benchmark::Counter::kIsIterationInvariantRate);
  cublasLtMatmulPreferenceDestroy(preference);
  cublasLtMatrixLayoutDestroy(layout);
  cublasLtMatmulDescDestroy(desc);
  cublasLtDestroy(handle);
  cudaFree(workspace);
  for (void* matrix : {d, b, a}) {
    if (from_pool) {
      cudaFreeAsync(matrix, stream);
    } else {
      cudaFree(matrix);
    }
  }
  cudaStreamSynchronize(stream);
  cudaStreamDestroy(stream);
}
BENCHMARK_CAPTURE(BM_GpuGemm_cublaslt, f16, DType::kF16, false)
    ->Name("BM_GpuGemm4096/cublaslt/f16")
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_GpuGemm_cublaslt, bf16, DType::kBF16, false)
    ->Name("BM_GpuGemm4096/cublaslt/bf16")
    ->UseRealTime();
BENCHMARK_CAPTURE(BM_GpuGemm_cublaslt, f16_pool, DType::kF16, true)
    ->Name("BM_GpuGemm4096/cublaslt_pool/f16")
    ->UseRealTime();

//===--- Models -----------------------------------------------------------===//

// `variant`: "" (the model's device work one CUDA graph, convolutions in
// NHWC), "_no_graphs" (each op launched by the runtime) or "_nchw" (ONNX's
// NCHW layout kept) or "_unfused" (attention as the unfused ops, not one
// nn.attention) or "_separate_qkv" (its Q, K and V projections three
// products, --fuse-qkv=false).
void BM_GpuModel_asyncrt(benchmark::State& state, const char* name,
                         const char* variant) {
  // Synthetic weights (as the PyTorch peer's random ones): the models'
  // real weights are too big to carry to a GPU machine.
  absl::StatusOr<testing::GpuModel> model =
      testing::FindGpuModel(name, /*synthetic=*/true, variant);
  if (!model.ok()) {
    return state.SkipWithError(std::string(model.status().message()).c_str());
  }
  GpuFixture f("s");
  if (!f.error.empty()) return state.SkipWithError(f.error.c_str());
  absl::StatusOr<RCReference<BefProgram>> program =
      f.runtime->LoadProgramFile(model->bef_path);
  if (!program.ok()) {
    return state.SkipWithError(std::string(program.status().message()).c_str());
  }
  AsyncValueRef<TensorHandle> input = MakeAvailableAsyncValueRef<TensorHandle>(
      *f.core->MakeDenseTensorHandle<float>(model->input_shape, model->input));
  // Warm-up: the weights' copies to the GPU, cuDNN's algorithm search.
  for (int i = 0; i < 10; ++i) {
    absl::StatusOr<std::vector<float>> output =
        testing::RunModel(*f.runtime, **program, input.GetAsyncValue());
    if (!output.ok()) {
      return state.SkipWithError(
          std::string(output.status().message()).c_str());
    }
  }
  for (auto _ : state) {
    absl::StatusOr<std::vector<float>> output =
        testing::RunModel(*f.runtime, **program, input.GetAsyncValue());
    if (!output.ok()) return state.SkipWithError("the model failed");
  }
}
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, resnet50, "resnet50", "")
    ->Name("BM_GpuModel/asyncrt/resnet50_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, resnet50_no_graphs, "resnet50", "_no_graphs")
    ->Name("BM_GpuModel/asyncrt_no_graphs/resnet50_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, resnet50_nchw, "resnet50", "_nchw")
    ->Name("BM_GpuModel/asyncrt_nchw/resnet50_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, mobilenetv2, "mobilenetv2", "")
    ->Name("BM_GpuModel/asyncrt/mobilenetv2_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, mobilenetv2_no_graphs, "mobilenetv2",
                  "_no_graphs")
    ->Name("BM_GpuModel/asyncrt_no_graphs/mobilenetv2_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, mobilenetv2_nchw, "mobilenetv2", "_nchw")
    ->Name("BM_GpuModel/asyncrt_nchw/mobilenetv2_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, bert_separate_qkv, "bert",
                  "_separate_qkv")
    ->Name("BM_GpuModel/asyncrt_separate_qkv/bert_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, bert_unfused, "bert", "_unfused")
    ->Name("BM_GpuModel/asyncrt_unfused/bert_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, bert, "bert", "")
    ->Name("BM_GpuModel/asyncrt/bert_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, bert_no_graphs, "bert", "_no_graphs")
    ->Name("BM_GpuModel/asyncrt_no_graphs/bert_f16")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
// A chain of 50 tiny ops (nn.add on 1,024 f32, benchmarks/gpu/chain50.mlir
// compiled by prepare_models.sh): the runtime's cost per op on the GPU,
// with the chain one CUDA graph and without.
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, chain50, "chain50", "")
    ->Name("BM_GpuChain50/asyncrt")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);
BENCHMARK_CAPTURE(BM_GpuModel_asyncrt, chain50_no_graphs, "chain50",
                  "_no_graphs")
    ->Name("BM_GpuChain50/asyncrt_no_graphs")
    ->UseRealTime()
    ->Unit(benchmark::kMicrosecond);

}  // namespace
}  // namespace asyncrt

BENCHMARK_MAIN();
