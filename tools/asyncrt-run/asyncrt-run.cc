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
// The runner links the runtime only, not the compiler (LLVM and MLIR would
// add 70 MiB to its resident memory): an ONNX or MLIR model is compiled to
// a temporary BEF file by `asyncrt-compile`, found next to this binary.
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/bef/bef_format.h"
#include "asyncrt/compiler/onnx_tensors.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"

namespace {

using Clock = std::chrono::steady_clock;

// Options, as --name=value (or -name=value); --input repeats.
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
  std::string denormals;  // Empty: nn's default ($ASYNCRT_NN_DENORMALS).
  bool json = false;
  std::string work_queue;
  std::string trace_file;
};

constexpr char kUsage[] = R"(OVERVIEW: AsyncRT model runner

USAGE: asyncrt-run [options] <model.onnx|.mlir|.bef>

asyncrt-run options:

  --benchmark           - Time repeated calls after warm-ups
  --denormals=<string>  - flush (to zero while ops compute, the default) | keep
  --function=<string>   - The function to call (main)
  --input=<string>      - An input as an ONNX TensorProto file (repeat, in the function's argument order)
  --iterations=<int>    - Timed calls (20)
  --json                - Print the benchmark as one JSON object
  --num_threads=<int>   - oneDNN's team size in latency mode, the runtime's workers in throughput mode (default: every core)
  --output_dir=<string> - Write outputs as DIR/output_N.pb
  --threading=<string>  - latency (one op gets the whole team) | throughput
  --trace_file=<string> - Write a Chrome trace (Perfetto, chrome://tracing) of every kernel and op of the run to this file
  --warmup=<int>        - Warm-up calls before timing (5)
  --work_queue=<string> - The runtime's work queue (default: s, the calling thread, in latency mode; mstd with --num_threads workers in throughput mode)
)";

// The options in `argv`, or an error message ("help" for --help).
absl::StatusOr<Options> ParseOptions(int argc, char** argv) {
  Options options;
  auto integer = [](absl::string_view name, absl::string_view text,
                    int& out) -> absl::Status {
    if (!absl::SimpleAtoi(text, &out)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", name, " takes an integer, not '", text, "'"));
    }
    return absl::OkStatus();
  };
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!absl::StartsWith(arg, "-") || arg == "-") {
      if (!options.model_path.empty()) {
        return absl::InvalidArgumentError(
            absl::StrCat("one model only; '", arg, "' is a second"));
      }
      options.model_path = std::string(arg);
      continue;
    }
    arg.remove_prefix(absl::StartsWith(arg, "--") ? 2 : 1);
    const size_t equals = arg.find('=');
    const absl::string_view name = arg.substr(0, equals);
    const bool has_value = equals != absl::string_view::npos;
    const absl::string_view value =
        has_value ? arg.substr(equals + 1) : absl::string_view();
    absl::Status status;
    if (name == "help" || name == "h") {
      return absl::CancelledError("help");
    } else if (name == "benchmark" && !has_value) {
      options.benchmark = true;
    } else if (name == "json" && !has_value) {
      options.json = true;
    } else if (!has_value) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", argv[i], "' (see --help)"));
    } else if (name == "input") {
      options.input_paths.emplace_back(value);
    } else if (name == "output_dir") {
      options.output_dir = std::string(value);
    } else if (name == "function") {
      options.function_name = std::string(value);
    } else if (name == "warmup") {
      status = integer(name, value, options.warmup);
    } else if (name == "iterations") {
      status = integer(name, value, options.iterations);
    } else if (name == "num_threads") {
      status = integer(name, value, options.threads);
    } else if (name == "threading") {
      options.threading = std::string(value);
    } else if (name == "denormals") {
      options.denormals = std::string(value);
    } else if (name == "work_queue") {
      options.work_queue = std::string(value);
    } else if (name == "trace_file") {
      options.trace_file = std::string(value);
    } else {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown option '", argv[i], "' (see --help)"));
    }
    if (!status.ok()) return status;
  }
  if (options.model_path.empty()) {
    return absl::InvalidArgumentError(
        "no model given (asyncrt-run [options] <model.onnx|.mlir|.bef>)");
  }
  return options;
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

// Whether the file at `path` starts as a BEF file does.
bool IsBefFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  char magic[2] = {};
  file.read(magic, sizeof(magic));
  return file.gcount() == 2 &&
         static_cast<uint8_t>(magic[0]) == asyncrt::bef::kMagic0 &&
         static_cast<uint8_t>(magic[1]) == asyncrt::bef::kMagic1;
}

// asyncrt-compile next to this binary, else as found on PATH.
std::string CompilerPath() {
  std::error_code error;
  const std::filesystem::path self =
      std::filesystem::read_symlink("/proc/self/exe", error);
  if (!error) {
    const std::filesystem::path sibling =
        self.parent_path() / "asyncrt-compile";
    if (access(sibling.c_str(), X_OK) == 0) return sibling.string();
  }
  return "asyncrt-compile";
}

// Compiles the model at `path` (ONNX or MLIR) to the BEF file `bef_path`
// with asyncrt-compile, whose diagnostics go to this process's stderr.
absl::Status CompileToBef(const std::string& path,
                          const std::string& bef_path) {
  const std::string compiler = CompilerPath();
  std::vector<std::string> args = {compiler, path, "-o", bef_path};
  std::vector<char*> argv;
  for (std::string& arg : args) argv.push_back(arg.data());
  argv.push_back(nullptr);
  pid_t pid;
  const int spawned = posix_spawnp(&pid, compiler.c_str(), nullptr, nullptr,
                                   argv.data(), environ);
  if (spawned != 0) {
    return absl::NotFoundError(absl::StrCat("cannot run ", compiler,
                                            " to compile '", path,
                                            "': ", std::strerror(spawned)));
  }
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) {
      return absl::InternalError(
          absl::StrCat("waiting for ", compiler, ": ", std::strerror(errno)));
    }
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("cannot compile '", path, "' (", compiler, " failed)"));
  }
  return absl::OkStatus();
}

int Run(const Options& flags) {
  using namespace asyncrt;  // NOLINT: a tool's main file.
  if (flags.threading != "latency" && flags.threading != "throughput") {
    return Fail("--threading must be latency or throughput");
  }
  nn::SetThreading(flags.threading == "latency" ? nn::Threading::kLatency
                                                : nn::Threading::kThroughput);
  if (!flags.denormals.empty()) {
    if (flags.denormals != "flush" && flags.denormals != "keep") {
      return Fail("--denormals must be flush or keep");
    }
    nn::SetDenormals(flags.denormals == "flush" ? nn::Denormals::kFlush
                                                : nn::Denormals::kKeep);
  }
  if (flags.threads > 0) nn::SetTeamSize(flags.threads);
  RuntimeOptions options;
  // Latency: the calling thread runs every op (the single-threaded queue)
  // and each oneDNN primitive gets the OpenMP team: no handoff to a worker
  // and back (6-8 context switches a MobileNetV2 call, 8% of its latency),
  // and no worker spinning on the team's cores.
  // Throughput: a worker per thread, one thread per primitive.
  options.work_queue = !flags.work_queue.empty()      ? flags.work_queue
                       : flags.threading == "latency" ? "s"
                       : flags.threads > 0
                           ? absl::StrCat("mstd:", flags.threads)
                           : "mstd";
  options.trace_file = flags.trace_file;
  auto runtime = Runtime::Create(options);
  if (!runtime.ok()) return Fail(std::string(runtime.status().message()));
  CoreRuntime& core = (*runtime)->core_runtime();

  const Clock::time_point load_start = Clock::now();
  // A BEF file is mapped as it is; a model in another form is compiled to
  // a temporary one first, removed once mapped.
  std::string bef_path = flags.model_path;
  if (!std::filesystem::exists(flags.model_path)) {
    return Fail(absl::StrCat("cannot read '", flags.model_path, "'"));
  }
  if (!IsBefFile(flags.model_path) &&
      !absl::EndsWith(flags.model_path, ".bef")) {
    std::string temporary =
        (std::filesystem::temp_directory_path() / "asyncrt-run-XXXXXX.bef")
            .string();
    const int fd = mkstemps(temporary.data(), 4);
    if (fd < 0) {
      return Fail(
          absl::StrCat("cannot make a temporary file: ", std::strerror(errno)));
    }
    close(fd);
    bef_path = temporary;
    if (absl::Status compiled = CompileToBef(flags.model_path, bef_path);
        !compiled.ok()) {
      std::filesystem::remove(bef_path);
      return Fail(std::string(compiled.message()));
    }
  }
  auto program = (*runtime)->LoadProgramFile(bef_path);
  if (bef_path != flags.model_path) std::filesystem::remove(bef_path);
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
  // The first call also reorders the weights for oneDNN and faults in the
  // activations' memory: with the load, the time to a first result.
  const Clock::time_point first_call_start = Clock::now();
  if (std::string error = call(tensors, results); !error.empty()) {
    return Fail(error);
  }
  const double first_call_ms =
      std::chrono::duration<double, std::milli>(Clock::now() - first_call_start)
          .count();
  if (!flags.output_dir.empty()) {
    std::filesystem::create_directories(flags.output_dir);
    for (size_t i = 0; i < tensors.size(); ++i) {
      auto bytes = SerializeOnnxTensor(*tensors[i], absl::StrCat("output_", i));
      if (!bytes.ok()) return Fail(std::string(bytes.status().message()));
      std::string path = absl::StrCat(flags.output_dir, "/output_", i, ".pb");
      std::ofstream(path, std::ios::binary) << *bytes;
    }
  } else if (!flags.benchmark) {
    for (size_t i = 0; i < tensors.size(); ++i) {
      std::printf("output %zu: %s\n", i, tensors[i]->ToString().c_str());
    }
  }
  if (!flags.benchmark) return 0;

  for (int i = 1; i < flags.warmup;
       ++i) {  // The first call above warmed up too.
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
        "{\"load_ms\": %.3f, \"first_call_ms\": %.3f, \"p50_ms\": %.3f, "
        "\"p90_ms\": %.3f, \"p99_ms\": %.3f, \"calls_per_s\": %.3f, "
        "\"peak_rss_bytes\": %ld}\n",
        load_ms, first_call_ms, p50, p90, p99, throughput, PeakRss());
  } else {
    std::printf("load (compile and load): %.1f ms\n", load_ms);
    std::printf("first call: %.1f ms\n", first_call_ms);
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
  absl::StatusOr<Options> options = ParseOptions(argc, argv);
  if (!options.ok()) {
    if (absl::IsCancelled(options.status())) {
      std::fputs(kUsage, stdout);
      return 0;
    }
    return Fail(std::string(options.status().message()));
  }
  return Run(*options);
}
