// asyncrt-run: runs a model (ONNX, MLIR or BEF) on inputs in ONNX's
// TensorProto files and writes or prints its outputs; --benchmark times it.
//
//   asyncrt-run model.onnx --input=input_0.pb --output_dir=out
//   asyncrt-run model.bef --input=x.pb --benchmark --num_threads=2
//
// Inputs are given in the function's argument order (an ONNX model's graph
// inputs that are not initializers). Outputs are written as output_0.pb,
// output_1.pb, ... (the layout of ONNX's test data) or, without
// --output_dir, summarized on stdout. --benchmark runs warm-ups, then
// repeated calls, and prints the load time, p50/p90/p99 latency, the
// throughput and the peak resident memory (with --json, as one JSON object).
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/compiler/onnx_tensors.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"

namespace {

namespace cl = llvm::cl;
using Clock = std::chrono::steady_clock;

// Only these show in --help (not the options of the LLVM libraries).
cl::OptionCategory run_options("asyncrt-run options");

cl::opt<std::string> model_path(cl::Positional, cl::Required,
                                cl::desc("<model.onnx|.mlir|.bef>"),
                                cl::cat(run_options));
cl::list<std::string> input_paths(
    "input",
    cl::desc("An input as an ONNX TensorProto file (repeat, in the "
             "function's argument order)"),
    cl::cat(run_options));
cl::opt<std::string> output_dir("output_dir",
                                cl::desc("Write outputs as DIR/output_N.pb"),
                                cl::cat(run_options));
cl::opt<std::string> function_name("function", cl::init("main"),
                                   cl::desc("The function to call (main)"),
                                   cl::cat(run_options));
cl::opt<bool> benchmark("benchmark",
                        cl::desc("Time repeated calls after warm-ups"),
                        cl::cat(run_options));
cl::opt<int> warmup("warmup", cl::init(5),
                    cl::desc("Warm-up calls before timing (5)"),
                    cl::cat(run_options));
cl::opt<int> iterations("iterations", cl::init(20),
                        cl::desc("Timed calls (20)"), cl::cat(run_options));
cl::opt<int> threads(
    "num_threads", cl::init(0),
    cl::desc("oneDNN's team size in latency mode, the runtime's workers in "
             "throughput mode (default: every core)"),
    cl::cat(run_options));
cl::opt<std::string> threading(
    "threading", cl::init("latency"),
    cl::desc("latency (one op gets the whole team) | throughput"),
    cl::cat(run_options));
cl::opt<bool> json("json", cl::desc("Print the benchmark as one JSON object"),
                   cl::cat(run_options));
cl::opt<std::string> work_queue(
    "work_queue",
    cl::desc("The runtime's work queue (default: s, the calling thread, "
             "in latency mode; mstd with --num_threads workers in "
             "throughput mode)"),
    cl::cat(run_options));

cl::opt<std::string> trace_file(
    "trace_file",
    cl::desc("Write a Chrome trace (Perfetto, chrome://tracing) of every "
             "kernel and op of the run to this file"),
    cl::cat(run_options));

int Fail(const std::string& message) {
  std::fprintf(stderr, "asyncrt-run: %s\n", message.c_str());
  return 1;
}

std::string ReadFile(const std::string& path, bool& ok) {
  std::ifstream file(path, std::ios::binary);
  ok = static_cast<bool>(file);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

double Percentile(std::vector<double> sorted, double p) {
  if (sorted.empty()) return 0;
  size_t index = static_cast<size_t>(p * (sorted.size() - 1) + 0.5);
  return sorted[std::min(index, sorted.size() - 1)];
}

// Peak resident memory of this process, in bytes.
long PeakRss() {
  rusage usage;
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss * 1024L;
}

int Run() {
  using namespace asyncrt;  // NOLINT: a tool's main file.
  if (threading != "latency" && threading != "throughput") {
    return Fail("--threading must be latency or throughput");
  }
  nn::SetThreading(threading == "latency" ? nn::Threading::kLatency
                                          : nn::Threading::kThroughput);
  if (threads > 0) nn::SetTeamSize(threads);
  RuntimeOptions options;
  // Latency: the calling thread runs every op (the single-threaded queue)
  // and each oneDNN primitive gets the OpenMP team: no handoff to a worker
  // and back (6-8 context switches a MobileNetV2 call, 8% of its latency),
  // and no worker spinning on the team's cores.
  // Throughput: a worker per thread, one thread per primitive.
  options.work_queue =
      !work_queue.empty()       ? std::string(work_queue)
      : threading == "latency" ? "s"
      : threads > 0 ? absl::StrCat("mstd:", static_cast<int>(threads))
                    : "mstd";
  options.trace_file = trace_file;
  auto runtime = Runtime::Create(options);
  if (!runtime.ok()) return Fail(std::string(runtime.status().message()));
  CoreRuntime& core = (*runtime)->core_runtime();

  const Clock::time_point load_start = Clock::now();
  auto program = (*runtime)->LoadProgramFile(model_path);
  if (!program.ok()) return Fail(std::string(program.status().message()));
  const double load_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - load_start)
          .count();
  const Function* function = (*program)->GetFunction(function_name);
  if (function == nullptr) {
    return Fail(absl::StrCat("no function '", std::string(function_name),
                             "' in ", std::string(model_path)));
  }
  if (function->num_arguments() != input_paths.size()) {
    return Fail(absl::StrCat("'", std::string(function_name), "' takes ",
                             function->num_arguments(), " inputs; ",
                             input_paths.size(), " given with --input"));
  }

  std::vector<AsyncValueRef<TensorHandle>> inputs;
  std::vector<AsyncValue*> arguments;
  for (const std::string& path : input_paths) {
    bool ok;
    std::string bytes = ReadFile(path, ok);
    if (!ok) return Fail(absl::StrCat("cannot read '", path, "'"));
    auto tensor = ParseOnnxTensor(bytes, *(*runtime)->host().allocator());
    if (!tensor.ok()) {
      return Fail(absl::StrCat(path, ": ", tensor.status().message()));
    }
    inputs.push_back(MakeAvailableAsyncValueRef<TensorHandle>(
        core.MakeTensorHandle(*std::move(tensor))));
    arguments.push_back(inputs.back().GetAsyncValue());
  }

  // One call; the host tensors of its results, or an error message.
  auto call =
      [&](std::vector<const DenseHostTensor*>& tensors,
          std::vector<RCReference<AsyncValue>>& results) -> std::string {
    results = (*runtime)->Call(*function, arguments);
    (*runtime)->Await(results);
    tensors.clear();
    for (size_t i = 0; i < results.size(); ++i) {
      if (results[i]->IsError()) {
        return absl::StrCat("output ", i, ": ",
                            results[i]->GetError().message());
      }
      if (!results[i]->IsType<TensorHandle>()) {
        return absl::StrCat("output ", i, " is not a tensor");
      }
      const TensorHandle& handle = results[i]->get<TensorHandle>();
      const Tensor* tensor = core.Await(handle);
      if (tensor == nullptr) {
        return absl::StrCat("output ", i, ": ",
                            handle.GetErrorIfPresent()->message());
      }
      if (tensor->tensor_type() != DenseHostTensorType()) {
        return absl::StrCat("output ", i, " is not a dense host tensor");
      }
      tensors.push_back(static_cast<const DenseHostTensor*>(tensor));
    }
    return "";
  };

  std::vector<const DenseHostTensor*> tensors;
  std::vector<RCReference<AsyncValue>> results;
  if (std::string error = call(tensors, results); !error.empty()) {
    return Fail(error);
  }
  if (!output_dir.empty()) {
    std::filesystem::create_directories(std::string(output_dir));
    for (size_t i = 0; i < tensors.size(); ++i) {
      auto bytes = SerializeOnnxTensor(*tensors[i], absl::StrCat("output_", i));
      if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
      std::string path =
          absl::StrCat(std::string(output_dir), "/output_", i, ".pb");
      std::ofstream(path, std::ios::binary) << *bytes;
    }
  } else if (!benchmark) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      std::printf("output %zu: %s\n", i, tensors[i]->ToString().c_str());
    }
  }
  if (!benchmark) return 0;

  for (int i = 1; i < warmup; ++i) {  // The first call above warmed up too.
    if (std::string error = call(tensors, results); !error.empty()) {
      return Fail(error);
    }
  }
  std::vector<double> latencies_ms;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < iterations; ++i) {
    const Clock::time_point call_start = Clock::now();
    if (std::string error = call(tensors, results); !error.empty()) {
      return Fail(error);
    }
    latencies_ms.push_back(
        std::chrono::duration<double, std::milli>(Clock::now() - call_start)
            .count());
  }
  const double total_s =
      std::chrono::duration<double>(Clock::now() - start).count();
  std::sort(latencies_ms.begin(), latencies_ms.end());
  const double p50 = Percentile(latencies_ms, 0.5);
  const double p90 = Percentile(latencies_ms, 0.9);
  const double p99 = Percentile(latencies_ms, 0.99);
  const double throughput = iterations / total_s;
  if (json) {
    std::printf(
        "{\"load_ms\": %.3f, \"p50_ms\": %.3f, \"p90_ms\": %.3f, "
        "\"p99_ms\": %.3f, \"calls_per_s\": %.3f, \"peak_rss_bytes\": %ld}\n",
        load_ms, p50, p90, p99, throughput, PeakRss());
  } else {
    std::printf("load (compile and load): %.1f ms\n", load_ms);
    std::printf(
        "latency over %d calls: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms\n",
        static_cast<int>(iterations), p50, p90, p99);
    std::printf("throughput: %.1f calls/s\n", throughput);
    std::printf("peak resident memory: %.1f MiB\n", PeakRss() / 1048576.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(run_options);
  cl::ParseCommandLineOptions(argc, argv, "AsyncRT model runner\n");
  return Run();
}
