// Device plug-ins through the C API: the example simulated accelerator runs
// relu, add and matmul on its devices in eager mode with explicit copies;
// each bad plug-in is a clear error naming its file that leaves the runtime
// usable; a synchronous plug-in (callbacks before host_callback returns)
// works too; nothing leaks (device memory, devices, platforms); concurrent
// ops and copies (run under ThreadSanitizer); copies to and from the host run
// on copy streams, after the work before them and beside the work after.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/plugin/device_plugin_loader.h"
#include "asyncrt/runtime/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/plugin/plugin_device.h"
#include "testing/device_test_util.h"

namespace asyncrt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class DevicePluginTest : public ::testing::Test {
 protected:
  // A runtime with `plugins` loaded (none from the environment).
  std::unique_ptr<Runtime> MakeRuntime(
      std::vector<std::string> plugins = {},
      std::map<std::string, uint64_t, std::less<>> memory_limits = {}) {
    RuntimeOptions options;
    options.work_queue = "mstd:2";
    options.device_plugins = std::move(plugins);
    options.device_plugins_from_environment = false;
    options.device_memory_limits = std::move(memory_limits);
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    EXPECT_TRUE(runtime.ok()) << runtime.status();
    if (!runtime.ok()) return nullptr;
    exec_ctx_.emplace(*(*runtime)->CreateExecutionContext());
    return *std::move(runtime);
  }

  void TearDown() override {
    exec_ctx_.reset();
    // Every device's memory is back (a plug-in's allocator counts it).
    if (runtime_) {
      runtime_->Quiesce();
      for (const RCReference<Device>& device :
           runtime_->host().device_manager().ListDevices()) {
        if (StreamDevice* stream_device = AsStreamDevice(device.get())) {
          testing::DrainDevice(runtime_->host(), *stream_device);
          EXPECT_EQ(stream_device->allocator().GetStats().live_bytes, 0)
              << device->name();
          EXPECT_EQ(stream_device->host_allocator().GetStats().live_bytes, 0)
              << device->name() << " staging";
        }
      }
    }
  }

  static bool HaveNnOps() {
    const OpEntry* relu = OpRegistry::Global().Find("nn.relu");
    return relu != nullptr && relu->metadata_fn != nullptr;
  }

  Device& FindDevice(absl::string_view name) {
    absl::StatusOr<RCReference<Device>> device =
        runtime_->host().device_manager().FindDevice(name);
    EXPECT_TRUE(device.ok()) << device.status();
    return **device;
  }

  TensorHandle Floats(std::vector<int64_t> shape, std::vector<float> values) {
    return *runtime_->core_runtime().MakeDenseTensorHandle<float>(shape,
                                                                  values);
  }

  TensorHandle Run(absl::string_view op, absl::string_view handler,
                   std::vector<const TensorHandle*> args) {
    std::vector<TensorHandle> copies;
    for (const TensorHandle* arg : args) copies.push_back(arg->CopyRef());
    TensorHandle result;
    runtime_->core_runtime().Execute(
        *exec_ctx_, op, runtime_->core_runtime().GetOpHandler(handler),
        absl::MakeSpan(copies), OpAttrs().Freeze(),
        absl::MakeSpan(&result, 1), nullptr);
    return result;
  }

  // The handle's values, copied to the host; empty on error.
  std::vector<float> HostValues(const TensorHandle& handle) {
    TensorHandle host =
        handle.TransferTo(*exec_ctx_, runtime_->host().host_device());
    const Tensor* tensor = runtime_->core_runtime().Await(host);
    if (tensor == nullptr) {
      ADD_FAILURE() << host.DebugString();
      return {};
    }
    auto elements = static_cast<const DenseHostTensor*>(tensor)
                        ->elements<float>();
    return std::vector<float>(elements.begin(), elements.end());
  }

  std::string ErrorOf(const TensorHandle& handle) {
    runtime_->core_runtime().Await(handle);
    const absl::Status* error = handle.GetErrorIfPresent();
    return error ? std::string(error->message()) : "<no error>";
  }

  // Whether `value` becomes available within 10 s (polled: a test must
  // not hang when the work it waits for is held).
  static bool AvailableSoon(AsyncValue* value) {
    for (int i = 0; i < 10000 && !value->IsAvailable(); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return value->IsAvailable();
  }

  std::unique_ptr<Runtime> runtime_;
  std::optional<ExecutionContext> exec_ctx_;
};

// Holds one of a simulated device's streams until Open(): the stream waits
// for an event of a third stream, whose thread is held by a callback (the
// simulated accelerator runs callbacks on the stream's thread).
class StreamGate {
 public:
  StreamGate(const PluginDevice& device, AsyncRT_Stream held)
      : device_(device) {
    const AsyncRT_DeviceFns& fns = device.platform().fns();
    AsyncRT_Status status;
    fns.create_stream(device.c_device(), &gate_, &status);
    fns.host_callback(device.c_device(), gate_, &StreamGate::Hold, this,
                      &status);
    fns.create_event(device.c_device(), &event_, &status);
    fns.record_event(device.c_device(), gate_, event_, &status);
    fns.wait_for_event(device.c_device(), held, event_, &status);
    EXPECT_TRUE(status.status.ok()) << status.status;
  }
  ~StreamGate() {
    Open();
    const AsyncRT_DeviceFns& fns = device_.platform().fns();
    fns.destroy_event(device_.c_device(), event_);
    fns.destroy_stream(device_.c_device(), gate_);
  }
  void Open() {
    if (!opened_.HasBeenNotified()) opened_.Notify();
  }

 private:
  static void Hold(void* arg, AsyncRT_Code, const char*) {
    static_cast<StreamGate*>(arg)->opened_.WaitForNotification();
  }

  const PluginDevice& device_;
  AsyncRT_Stream gate_ = nullptr;
  AsyncRT_Event event_ = nullptr;
  absl::Notification opened_;
};

TEST_F(DevicePluginTest, TheExampleAcceleratorRunsReluAddAndMatmul) {
  runtime_ = MakeRuntime({SIM_PLUGIN});
  ASSERT_NE(runtime_, nullptr);
  if (!HaveNnOps()) GTEST_SKIP() << "the nn.* op library is not linked";
  Device& sim = FindDevice("SIM:0");
  EXPECT_EQ(sim.type(), "sim");
  EXPECT_THAT(sim.physical_description(),
              HasSubstr("Example simulated accelerator"));
  EXPECT_GT(sim.memory_limit_bytes(), 0u);

  TensorHandle x = Floats({2, 2}, {-1, 2, -3, 4}).TransferTo(*exec_ctx_, sim);
  TensorHandle relu = Run("nn.relu", "sim", {&x});
  EXPECT_EQ(relu.device(), &sim);
  EXPECT_EQ(runtime_->core_runtime().Await(relu)->tensor_type(),
            DenseDeviceTensorType());
  EXPECT_THAT(HostValues(relu), ElementsAre(0, 2, 0, 4));
  TensorHandle sum = Run("nn.add", "SIM:0", {&x, &relu});
  EXPECT_THAT(HostValues(sum), ElementsAre(-1, 4, -3, 8));
  TensorHandle product = Run("nn.matmul", "sim", {&x, &x});
  EXPECT_THAT(HostValues(product), ElementsAre(-5, 6, -9, 10));
}

TEST_F(DevicePluginTest, MixingHostAndDeviceTensorsIsAnError) {
  runtime_ = MakeRuntime({SIM_PLUGIN});
  ASSERT_NE(runtime_, nullptr);
  if (!HaveNnOps()) GTEST_SKIP() << "the nn.* op library is not linked";
  TensorHandle host = Floats({2}, {1, 2});
  TensorHandle on_sim = host.TransferTo(*exec_ctx_, FindDevice("SIM:0"));
  EXPECT_EQ(ErrorOf(Run("nn.add", "sim", {&on_sim, &host})),
            "nn.add runs on SIM:0 but its argument 1 is on CPU:0: copy it "
            "there first (TensorHandle::TransferTo, or corert.transfer in a "
            "program)");
  EXPECT_THAT(ErrorOf(Run("nn.add", "cpu", {&host, &on_sim})),
              HasSubstr("nn.add runs on CPU:0 but its argument 1 is on SIM:0"));
  // An op the plug-in has no kernel for names the op and the device.
  EXPECT_EQ(ErrorOf(Run("nn.sigmoid", "sim", {&on_sim})),
            "nn.sigmoid has no implementation for SIM:0 (device type sim)");
  // A kernel's own refusal names the op and the device.
  TensorHandle matrix = Floats({1, 2}, {1, 2}).TransferTo(*exec_ctx_,
                                                          FindDevice("SIM:0"));
  EXPECT_THAT(ErrorOf(Run("nn.add", "sim", {&on_sim, &matrix})),
              HasSubstr("nn.add on SIM:0: sim:"));
}

// A program that runs ops a plug-in device lacks fails to load, each op
// reported at its location; the CPU's handler (which falls back, as TFRT's
// programs expect) and handlers no one registered are left to run time.
TEST_F(DevicePluginTest, OpsTheDeviceLacksFailTheProgramsLoad) {
  std::vector<std::string> diagnostics;
  std::mutex mutex;
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  options.device_plugins = {SIM_PLUGIN};
  options.device_plugins_from_environment = false;
  options.diagnostic_handler = [&](const DecodedDiagnostic& diagnostic) {
    std::lock_guard<std::mutex> lock(mutex);
    diagnostics.push_back(diagnostic.ToString());
  };
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  if (!HaveNnOps()) GTEST_SKIP() << "the nn.* op library is not linked";
  // f(): %sim = get_op_handler "SIM:0"; %cpu = get_op_handler "cpu";
  // %other = get_op_handler "GPU:7"; then one executeop per (handler, op).
  auto program = [](std::vector<std::pair<int, const char*>> ops) {
    bef::BefWriter w;
    const uint32_t fn = w.DeclareFunction("f", bef::FunctionKind::kBef, {}, {});
    bef::FunctionBodySpec body;
    const char* handlers[] = {"SIM:0", "cpu", "GPU:7"};
    for (const char* name : handlers) {
      bef::KernelSpec get;
      get.kernel_name = w.AddKernelName("corert.get_op_handler");
      get.location = w.AddLocation("f.mlir", 1, 1);
      get.results = {body.num_registers++};
      get.attributes = {
          {w.AddString("op_handler_name"), w.AddStringAttribute(name)}};
      body.kernels.push_back(get);
    }
    uint32_t line = 2;
    for (const auto& [handler, op] : ops) {
      bef::KernelSpec execute;
      execute.kernel_name = w.AddKernelName("corert.executeop");
      execute.location = w.AddLocation("f.mlir", line++, 5);
      execute.operands = {static_cast<uint32_t>(handler)};
      execute.results = {body.num_registers++};
      execute.attributes = {{w.AddString("op_name"), w.AddStringAttribute(op)}};
      body.kernels.push_back(execute);
    }
    w.DefineFunction(fn, body);
    return *w.Finish();
  };
  // Ops SIM has, and anything at all on the CPU or an unknown handler.
  EXPECT_TRUE((*runtime)
                  ->LoadBef(program({{0, "nn.relu"},
                                     {0, "nn.matmul"},
                                     {1, "no.such_op"},
                                     {2, "nn.sigmoid"}}))
                  .ok());
  EXPECT_TRUE(diagnostics.empty());
  absl::StatusOr<RCReference<BefProgram>> lacking = (*runtime)->LoadBef(
      program({{0, "nn.relu"}, {0, "nn.sigmoid"}, {0, "no.such_op"}}));
  EXPECT_EQ(lacking.status().code(), absl::StatusCode::kNotFound);
  EXPECT_EQ(lacking.status().message(),
            "the program runs 2 ops on a device that has no implementation "
            "of them: nn.sigmoid has no implementation for SIM:0 (device "
            "type sim) (and more: see the diagnostics)");
  std::lock_guard<std::mutex> lock(mutex);
  EXPECT_THAT(diagnostics,
              ElementsAre("f.mlir:3:5: error: nn.sigmoid has no "
                          "implementation for SIM:0 (device type sim)",
                          "f.mlir:4:5: error: unknown op no.such_op: there is "
                          "no implementation for SIM:0 (device type sim)"));
}

TEST_F(DevicePluginTest, BadPluginsAreErrorsNamingTheFile) {
  runtime_ = MakeRuntime();
  ASSERT_NE(runtime_, nullptr);
  struct Case {
    const char* path;
    const char* message;
  };
  const Case cases[] = {
      {"/nonexistent/plugin.so", "cannot load device plug-in"},
      {TEST_PLUGIN_NO_INIT, "is not an AsyncRT device plug-in: it does not "
                            "export AsyncRT_InitPlugin"},
      {TEST_PLUGIN_NEWER_MINOR,
       "it was built for device plug-in API 1.99.0, and this runtime "
       "supports 1.0 to 1.4 (a newer runtime is needed)"},
      {TEST_PLUGIN_OTHER_MAJOR, "built for device plug-in API 2."},
      {TEST_PLUGIN_CPU_TYPE,
       "device type 'cpu' is already registered in this runtime"},
      {TEST_PLUGIN_FAILING_INIT,
       "AsyncRT_InitPlugin failed: no accelerator found"},
      {TEST_PLUGIN_NO_DTOD, "its device functions lack memcpy_dtod"},
      {TEST_PLUGIN_SOME_GRAPH_FNS,
       "some of begin_capture, end_capture, launch_graph and destroy_graph"},
      {TEST_PLUGIN_FAILING_DEVICE, "creating device 1: device 1 is unplugged"},
  };
  const bool registered_before = OpRegistry::Global().HasDeviceType("syncdev");
  for (const Case& c : cases) {
    absl::Status status = runtime_->LoadDevicePlugin(c.path);
    EXPECT_FALSE(status.ok()) << c.path;
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.path));
    EXPECT_THAT(std::string(status.message()), HasSubstr(c.message));
  }
  // Nothing was left behind: only the host is a device, no handler or
  // kernel was added, and the refused plug-in's devices and platform are
  // gone again.
  EXPECT_EQ(runtime_->host().device_manager().ListDevices().size(), 1u);
  EXPECT_EQ(runtime_->core_runtime().GetOpHandler("syncdev"), nullptr);
  EXPECT_EQ(OpRegistry::Global().HasDeviceType("syncdev"), registered_before);
  // The runtime stays usable: a good plug-in loads and runs.
  ASSERT_TRUE(runtime_->LoadDevicePlugin(TEST_PLUGIN_GOOD).ok());
  // A second load of the same device type is refused.
  EXPECT_THAT(runtime_->LoadDevicePlugin(TEST_PLUGIN_GOOD).message(),
              HasSubstr("device type 'syncdev' is already registered"));
}

absl::Status SameMetadata(ArgumentMetadata args, const OpAttrs&,
                          absl::Span<TensorMetadata> results) {
  results[0] = args[0];
  return absl::OkStatus();
}

TEST_F(DevicePluginTest, ASynchronousPluginWorksAndLeaksNothing) {
  OpRegistry::Global().AddOp("test_plugin.identity", SameMetadata);
  void* library = dlopen(TEST_PLUGIN_GOOD, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(library, nullptr);
  auto live = reinterpret_cast<int (*)()>(dlsym(library, "TestPluginLive"));
  ASSERT_NE(live, nullptr);
  const int live_before = live();
  {
    runtime_ = MakeRuntime({TEST_PLUGIN_GOOD});
    ASSERT_NE(runtime_, nullptr);
    EXPECT_EQ(live(), live_before + 3);  // The platform and two devices.
    {
      Device& second = FindDevice("/device:SYNCDEV:1");
      TensorHandle x = Floats({3}, {1, 2, 3}).TransferTo(*exec_ctx_, second);
      TensorHandle copy = Run("test_plugin.identity", "SYNCDEV:1", {&x});
      EXPECT_THAT(HostValues(copy), ElementsAre(1, 2, 3));
      // Between the plug-in's two devices, through the host.
      TensorHandle moved =
          copy.TransferTo(*exec_ctx_, FindDevice("SYNCDEV:0"));
      EXPECT_THAT(HostValues(moved), ElementsAre(1, 2, 3));
    }
    TearDown();  // Checks that no device memory is live.
    runtime_.reset();
  }
  EXPECT_EQ(live(), live_before);  // Devices and platform destroyed.
  dlclose(library);
}

TEST_F(DevicePluginTest, PluginPathsExpandDirectoriesAndColonLists) {
  const std::string good = TEST_PLUGIN_GOOD;
  const std::string dir = good.substr(0, good.rfind('/'));
  std::vector<std::string> files =
      ExpandPluginPaths({"/a.so:/b.so", "", dir});
  ASSERT_GE(files.size(), 3u);
  EXPECT_EQ(files[0], "/a.so");
  EXPECT_EQ(files[1], "/b.so");
  EXPECT_THAT(files, ::testing::Contains(good));
}

TEST_F(DevicePluginTest, TheEnvironmentNamesPluginsToLoad) {
  setenv("ASYNCRT_PLUGIN_PATH", TEST_PLUGIN_FAILING_INIT, 1);
  RuntimeOptions options;
  options.work_queue = "s";
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  unsetenv("ASYNCRT_PLUGIN_PATH");
  ASSERT_FALSE(runtime.ok());
  EXPECT_THAT(runtime.status().message(),
              HasSubstr(TEST_PLUGIN_FAILING_INIT));
}

TEST_F(DevicePluginTest, OutOfDeviceMemoryIsAnErrorOnTheOp) {
  setenv("ASYNCRT_SIM_MEMORY_BYTES", "4096", 1);
  runtime_ = MakeRuntime({SIM_PLUGIN});
  unsetenv("ASYNCRT_SIM_MEMORY_BYTES");
  ASSERT_NE(runtime_, nullptr);
  TensorHandle big = Floats({4096}, {1.0f});
  EXPECT_THAT(ErrorOf(big.TransferTo(*exec_ctx_, FindDevice("SIM:0"))),
              HasSubstr("SIM:0: out of memory allocating 16384 bytes"));
}

// RuntimeOptions::device_memory_limits: the example plug-in sizes its
// memory to the limit asked for (API 1.3), by device name or by type.
TEST_F(DevicePluginTest, AMemoryLimitPerDeviceIsKept) {
  setenv("ASYNCRT_SIM_DEVICE_COUNT", "2", 1);
  runtime_ = MakeRuntime({SIM_PLUGIN}, {{"SIM:1", 8192}, {"sim", 65536}});
  unsetenv("ASYNCRT_SIM_DEVICE_COUNT");
  ASSERT_NE(runtime_, nullptr);
  EXPECT_EQ(FindDevice("SIM:0").memory_limit_bytes(), 65536u);
  EXPECT_EQ(FindDevice("SIM:1").memory_limit_bytes(), 8192u);
  // 16 KiB fits SIM:0, not SIM:1.
  TensorHandle values = Floats({4096}, {1.0f});
  TensorHandle on_first = values.TransferTo(*exec_ctx_, FindDevice("SIM:0"));
  EXPECT_EQ(HostValues(on_first).size(), 4096u);
  EXPECT_THAT(ErrorOf(values.TransferTo(*exec_ctx_, FindDevice("SIM:1"))),
              HasSubstr("SIM:1: out of memory allocating 16384 bytes"));
}

// A plug-in that does not read the request (the test plug-in, as one built
// for API 1.2 would) reports its own limit: the runtime keeps to the
// smaller.
TEST_F(DevicePluginTest, TheRuntimeKeepsAMemoryLimitThePluginIgnores) {
  runtime_ = MakeRuntime({TEST_PLUGIN_GOOD}, {{"syncdev", 4096}});
  ASSERT_NE(runtime_, nullptr);
  Device& device = FindDevice("SYNCDEV:0");
  EXPECT_EQ(device.memory_limit_bytes(), 4096u);
  EXPECT_THAT(ErrorOf(Floats({4096}, {1.0f}).TransferTo(*exec_ctx_, device)),
              HasSubstr("SYNCDEV:0: out of memory allocating 16384 bytes"));
  // A limit above the plug-in's own (1 MiB) leaves the plug-in's.
  runtime_.reset();
  runtime_ = MakeRuntime({TEST_PLUGIN_GOOD}, {{"SYNCDEV:1", 1 << 30}});
  ASSERT_NE(runtime_, nullptr);
  EXPECT_EQ(FindDevice("SYNCDEV:1").memory_limit_bytes(), 1u << 20);
}

TEST_F(DevicePluginTest, AMemoryLimitForNoDeviceIsAnError) {
  for (const auto& [key, bytes, error] :
       std::vector<std::tuple<std::string, uint64_t, std::string>>{
           {"SIM:7", 1024,
            "'SIM:7' names no device of a device plug-in "
            "(devices: SIM:0"},
           {"gpu", 1024, "'gpu' names no device"},
           {"SIM", 1024, "'SIM' names no device"},  // Types are lower-case.
           {"CPU:0", 1024, "'CPU:0' names no device"},
           {"sim", 0, "device memory limit 'sim' is 0 bytes"}}) {
    RuntimeOptions options;
    options.work_queue = "s";
    options.device_plugins = {SIM_PLUGIN};
    options.device_plugins_from_environment = false;
    options.device_memory_limits = {{key, bytes}};
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    ASSERT_FALSE(runtime.ok()) << key;
    EXPECT_EQ(runtime.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(runtime.status().message(), HasSubstr(error));
  }
}

// A plug-in's own memory accounting (memory_stats, API 1.1) reaches the
// runtime: the example's arena counts what it hands out and its peak.
TEST_F(DevicePluginTest, BackendMemoryStatsComeFromThePlugin) {
  runtime_ = MakeRuntime({SIM_PLUGIN});
  ASSERT_NE(runtime_, nullptr);
  auto* sim = AsStreamDevice(&FindDevice("SIM:0"));
  ASSERT_NE(sim, nullptr);
  std::optional<StreamDevice::BackendMemoryStats> before =
      sim->GetBackendMemoryStats();
  ASSERT_TRUE(before.has_value());
  EXPECT_EQ(before->in_use_bytes, 0u);
  {
    TensorHandle x = Floats({1024}, {1.0f}).TransferTo(*exec_ctx_, *sim);
    ASSERT_EQ(ErrorOf(x), "<no error>");
    std::optional<StreamDevice::BackendMemoryStats> during =
        sim->GetBackendMemoryStats();
    ASSERT_TRUE(during.has_value());
    EXPECT_GE(during->in_use_bytes, 4096u);
    EXPECT_GE(during->peak_reserved_bytes, during->in_use_bytes);
    EXPECT_EQ(during->cached_bytes, 0u);  // The arena caches nothing.
  }
  testing::DrainDevice(runtime_->host(), *sim);
  std::optional<StreamDevice::BackendMemoryStats> after =
      sim->GetBackendMemoryStats();
  ASSERT_TRUE(after.has_value());
  EXPECT_EQ(after->in_use_bytes, 0u);
  EXPECT_GE(after->peak_reserved_bytes, 4096u);
  // The host has none.
  EXPECT_EQ(AsStreamDevice(&runtime_->host().host_device()), nullptr);
}

TEST_F(DevicePluginTest, ConcurrentOpsAndCopiesStress) {
  setenv("ASYNCRT_SIM_DEVICE_COUNT", "2", 1);
  runtime_ = MakeRuntime({SIM_PLUGIN});
  unsetenv("ASYNCRT_SIM_DEVICE_COUNT");
  ASSERT_NE(runtime_, nullptr);
  if (!HaveNnOps()) GTEST_SKIP() << "the nn.* op library is not linked";
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      Device& device = FindDevice(t % 2 == 0 ? "SIM:0" : "SIM:1");
      for (int i = 0; i < 50; ++i) {
        const float value = static_cast<float>(t * 100 + i);
        TensorHandle x =
            Floats({2}, {-value, value}).TransferTo(*exec_ctx_, device);
        TensorHandle relu =
            Run("nn.relu", t % 2 == 0 ? "SIM:0" : "SIM:1", {&x});
        if (HostValues(relu) != std::vector<float>{0, value}) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

// A copy to the host waits on its own stream: device work enqueued after it
// runs meanwhile (with one stream it would wait behind the copy).
TEST_F(DevicePluginTest, HostCopiesDoNotHoldUpLaterWork) {
  runtime_ = MakeRuntime({SIM_PLUGIN});
  ASSERT_NE(runtime_, nullptr);
  if (!HaveNnOps()) GTEST_SKIP() << "the nn.* op library is not linked";
  auto* sim = dynamic_cast<PluginDevice*>(&FindDevice("SIM:0"));
  ASSERT_NE(sim, nullptr);
  TensorHandle x = Floats({2}, {-1, 2}).TransferTo(*exec_ctx_, *sim);
  ASSERT_EQ(ErrorOf(x), "<no error>");
  AsyncRT_Stream to_host = sim->c_copy_stream(CopyDirection::kDeviceToHost);
  ASSERT_NE(to_host, nullptr);
  ASSERT_NE(to_host, sim->c_stream());
  StreamGate gate(*sim, to_host);
  TensorHandle copied =
      x.TransferTo(*exec_ctx_, runtime_->host().host_device());
  TensorHandle y = Run("nn.relu", "SIM:0", {&x});
  RCReference<AsyncValue> relu_done = sim->stream()->OnDone();
  EXPECT_TRUE(AvailableSoon(relu_done.get()));
  EXPECT_FALSE(copied.GetAsyncTensor()->IsAvailable());
  gate.Open();
  const Tensor* host = runtime_->core_runtime().Await(copied);
  ASSERT_NE(host, nullptr) << copied.DebugString();
  EXPECT_THAT(static_cast<const DenseHostTensor*>(host)->elements<float>(),
              ElementsAre(-1, 2));
  EXPECT_THAT(HostValues(y), ElementsAre(0, 2));
}

// A copy to the device starts after the work enqueued before it: memory
// freed in stream order while a queued kernel still reads it may be the
// copy's destination, and the kernel must read the old values.
TEST_F(DevicePluginTest, HostCopiesWaitForEarlierWorkOnTheirMemory) {
  runtime_ = MakeRuntime({SIM_PLUGIN});
  ASSERT_NE(runtime_, nullptr);
  if (!HaveNnOps()) GTEST_SKIP() << "the nn.* op library is not linked";
  auto* sim = dynamic_cast<PluginDevice*>(&FindDevice("SIM:0"));
  ASSERT_NE(sim, nullptr);
  std::vector<float> first(256), second(256);
  for (int i = 0; i < 256; ++i) {
    first[i] = static_cast<float>(i % 2 == 0 ? i : -i);
    second[i] = static_cast<float>(1000 + i);
  }
  TensorHandle x = Floats({256}, first).TransferTo(*exec_ctx_, *sim);
  ASSERT_EQ(ErrorOf(x), "<no error>");
  // The copy's completion lets go of its reference to x on the blocking
  // pool, maybe just after x is available: x's handle must be the last.
  runtime_->Quiesce();
  const void* x_address =
      static_cast<const DenseDeviceTensor*>(runtime_->core_runtime().Await(x))
          ->data();
  std::vector<float> expected(256);
  for (int i = 0; i < 256; ++i) expected[i] = std::max(first[i], 0.f);
  TensorHandle y, z;
  {
    StreamGate gate(*sim, sim->c_stream());
    y = Run("nn.relu", "SIM:0", {&x});
    x = TensorHandle();  // Freed now; the queued relu still reads it.
    z = Floats({256}, second).TransferTo(*exec_ctx_, *sim);
  }
  const auto* z_tensor =
      static_cast<const DenseDeviceTensor*>(runtime_->core_runtime().Await(z));
  ASSERT_NE(z_tensor, nullptr) << z.DebugString();
  // The copy was given the relu's input memory: the case this is about.
  ASSERT_EQ(z_tensor->data(), x_address);
  EXPECT_EQ(HostValues(y), expected);
  EXPECT_EQ(HostValues(z), second);
}

// A failure the runtime keeps for the compute stream (a wait for another
// backend's event, which the plug-in cannot do) fails later copies on the
// copy streams too, as it would on the compute stream itself.
TEST_F(DevicePluginTest, ACopyAfterAFailedComputeStreamFails) {
  runtime_ = MakeRuntime({SIM_PLUGIN});
  ASSERT_NE(runtime_, nullptr);
  auto* sim = AsStreamDevice(&FindDevice("SIM:0"));
  TensorHandle x = Floats({2}, {1, 2}).TransferTo(*exec_ctx_, *sim);
  ASSERT_EQ(ErrorOf(x), "<no error>");
  sim->stream()->WaitForEvent(MakeRef<DeviceEvent>());
  TensorHandle back = x.TransferTo(*exec_ctx_, runtime_->host().host_device());
  EXPECT_THAT(ErrorOf(back), HasSubstr("cannot wait on the device"));
  TensorHandle y = Floats({2}, {3, 4}).TransferTo(*exec_ctx_, *sim);
  EXPECT_THAT(ErrorOf(y), HasSubstr("cannot wait on the device"));
}

// Where the plug-in has pinned host memory, copies go through it, and it is
// given back once they are done.
TEST_F(DevicePluginTest, HostCopiesStageInPinnedMemory) {
  runtime_ = MakeRuntime({SIM_PLUGIN});
  ASSERT_NE(runtime_, nullptr);
  auto* sim = AsStreamDevice(&FindDevice("SIM:0"));
  ASSERT_TRUE(sim->StagesHostCopies());
  const int64_t before = sim->host_allocator().GetStats().total_allocations;
  TensorHandle x = Floats({3}, {1, -2, 3}).TransferTo(*exec_ctx_, *sim);
  EXPECT_THAT(HostValues(x), ElementsAre(1, -2, 3));
  EXPECT_EQ(sim->host_allocator().GetStats().total_allocations, before + 2);
}

// A host tensor copied from a device lives in the plug-in's pinned memory;
// it may outlive the runtime (the device stays until the tensor goes).
TEST_F(DevicePluginTest, AHostCopyOutlivesTheRuntime) {
  runtime_ = MakeRuntime({SIM_PLUGIN});
  ASSERT_NE(runtime_, nullptr);
  TensorHandle x =
      Floats({3}, {1, 2, 3}).TransferTo(*exec_ctx_, FindDevice("SIM:0"));
  TensorHandle copied =
      x.TransferTo(*exec_ctx_, runtime_->host().host_device());
  ASSERT_EQ(ErrorOf(copied), "<no error>");
  RCReference<AsyncValue> tensor = copied.CopyTensorRef();
  x = TensorHandle();
  copied = TensorHandle();
  exec_ctx_.reset();
  runtime_.reset();
  EXPECT_THAT(tensor->get<DenseHostTensor>().elements<float>(),
              ElementsAre(1, 2, 3));
}

// Staging holds at most 64 MiB of pinned memory: a copy past that, here
// while a 40 MiB result copied to the host still holds its pinned memory,
// goes from the caller's memory.
TEST_F(DevicePluginTest, StagingStaysWithinItsBudget) {
  setenv("ASYNCRT_SIM_MEMORY_BYTES", "268435456", 1);
  runtime_ = MakeRuntime({SIM_PLUGIN});
  unsetenv("ASYNCRT_SIM_MEMORY_BYTES");
  ASSERT_NE(runtime_, nullptr);
  auto* sim = AsStreamDevice(&FindDevice("SIM:0"));
  const int64_t n = int64_t{10} << 20;  // 40 MiB of floats.
  std::vector<float> values(n, 1.5f);
  TensorHandle x = Floats({n}, values).TransferTo(*exec_ctx_, *sim);
  ASSERT_EQ(ErrorOf(x), "<no error>");
  // Its staging buffer goes back as the copy's completion finishes, maybe
  // just after x is available.
  runtime_->Quiesce();
  TensorHandle held = x.TransferTo(*exec_ctx_, runtime_->host().host_device());
  ASSERT_EQ(ErrorOf(held), "<no error>");
  const DeviceAllocator::Stats staged = sim->host_allocator().GetStats();
  EXPECT_GE(staged.live_bytes, n * 4);
  // Past the budget: neither copy stages, and both are still right.
  TensorHandle y = Floats({n}, values).TransferTo(*exec_ctx_, *sim);
  std::vector<float> back = HostValues(y);
  EXPECT_EQ(sim->host_allocator().GetStats().total_allocations,
            staged.total_allocations);
  EXPECT_EQ(back, values);
}

}  // namespace
}  // namespace asyncrt
