// Every op the CUDA plug-in runs, called 20,000 times at random
// (testing/random_op_calls.h): each call must either compute or fail with
// an error that names the op, never crash or hang, and every byte of
// device memory must come back.
//
// Built where CUDA is; ctest runs it against the fake CUDA runtime
// (fake_cuda/: the host side's checks, launches doing nothing), so it runs
// on machines without a GPU (20,000 calls in half a second); the GPU suite
// runs it on the GPU too. ASYNCRT_RANDOM_OPS_TRIALS (default 20000) and
// ASYNCRT_RANDOM_OPS_SEED (default 1) change the run;
// ASYNCRT_RANDOM_OPS_SHOW_ERRORS=1 prints every error.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_join.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/runtime/runtime.h"
#include "gtest/gtest.h"
#include "testing/device_test_util.h"
#include "testing/random_op_calls.h"

namespace asyncrt {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  int64_t value = 0;
  return text != nullptr && absl::SimpleAtoi(text, &value) ? value : fallback;
}

std::string PluginPath() {
  const char* path = std::getenv("ASYNCRT_CUDA_PLUGIN");
  return path != nullptr ? path : CUDA_PLUGIN;
}

class RandomOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const OpEntry* relu = OpRegistry::Global().Find("nn.relu");
    if (relu == nullptr || relu->metadata_fn == nullptr) {
      GTEST_SKIP() << "the nn.* op library (oneDNN) is not linked";
    }
    RuntimeOptions options;
    options.work_queue = "mstd:2";
    options.device_plugins = {PluginPath()};
    options.device_plugins_from_environment = false;
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

  void TearDown() override {
    if (!runtime_) return;
    exec_ctx_.reset();
    runtime_->Quiesce();
    auto* device = AsStreamDevice(gpu_);
    testing::DrainDevice(runtime_->host(), *device);
    EXPECT_EQ(device->allocator().GetStats().live_bytes, 0);
  }

  std::unique_ptr<Runtime> runtime_;
  std::optional<ExecutionContext> exec_ctx_;
  Device* gpu_ = nullptr;
};

TEST_F(RandomOpsTest, EveryCallComputesOrFailsNamingTheOp) {
  const std::vector<std::string> ops = OpRegistry::Global().OpNamesFor("cuda");
  ASSERT_GT(ops.size(), 30u) << absl::StrJoin(ops, ", ");
  const int64_t trials = EnvInt("ASYNCRT_RANDOM_OPS_TRIALS", 20000);
  testing::RandomOpCalls calls(
      runtime_->core_runtime(), *exec_ctx_, *gpu_,
      runtime_->host().host_device(), "cuda",
      static_cast<uint64_t>(EnvInt("ASYNCRT_RANDOM_OPS_SEED", 1)));
  calls.Run(ops, trials, EnvInt("ASYNCRT_RANDOM_OPS_SHOW_ERRORS", 0) != 0);
  std::printf("computed %lld of %lld calls; per op (computed/called): %s\n",
              static_cast<long long>(calls.computed()),
              static_cast<long long>(trials), calls.Summary().c_str());
  // Enough calls pass the checks to exercise the kernels' own.
  EXPECT_GT(calls.computed(), trials / 10);
}

}  // namespace
}  // namespace asyncrt
