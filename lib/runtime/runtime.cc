#include "asyncrt/runtime/runtime.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <iterator>

#include "absl/algorithm/container.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef/bef_format.h"
#include "asyncrt/bef_executor/native_function.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_handler_factory.h"
#include "asyncrt/plugin/device_plugin_loader.h"
#include "lib/runtime/device_op_check.h"

namespace asyncrt {

absl::StatusOr<std::unique_ptr<Runtime>> Runtime::Create(
    RuntimeOptions options) {
  auto work_queue = CreateWorkQueue(options.work_queue);
  if (!work_queue.ok()) return work_queue.status();
  auto allocator = CreateHostAllocator(options.host_allocator);
  if (!allocator.ok()) return allocator.status();
  DiagnosticHandler handler = options.diagnostic_handler
                                  ? options.diagnostic_handler
                                  : PrintingDiagnosticHandler();
  std::unique_ptr<Runtime> runtime(new Runtime(std::move(options)));
  runtime->host_ = std::make_unique<HostContext>(
      std::move(handler), *std::move(allocator), *std::move(work_queue));
  HostContext& host = *runtime->host_;
  // Every library linked into the binary registered itself statically.
  RegisterStaticKernels(host.registry());
  RegisterStaticNativeFunctions(host);
  runtime->core_runtime_ = &CoreRuntime::GetOrCreate(&host);
  if (absl::Status status = runtime->LoadPlugins(); !status.ok()) {
    return status;
  }
  if (absl::Status status = runtime->RegisterDevices(); !status.ok()) {
    return status;
  }
  if (absl::Status status = runtime->LoadDevicePlugins(); !status.ok()) {
    return status;
  }
  if (absl::Status status = runtime->CheckDeviceMemoryLimits(); !status.ok()) {
    return status;
  }
  if (runtime->options_.tracing_level) {
    tracing::Enable(*runtime->options_.tracing_level);
  }
  if (!runtime->options_.trace_file.empty()) {
    absl::Status status =
        tracing::StartChromeTrace(runtime->options_.trace_file);
    if (!status.ok()) return status;
    runtime->tracing_to_file_ = true;
  }
  return runtime;
}

Runtime::~Runtime() {
  if (host_) host_->Quiesce();
  if (absl::Status status = FinishTrace(); !status.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  }
}

absl::Status Runtime::FinishTrace() {
  if (!tracing_to_file_) return absl::OkStatus();
  tracing_to_file_ = false;
  host_->Quiesce();
  return tracing::StopChromeTrace();
}

absl::Status Runtime::LoadPlugins() {
  if (options_.plugin_paths.empty()) return absl::OkStatus();
  // Plug-ins that register through static initializers add to the list
  // the linked libraries used: apply only what they add.
  size_t first_plugin_registration = NumStaticKernelRegistrations();
  for (const std::string& path : options_.plugin_paths) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
    if (handle == nullptr) {
      return absl::FailedPreconditionError(
          absl::StrCat("cannot load ", path, ": ", dlerror()));
    }
    using Entry = void (*)(KernelRegistry*);
    if (auto entry = reinterpret_cast<Entry>(
            dlsym(handle, "asyncrt_register_kernels"))) {
      entry(&host_->registry());
    }
  }
  RegisterStaticKernels(host_->registry(), first_plugin_registration);
  return absl::OkStatus();
}

absl::Status Runtime::LoadDevicePlugins() {
  std::vector<std::string> paths = options_.device_plugins;
  if (options_.device_plugins_from_environment) {
    if (const char* from_environment =
            std::getenv(kPluginPathEnvironmentVariable)) {
      paths.push_back(from_environment);
    }
  }
  for (const std::string& path : ExpandPluginPaths(paths)) {
    absl::StatusOr<LoadedDevicePlugin> loaded =
        LoadDevicePluginWithOptions(path);
    if (!loaded.ok()) return loaded.status();
    for (const RCReference<Device>& device : loaded->devices) {
      plugin_devices_.push_back(device->name());
    }
  }
  return absl::OkStatus();
}

absl::Status Runtime::LoadDevicePlugin(absl::string_view path) {
  return LoadDevicePluginWithOptions(path).status();
}

absl::StatusOr<LoadedDevicePlugin> Runtime::LoadDevicePluginWithOptions(
    absl::string_view path) {
  DevicePluginOptions options;
  options.memory_limits = options_.device_memory_limits;
  return asyncrt::LoadDevicePlugin(path, *core_runtime_, options);
}

absl::Status Runtime::CheckDeviceMemoryLimits() {
  for (const auto& [key, bytes] : options_.device_memory_limits) {
    if (bytes == 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("device memory limit '", key, "' is 0 bytes"));
    }
    // A device's name, or a (lower-case) type: its devices are TYPE:N.
    const std::string type_prefix =
        absl::StrCat(absl::AsciiStrToUpper(key), ":");
    const bool is_type = absl::AsciiStrToLower(key) == key;
    const bool known =
        absl::c_any_of(plugin_devices_, [&](const std::string& name) {
          return name == key ||
                 (is_type && absl::StartsWith(name, type_prefix));
        });
    if (!known) {
      return absl::InvalidArgumentError(absl::StrCat(
          "device memory limit '", key,
          "' names no device of a device plug-in (devices: ",
          plugin_devices_.empty() ? "none"
                                  : absl::StrJoin(plugin_devices_, ", "),
          "; a key is a device's name, CUDA:0, or its type, cuda)"));
    }
  }
  return absl::OkStatus();
}

absl::Status Runtime::RegisterDevices() {
  for (const std::string& device : options_.devices) {
    if (FindOpHandlerFactory(device) == nullptr) {
      return absl::InvalidArgumentError(absl::StrCat(
          "unknown device '", device,
          "' (known: ", absl::StrJoin(RegisteredDeviceTypes(), ", "), ")"));
    }
    if (core_runtime_->GetOpHandler(device) == nullptr) {
      absl::StatusOr<OpHandler*> handler = core_runtime_->CreateOpHandler(
          device, core_runtime_->CreateNullOpHandler());
      if (!handler.ok()) return handler.status();
      core_runtime_->RegisterOpHandler(device, *handler);
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<std::vector<uint8_t>> Runtime::ToBef(absl::string_view data,
                                                    absl::string_view name) {
  const bool starts_like_bef = data.size() >= 2 &&
                               static_cast<uint8_t>(data[0]) == bef::kMagic0 &&
                               static_cast<uint8_t>(data[1]) == bef::kMagic1;
  if (starts_like_bef || absl::EndsWith(name, ".bef")) {
    return std::vector<uint8_t>(data.begin(), data.end());
  }
  const char* format = absl::EndsWith(name, ".onnx") ? "onnx" : "mlir";
  ProgramTranslator translator = FindProgramTranslator(format);
  if (translator == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        "'", name, "' is not BEF, and this binary has no ", format,
        " translator (link asyncrt::", format, "_translator)"));
  }
  return translator(data, name);
}

absl::StatusOr<RCReference<BefProgram>> Runtime::LoadBef(
    std::vector<uint8_t> bytes) {
  // The file keeps the bytes alive instead of copying them.
  auto owned = std::make_shared<std::vector<uint8_t>>(std::move(bytes));
  return LoadBefInPlace(*owned, owned);
}

absl::StatusOr<RCReference<BefProgram>> Runtime::LoadBefInPlace(
    absl::Span<const uint8_t> bytes, std::shared_ptr<const void> keep_alive) {
  auto file = bef::BefFile::Open(bytes, std::move(keep_alive));
  if (!file.ok()) return file.status();
  BefProgramOptions program_options;
  program_options.mode = options_.executor_mode;
  absl::StatusOr<RCReference<BefProgram>> program =
      BefProgram::Load(*std::move(file), host_.get(), program_options);
  if (!program.ok()) return program.status();
  // An op a plug-in device lacks fails the load, not each call.
  if (absl::Status ops = CheckDeviceOps(**program, *core_runtime_); !ops.ok()) {
    return ops;
  }
  return program;
}

absl::StatusOr<RCReference<BefProgram>> Runtime::LoadProgram(
    absl::string_view data, absl::string_view name) {
  absl::StatusOr<std::vector<uint8_t>> bytes = ToBef(data, name);
  if (!bytes.ok()) return bytes.status();
  return LoadBef(*std::move(bytes));
}

namespace {

// `path` mapped read-only, or null if it cannot be (then it is read).
std::shared_ptr<const absl::Span<const uint8_t>> MapFile(
    const std::string& path) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  struct stat info;
  void* data = MAP_FAILED;
  if (fstat(fd, &info) == 0 && S_ISREG(info.st_mode) && info.st_size > 0) {
    data = mmap(nullptr, info.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
  }
  close(fd);  // The mapping stays valid.
  if (data == MAP_FAILED) return nullptr;
  const size_t size = info.st_size;
  return std::shared_ptr<const absl::Span<const uint8_t>>(
      new absl::Span<const uint8_t>(static_cast<const uint8_t*>(data), size),
      [size](const absl::Span<const uint8_t>* span) {
        munmap(const_cast<uint8_t*>(span->data()), size);
        delete span;
      });
}

}  // namespace

absl::StatusOr<RCReference<BefProgram>> Runtime::LoadProgramFile(
    absl::string_view path) {
  // BEF is mapped, not read: the file's pages are the program (a model's
  // weights included, which constant tensors view in place).
  if (auto mapped = MapFile(std::string(path))) {
    const absl::Span<const uint8_t> bytes = *mapped;
    const bool is_bef = bytes.size() >= 2 && bytes[0] == bef::kMagic0 &&
                        bytes[1] == bef::kMagic1;
    if (is_bef || absl::EndsWith(path, ".bef")) {
      return LoadBefInPlace(bytes, std::move(mapped));
    }
  }
  std::ifstream file{std::string(path), std::ios::binary};
  if (!file) {
    return absl::NotFoundError(absl::StrCat("cannot read '", path, "'"));
  }
  std::string data((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  return LoadProgram(data, path);
}

absl::StatusOr<ExecutionContext> Runtime::CreateExecutionContext() {
  auto request = RequestContextBuilder(host_.get(), &resources_,
                                       next_request_id_.fetch_add(1))
                     .Build();
  if (!request.ok()) return request.status();
  return ExecutionContext(*std::move(request));
}

std::vector<RCReference<AsyncValue>> Runtime::Call(
    const Function& function, absl::Span<AsyncValue* const> arguments) {
  std::vector<RCReference<AsyncValue>> results(function.num_results());
  absl::StatusOr<ExecutionContext> exec_ctx = CreateExecutionContext();
  if (!exec_ctx.ok()) {
    for (auto& result : results) {
      result = MakeErrorAsyncValueRef(exec_ctx.status());
    }
    return results;
  }
  function.Execute(*exec_ctx, arguments, absl::MakeSpan(results));
  return results;
}

absl::StatusOr<std::vector<RCReference<AsyncValue>>> Runtime::Call(
    const BefProgram& program, absl::string_view function_name,
    absl::Span<AsyncValue* const> arguments) {
  const Function* function = program.GetFunction(function_name);
  if (function == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no function named '", function_name, "'"));
  }
  if (function->num_arguments() != arguments.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("'", function_name, "' takes ", function->num_arguments(),
                     " arguments, got ", arguments.size()));
  }
  return Call(*function, arguments);
}

void Runtime::Await(absl::Span<const RCReference<AsyncValue>> values) {
  host_->Await(values);
}

void Runtime::Quiesce() { host_->Quiesce(); }

absl::StatusOr<std::map<std::string, uint64_t, std::less<>>>
ParseDeviceMemoryLimits(absl::string_view spec) {
  std::map<std::string, uint64_t, std::less<>> limits;
  for (absl::string_view piece : absl::StrSplit(spec, ',', absl::SkipEmpty())) {
    auto invalid = [&](absl::string_view why) {
      return absl::InvalidArgumentError(
          absl::StrCat("device memory limit '", piece, "': ", why,
                       " (expected KEY=SIZE, as CUDA:0=4GiB or sim=65536)"));
    };
    const size_t equals = piece.rfind('=');
    if (equals == absl::string_view::npos || equals == 0) {
      return invalid("no device");
    }
    absl::string_view size = piece.substr(equals + 1);
    uint64_t unit = 1;
    for (const auto& [suffix, bytes] :
         {std::pair<absl::string_view, uint64_t>{"KiB", uint64_t{1} << 10},
          {"MiB", uint64_t{1} << 20},
          {"GiB", uint64_t{1} << 30}}) {
      if (absl::ConsumeSuffix(&size, suffix)) {
        unit = bytes;
        break;
      }
    }
    uint64_t count = 0;
    if (!absl::SimpleAtoi(size, &count) || count == 0 ||
        count > UINT64_MAX / unit) {
      return invalid("the size is not a positive number of bytes");
    }
    limits[std::string(piece.substr(0, equals))] = count * unit;
  }
  return limits;
}

}  // namespace asyncrt
