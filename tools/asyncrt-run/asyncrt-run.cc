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
//
// The runner links the runtime only, never LLVM or MLIR (75 MiB resident
// for nothing when it runs a .bef): an .onnx or .mlir model is compiled by
// the asyncrt-compile next to it into a temporary BEF file first.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/bef/bef_format.h"
#include "asyncrt/compiler/onnx_tensors.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

constexpr char kUsage[] =
    R"(asyncrt-run: runs a model on ONNX TensorProto inputs

USAGE: asyncrt-run <model.onnx|.mlir|.bef> [options]

options:
  --input=FILE         an input as an ONNX TensorProto file (repeat, in the
                       function's argument order)
  --output_dir=DIR     write outputs as DIR/output_N.pb
  --function=NAME      the function to call (main)
  --benchmark          time repeated calls after warm-ups
  --warmup=N           warm-up calls before timing (5)
  --iterations=N       timed calls (20)
  --num_threads=N      oneDNN's team size in latency mode, the runtime's
                       workers in throughput mode (default: every core)
  --threading=MODE     latency (one op gets the whole team) | throughput
  --json               print the benchmark as one JSON object
  --work_queue=QUEUE   the runtime's work queue (default: s, the calling
                       thread, in latency mode; mstd with --num_threads
                       workers in throughput mode)
  --help               this text
)";

struct Options {
  std::string model_path;
  std::vector<std::string> input_paths;
  std::string output_dir;
  std::string function_name = "main";
  bool benchmark = false;
  int warmup = 5;
  int iterations = 20;
  int threads = 0;
  std::string threading = "latency";
  bool json = false;
  std::string work_queue;
};

// Parses `--name=value` and `--flag` arguments (a leading "-" also
// accepted) and the model path; an error names the argument.
std::optional<std::string> ParseArguments(int argc, char** argv,
                                          Options& options, bool& help) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view argument = argv[i];
    if (!absl::StartsWith(argument, "-")) {
      if (!options.model_path.empty()) {
        return absl::StrCat("more than one model: '", argument, "'");
      }
      options.model_path = std::string(argument);
      continue;
    }
    argument.remove_prefix(absl::StartsWith(argument, "--") ? 2 : 1);
    const size_t equals = argument.find('=');
    const absl::string_view name = argument.substr(0, equals);
    const std::optional<absl::string_view> value =
        equals == absl::string_view::npos
            ? std::nullopt
            : std::optional(argument.substr(equals + 1));
    auto text = [&](std::string& out) -> std::optional<std::string> {
      if (!value) return absl::StrCat("--", name, " needs a value");
      out = std::string(*value);
      return std::nullopt;
    };
    auto number = [&](int& out) -> std::optional<std::string> {
      if (!value || !absl::SimpleAtoi(*value, &out) || out < 0) {
        return absl::StrCat("--", name, " needs a non-negative integer");
      }
      return std::nullopt;
    };
    auto flag = [&](bool& out) -> std::optional<std::string> {
      if (!value || *value == "true" || *value == "1") {
        out = true;
      } else if (*value == "false" || *value == "0") {
        out = false;
      } else {
        return absl::StrCat("--", name, " is true or false");
      }
      return std::nullopt;
    };
    std::optional<std::string> error;
    if (name == "input") {
      std::string path;
      error = text(path);
      options.input_paths.push_back(path);
    } else if (name == "output_dir") {
      error = text(options.output_dir);
    } else if (name == "function") {
      error = text(options.function_name);
    } else if (name == "benchmark") {
      error = flag(options.benchmark);
    } else if (name == "warmup") {
      error = number(options.warmup);
    } else if (name == "iterations") {
      error = number(options.iterations);
    } else if (name == "num_threads") {
      error = number(options.threads);
    } else if (name == "threading") {
      error = text(options.threading);
    } else if (name == "json") {
      error = flag(options.json);
    } else if (name == "work_queue") {
      error = text(options.work_queue);
    } else if (name == "help" || name == "h") {
      help = true;
    } else {
      error = absl::StrCat("unknown option '", argv[i], "' (see --help)");
    }
    if (error) return error;
  }
  if (!help && options.model_path.empty()) return "no model given (see --help)";
  return std::nullopt;
}

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

// The asyncrt-compile installed next to this program.
std::string CompilerPath() {
  std::error_code error;
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", error);
  return error ? "asyncrt-compile"
               : (self.parent_path() / "asyncrt-compile").string();
}

// Loads `path`: a BEF file as it is (mapped), anything else (an ONNX or
// MLIR model) compiled to a temporary BEF file by asyncrt-compile, whose
// diagnostics go to stderr.
absl::StatusOr<asyncrt::RCReference<asyncrt::BefProgram>> LoadModel(
    asyncrt::Runtime& runtime, const std::string& path) {
  char magic[2] = {};
  std::ifstream(path, std::ios::binary).read(magic, 2);
  if (absl::EndsWith(path, ".bef") ||
      (magic[0] == static_cast<char>(asyncrt::bef::kMagic0) &&
       magic[1] == static_cast<char>(asyncrt::bef::kMagic1))) {
    return runtime.LoadProgramFile(path);
  }
  if (!std::filesystem::is_regular_file(path)) {
    return absl::NotFoundError(absl::StrCat("cannot read '", path, "'"));
  }
  const char* tmpdir = std::getenv("TMPDIR");
  std::string bef_path = absl::StrCat(tmpdir ? tmpdir : "/tmp",
                                      "/asyncrt-run-XXXXXX.bef");
  const int fd = mkstemps(bef_path.data(), 4);
  if (fd < 0) return absl::InternalError("cannot create a temporary file");
  close(fd);
  const std::string compiler = CompilerPath();
  const pid_t pid = fork();
  if (pid == 0) {
    execl(compiler.c_str(), compiler.c_str(), path.c_str(), "-o",
          bef_path.c_str(), static_cast<char*>(nullptr));
    std::fprintf(stderr, "asyncrt-run: cannot run %s\n", compiler.c_str());
    _exit(127);
  }
  int status = 0;
  const bool compiled = pid > 0 && waitpid(pid, &status, 0) == pid &&
                        WIFEXITED(status) && WEXITSTATUS(status) == 0;
  absl::StatusOr<asyncrt::RCReference<asyncrt::BefProgram>> program =
      compiled ? runtime.LoadProgramFile(bef_path)
               : absl::InvalidArgumentError(
                     absl::StrCat("cannot compile '", path, "'"));
  // The mapping stays valid after the file is gone.
  std::filesystem::remove(bef_path);
  return program;
}

int Run(const Options& flags) {
  using namespace asyncrt;  // NOLINT: a tool's main file.
  if (flags.threading != "latency" && flags.threading != "throughput") {
    return Fail("--threading must be latency or throughput");
  }
  nn::SetThreading(flags.threading == "latency" ? nn::Threading::kLatency
                                          : nn::Threading::kThroughput);
  if (flags.threads > 0) nn::SetTeamSize(flags.threads);
  RuntimeOptions options;
  // Latency: the calling thread runs every op (the single-threaded queue)
  // and each oneDNN primitive gets the OpenMP team: no handoff to a worker
  // and back (6-8 context switches a MobileNetV2 call, 8% of its latency),
  // and no worker spinning on the team's cores.
  // Throughput: a worker per thread, one thread per primitive.
  options.work_queue =
      !flags.work_queue.empty()      ? flags.work_queue
      : flags.threading == "latency" ? "s"
      : flags.threads > 0            ? absl::StrCat("mstd:", flags.threads)
                                     : "mstd";
  auto runtime = Runtime::Create(options);
  if (!runtime.ok()) return Fail(std::string(runtime.status().message()));
  CoreRuntime& core = (*runtime)->core_runtime();

  const Clock::time_point load_start = Clock::now();
  auto program = LoadModel(**runtime, flags.model_path);
  if (!program.ok()) return Fail(std::string(program.status().message()));
  const double load_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - load_start)
          .count();
  const Function* function = (*program)->GetFunction(flags.function_name);
  if (function == nullptr) {
    return Fail(absl::StrCat("no function '", flags.function_name, "' in ",
                             flags.model_path));
  }
  if (function->num_arguments() != flags.input_paths.size()) {
    return Fail(absl::StrCat("'", flags.function_name, "' takes ",
                             function->num_arguments(), " inputs; ",
                             flags.input_paths.size(), " given with --input"));
  }

  std::vector<AsyncValueRef<TensorHandle>> inputs;
  std::vector<AsyncValue*> arguments;
  for (const std::string& path : flags.input_paths) {
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
  if (!flags.output_dir.empty()) {
    std::filesystem::create_directories(flags.output_dir);
    for (size_t i = 0; i < tensors.size(); ++i) {
      auto bytes = SerializeOnnxTensor(*tensors[i], absl::StrCat("output_", i));
      if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
      std::string path =
          absl::StrCat(flags.output_dir, "/output_", i, ".pb");
      std::ofstream(path, std::ios::binary) << *bytes;
    }
  } else if (!flags.benchmark) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      std::printf("output %zu: %s\n", i, tensors[i]->ToString().c_str());
    }
  }
  if (!flags.benchmark) return 0;

  for (int i = 1; i < flags.warmup; ++i) {  // The first call above warmed up too.
    if (std::string error = call(tensors, results); !error.empty()) {
      return Fail(error);
    }
  }
  std::vector<double> latencies_ms;
  const Clock::time_point start = Clock::now();
  for (int i = 0; i < flags.iterations; ++i) {
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
  const double throughput = flags.iterations / total_s;
  if (flags.json) {
    std::printf(
        "{\"load_ms\": %.3f, \"p50_ms\": %.3f, \"p90_ms\": %.3f, "
        "\"p99_ms\": %.3f, \"calls_per_s\": %.3f, \"peak_rss_bytes\": %ld}\n",
        load_ms, p50, p90, p99, throughput, PeakRss());
  } else {
    std::printf("load (compile and load): %.1f ms\n", load_ms);
    std::printf(
        "latency over %d calls: p50 %.3f ms, p90 %.3f ms, p99 %.3f ms\n",
        flags.iterations, p50, p90, p99);
    std::printf("throughput: %.1f calls/s\n", throughput);
    std::printf("peak resident memory: %.1f MiB\n", PeakRss() / 1048576.0);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  Options options;
  bool help = false;
  if (std::optional<std::string> error =
          ParseArguments(argc, argv, options, help)) {
    return Fail(*error);
  }
  if (help) {
    std::fputs(kUsage, stdout);
    return 0;
  }
  return Run(options);
}
