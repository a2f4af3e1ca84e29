// bef_executor: runs the functions of a BEF file (or of an .mlir file,
// converted in-process) and prints what they return.
//
// Runtime errors are diagnostics at the source location of the kernel that
// created them ("runtime error: ..."). When the source file named in those
// locations can be read, its `// expected-error` comments are verified as by
// MLIR's -verify-diagnostics: unexpected or missing errors make the exit
// status non-zero. See docs/tools.md for every flag.
#include <cinttypes>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iostream>
#include <iterator>
#include <mutex>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/host_context/resource_context.h"
#include "asyncrt/host_context/tracing.h"
#include "asyncrt/runtime/runtime.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/MLIRContext.h"

namespace {

namespace cl = llvm::cl;

// --help lists only these, not the options libLLVM registers globally.
cl::OptionCategory executor_options("bef_executor options");

cl::opt<std::string> input_filename(cl::Positional,
                                    cl::desc("<BEF or .mlir file, or - >"),
                                    cl::init("-"), cl::cat(executor_options));
cl::list<std::string> functions_flag(
    "functions", cl::desc("Run only these functions, in this order"),
    cl::CommaSeparated, cl::cat(executor_options));
cl::opt<std::string> init_function(
    "test_init_function",
    cl::desc("Run this function first, and not again later"), cl::init(""),
    cl::cat(executor_options));
cl::opt<std::string> work_queue_type("work_queue_type",
                                     cl::desc("s | mstd | mstd:N | mstd:N,M"),
                                     cl::init("s"), cl::cat(executor_options));
cl::opt<std::string> host_allocator_type(
    "host_allocator_type",
    cl::desc("malloc | profiled_allocator | leak_check_allocator | "
             "test_fixed_size_1k"),
    cl::init("leak_check_allocator"), cl::cat(executor_options));
cl::opt<bool> print_error_code(
    "print_error_code", cl::desc("Print status codes with returned errors"),
    cl::cat(executor_options));
cl::opt<bool> enable_tracing("enable_tracing",
                             cl::desc("Print scope lines as functions run"),
                             cl::cat(executor_options));
cl::opt<std::string> tracing_level("tracing_level",
                                   cl::desc("default | verbose | debug"),
                                   cl::init("default"),
                                   cl::cat(executor_options));
cl::opt<std::string> trace_file(
    "trace_file",
    cl::desc("Write a Chrome trace event file (Perfetto, chrome://tracing) "
             "of every kernel, op and function call"),
    cl::init(""), cl::cat(executor_options));
cl::list<std::string> devices_flag(
    "devices", cl::desc("Devices whose op handlers to register by name (cpu)"),
    cl::CommaSeparated, cl::cat(executor_options));
// The default comes from $ASYNCRT_EXECUTOR, so that a whole test suite can
// run on the reference executor.
cl::opt<std::string> executor_flag(
    "executor",
    cl::desc("fast | reference: every kernel on the general path, the "
             "executor's semantics without its shortcuts (default: "
             "$ASYNCRT_EXECUTOR, else fast)"),
    cl::init(std::getenv("ASYNCRT_EXECUTOR") ? std::getenv("ASYNCRT_EXECUTOR")
                                             : "fast"),
    cl::cat(executor_options));
cl::opt<bool> list_devices(
    "list_devices",
    cl::desc("Print one line per device (name, type, memory, locality, "
             "incarnation, hardware) and exit"),
    cl::cat(executor_options));
cl::list<std::string> device_plugins(
    "plugins",
    cl::desc("Device plug-ins to load: files or directories of *.so files "
             "(also from ASYNCRT_PLUGIN_PATH, ':'-separated)"),
    cl::CommaSeparated, cl::cat(executor_options));
cl::opt<std::string> device_memory_limits(
    "device_memory_limit",
    cl::desc("KEY=SIZE[,...]: the most memory the runtime may use on a "
             "plug-in's device, by name (CUDA:0) or type (cuda); SIZE in "
             "bytes or with KiB, MiB, GiB"),
    cl::init(""));
cl::list<std::string> shared_libs("shared_libs",
                                  cl::desc("Kernel libraries to load (dlopen)"),
                                  cl::CommaSeparated,
                                  cl::cat(executor_options));

// A runtime error, kept until the end so it can be verified against the
// source file's expectations.
struct RuntimeError {
  std::optional<asyncrt::DecodedLocation> location;
  std::string message;
};

class ErrorCollector {
 public:
  void Add(const asyncrt::DecodedDiagnostic& diagnostic) {
    std::lock_guard<std::mutex> lock(mutex_);
    errors_.push_back(
        {diagnostic.location, std::string(diagnostic.status.message())});
  }
  std::vector<RuntimeError> Take() {
    std::lock_guard<std::mutex> lock(mutex_);
    return std::move(errors_);
  }

 private:
  std::mutex mutex_;
  std::vector<RuntimeError> errors_;
};

std::string FormatValue(const asyncrt::AsyncValue& value,
                        const std::string& type) {
  if (const absl::Status* error = value.GetErrorIfPresent()) {
    std::string text = absl::StrCat("<<error: ", error->message());
    if (print_error_code) {
      absl::StrAppend(&text,
                      ", code: ", absl::StatusCodeToString(error->code()));
    }
    return text + ">>";
  }
  char buffer[64];
  if (type == "i1" && value.IsType<bool>())
    return value.get<bool>() ? "1" : "0";
  if (type == "i32" && value.IsType<int32_t>()) {
    return std::to_string(value.get<int32_t>());
  }
  if (type == "i64" && value.IsType<int64_t>()) {
    return std::to_string(value.get<int64_t>());
  }
  if (type == "f32" && value.IsType<float>()) {
    std::snprintf(buffer, sizeof(buffer), "%e",
                  static_cast<double>(value.get<float>()));
    return buffer;
  }
  if (type == "f64" && value.IsType<double>()) {
    std::snprintf(buffer, sizeof(buffer), "%e", value.get<double>());
    return buffer;
  }
  return type + " value";
}

std::string ReadAll(const std::string& path, bool* ok) {
  std::string data;
  *ok = true;
  if (path == "-") {
    data.assign(std::istreambuf_iterator<char>(std::cin),
                std::istreambuf_iterator<char>());
    return data;
  }
  std::ifstream file(path, std::ios::binary);
  if (!file) {
    *ok = false;
    return data;
  }
  data.assign(std::istreambuf_iterator<char>(file),
              std::istreambuf_iterator<char>());
  return data;
}

// Verifies `errors` against the expected-error comments of the source file
// they point into. Returns false on any mismatch; prints what went wrong.
bool VerifyRuntimeErrors(const std::vector<RuntimeError>& errors,
                         const std::string& fallback_source) {
  std::string source_path = fallback_source;
  for (const RuntimeError& error : errors) {
    if (error.location && !error.location->filename.empty()) {
      source_path = error.location->filename;
      break;
    }
  }
  bool readable = false;
  std::string source = source_path.empty() || source_path == "-"
                           ? std::string()
                           : ReadAll(source_path, &readable);
  if (!readable) {
    for (const RuntimeError& error : errors) {
      std::string where = error.location
                              ? absl::StrCat(error.location->filename, ":",
                                             error.location->line, ":",
                                             error.location->column, ": ")
                              : "";
      std::fprintf(stderr, "%serror: runtime error: %s\n", where.c_str(),
                   error.message.c_str());
    }
    return errors.empty();
  }
  mlir::MLIRContext context;
  llvm::SourceMgr source_mgr;
  source_mgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(source, source_path), llvm::SMLoc());
  mlir::SourceMgrDiagnosticVerifierHandler handler(source_mgr, &context);
  for (const RuntimeError& error : errors) {
    mlir::Location loc =
        error.location ? mlir::Location(mlir::FileLineColLoc::get(
                             &context, error.location->filename,
                             error.location->line, error.location->column))
                       : mlir::Location(mlir::UnknownLoc::get(&context));
    mlir::emitError(loc) << "runtime error: " << error.message;
  }
  return mlir::succeeded(handler.verify());
}

// Runs one function of the program under its trace scopes, waits for its
// results and prints them.
void RunFunction(const asyncrt::Function& function, asyncrt::Runtime& runtime) {
  using asyncrt::tracing::Level;
  using asyncrt::tracing::ScopedTrace;
  ScopedTrace executor_scope(Level::kDefault, "Bef Executor");
  ScopedTrace function_scope(Level::kDefault, [&] {
    return absl::StrCat("Function: ", function.name());
  });
  std::vector<asyncrt::RCReference<asyncrt::AsyncValue>> results =
      runtime.Call(function, {});
  runtime.Await(results);
  if (!results.empty()) {
    std::vector<std::string> printed;
    for (size_t i = 0; i < results.size(); ++i) {
      printed.push_back(FormatValue(*results[i], function.result_types()[i]));
    }
    std::printf("'%s' returned %s\n", function.name().c_str(),
                absl::StrJoin(printed, ",").c_str());
  }
  results.clear();
  runtime.Quiesce();
}

int Run() {
  asyncrt::RuntimeOptions options;
  options.work_queue = work_queue_type;
  options.host_allocator = host_allocator_type;
  options.devices.assign(devices_flag.begin(), devices_flag.end());
  options.plugin_paths.assign(shared_libs.begin(), shared_libs.end());
  options.device_plugins.assign(device_plugins.begin(), device_plugins.end());
  absl::StatusOr<std::map<std::string, uint64_t, std::less<>>> memory_limits =
      asyncrt::ParseDeviceMemoryLimits(device_memory_limits);
  if (!memory_limits.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(memory_limits.status().message()).c_str());
    return 1;
  }
  options.device_memory_limits = *std::move(memory_limits);
  options.trace_file = trace_file;
  if (enable_tracing) {
    using asyncrt::tracing::Level;
    if (tracing_level == "default") options.tracing_level = Level::kDefault;
    if (tracing_level == "verbose") options.tracing_level = Level::kVerbose;
    if (tracing_level == "debug") options.tracing_level = Level::kDebug;
    if (!options.tracing_level) {
      std::fprintf(stderr,
                   "error: invalid tracing level '%s' (default, verbose or "
                   "debug)\n",
                   tracing_level.c_str());
      return 1;
    }
  }
  if (executor_flag == "reference") {
    options.executor_mode = asyncrt::ExecutorMode::kReference;
  } else if (executor_flag != "fast") {
    std::fprintf(stderr, "error: invalid executor '%s' (fast or reference)\n",
                 executor_flag.c_str());
    return 1;
  }
  if (list_devices) {
    auto runtime = asyncrt::Runtime::Create(std::move(options));
    if (!runtime.ok()) {
      std::fprintf(stderr, "error: %s\n",
                   std::string(runtime.status().message()).c_str());
      return 1;
    }
    for (const auto& device :
         (*runtime)->host().device_manager().ListDevices()) {
      std::printf("%s\n", device->DebugString().c_str());
    }
    return 0;
  }
  bool readable = false;
  std::string data = ReadAll(input_filename, &readable);
  if (!readable) {
    std::fprintf(stderr, "error: cannot read '%s'\n", input_filename.c_str());
    return 1;
  }
  // Compiled first, so that MLIR diagnostics print as the compiler prints
  // them; BEF errors come from the loader below.
  absl::StatusOr<std::vector<uint8_t>> bytes =
      asyncrt::Runtime::ToBef(data, input_filename);
  if (!bytes.ok()) {
    std::fprintf(stderr, "%s\n", std::string(bytes.status().message()).c_str());
    return 1;
  }

  ErrorCollector errors;
  options.diagnostic_handler = [&errors](const asyncrt::DecodedDiagnostic& d) {
    errors.Add(d);
  };
  // Destroyed last: with the leak-check allocator this reports leaks.
  auto runtime = asyncrt::Runtime::Create(std::move(options));
  if (!runtime.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(runtime.status().message()).c_str());
    return 1;
  }
  {
    auto program = (*runtime)->LoadBef(*std::move(bytes));
    if (!program.ok() && !absl::IsNotFound(program.status())) {
      // A file the BEF loader rejects (NotFound: unknown kernels, already
      // reported at their locations and verified below).
      std::fprintf(stderr, "error: %s\n",
                   std::string(program.status().message()).c_str());
      return 1;
    }
    if (program.ok()) {
      // Which functions run, in order.
      std::vector<const asyncrt::Function*> to_run;
      const asyncrt::Function* init = nullptr;
      if (!init_function.empty()) {
        init = (*program)->GetFunction(init_function);
        if (init == nullptr) {
          std::fprintf(stderr, "error: no function named '%s'\n",
                       init_function.c_str());
          return 1;
        }
        to_run.push_back(init);
      }
      if (!functions_flag.empty()) {
        for (const std::string& name : functions_flag) {
          const asyncrt::Function* function = (*program)->GetFunction(name);
          if (function == nullptr) {
            std::fprintf(stderr, "error: no function named '%s'\n",
                         name.c_str());
            return 1;
          }
          to_run.push_back(function);
        }
      } else {
        for (const asyncrt::Function* function : (*program)->functions()) {
          if (function != init) to_run.push_back(function);
        }
      }
      for (const asyncrt::Function* function : to_run) {
        if (function->num_arguments() > 0) {
          std::printf("--- Not running '%s' because it has arguments.\n",
                      function->name().c_str());
          std::fflush(stdout);
          continue;
        }
        if (function->name().empty()) continue;
        std::printf("--- Running '%s':\n", function->name().c_str());
        std::fflush(stdout);
        RunFunction(*function, **runtime);
        std::fflush(stdout);
      }
    }
    (*runtime)->Quiesce();
  }
  bool ok = true;
  if (absl::Status status = (*runtime)->FinishTrace(); !status.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
    ok = false;
  }
  std::fflush(stdout);
  // A program that failed to load has reported why; if those errors were
  // all expected (a test of load errors), the run succeeded.
  return VerifyRuntimeErrors(errors.Take(), input_filename) && ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(executor_options);
  cl::ParseCommandLineOptions(argc, argv, "AsyncRT BEF executor\n");
  return Run();
}
