// Runtime: AsyncRT embedded in an application in a few lines.
//
//   asyncrt::RuntimeOptions options;
//   options.work_queue = "mstd:4";
//   auto runtime = asyncrt::Runtime::Create(options);
//   auto program = (*runtime)->LoadProgramFile("model.bef");
//   auto results = (*runtime)->Call(**program, "main", {});
//   (*runtime)->Await(*results);
//
// A Runtime owns one HostContext (work queue, host allocator, kernel
// registry, devices) and the CoreRuntime attached to it. Creating it
// registers every kernel, op and native-function library linked into the
// binary (each library's always-linked static registration unit, see
// docs/writing_kernels.md), loads the requested plug-ins and registers the
// op handlers of the requested devices. Tools, examples, benchmarks and
// servers get their runtime here; none keeps its own list of libraries.
//
// Programs: BEF always; MLIR text when a program translator for it is linked
// (asyncrt::mlir_translator, on the compiler side: the runtime library itself
// never sees MLIR).
//
// Ownership: the Runtime owns its HostContext, CoreRuntime and the
// ResourceContext shared by its calls; programs it loads are refcounted and
// must not outlive it. Thread-safety: Create is not thread-safe with respect
// to plug-in loading in other threads; every other member is thread-safe.
// Blocking: Await and the destructor (which quiesces the work queue) block;
// Call never does.
#ifndef ASYNCRT_RUNTIME_RUNTIME_H_
#define ASYNCRT_RUNTIME_RUNTIME_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/host_context/diagnostic.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/resource_context.h"
#include "asyncrt/host_context/tracing.h"
#include "asyncrt/runtime/program_translator.h"

namespace asyncrt {

class CoreRuntime;
struct LoadedDevicePlugin;

struct RuntimeOptions {
  // The work queue: "s" (single-threaded: the caller's Await runs the work),
  // "mstd" (a worker per hardware thread), "mstd:N" or "mstd:N,M" (N
  // workers, M blocking threads).
  std::string work_queue = "mstd";
  // The host allocator: "malloc", "profiled_allocator",
  // "leak_check_allocator" or "test_fixed_size_1k".
  std::string host_allocator = "malloc";
  // Devices whose op handlers are registered under their name for
  // corert.get_op_handler and CoreRuntime::GetOpHandler. Known: "cpu".
  std::vector<std::string> devices = {"cpu"};
  // Kernel plug-ins (shared libraries) to load. A plug-in registers through
  // static registration units or exports
  //   extern "C" void asyncrt_register_kernels(asyncrt::KernelRegistry*);
  std::vector<std::string> plugin_paths;
  // Device plug-ins (asyncrt/c/device_plugin.h) to load: files, or
  // directories whose *.so files are loaded; an entry may list several,
  // separated by ':'. Each adds its devices and their op handlers
  // ("SIM:0", and "sim" for the first).
  std::vector<std::string> device_plugins;
  // Also load the device plug-ins ASYNCRT_PLUGIN_PATH names (same form).
  bool device_plugins_from_environment = true;
  // The most memory the runtime may use on a plug-in's device, in bytes,
  // by device name ("CUDA:0") or, for every device of a type, by type
  // ("cuda"); a name wins over its type. The plug-in keeps its caching
  // within it too (DevicePluginOptions). A key that names no plug-in
  // device once the plug-ins are loaded, or a limit of 0, is an error of
  // Create.
  std::map<std::string, uint64_t, std::less<>> device_memory_limits;
  // Receives runtime errors at the source locations of the kernels that
  // raised them; called on any thread. Default: printed to stderr.
  DiagnosticHandler diagnostic_handler;
  // Scope tracing to stdout at this level and coarser (process-wide).
  std::optional<tracing::Level> tracing_level;
  // If set, a Chrome trace event file (Perfetto, chrome://tracing) of every
  // kernel, eager op and function call, written when the Runtime is
  // destroyed. One trace per process at a time.
  std::string trace_file;
  // How loaded programs run (see BefProgram::Options).
  ExecutorMode executor_mode = ExecutorMode::kFast;
};

// Parses device memory limits as the tools take them: "KEY=SIZE[,KEY=SIZE]"
// with KEY a device name (CUDA:0) or type (cuda) and SIZE bytes, or a
// number with KiB, MiB or GiB ("CUDA:0=4GiB,sim=64MiB"). InvalidArgument
// naming the piece that is malformed.
absl::StatusOr<std::map<std::string, uint64_t, std::less<>>>
ParseDeviceMemoryLimits(absl::string_view spec);

class Runtime {
 public:
  // InvalidArgument for an unknown work queue, allocator, device or tracing
  // level; an error naming the file for a plug-in that does not load.
  static absl::StatusOr<std::unique_ptr<Runtime>> Create(
      RuntimeOptions options = {});
  // Quiesces the work queue, writes the trace file if one was asked for,
  // then destroys the host (programs must be gone).
  ~Runtime();

  // Writes the Chrome trace now (see RuntimeOptions::trace_file) and stops
  // recording; the destructor then writes nothing. Blocks.
  absl::Status FinishTrace();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Loads one more device plug-in (see device_plugin_loader.h). On error
  // the runtime is unchanged and usable.
  absl::Status LoadDevicePlugin(absl::string_view path);

  HostContext& host() { return *host_; }
  CoreRuntime& core_runtime() { return *core_runtime_; }
  ResourceContext& resources() { return resources_; }
  const RuntimeOptions& options() const { return options_; }

  // The BEF bytes of program `data` named `name`: `data` itself when it
  // starts like BEF or `name` ends in ".bef" (a damaged .bef file is an
  // error of the BEF loader, never parsed as text), else `data` translated:
  // an ONNX model when `name` ends in ".onnx" (asyncrt::onnx_translator),
  // MLIR text otherwise (asyncrt::mlir_translator). Translation errors carry
  // the translator's diagnostics; FailedPrecondition when the translator is
  // not linked into this binary.
  static absl::StatusOr<std::vector<uint8_t>> ToBef(absl::string_view data,
                                                    absl::string_view name);

  // Loads BEF bytes. Unknown kernels are also reported to the diagnostic
  // handler at their source locations.
  absl::StatusOr<RCReference<BefProgram>> LoadBef(std::vector<uint8_t> bytes);
  // Loads `data` (see ToBef).
  absl::StatusOr<RCReference<BefProgram>> LoadProgram(absl::string_view data,
                                                      absl::string_view name);
  // Loads the file at `path`: BEF is mapped (read-only, never copied: a
  // model's weights are used in place), anything else read and translated.
  absl::StatusOr<RCReference<BefProgram>> LoadProgramFile(
      absl::string_view path);

  // Calls `function` in a new request (ids count up per runtime) and returns
  // its results, which become available as it finishes. `arguments` are
  // borrowed. Never blocks.
  std::vector<RCReference<AsyncValue>> Call(
      const Function& function, absl::Span<AsyncValue* const> arguments);
  // The same by name; NotFound for a function the program lacks,
  // InvalidArgument for a wrong number of arguments.
  absl::StatusOr<std::vector<RCReference<AsyncValue>>> Call(
      const BefProgram& program, absl::string_view function_name,
      absl::Span<AsyncValue* const> arguments);

  // An execution context for one request (eager ops, direct calls).
  absl::StatusOr<ExecutionContext> CreateExecutionContext();

  // Blocks until every value is available.
  void Await(absl::Span<const RCReference<AsyncValue>> values);
  // Blocks until all queued work is done.
  void Quiesce();

 private:
  explicit Runtime(RuntimeOptions options) : options_(std::move(options)) {}
  // Loads BEF `bytes` without copying them; `keep_alive` owns them.
  absl::StatusOr<RCReference<BefProgram>> LoadBefInPlace(
      absl::Span<const uint8_t> bytes, std::shared_ptr<const void> keep_alive);
  absl::Status LoadPlugins();
  absl::Status LoadDevicePlugins();
  // Loads one device plug-in with the options' memory limits.
  absl::StatusOr<LoadedDevicePlugin> LoadDevicePluginWithOptions(
      absl::string_view path);
  absl::Status RegisterDevices();
  // Whether every key of options_.device_memory_limits names a plug-in's
  // device or device type, with a limit above 0.
  absl::Status CheckDeviceMemoryLimits();

  RuntimeOptions options_;
  // Names of the devices of the device plug-ins loaded at Create.
  std::vector<std::string> plugin_devices_;
  std::unique_ptr<HostContext> host_;
  CoreRuntime* core_runtime_ = nullptr;  // A shared context of host_.
  ResourceContext resources_;
  std::atomic<int64_t> next_request_id_{0};
  bool tracing_to_file_ = false;
};

}  // namespace asyncrt

#endif  // ASYNCRT_RUNTIME_RUNTIME_H_
