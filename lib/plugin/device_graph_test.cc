// Device graphs through the plug-in C API (begin_capture and friends), on
// the example simulated accelerator: a thread's work recorded once and
// replayed on new inputs; what cannot be recorded fails the capture and
// leaves the device usable; captures and corert.captured_call from several
// threads at once (run under ThreadSanitizer) give every caller its own
// results.
#include <atomic>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/runtime/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/device_test_util.h"

namespace asyncrt {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

class DeviceGraphTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const OpEntry* relu = OpRegistry::Global().Find("nn.relu");
    if (relu == nullptr || relu->metadata_fn == nullptr) {
      GTEST_SKIP() << "the nn.* op library is not linked";
    }
    RuntimeOptions options;
    options.work_queue = "mstd:4";
    options.device_plugins = {SIM_PLUGIN};
    options.device_plugins_from_environment = false;
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    exec_ctx_.emplace(*runtime_->CreateExecutionContext());
    absl::StatusOr<RCReference<Device>> sim =
        runtime_->host().device_manager().FindDevice("SIM:0");
    ASSERT_TRUE(sim.ok()) << sim.status();
    sim_ = AsStreamDevice(sim->get());
    ASSERT_NE(sim_, nullptr);
  }

  void TearDown() override {
    if (!runtime_) return;
    exec_ctx_.reset();
    runtime_->Quiesce();
    testing::DrainDevice(runtime_->host(), *sim_);
    EXPECT_EQ(sim_->allocator().GetStats().live_bytes, 0);
  }

  CoreRuntime& core() { return runtime_->core_runtime(); }

  TensorHandle OnSim(std::vector<float> values) {
    TensorHandle host = *core().MakeDenseTensorHandle<float>(
        {static_cast<int64_t>(values.size())}, values);
    TensorHandle on_sim = host.TransferTo(*exec_ctx_, *sim_);
    core().Await(on_sim);
    return on_sim;
  }

  TensorHandle Run(absl::string_view op, std::vector<const TensorHandle*> args) {
    std::vector<TensorHandle> copies;
    for (const TensorHandle* arg : args) copies.push_back(arg->CopyRef());
    std::vector<TensorHandle> out(1);
    OpAttrs attrs;
    core().Execute(*exec_ctx_, op, core().GetOpHandler("SIM:0"),
                   absl::MakeSpan(copies), attrs.Freeze(), absl::MakeSpan(out),
                   nullptr);
    return std::move(out[0]);
  }

  // Copies `values` to `dst` on the device, before the graph's next launch:
  // host copies run on a copy stream, which the compute stream waits for.
  ::testing::AssertionResult CopyIn(void* dst, absl::Span<const float> values) {
    if (absl::Status status =
            sim_->EnqueueCopy(CopyDirection::kHostToDevice, dst, values.data(),
                              values.size() * sizeof(float));
        !status.ok()) {
      return ::testing::AssertionFailure() << status;
    }
    sim_->stream()->WaitForEvent(
        sim_->copy_stream(CopyDirection::kHostToDevice)->RecordEvent());
    return ::testing::AssertionSuccess();
  }

  std::vector<float> HostFloats(const TensorHandle& handle) {
    TensorHandle on_host =
        handle.TransferTo(*exec_ctx_, runtime_->host().host_device());
    const Tensor* tensor = core().Await(on_host);
    if (tensor == nullptr) {
      ADD_FAILURE() << on_host.DebugString();
      return {};
    }
    auto elements =
        static_cast<const DenseHostTensor*>(tensor)->elements<float>();
    return std::vector<float>(elements.begin(), elements.end());
  }

  std::unique_ptr<Runtime> runtime_;
  std::optional<ExecutionContext> exec_ctx_;
  StreamDevice* sim_ = nullptr;
};

TEST_F(DeviceGraphTest, RecordsOnceAndReplaysOnNewInputs) {
  ASSERT_TRUE(sim_->SupportsGraphs());
  TensorHandle x = OnSim({-1, 2, -3, 4});
  ASSERT_TRUE(sim_->BeginCapture().ok());
  TensorHandle r = Run("nn.relu", {&x});
  TensorHandle y = Run("nn.add", {&r, &x});
  absl::StatusOr<std::unique_ptr<DeviceGraph>> graph = sim_->EndCapture();
  ASSERT_TRUE(graph.ok()) << graph.status();
  // The capture's own run: relu(x) + x.
  EXPECT_THAT(HostFloats(y), ElementsAreArray({-1.f, 4.f, -3.f, 8.f}));
  // New values where the graph reads them, and a replay.
  const float next[] = {5, -6, 7, -8};
  const auto* x_tensor =
      static_cast<const DenseDeviceTensor*>(core().Await(x));
  ASSERT_TRUE(CopyIn(x_tensor->data(), next));
  ASSERT_TRUE((*graph)->Launch().ok());
  EXPECT_THAT(HostFloats(y), ElementsAreArray({10.f, -6.f, 14.f, -8.f}));
  // The graph's memory outlives its tensors and is freed with it (the
  // fixture checks that nothing stays live).
  r = TensorHandle();
  ASSERT_TRUE((*graph)->Launch().ok());
  EXPECT_THAT(HostFloats(y), ElementsAreArray({10.f, -6.f, 14.f, -8.f}));
}

TEST_F(DeviceGraphTest, HostCopiesAndEventsCannotBeRecorded) {
  TensorHandle x = OnSim({-1, 2});
  ASSERT_TRUE(sim_->BeginCapture().ok());
  TensorHandle r = Run("nn.relu", {&x});
  // A copy to the host is refused; the capture cannot end in a graph.
  TensorHandle on_host = r.TransferTo(*exec_ctx_, runtime_->host().host_device());
  absl::StatusOr<std::unique_ptr<DeviceGraph>> graph = sim_->EndCapture();
  ASSERT_FALSE(graph.ok());
  EXPECT_THAT(std::string(graph.status().message()), HasSubstr("host memory"));
  core().Await(on_host);
  EXPECT_NE(on_host.GetErrorIfPresent(), nullptr);
  // Nothing recorded ran; the device works on.
  EXPECT_THAT(HostFloats(Run("nn.relu", {&x})), ElementsAreArray({0.f, 2.f}));
  // Ending a capture that did not begin is an error too.
  EXPECT_FALSE(sim_->EndCapture().ok());
}

// Threads that record and replay graphs of one device at once, and one
// that runs ops plainly meanwhile: each capture takes only its own
// thread's work.
TEST_F(DeviceGraphTest, CapturesFromSeveralThreadsStress) {
  constexpr int kThreads = 4;
  constexpr int kRounds = 10;
  std::atomic<bool> stop{false};
  std::thread plain([&] {
    while (!stop.load()) {
      TensorHandle x = OnSim({-1, 1});
      EXPECT_THAT(HostFloats(Run("nn.relu", {&x})),
                  ElementsAreArray({0.f, 1.f}));
    }
  });
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int round = 0; round < kRounds; ++round) {
        const float a = static_cast<float>(t * 100 + round + 1);
        TensorHandle x = OnSim({a, -a});
        ASSERT_TRUE(sim_->BeginCapture().ok());
        TensorHandle r = Run("nn.relu", {&x});
        TensorHandle y = Run("nn.add", {&r, &x});
        absl::StatusOr<std::unique_ptr<DeviceGraph>> graph =
            sim_->EndCapture();
        ASSERT_TRUE(graph.ok()) << graph.status();
        ASSERT_THAT(HostFloats(y), ElementsAreArray({2 * a, -a}));
        const auto* x_tensor =
            static_cast<const DenseDeviceTensor*>(core().Await(x));
        for (int replay = 1; replay <= 3; ++replay) {
          const float next[] = {-a * replay, a * replay};
          ASSERT_TRUE(CopyIn(x_tensor->data(), next));
          ASSERT_TRUE((*graph)->Launch().ok());
          ASSERT_THAT(HostFloats(y),
                      ElementsAreArray({-a * replay, 2 * a * replay}));
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  stop.store(true);
  plain.join();
}

// The program the compiler makes of a model on SIM:0, written directly in
// BEF (the sanitizer trees have no compiler):
//
//   func @body(%x) {            // the device's work
//     %h = corert.get_op_handler(tfrt.new.chain) "SIM:0"
//     %r = corert.executeop(%h) "nn.relu"(%x)
//     return corert.executeop(%h) "nn.add"(%r, %x)
//   }
//   func @main(%x) {
//     %sim, %cpu = tfrt.get_device "SIM:0", "CPU:0"
//     %y = corert.captured_call %sim, transfer(%x, %sim) {callee = @body}
//     return transfer(%y, %cpu)
//   }
std::vector<uint8_t> CapturedCallProgram() {
  bef::BefWriter writer;
  const uint32_t handle = writer.AddType("!corert.tensorhandle");
  const uint32_t name_key = writer.AddString("op_handler_name");
  const uint32_t device_key = writer.AddString("device_name");
  const uint32_t op_key = writer.AddString("op_name");
  const uint32_t callee_key = writer.AddString("callee");
  auto kernel = [&](bef::FunctionBodySpec& body, absl::string_view name,
                    std::vector<uint32_t> operands,
                    std::vector<std::pair<uint32_t, uint32_t>> attributes) {
    bef::KernelSpec spec;
    spec.kernel_name = writer.AddKernelName(name);
    spec.location = writer.AddLocation("graphs.mlir", body.kernels.size(), 1);
    spec.operands = std::move(operands);
    spec.results.push_back(body.num_registers++);
    spec.attributes = std::move(attributes);
    body.kernels.push_back(spec);
    return spec.results[0];
  };
  const uint32_t body_index = writer.DeclareFunction(
      "body", bef::FunctionKind::kBef, {handle}, {handle});
  const uint32_t main_index = writer.DeclareFunction(
      "main", bef::FunctionKind::kBef, {handle}, {handle});
  {
    bef::FunctionBodySpec body;
    const uint32_t x = body.num_registers++;
    body.argument_registers = {x};
    const uint32_t chain = kernel(body, "tfrt.new.chain", {}, {});
    const uint32_t handler =
        kernel(body, "corert.get_op_handler", {chain},
               {{name_key, writer.AddStringAttribute("SIM:0")}});
    const uint32_t r =
        kernel(body, "corert.executeop", {handler, x},
               {{op_key, writer.AddStringAttribute("nn.relu")}});
    const uint32_t y =
        kernel(body, "corert.executeop", {handler, r, x},
               {{op_key, writer.AddStringAttribute("nn.add")}});
    body.result_registers = {y};
    writer.DefineFunction(body_index, std::move(body));
  }
  {
    bef::FunctionBodySpec body;
    const uint32_t x = body.num_registers++;
    body.argument_registers = {x};
    const uint32_t chain = kernel(body, "tfrt.new.chain", {}, {});
    const uint32_t sim =
        kernel(body, "tfrt.get_device", {chain},
               {{device_key, writer.AddStringAttribute("SIM:0")}});
    const uint32_t cpu =
        kernel(body, "tfrt.get_device", {chain},
               {{device_key, writer.AddStringAttribute("CPU:0")}});
    const uint32_t x_sim =
        kernel(body, "corert.transfer_inferred_tensortype", {x, sim}, {});
    const uint32_t y_sim =
        kernel(body, "corert.captured_call", {sim, x_sim},
               {{callee_key, writer.AddFunctionAttribute(body_index)}});
    const uint32_t y =
        kernel(body, "corert.transfer_inferred_tensortype", {y_sim, cpu}, {});
    body.result_registers = {y};
    writer.DefineFunction(main_index, std::move(body));
  }
  absl::StatusOr<std::vector<uint8_t>> bytes = writer.Finish();
  EXPECT_TRUE(bytes.ok()) << bytes.status();
  return bytes.ok() ? *std::move(bytes) : std::vector<uint8_t>();
}

TEST_F(DeviceGraphTest, CapturedCallsFromSeveralThreadsStress) {
  absl::StatusOr<RCReference<BefProgram>> program =
      runtime_->LoadBef(CapturedCallProgram());
  ASSERT_TRUE(program.ok()) << program.status();
  constexpr int kThreads = 4;
  constexpr int kCalls = 40;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCalls; ++call) {
        // Each call its own values: relu(x) + x.
        const float a = static_cast<float>(t * 1000 + call);
        std::vector<float> x = {a, -a, a + 0.5f, -1.f};
        AsyncValueRef<TensorHandle> input =
            MakeAvailableAsyncValueRef<TensorHandle>(
                *core().MakeDenseTensorHandle<float>({4}, x));
        AsyncValue* arguments[] = {input.GetAsyncValue()};
        absl::StatusOr<std::vector<RCReference<AsyncValue>>> results =
            runtime_->Call(**program, "main", arguments);
        ASSERT_TRUE(results.ok()) << results.status();
        runtime_->Await(*results);
        ASSERT_FALSE((*results)[0]->IsError()) << (*results)[0]->GetError();
        const Tensor* tensor =
            core().Await((*results)[0]->get<TensorHandle>());
        ASSERT_NE(tensor, nullptr);
        auto got = static_cast<const DenseHostTensor*>(tensor)->elements<float>();
        ASSERT_THAT(std::vector<float>(got.begin(), got.end()),
                    ElementsAreArray({2 * a, -a, 2 * (a + 0.5f), -1.f}))
            << "thread " << t << " call " << call;
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace asyncrt
