// Ops on devices other than the host: per-device dispatch through a
// device's op handler, explicit transfers (TensorHandle::TransferTo), and
// the errors for what never happens implicitly (an argument on another
// device, an op the device has no implementation of). The device is a
// SimulatedDevice; its op negates i32 tensors on the device's stream.
#include <atomic>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/device/simulated_device.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/device_test_util.h"

namespace asyncrt {
namespace {

using ::testing::HasSubstr;

absl::Status SameMetadata(ArgumentMetadata args, const OpAttrs&,
                          absl::Span<TensorMetadata> results) {
  results[0] = args[0];
  return absl::OkStatus();
}

// Negates an i32 device tensor on the device's stream; the result is
// available at once (readers queue behind the kernel).
void SimNegate(OpInvocation& invocation) {
  auto& device = static_cast<SimulatedDevice&>(*invocation.device);
  const auto& input =
      static_cast<const DenseDeviceTensor&>(invocation.argument(0));
  absl::StatusOr<DenseDeviceTensor> output =
      DenseDeviceTensor::Allocate(device, invocation.result_metadata[0]);
  if (!output.ok()) {
    invocation.results[0] = MakeErrorAsyncValueRef(output.status());
    return;
  }
  const auto* in = static_cast<const int32_t*>(input.data());
  auto* out = static_cast<int32_t*>(output->data());
  const int64_t n = input.NumElements();
  device.host_stream()->Enqueue([in, out, n] {
    for (int64_t i = 0; i < n; ++i) out[i] = -in[i];
    return absl::OkStatus();
  });
  invocation.results[0] =
      MakeAvailableAsyncValueRef<DenseDeviceTensor>(*std::move(output));
}

class DevicePlacementTest : public ::testing::Test {
 protected:
  void SetUp() override {
    OpRegistry::Global().AddOp("test.negate", SameMetadata);
    OpRegistry::Global().AddDispatch("test.negate", "sim", SimNegate,
                                     kOpAcceptsAnyTensor);
    auto runtime = CoreRuntime::Create({.num_threads = 2});
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    HostContext* host = runtime_->GetHostContext();
    sim_ = MakeRef<SimulatedDevice>(host, SimulatedDevice::Options{});
    host->device_manager().MaybeAddDevice(sim_);
    small_ = MakeRef<SimulatedDevice>(
        host, SimulatedDevice::Options{.index = 1, .memory_limit_bytes = 8});
    host->device_manager().MaybeAddDevice(small_);
    cpu_ = runtime_->GetOpHandler("cpu");
    sim_handler_ = runtime_->CreateDeviceOpHandler(sim_.get(), nullptr);
    exec_ctx_.emplace(*runtime_->CreateExecutionContext());
  }

  void TearDown() override {
    // Nothing stays live on the devices once the handles are gone.
    for (SimulatedDevice* device : {sim_.get(), small_.get()}) {
      testing::DrainDevice(*runtime_->GetHostContext(), *device);
      EXPECT_EQ(device->allocator().GetStats().live_bytes, 0) << device->name();
    }
  }

  TensorHandle Vector(std::vector<int32_t> values) {
    return *runtime_->MakeDenseTensorHandle<int32_t>(
        {static_cast<int64_t>(values.size())}, values);
  }

  TensorHandle Run(absl::string_view op, OpHandler* handler,
                   std::vector<const TensorHandle*> args) {
    std::vector<TensorHandle> copies;
    for (const TensorHandle* arg : args) copies.push_back(arg->CopyRef());
    TensorHandle result;
    runtime_->Execute(*exec_ctx_, op, handler, absl::MakeSpan(copies),
                      OpAttrs().Freeze(), absl::MakeSpan(&result, 1), nullptr);
    return result;
  }

  std::string Text(const TensorHandle& handle) {
    const Tensor* tensor = runtime_->Await(handle);
    if (tensor) return tensor->ToString();
    const absl::Status* error = handle.GetErrorIfPresent();
    return error ? std::string(error->message()) : "<null>";
  }

  Device& host_device() { return runtime_->GetHostContext()->host_device(); }

  std::unique_ptr<CoreRuntime> runtime_;
  RCReference<SimulatedDevice> sim_;
  RCReference<SimulatedDevice> small_;
  OpHandler* cpu_ = nullptr;
  OpHandler* sim_handler_ = nullptr;
  std::optional<ExecutionContext> exec_ctx_;
};

TEST_F(DevicePlacementTest, AnOpRunsOnTheDeviceItsHandlerNames) {
  TensorHandle x = Vector({1, -2, 3});
  TensorHandle on_sim = x.TransferTo(*exec_ctx_, *sim_);
  EXPECT_EQ(on_sim.device(), sim_.get());
  EXPECT_EQ(Text(on_sim),
            "DenseDeviceTensor dtype = i32, shape = [3], device = SIM:0");
  TensorHandle negated = Run("test.negate", sim_handler_, {&on_sim});
  EXPECT_EQ(negated.device(), sim_.get());
  ASSERT_TRUE(negated.IsMetadataAvailable());  // The shared shape function.
  TensorHandle back = negated.TransferTo(*exec_ctx_, host_device());
  EXPECT_EQ(back.device(), &host_device());
  EXPECT_EQ(Text(back),
            "DenseHostTensor dtype = i32, shape = [3], values = [-1, 2, -3]");
  // The prepared-op path checks the same.
  absl::StatusOr<CoreRuntimeOp> op =
      runtime_->MakeOp("test.negate", sim_handler_);
  ASSERT_TRUE(op.ok()) << op.status();
  TensorHandle again;
  TensorHandle args[] = {negated.CopyRef()};
  (*op)(*exec_ctx_, args, OpAttrs().Freeze(), absl::MakeSpan(&again, 1),
        nullptr);
  EXPECT_EQ(Text(again.TransferTo(*exec_ctx_, host_device())),
            "DenseHostTensor dtype = i32, shape = [3], values = [1, -2, 3]");
}

TEST_F(DevicePlacementTest, AnArgumentOnAnotherDeviceIsAnErrorNamingBoth) {
  TensorHandle x = Vector({1});
  EXPECT_EQ(Text(Run("test.negate", sim_handler_, {&x})),
            "test.negate runs on SIM:0 but its argument 0 is on CPU:0: copy "
            "it there first (TensorHandle::TransferTo, or corert.transfer in "
            "a program)");
  TensorHandle on_sim = x.TransferTo(*exec_ctx_, *sim_);
  EXPECT_THAT(Text(Run("tfrt_test.add", cpu_, {&x, &on_sim})),
              HasSubstr("tfrt_test.add runs on CPU:0 but its argument 1 is "
                        "on SIM:0"));
  // Also when the argument is still being computed.
  TensorHandle pending = Run("test.negate", sim_handler_, {&on_sim});
  EXPECT_THAT(Text(Run("tfrt_test.add", cpu_, {&pending, &pending})),
              HasSubstr("argument 0 is on SIM:0"));
}

TEST_F(DevicePlacementTest, AnOpTheDeviceLacksIsAnErrorNamingOpAndDevice) {
  TensorHandle on_sim = Vector({1}).TransferTo(*exec_ctx_, *sim_);
  EXPECT_EQ(Text(Run("tfrt_test.add", sim_handler_, {&on_sim, &on_sim})),
            "tfrt_test.add has no implementation for SIM:0 (device type sim)");
  EXPECT_EQ(Text(Run("no.such_op", sim_handler_, {&on_sim})),
            "unknown op no.such_op: there is no implementation for SIM:0 "
            "(device type sim)");
}

TEST_F(DevicePlacementTest, TransfersWaitForPendingTensorsAndCarryErrors) {
  auto pending = MakeIndirectAsyncValue();
  TensorHandle future(&host_device(),
                      TensorMetadata(DType::kI32, TensorShape({2})), pending);
  TensorHandle on_sim = future.TransferTo(*exec_ctx_, *sim_);
  EXPECT_TRUE(on_sim.IsMetadataAvailable());
  EXPECT_FALSE(on_sim.GetAsyncTensor()->IsAvailable());
  pending->ForwardTo(Vector({5, 6}).CopyTensorRef());
  EXPECT_EQ(Text(on_sim.TransferTo(*exec_ctx_, host_device())),
            "DenseHostTensor dtype = i32, shape = [2], values = [5, 6]");

  TensorHandle failed = TensorHandle::CreateError(
      MakeErrorAsyncValueRef(absl::InternalError("upstream failed")));
  EXPECT_EQ(Text(failed.TransferTo(*exec_ctx_, *sim_)), "upstream failed");
  EXPECT_THAT(Text(Vector({1, 2, 3}).TransferTo(*exec_ctx_, *small_)),
              HasSubstr("SIM:1: out of memory allocating 12 bytes"));
}

TEST_F(DevicePlacementTest, ConcurrentOpsAndTransfersStress) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        TensorHandle x = Vector({t, i});
        TensorHandle on_sim = x.TransferTo(*exec_ctx_, *sim_);
        TensorHandle negated = Run("test.negate", sim_handler_, {&on_sim});
        TensorHandle back = negated.TransferTo(*exec_ctx_, host_device());
        const Tensor* tensor = runtime_->Await(back);
        if (tensor == nullptr ||
            static_cast<const DenseHostTensor*>(tensor)->elements<int32_t>()[1] !=
                -i) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace asyncrt
