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
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "backends/gpu/cuda_runtime_test.h"
#include "gtest/gtest.h"
#include "testing/random_op_calls.h"

namespace asyncrt {
namespace {

using RandomOpsTest = testing::CudaRuntimeTest;

TEST_F(RandomOpsTest, EveryCallComputesOrFailsNamingTheOp) {
  std::vector<std::string> ops = OpRegistry::Global().OpNamesFor("cuda");
  ASSERT_GT(ops.size(), 30u) << absl::StrJoin(ops, ", ");
  if (!absl::StrContains(gpu_->physical_description(), "host only")) {
    // On a GPU an out-of-range gather index fails the device's later work
    // by design (CudaPluginTest.AGatherIndexOutOfRangeIsAnError), which
    // would fail every call after it here.
    std::erase(ops, "nn.gather");
  }
  const auto settings = testing::RandomOpCallSettings::FromEnvironment();
  testing::RandomOpCalls calls(runtime_->core_runtime(), *exec_ctx_, *gpu_,
                               runtime_->host().host_device(), "cuda",
                               settings.seed);
  calls.Run(ops, settings.trials, settings.show_errors);
  std::printf("computed %lld of %lld calls; per op (computed/called): %s\n",
              static_cast<long long>(calls.computed()),
              static_cast<long long>(settings.trials), calls.Summary().c_str());
  // Enough calls pass the checks to exercise the kernels' own.
  EXPECT_GT(calls.computed(), settings.trials / 10);
}

}  // namespace
}  // namespace asyncrt
