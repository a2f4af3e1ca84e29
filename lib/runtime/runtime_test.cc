#include "asyncrt/runtime/runtime.h"

#include <atomic>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/native_function.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_handler_factory.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/runtime/program_translator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

// add(x) = x + 40 + 2, on the tfrt kernels the runtime links.
std::vector<uint8_t> AdderProgram() {
  bef::BefWriter w;
  uint32_t i32 = w.AddType("i32");
  uint32_t fn = w.DeclareFunction("add", bef::FunctionKind::kBef, {i32}, {i32});
  uint32_t value = w.AddString("value");
  bef::FunctionBodySpec body;
  body.num_registers = 5;
  body.argument_registers = {0};
  auto kernel = [&](const char* name, std::vector<uint32_t> operands,
                    uint32_t result) -> bef::KernelSpec& {
    bef::KernelSpec& k = body.kernels.emplace_back();
    k.kernel_name = w.AddKernelName(name);
    k.location = w.AddLocation("adder.mlir", body.kernels.size(), 3);
    k.operands = std::move(operands);
    k.results = {result};
    return k;
  };
  kernel("tfrt.constant.i32", {}, 1).attributes = {
      {value, w.AddI32Attribute(40)}};
  kernel("tfrt.constant.i32", {}, 2).attributes = {
      {value, w.AddI32Attribute(2)}};
  kernel("tfrt.add.i32", {0, 1}, 3);
  kernel("tfrt.add.i32", {3, 2}, 4);
  body.result_registers = {4};
  w.DefineFunction(fn, body);
  return *w.Finish();
}

std::string AsString(const std::vector<uint8_t>& bytes) {
  return std::string(bytes.begin(), bytes.end());
}

RuntimeOptions TestOptions(ExecutorMode mode = ExecutorMode::kFast) {
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  options.executor_mode = mode;
  return options;
}

TEST(RuntimeTest, RegistersEveryLinkedLibrary) {
  auto runtime = Runtime::Create(TestOptions());
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  const KernelRegistry& kernels = (*runtime)->host().registry();
  EXPECT_NE(kernels.GetKernel("tfrt.add.i32"), nullptr);           // tfrt
  EXPECT_NE(kernels.GetKernel("tfrt_dht.print_tensor"), nullptr);  // tensor
  EXPECT_NE(kernels.GetKernel("corert.executeop"), nullptr);       // corert
  EXPECT_NE(kernels.GetKernel("tfrt_test.sync_sum"), nullptr);     // test
  EXPECT_NE(kernels.GetKernel("tfrt_test.slice_inplace.f32.2"), nullptr);
  EXPECT_NE(OpRegistry::Global().Find("tfrt_test.add"), nullptr);  // test ops
  auto& natives =
      (*runtime)->host().GetOrCreateSharedContext<NativeFunctionRegistry>();
  EXPECT_NE(natives.Get("native_add"), nullptr);
  EXPECT_NE((*runtime)->core_runtime().GetOpHandler("cpu"), nullptr);
}

TEST(RuntimeTest, TwoRuntimesInOneProcessEachRegisterOnce) {
  auto first = Runtime::Create(TestOptions());
  auto second = Runtime::Create(TestOptions());
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_EQ((*first)->host().registry().KernelNames(),
            (*second)->host().registry().KernelNames());
}

OpHandler* MakeTestDeviceHandler(CoreRuntime* runtime, OpHandler* fallback) {
  return runtime->CreateLoggingOpHandler(runtime->CreateNullOpHandler(),
                                         /*sync_log_results=*/false);
}

TEST(RuntimeTest, DevicesComeFromLinkedBackends) {
  EXPECT_NE(FindOpHandlerFactory("cpu"), nullptr);  // asyncrt::cpu_backend
  RegisterOpHandlerFactory("test_device", MakeTestDeviceHandler);
  RuntimeOptions options = TestOptions();
  options.devices = {"cpu", "test_device"};
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  CoreRuntime& core = (*runtime)->core_runtime();
  ASSERT_NE(core.GetOpHandler("test_device"), nullptr);
  EXPECT_EQ(core.GetOpHandler("test_device")->name(), "logging");
  EXPECT_EQ(core.GetOpHandler("cpu")->name(), "cpu");
  auto missing = core.CreateOpHandler("tpu", nullptr);
  EXPECT_EQ(missing.status().code(), absl::StatusCode::kNotFound);
  EXPECT_TRUE(absl::StrContains(missing.status().message(), "cpu, test_device"))
      << missing.status();
}

TEST(RuntimeTest, ParsesDeviceMemoryLimits) {
  absl::StatusOr<std::map<std::string, uint64_t, std::less<>>> limits =
      ParseDeviceMemoryLimits("CUDA:0=4GiB,sim=64MiB,syncdev=512KiB,x=100");
  ASSERT_TRUE(limits.ok()) << limits.status();
  EXPECT_EQ(limits->at("CUDA:0"), uint64_t{4} << 30);
  EXPECT_EQ(limits->at("sim"), uint64_t{64} << 20);
  EXPECT_EQ(limits->at("syncdev"), uint64_t{512} << 10);
  EXPECT_EQ(limits->at("x"), 100u);
  EXPECT_TRUE(ParseDeviceMemoryLimits("")->empty());
  for (const char* bad : {"CUDA:0", "=4GiB", "cuda=", "cuda=0", "cuda=-1",
                          "cuda=4TB", "cuda=1.5GiB", "cuda=99999999999GiB"}) {
    absl::StatusOr<std::map<std::string, uint64_t, std::less<>>> parsed =
        ParseDeviceMemoryLimits(bad);
    ASSERT_FALSE(parsed.ok()) << bad;
    EXPECT_EQ(parsed.status().code(), absl::StatusCode::kInvalidArgument);
    EXPECT_THAT(parsed.status().message(), ::testing::HasSubstr(bad));
  }
}

TEST(RuntimeTest, BadOptionsAreErrors) {
  RuntimeOptions queue = TestOptions();
  queue.work_queue = "nonsense";
  EXPECT_EQ(Runtime::Create(queue).status().code(),
            absl::StatusCode::kInvalidArgument);
  RuntimeOptions allocator = TestOptions();
  allocator.host_allocator = "nonsense";
  EXPECT_EQ(Runtime::Create(allocator).status().code(),
            absl::StatusCode::kInvalidArgument);
  RuntimeOptions device = TestOptions();
  device.devices = {"tpu"};
  auto no_device = Runtime::Create(device);
  EXPECT_EQ(no_device.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_TRUE(absl::StrContains(no_device.status().message(), "tpu"));
  RuntimeOptions plugin = TestOptions();
  plugin.plugin_paths = {"/nonexistent/plugin.so"};
  auto no_plugin = Runtime::Create(plugin);
  EXPECT_EQ(no_plugin.status().code(), absl::StatusCode::kFailedPrecondition);
  EXPECT_TRUE(absl::StrContains(no_plugin.status().message(),
                                "/nonexistent/plugin.so"));
}

class RuntimeCallTest : public ::testing::TestWithParam<ExecutorMode> {};

TEST_P(RuntimeCallTest, LoadsAndCallsABefProgram) {
  auto runtime = Runtime::Create(TestOptions(GetParam()));
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  auto program = (*runtime)->LoadProgram(AsString(AdderProgram()), "adder");
  ASSERT_TRUE(program.ok()) << program.status();
  AsyncValueRef<int32_t> argument = MakeAvailableAsyncValueRef<int32_t>(100);
  AsyncValue* arguments[] = {argument.GetAsyncValue()};
  auto results = (*runtime)->Call(**program, "add", arguments);
  ASSERT_TRUE(results.ok()) << results.status();
  (*runtime)->Await(*results);
  ASSERT_EQ(results->size(), 1u);
  EXPECT_EQ((*results)[0]->get<int32_t>(), 142);
}

TEST_P(RuntimeCallTest, ConcurrentCallsFromManyThreads) {
  auto runtime = Runtime::Create(TestOptions(GetParam()));
  ASSERT_TRUE(runtime.ok());
  auto program = (*runtime)->LoadBef(AdderProgram());
  ASSERT_TRUE(program.ok()) << program.status();
  const Function* add = (*program)->GetFunction("add");
  ASSERT_NE(add, nullptr);
  std::atomic<int> wrong{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 200; ++i) {
        AsyncValueRef<int32_t> argument =
            MakeAvailableAsyncValueRef<int32_t>(t * 1000 + i);
        AsyncValue* arguments[] = {argument.GetAsyncValue()};
        auto results = (*runtime)->Call(*add, arguments);
        (*runtime)->Await(results);
        if (results[0]->get<int32_t>() != t * 1000 + i + 42) ++wrong;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

INSTANTIATE_TEST_SUITE_P(Modes, RuntimeCallTest,
                         ::testing::Values(ExecutorMode::kFast,
                                           ExecutorMode::kReference),
                         [](const auto& info) {
                           return info.param == ExecutorMode::kFast
                                      ? "Fast"
                                      : "Reference";
                         });

TEST(RuntimeTest, CallErrors) {
  auto runtime = Runtime::Create(TestOptions());
  ASSERT_TRUE(runtime.ok());
  auto program = (*runtime)->LoadBef(AdderProgram());
  ASSERT_TRUE(program.ok());
  EXPECT_EQ((*runtime)->Call(**program, "missing", {}).status().code(),
            absl::StatusCode::kNotFound);
  EXPECT_EQ((*runtime)->Call(**program, "add", {}).status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(RuntimeTest, DamagedAndForeignProgramsAreErrors) {
  auto runtime = Runtime::Create(TestOptions());
  ASSERT_TRUE(runtime.ok());
  std::vector<uint8_t> bytes = AdderProgram();
  // Every truncation is an error, never a crash.
  for (size_t size = 0; size < bytes.size(); ++size) {
    std::string prefix(bytes.begin(), bytes.begin() + size);
    EXPECT_FALSE((*runtime)->LoadProgram(prefix, "adder.bef").ok()) << size;
  }
  // Without a translator linked (this test links none), text is refused
  // with a message that says what to link.
  if (FindProgramTranslator("mlir") == nullptr) {
    auto text = (*runtime)->LoadProgram("func.func @f() { }", "f.mlir");
    EXPECT_EQ(text.status().code(), absl::StatusCode::kFailedPrecondition);
    EXPECT_TRUE(absl::StrContains(text.status().message(), "mlir_translator"));
  }
  EXPECT_EQ((*runtime)->LoadProgramFile("/nonexistent.bef").status().code(),
            absl::StatusCode::kNotFound);
}

TEST(RuntimeTest, UnknownKernelsAreReportedAtTheirLocations) {
  std::mutex mutex;
  std::vector<std::string> diagnostics;
  RuntimeOptions options = TestOptions();
  options.diagnostic_handler = [&](const DecodedDiagnostic& diagnostic) {
    std::lock_guard<std::mutex> lock(mutex);
    diagnostics.push_back(diagnostic.ToString());
  };
  auto runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok());
  bef::BefWriter w;
  uint32_t fn = w.DeclareFunction("f", bef::FunctionKind::kBef, {}, {});
  bef::FunctionBodySpec body;
  bef::KernelSpec k;
  k.kernel_name = w.AddKernelName("no.such_kernel");
  k.location = w.AddLocation("unknown.mlir", 7, 9);
  body.kernels.push_back(k);
  w.DefineFunction(fn, body);
  auto program = (*runtime)->LoadBef(*w.Finish());
  EXPECT_EQ(program.status().code(), absl::StatusCode::kNotFound);
  std::lock_guard<std::mutex> lock(mutex);
  ASSERT_EQ(diagnostics.size(), 1u);
  EXPECT_TRUE(absl::StrContains(diagnostics[0], "unknown.mlir:7:9"));
  EXPECT_TRUE(absl::StrContains(diagnostics[0], "no.such_kernel"));
}

TEST(RuntimeTest, RequestsGetIncreasingIds) {
  auto runtime = Runtime::Create(TestOptions());
  ASSERT_TRUE(runtime.ok());
  auto first = (*runtime)->CreateExecutionContext();
  auto second = (*runtime)->CreateExecutionContext();
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_LT(first->request_context()->id(), second->request_context()->id());
}

}  // namespace
}  // namespace asyncrt
