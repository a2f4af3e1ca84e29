// The fixture the CUDA plug-in's tests share: a runtime with the plug-in
// loaded and CUDA:0, skipped (saying why) without a GPU or without the nn.*
// op library whose shape functions the kernels allocate by; at the end,
// every byte of device memory must be back. ASYNCRT_CUDA_PLUGIN overrides
// the plug-in's path (for a tree copied to a GPU machine).
//
// Test-only, header-only.
#ifndef ASYNCRT_BACKENDS_GPU_CUDA_RUNTIME_TEST_H_
#define ASYNCRT_BACKENDS_GPU_CUDA_RUNTIME_TEST_H_

#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/runtime/runtime.h"
#include "gtest/gtest.h"
#include "testing/device_test_util.h"

namespace asyncrt::testing {

class CudaRuntimeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const OpEntry* relu = OpRegistry::Global().Find("nn.relu");
    if (relu == nullptr || relu->metadata_fn == nullptr) {
      GTEST_SKIP() << "the nn.* op library (oneDNN) is not linked: its shape "
                      "functions are what GPU kernels allocate by";
    }
    const char* path = std::getenv("ASYNCRT_CUDA_PLUGIN");
    RuntimeOptions options;
    options.work_queue = "mstd:2";
    options.device_plugins = {path != nullptr ? path : CUDA_PLUGIN};
    options.device_plugins_from_environment = false;
    AdjustOptions(options);
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    if (!runtime.ok() &&
        absl::StrContains(runtime.status().message(), "no CUDA GPU")) {
      GTEST_SKIP() << "no GPU here (the CUDA plug-in says: "
                   << runtime.status().message() << ")";
    }
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    exec_ctx_.emplace(*runtime_->CreateExecutionContext());
    gpu_ = runtime_->host().device_manager().GetDevice("CUDA:0").get();
    ASSERT_NE(gpu_, nullptr);
  }

  // A fixture's own settings for the runtime it makes.
  virtual void AdjustOptions(RuntimeOptions& options) {}

  void TearDown() override {
    if (!runtime_) return;
    exec_ctx_.reset();
    runtime_->Quiesce();
    // Every byte of device memory is back.
    auto* device = AsStreamDevice(gpu_);
    DrainDevice(runtime_->host(), *device);
    EXPECT_EQ(device->allocator().GetStats().live_bytes, 0);
  }

  std::unique_ptr<Runtime> runtime_;
  std::optional<ExecutionContext> exec_ctx_;
  Device* gpu_ = nullptr;
};

}  // namespace asyncrt::testing

#endif  // ASYNCRT_BACKENDS_GPU_CUDA_RUNTIME_TEST_H_
