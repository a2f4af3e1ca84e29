#include "asyncrt/plugin/device_plugin_loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/inlined_vector.h"
#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_handler_factory.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/tensor/dtype.h"
#include "lib/plugin/plugin_device.h"

struct AsyncRT_Registrar {
  struct Kernel {
    std::string op_name;
    AsyncRT_KernelFn compute;
    void* kernel_data;
  };
  std::vector<Kernel> kernels;
};

// One op call, as the kernel's C function sees it.
struct AsyncRT_KernelContext {
  asyncrt::OpInvocation* invocation;
  asyncrt::PluginDevice* device;
  // Outputs the kernel allocated, by index.
  // Inline for the common one to four results: no heap allocation per op.
  absl::InlinedVector<std::optional<asyncrt::DenseDeviceTensor>, 4> outputs;
};

namespace asyncrt {
namespace {

//===--- Types across the boundary ----------------------------------------===//

AsyncRT_DType ToCDType(DType dtype) {
  switch (dtype) {
    case DType::kI1:
      return ASYNCRT_DTYPE_BOOL;
    case DType::kI8:
      return ASYNCRT_DTYPE_I8;
    case DType::kI16:
      return ASYNCRT_DTYPE_I16;
    case DType::kI32:
      return ASYNCRT_DTYPE_I32;
    case DType::kI64:
      return ASYNCRT_DTYPE_I64;
    case DType::kUI8:
      return ASYNCRT_DTYPE_U8;
    case DType::kF16:
      return ASYNCRT_DTYPE_F16;
    case DType::kBF16:
      return ASYNCRT_DTYPE_BF16;
    case DType::kF32:
      return ASYNCRT_DTYPE_F32;
    case DType::kF64:
      return ASYNCRT_DTYPE_F64;
    default:
      return ASYNCRT_DTYPE_INVALID;
  }
}

void SetStatus(AsyncRT_Status* status, absl::Status value) {
  if (status != nullptr) status->status = std::move(value);
}

// Fills `view` (whose struct_size the plug-in set) from `tensor`.
void DescribeTensor(const DenseDeviceTensor& tensor, AsyncRT_TensorView* view) {
  const size_t known = view->struct_size;
  AsyncRT_TensorView full = {};
  full.struct_size = known;
  full.dtype = ToCDType(tensor.dtype());
  full.rank = tensor.shape().GetRank();
  full.dims = tensor.shape().GetDimensions().data();
  full.data = tensor.data();
  full.size_bytes = tensor.DataSizeInBytes();
  // Only the members the plug-in's header has.
  std::memcpy(view, &full, std::min(known, sizeof(full)));
}

//===--- The runtime's functions for plug-ins -----------------------------===//

void ApiSetStatus(AsyncRT_Status* status, AsyncRT_Code code,
                  const char* message) {
  SetStatus(status, code == ASYNCRT_OK ? absl::OkStatus()
                                       : StatusFromPlugin(code, message));
}

void ApiRegisterKernel(AsyncRT_Registrar* registrar,
                       const AsyncRT_KernelDef* kernel,
                       AsyncRT_Status* status) {
  if (registrar == nullptr) {
    return SetStatus(status, absl::FailedPreconditionError(
                                 "register_kernel outside AsyncRT_InitPlugin"));
  }
  if (kernel == nullptr ||
      kernel->struct_size < ASYNCRT_KERNEL_DEF_STRUCT_SIZE ||
      kernel->op_name == nullptr || kernel->op_name[0] == '\0' ||
      kernel->compute == nullptr) {
    return SetStatus(status,
                     absl::InvalidArgumentError(
                         "register_kernel: a kernel needs struct_size, an op "
                         "name and a compute function"));
  }
  registrar->kernels.push_back(
      {kernel->op_name, kernel->compute, kernel->kernel_data});
}

AsyncRT_Code ApiStatusCode(const AsyncRT_Status* status) {
  return status == nullptr
             ? ASYNCRT_OK
             : static_cast<AsyncRT_Code>(status->status.raw_code());
}

int ApiGetAttrString(const AsyncRT_KernelContext* context, const char* name,
                     const char** data, size_t* size) {
  std::optional<absl::string_view> attr =
      context->invocation->attrs.GetString(name);
  if (!attr || data == nullptr || size == nullptr) return 0;
  *data = attr->data();
  *size = attr->size();
  return 1;
}

int32_t ApiNumInputs(const AsyncRT_KernelContext* context) {
  return static_cast<int32_t>(context->invocation->arguments.size());
}

int32_t ApiNumOutputs(const AsyncRT_KernelContext* context) {
  return static_cast<int32_t>(context->invocation->results.size());
}

void ApiGetInput(const AsyncRT_KernelContext* context, int32_t index,
                 AsyncRT_TensorView* view, AsyncRT_Status* status) {
  const OpInvocation& invocation = *context->invocation;
  if (index < 0 || static_cast<size_t>(index) >= invocation.arguments.size() ||
      view == nullptr) {
    return SetStatus(status, absl::OutOfRangeError(absl::StrCat(
                                 "no input ", index, " (the op has ",
                                 invocation.arguments.size(), ")")));
  }
  const Tensor& tensor = invocation.argument(index);
  if (tensor.tensor_type() != DenseDeviceTensorType()) {
    return SetStatus(status,
                     absl::InvalidArgumentError(absl::StrCat(
                         "input ", index, " is a ", tensor.tensor_type().name(),
                         " tensor, not a dense device tensor")));
  }
  DescribeTensor(static_cast<const DenseDeviceTensor&>(tensor), view);
}

void ApiAllocateOutput(AsyncRT_KernelContext* context, int32_t index,
                       AsyncRT_TensorView* view, AsyncRT_Status* status) {
  const OpInvocation& invocation = *context->invocation;
  if (index < 0 || static_cast<size_t>(index) >= context->outputs.size() ||
      view == nullptr) {
    return SetStatus(status, absl::OutOfRangeError(absl::StrCat(
                                 "no output ", index, " (the op has ",
                                 context->outputs.size(), ")")));
  }
  std::optional<DenseDeviceTensor>& output = context->outputs[index];
  if (!output) {
    absl::StatusOr<DenseDeviceTensor> tensor = DenseDeviceTensor::Allocate(
        *context->device, invocation.result_metadata[index]);
    if (!tensor.ok()) return SetStatus(status, tensor.status());
    output = *std::move(tensor);
  }
  DescribeTensor(*output, view);
}

void ApiAliasInput(AsyncRT_KernelContext* context, int32_t input_index,
                   int32_t output_index, AsyncRT_TensorView* view,
                   AsyncRT_Status* status) {
  const OpInvocation& invocation = *context->invocation;
  if (input_index < 0 ||
      static_cast<size_t>(input_index) >= invocation.arguments.size() ||
      output_index < 0 ||
      static_cast<size_t>(output_index) >= context->outputs.size() ||
      view == nullptr) {
    return SetStatus(status, absl::OutOfRangeError(absl::StrCat(
                                 "alias_input: no input ", input_index,
                                 " or output ", output_index)));
  }
  const Tensor& tensor = invocation.argument(input_index);
  if (tensor.tensor_type() != DenseDeviceTensorType()) {
    return SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                                 "input ", input_index,
                                 " is not a dense device tensor")));
  }
  const auto& input = static_cast<const DenseDeviceTensor&>(tensor);
  const TensorMetadata& metadata = invocation.result_metadata[output_index];
  const size_t output_bytes =
      static_cast<size_t>(metadata.shape.GetNumElements()) *
      DTypeSize(metadata.dtype);
  if (output_bytes != input.DataSizeInBytes()) {
    return SetStatus(status, absl::InvalidArgumentError(absl::StrCat(
                                 "alias_input: output ", output_index, " has ",
                                 output_bytes, " bytes, input ", input_index,
                                 " ", input.DataSizeInBytes())));
  }
  std::optional<DenseDeviceTensor>& output = context->outputs[output_index];
  output.emplace(metadata, input.buffer());
  DescribeTensor(*output, view);
}

int ApiGetAttrInt(const AsyncRT_KernelContext* context, const char* name,
                  int64_t* value) {
  std::optional<int64_t> attr = context->invocation->attrs.GetInteger(name);
  if (!attr || value == nullptr) return 0;
  *value = *attr;
  return 1;
}

int ApiGetAttrFloat(const AsyncRT_KernelContext* context, const char* name,
                    double* value) {
  const OpAttrs& attrs = context->invocation->attrs;
  std::optional<double> attr;
  if (auto f = attrs.Get<float>(name)) attr = *f;
  if (auto d = attrs.Get<double>(name)) attr = *d;
  if (!attr || value == nullptr) return 0;
  *value = *attr;
  return 1;
}

int ApiGetAttrInts(const AsyncRT_KernelContext* context, const char* name,
                   int64_t* values, size_t capacity, size_t* count) {
  std::optional<absl::InlinedVector<int64_t, 4>> attr =
      context->invocation->attrs.GetIntegerArray(name);
  if (!attr || count == nullptr) return 0;
  *count = attr->size();
  if (values != nullptr) {
    std::copy_n(attr->begin(), std::min(capacity, attr->size()), values);
  }
  return 1;
}

int ApiGetAttrFloats(const AsyncRT_KernelContext* context, const char* name,
                     double* values, size_t capacity, size_t* count) {
  const OpAttrs& attrs = context->invocation->attrs;
  std::optional<absl::Span<const float>> floats = attrs.GetArray<float>(name);
  if (!floats || count == nullptr) return 0;
  *count = floats->size();
  if (values != nullptr) {
    std::copy_n(floats->begin(), std::min(capacity, floats->size()), values);
  }
  return 1;
}

int ApiGetAttrDType(const AsyncRT_KernelContext* context, const char* name,
                    AsyncRT_DType* dtype) {
  const OpAttrs& attrs = context->invocation->attrs;
  std::optional<DType> attr = attrs.Get<DType>(name);
  if (!attr) {
    if (std::optional<absl::string_view> text = attrs.GetString(name)) {
      attr = ParseDType(*text);
    }
  }
  if (!attr || dtype == nullptr) return 0;
  *dtype = ToCDType(*attr);
  return *dtype == ASYNCRT_DTYPE_INVALID ? 0 : 1;
}

const AsyncRT_Device* ApiKernelDevice(const AsyncRT_KernelContext* context) {
  return context->device->c_device();
}

AsyncRT_Stream ApiKernelStream(const AsyncRT_KernelContext* context) {
  return context->device->c_stream();
}

const AsyncRT_RuntimeApi& RuntimeApi() {
  static const AsyncRT_RuntimeApi api = {
      ASYNCRT_RUNTIME_API_STRUCT_SIZE,
      nullptr,
      ASYNCRT_PLUGIN_API_MAJOR,
      ASYNCRT_PLUGIN_API_MINOR,
      ASYNCRT_PLUGIN_API_PATCH,
      ApiSetStatus,
      ApiStatusCode,
      ApiRegisterKernel,
      ApiNumInputs,
      ApiNumOutputs,
      ApiGetInput,
      ApiAllocateOutput,
      ApiGetAttrInt,
      ApiGetAttrFloat,
      ApiGetAttrString,
      ApiKernelDevice,
      ApiKernelStream,
      ApiGetAttrInts,
      ApiGetAttrDType,
      ApiAliasInput,
      ApiGetAttrFloats,
  };
  return api;
}

//===--- Running a plug-in's kernel ---------------------------------------===//

// A registered kernel: the registry's implementation data. Never freed (the
// registry keeps entries for the process).
struct PluginKernel {
  std::string op_name;
  AsyncRT_KernelFn compute;
  void* kernel_data;
};

void FailResults(OpInvocation& invocation, const absl::Status& status) {
  RCReference<AsyncValue> error = MakeErrorAsyncValueRef(status);
  for (auto& result : invocation.results) result = error;
}

void DispatchPluginKernel(OpInvocation& invocation) {
  const auto* kernel =
      static_cast<const PluginKernel*>(invocation.implementation_data);
  auto* device = dynamic_cast<PluginDevice*>(invocation.device);
  if (device == nullptr) {
    return FailResults(invocation,
                       absl::InternalError(absl::StrCat(
                           kernel->op_name, ": not a plug-in's device")));
  }
  if (invocation.result_metadata.size() != invocation.results.size()) {
    // Without a shape function nothing says what to allocate.
    return FailResults(invocation,
                       absl::FailedPreconditionError(absl::StrCat(
                           kernel->op_name, " on ", device->name(),
                           ": the op has no shape function, which plug-in "
                           "kernels need (is its op library linked?)")));
  }
  AsyncRT_KernelContext context{&invocation, device, {}};
  context.outputs.resize(invocation.results.size());
  AsyncRT_Status status;
  kernel->compute(&context, kernel->kernel_data, &status);
  if (!status.status.ok()) {
    return FailResults(
        invocation,
        absl::Status(status.status.code(),
                     absl::StrCat(kernel->op_name, " on ", device->name(), ": ",
                                  status.status.message())));
  }
  for (size_t i = 0; i < context.outputs.size(); ++i) {
    if (!context.outputs[i]) {
      return FailResults(
          invocation,
          absl::InternalError(absl::StrCat(
              kernel->op_name, " on ", device->name(),
              ": the plug-in's kernel did not allocate output ", i)));
    }
  }
  // Available now: readers queue behind the kernel on the device's stream.
  for (size_t i = 0; i < context.outputs.size(); ++i) {
    invocation.results[i] = MakeAvailableAsyncValueRef<DenseDeviceTensor>(
        *std::move(context.outputs[i]));
  }
}

//===--- Loading ----------------------------------------------------------===//

struct LibraryCloser {
  void operator()(void* library) const {
    if (library) dlclose(library);
  }
};
using LibraryHandle = std::unique_ptr<void, LibraryCloser>;

// The first required function the plug-in left unset, or null.
const char* MissingDeviceFunction(const AsyncRT_DeviceFns& fns) {
  const std::pair<const void*, const char*> required[] = {
      {reinterpret_cast<const void*>(fns.allocate), "allocate"},
      {reinterpret_cast<const void*>(fns.deallocate), "deallocate"},
      {reinterpret_cast<const void*>(fns.create_stream), "create_stream"},
      {reinterpret_cast<const void*>(fns.destroy_stream), "destroy_stream"},
      {reinterpret_cast<const void*>(fns.create_event), "create_event"},
      {reinterpret_cast<const void*>(fns.destroy_event), "destroy_event"},
      {reinterpret_cast<const void*>(fns.record_event), "record_event"},
      {reinterpret_cast<const void*>(fns.query_event), "query_event"},
      {reinterpret_cast<const void*>(fns.wait_for_event), "wait_for_event"},
      {reinterpret_cast<const void*>(fns.memcpy_htod), "memcpy_htod"},
      {reinterpret_cast<const void*>(fns.memcpy_dtoh), "memcpy_dtoh"},
      {reinterpret_cast<const void*>(fns.memcpy_dtod), "memcpy_dtod"},
      {reinterpret_cast<const void*>(fns.host_callback), "host_callback"},
  };
  for (const auto& [fn, name] : required) {
    if (fn == nullptr) return name;
  }
  return nullptr;
}

// Checks what the plug-in's init filled in; the error says what is wrong.
absl::Status ValidatePlatform(const AsyncRT_PluginParams& params,
                              const AsyncRT_Platform& platform,
                              const AsyncRT_DeviceFns& fns,
                              CoreRuntime& runtime) {
  if (params.plugin_api_major != ASYNCRT_PLUGIN_API_MAJOR ||
      params.plugin_api_minor > ASYNCRT_PLUGIN_API_MINOR) {
    return absl::FailedPreconditionError(absl::StrCat(
        "it was built for device plug-in API ", params.plugin_api_major, ".",
        params.plugin_api_minor, ".", params.plugin_api_patch,
        ", and this runtime supports ", ASYNCRT_PLUGIN_API_MAJOR, ".0 to ",
        ASYNCRT_PLUGIN_API_MAJOR, ".", ASYNCRT_PLUGIN_API_MINOR,
        params.plugin_api_minor > ASYNCRT_PLUGIN_API_MINOR &&
                params.plugin_api_major == ASYNCRT_PLUGIN_API_MAJOR
            ? " (a newer runtime is needed)"
            : ""));
  }
  if (platform.struct_size < ASYNCRT_PLATFORM_STRUCT_SIZE ||
      fns.struct_size < ASYNCRT_DEVICE_FNS_1_0_STRUCT_SIZE) {
    return absl::FailedPreconditionError(
        "its AsyncRT_Platform or AsyncRT_DeviceFns has a struct_size smaller "
        "than API 1.0's");
  }
  if (platform.device_type == nullptr ||
      !IsValidDeviceType(platform.device_type)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "its device type '",
        platform.device_type ? platform.device_type : "(null)",
        "' is not lower-case letters, digits and '_' starting with a letter"));
  }
  if (platform.device_count < 0 || platform.create_device == nullptr ||
      platform.destroy_device == nullptr) {
    return absl::InvalidArgumentError(
        "its platform needs a device count and create_device and "
        "destroy_device");
  }
  if (const char* missing = MissingDeviceFunction(fns)) {
    return absl::InvalidArgumentError(
        absl::StrCat("its device functions lack ", missing));
  }
  if (fns.struct_size >= ASYNCRT_DEVICE_FNS_STRUCT_SIZE) {
    const int graph_functions = (fns.begin_capture != nullptr) +
                                (fns.end_capture != nullptr) +
                                (fns.launch_graph != nullptr) +
                                (fns.destroy_graph != nullptr);
    if (graph_functions != 0 && graph_functions != 4) {
      return absl::InvalidArgumentError(
          "its device functions have some of begin_capture, end_capture, "
          "launch_graph and destroy_graph: a plug-in has all four or none");
    }
  }
  const std::string type = platform.device_type;
  bool taken = FindOpHandlerFactory(type) != nullptr;
  for (const RCReference<Device>& device :
       runtime.GetHostContext()->device_manager().ListDevices()) {
    taken |= device->type() == type;
  }
  if (taken) {
    return absl::AlreadyExistsError(absl::StrCat(
        "device type '", type, "' is already registered in this runtime"));
  }
  return absl::OkStatus();
}

absl::Status Prefixed(absl::string_view path, const absl::Status& status) {
  return absl::Status(status.code(), absl::StrCat("device plug-in ", path, ": ",
                                                  status.message()));
}

}  // namespace

absl::StatusOr<LoadedDevicePlugin> LoadDevicePlugin(
    absl::string_view path, CoreRuntime& runtime,
    const DevicePluginOptions& options) {
  const std::string file(path);
  LibraryHandle library(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL));
  if (!library) {
    return absl::NotFoundError(
        absl::StrCat("cannot load device plug-in ", path, ": ", dlerror()));
  }
  auto init = reinterpret_cast<AsyncRT_InitPluginFn>(
      dlsym(library.get(), ASYNCRT_PLUGIN_INIT_SYMBOL));
  if (init == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(
        path, " is not an AsyncRT device plug-in: it does not export ",
        ASYNCRT_PLUGIN_INIT_SYMBOL));
  }
  auto platform = std::make_shared<PluginPlatform>(file, library.get());
  AsyncRT_Registrar registrar;
  AsyncRT_PluginParams params = {};
  params.struct_size = ASYNCRT_PLUGIN_PARAMS_STRUCT_SIZE;
  params.api = &RuntimeApi();
  params.platform = &platform->platform();
  params.device_fns = &platform->fns();
  params.registrar = &registrar;
  AsyncRT_Status status;
  init(&params, &status);
  if (!status.status.ok()) {
    return Prefixed(path,
                    absl::Status(status.status.code(),
                                 absl::StrCat("AsyncRT_InitPlugin failed: ",
                                              status.status.message())));
  }
  platform->set_initialized();  // From here destroy_platform is owed.
  if (absl::Status valid = ValidatePlatform(params, platform->platform(),
                                            platform->fns(), runtime);
      !valid.ok()) {
    return Prefixed(path, valid);
  }

  HostContext* host = runtime.GetHostContext();
  const AsyncRT_Platform& c_platform = platform->platform();
  LoadedDevicePlugin loaded;
  loaded.path = file;
  loaded.platform_name = c_platform.name ? c_platform.name : "";
  loaded.device_type = c_platform.device_type;
  loaded.api_version =
      absl::StrCat(params.plugin_api_major, ".", params.plugin_api_minor, ".",
                   params.plugin_api_patch);
  auto memory_limit = [&](int ordinal) -> uint64_t {
    const std::string name =
        absl::StrCat(absl::AsciiStrToUpper(loaded.device_type), ":", ordinal);
    for (const std::string& key : {name, loaded.device_type}) {
      if (auto it = options.memory_limits.find(key);
          it != options.memory_limits.end()) {
        return it->second;
      }
    }
    return 0;
  };
  for (int ordinal = 0; ordinal < c_platform.device_count; ++ordinal) {
    absl::StatusOr<RCReference<PluginDevice>> device =
        PluginDevice::Create(platform, ordinal, host, memory_limit(ordinal));
    if (!device.ok()) return Prefixed(path, device.status());
    loaded.devices.push_back(*std::move(device));
  }

  // Nothing failed: publish the kernels, the devices and their handlers.
  for (const AsyncRT_Registrar::Kernel& kernel : registrar.kernels) {
    auto* registered =
        new PluginKernel{kernel.op_name, kernel.compute, kernel.kernel_data};
    OpRegistry::Global().AddDispatch(kernel.op_name, loaded.device_type,
                                     DispatchPluginKernel, kOpAcceptsAnyTensor,
                                     registered);
  }
  for (const RCReference<Device>& device : loaded.devices) {
    host->device_manager().MaybeAddDevice(device);
    OpHandler* handler = runtime.CreateDeviceOpHandler(device.get(), nullptr);
    runtime.RegisterOpHandler(device->name(), handler);
    if (device->index() == 0) {
      runtime.RegisterOpHandler(loaded.device_type, handler);
    }
  }
  // Kernels point into the library: it stays loaded for the process.
  (void)library.release();
  return loaded;
}

std::vector<std::string> ExpandPluginPaths(
    const std::vector<std::string>& paths) {
  std::vector<std::string> files;
  for (const std::string& entry : paths) {
    for (absl::string_view piece :
         absl::StrSplit(entry, ':', absl::SkipEmpty())) {
      const std::string path(piece);
      struct stat info;
      if (stat(path.c_str(), &info) != 0 || !S_ISDIR(info.st_mode)) {
        files.push_back(path);
        continue;
      }
      std::vector<std::string> in_directory;
      if (DIR* dir = opendir(path.c_str())) {
        while (dirent* item = readdir(dir)) {
          const std::string name = item->d_name;
          if (name.size() > 3 && name.compare(name.size() - 3, 3, ".so") == 0) {
            in_directory.push_back(absl::StrCat(path, "/", name));
          }
        }
        closedir(dir);
      }
      std::sort(in_directory.begin(), in_directory.end());
      files.insert(files.end(), in_directory.begin(), in_directory.end());
    }
  }
  return files;
}

}  // namespace asyncrt
