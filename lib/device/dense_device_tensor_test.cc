// Tests of device tensors and copies on a SimulatedDevice: round trips in
// the three directions, errors (out of device memory, a failed stream, a
// device that is shut down), buffers freed only after the stream's queued
// work, no device memory left live, and concurrent copies (run under
// ThreadSanitizer).
#include "asyncrt/device/dense_device_tensor.h"

#include <atomic>
#include <memory>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "asyncrt/device/simulated_device.h"
#include "asyncrt/host_context/concurrent_work_queue.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/tensor/conversion_registry.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/device_test_util.h"

namespace asyncrt {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

class DenseDeviceTensorTest : public ::testing::Test {
 protected:
  DenseDeviceTensorTest()
      : host_(nullptr, CreateMallocAllocator(), *CreateWorkQueue("mstd:2")),
        sim_(MakeDevice(0)) {}

  ~DenseDeviceTensorTest() override {
    // No test leaves device memory behind.
    Drain(*sim_);
    EXPECT_EQ(sim_->allocator().GetStats().live_bytes, 0);
  }

  RCReference<SimulatedDevice> MakeDevice(int index,
                                          uint64_t limit = 1 << 20) {
    return MakeRef<SimulatedDevice>(
        &host_, SimulatedDevice::Options{.type = "sim",
                                         .index = index,
                                         .memory_limit_bytes = limit});
  }

  DenseHostTensor HostTensor(std::vector<float> values) {
    auto tensor = DenseHostTensor::CreateUninitialized(
        TensorMetadata(DType::kF32,
                       TensorShape({static_cast<int64_t>(values.size())})),
        *host_.allocator());
    std::copy(values.begin(), values.end(), tensor->elements<float>().begin());
    return std::move(*tensor);
  }

  template <typename T>
  void Await(const AsyncValueRef<T>& value) {
    RCReference<AsyncValue> values[] = {value};
    host_.Await(values);
  }

  void Drain(SimulatedDevice& device) {
    testing::DrainDevice(host_, device);
  }

  std::vector<float> RoundTripToHost(const DenseDeviceTensor& tensor) {
    AsyncValueRef<DenseHostTensor> back = CopyToHost(tensor, &host_);
    Await(back);
    EXPECT_FALSE(back.IsError()) << back.GetError();
    if (back.IsError()) return {};
    auto elements = back->elements<float>();
    return std::vector<float>(elements.begin(), elements.end());
  }

  HostContext host_;
  RCReference<SimulatedDevice> sim_;
};

TEST_F(DenseDeviceTensorTest, HostToDeviceToHost) {
  AsyncValueRef<DenseDeviceTensor> on_device =
      CopyToDevice(HostTensor({1, 2, 3}), *sim_);
  Await(on_device);
  ASSERT_FALSE(on_device.IsError()) << on_device.GetError();
  EXPECT_EQ(&on_device->device(), sim_.get());
  EXPECT_EQ(on_device->tensor_type(), DenseDeviceTensorType());
  EXPECT_EQ(on_device->ToString(),
            "DenseDeviceTensor dtype = f32, shape = [3], device = SIM:0");
  EXPECT_EQ(sim_->allocator().GetStats().live_bytes, 12);
  EXPECT_THAT(RoundTripToHost(*on_device), ElementsAre(1, 2, 3));
  // Found as a tensor, as host tensors are.
  EXPECT_EQ(GetTensorIfPresent(*on_device.GetAsyncValue()), &on_device.get());
}

TEST_F(DenseDeviceTensorTest, DeviceToDeviceOnOneDeviceAndAcrossDevices) {
  RCReference<SimulatedDevice> other = MakeDevice(1);
  AsyncValueRef<DenseDeviceTensor> source =
      CopyToDevice(HostTensor({4, 5}), *sim_);
  Await(source);
  AsyncValueRef<DenseDeviceTensor> same = CopyToDevice(*source, *sim_);
  AsyncValueRef<DenseDeviceTensor> across = CopyToDevice(*source, *other);
  Await(same);
  Await(across);
  ASSERT_FALSE(same.IsError());
  ASSERT_FALSE(across.IsError());
  EXPECT_NE(same->data(), source->data());
  EXPECT_EQ(&across->device(), other.get());
  EXPECT_THAT(RoundTripToHost(*same), ElementsAre(4, 5));
  EXPECT_THAT(RoundTripToHost(*across), ElementsAre(4, 5));
  across.reset();
  Drain(*other);
  EXPECT_EQ(other->allocator().GetStats().live_bytes, 0);
}

TEST_F(DenseDeviceTensorTest, TheRegistryConvertsBetweenHostAndDevice) {
  DenseHostTensor host_tensor = HostTensor({7, 8});
  auto exec_ctx = ExecutionContext(
      *RequestContextBuilder(&host_, nullptr).Build());
  RCReference<AsyncValue> on_device =
      ConvertTensor(host_tensor, host_.host_device(), *sim_,
                    DefaultTensorType(*sim_), exec_ctx);
  host_.Await({&on_device, 1});
  ASSERT_TRUE(on_device->IsType<DenseDeviceTensor>());
  RCReference<AsyncValue> back =
      ConvertTensor(on_device->get<DenseDeviceTensor>(), *sim_,
                    host_.host_device(), DenseHostTensorType(), exec_ctx);
  host_.Await({&back, 1});
  ASSERT_TRUE(back->IsType<DenseHostTensor>());
  EXPECT_THAT(back->get<DenseHostTensor>().elements<float>(),
              ElementsAre(7, 8));
  EXPECT_EQ(DefaultTensorType(host_.host_device()), DenseHostTensorType());
}

TEST_F(DenseDeviceTensorTest, OutOfDeviceMemoryIsAnErrorNamingTheDevice) {
  RCReference<SimulatedDevice> small = MakeDevice(1, /*limit=*/16);
  AsyncValueRef<DenseDeviceTensor> copy =
      CopyToDevice(HostTensor(std::vector<float>(64, 1.0f)), *small);
  ASSERT_TRUE(copy.IsError());
  EXPECT_EQ(copy.GetError().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(copy.GetError().message(),
              HasSubstr("SIM:1: out of memory allocating 256 bytes"));
  EXPECT_EQ(small->allocator().GetStats().live_bytes, 0);
}

TEST_F(DenseDeviceTensorTest, AFailedStreamFailsLaterCopies) {
  AsyncValueRef<DenseDeviceTensor> on_device =
      CopyToDevice(HostTensor({1}), *sim_);
  Await(on_device);
  sim_->host_stream()->Enqueue(
      [] { return absl::InternalError("kernel crashed"); });
  AsyncValueRef<DenseHostTensor> back = CopyToHost(*on_device, &host_);
  Await(back);
  ASSERT_TRUE(back.IsError());
  EXPECT_THAT(back.GetError().message(), HasSubstr("kernel crashed"));
}

TEST_F(DenseDeviceTensorTest, BuffersAreFreedAfterTheWorkQueuedBefore) {
  AsyncValueRef<DenseDeviceTensor> on_device =
      CopyToDevice(HostTensor({1, 2, 3, 4}), *sim_);
  Await(on_device);
  absl::Notification release;
  sim_->host_stream()->Enqueue([&] {
    release.WaitForNotification();  // A kernel still reading the buffer.
    return absl::OkStatus();
  });
  on_device.reset();
  EXPECT_EQ(sim_->allocator().GetStats().live_bytes, 16);
  release.Notify();
  Drain(*sim_);
  EXPECT_EQ(sim_->allocator().GetStats().live_bytes, 0);
}

TEST_F(DenseDeviceTensorTest, ADeviceShutDownRefusesCopiesAndFreesAtOnce) {
  RCReference<SimulatedDevice> other = MakeDevice(1);
  AsyncValueRef<DenseDeviceTensor> on_device =
      CopyToDevice(HostTensor({1, 2}), *other);
  Await(on_device);
  // The copy's completion (on the blocking pool) holds the tensor's value
  // a moment longer: let it go, so that the reset below frees the buffer.
  host_.Quiesce();
  other->Shutdown();
  EXPECT_EQ(other->stream(), nullptr);
  AsyncValueRef<DenseHostTensor> back = CopyToHost(*on_device, &host_);
  ASSERT_TRUE(back.IsError());
  EXPECT_THAT(back.GetError().message(), HasSubstr("SIM:1 is shut down"));
  on_device.reset();
  EXPECT_EQ(other->allocator().GetStats().live_bytes, 0);
}

TEST_F(DenseDeviceTensorTest, ConcurrentCopiesStress) {
  RCReference<SimulatedDevice> other = MakeDevice(1);
  std::atomic<int> mismatches{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 100; ++i) {
        const float value = t * 1000 + i;
        SimulatedDevice& device = (i % 2 == 0) ? *sim_ : *other;
        AsyncValueRef<DenseDeviceTensor> on_device =
            CopyToDevice(HostTensor({value, value + 1}), device);
        Await(on_device);
        AsyncValueRef<DenseDeviceTensor> moved =
            CopyToDevice(*on_device, (i % 2 == 0) ? *other : *sim_);
        Await(moved);
        if (moved.IsError() || RoundTripToHost(*moved) !=
                                   std::vector<float>{value, value + 1}) {
          mismatches.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(mismatches.load(), 0);
  Drain(*other);
  EXPECT_EQ(other->allocator().GetStats().live_bytes, 0);
}

}  // namespace
}  // namespace asyncrt
