// Every nn.* op of the CPU device called 20,000 times at random, and the
// example plug-in's ops through the C API 5,000 times
// (testing/random_op_calls.h): each call must either compute or fail with
// an error that names the op; never a crash, a hang or a leak (the
// sanitizer trees run it too). ASYNCRT_RANDOM_OPS_TRIALS (default 20000)
// and ASYNCRT_RANDOM_OPS_SEED (default 1) change the run;
// ASYNCRT_RANDOM_OPS_SHOW_ERRORS=1 prints every error.
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/device/stream_device.h"
#include "asyncrt/runtime/runtime.h"
#include "gtest/gtest.h"
#include "testing/device_test_util.h"
#include "testing/random_op_calls.h"

namespace asyncrt {
namespace {

TEST(CpuRandomOpsTest, EveryCallComputesOrFailsNamingTheOp) {
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  options.device_plugins_from_environment = false;
  std::unique_ptr<Runtime> runtime = *Runtime::Create(options);
  ExecutionContext exec_ctx = *runtime->CreateExecutionContext();
  std::vector<std::string> ops;
  for (std::string& op : OpRegistry::Global().OpNamesFor("cpu")) {
    if (absl::StartsWith(op, "nn.")) ops.push_back(std::move(op));
  }
  ASSERT_GT(ops.size(), 100u);
  const auto settings = testing::RandomOpCallSettings::FromEnvironment();
  const int64_t trials = settings.trials;
  Device& host = runtime->host().host_device();
  testing::RandomOpCalls calls(runtime->core_runtime(), exec_ctx, host, host,
                               "cpu", settings.seed);
  calls.Run(ops, trials, settings.show_errors);
  std::printf(
      "computed %lld of %lld calls of %zu ops; per op "
      "(computed/called): %s\n",
      static_cast<long long>(calls.computed()), static_cast<long long>(trials),
      ops.size(), calls.Summary().c_str());
  EXPECT_GT(calls.computed(), trials / 10);
  runtime->Quiesce();
}

// The same through the C plug-in API: the example accelerator (SIM:0, its
// own stream thread) runs nn.relu, nn.add and nn.matmul on its memory.
TEST(SimRandomOpsTest, EveryCallComputesOrFailsNamingTheOp) {
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  options.device_plugins = {SIM_PLUGIN};
  options.device_plugins_from_environment = false;
  std::unique_ptr<Runtime> runtime = *Runtime::Create(options);
  ExecutionContext exec_ctx = *runtime->CreateExecutionContext();
  const std::vector<std::string> ops = OpRegistry::Global().OpNamesFor("sim");
  ASSERT_EQ(ops, (std::vector<std::string>{"nn.add", "nn.matmul", "nn.relu"}));
  const auto settings = testing::RandomOpCallSettings::FromEnvironment();
  Device& sim = *runtime->host().device_manager().GetDevice("SIM:0");
  testing::RandomOpCalls calls(runtime->core_runtime(), exec_ctx, sim,
                               runtime->host().host_device(), "SIM:0",
                               settings.seed);
  calls.Run(ops, settings.trials / 4, settings.show_errors);
  std::printf("computed %lld of %lld calls; per op (computed/called): %s\n",
              static_cast<long long>(calls.computed()),
              static_cast<long long>(settings.trials / 4),
              calls.Summary().c_str());
  EXPECT_GT(calls.computed(), settings.trials / 40);
  // Frees are stream-ordered: every byte is back once the streams drain.
  StreamDevice& device = *AsStreamDevice(&sim);
  testing::DrainDevice(runtime->host(), device);
  EXPECT_EQ(device.allocator().GetStats().live_bytes, 0);
}

}  // namespace
}  // namespace asyncrt
