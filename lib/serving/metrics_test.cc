// The device memory gauges of the model server's metrics, on the example
// plug-in's device.
#include <memory>
#include <string>
#include <vector>

#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/metrics.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::serving {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

TEST(DeviceMemoryMetricsTest, EveryDeviceOfItsOwnMemoryHasItsGauges) {
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  options.device_plugins = {SIM_PLUGIN};
  options.device_plugins_from_environment = false;
  options.device_memory_limits = {{"sim", 1 << 20}};
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  CoreRuntime& core = (*runtime)->core_runtime();
  absl::StatusOr<ExecutionContext> exec_ctx =
      (*runtime)->CreateExecutionContext();
  ASSERT_TRUE(exec_ctx.ok());
  const DeviceManager& devices = (*runtime)->host().device_manager();
  {
    // 4 KiB on SIM:0 while the gauges are read.
    TensorHandle on_sim =
        core.MakeDenseTensorHandle<float>({1024},
                                          std::vector<float>(1024, 1.0f))
            ->TransferTo(*exec_ctx, *devices.GetDevice("SIM:0"));
    ASSERT_NE(core.Await(on_sim), nullptr);
    const std::string text = DeviceMemoryPrometheusText(devices);
    EXPECT_THAT(text, HasSubstr("# TYPE asyncrt_device_memory_in_use_bytes "
                                "gauge\nasyncrt_device_memory_in_use_bytes{"
                                "device=\"SIM:0\"} 4096\n"));
    EXPECT_THAT(text, HasSubstr("asyncrt_device_memory_peak_bytes{device="
                                "\"SIM:0\"} 4096\n"));
    EXPECT_THAT(text, HasSubstr("asyncrt_device_memory_limit_bytes{device="
                                "\"SIM:0\"} 1048576\n"));
    // The example keeps its own accounting (memory_stats).
    EXPECT_THAT(text, HasSubstr("asyncrt_device_memory_cached_bytes{device="
                                "\"SIM:0\"} "));
    // The host's memory is the process's.
    EXPECT_THAT(text, Not(HasSubstr("CPU:0")));
  }
  (*runtime)->Quiesce();
  EXPECT_THAT(DeviceMemoryPrometheusText(devices),
              HasSubstr("asyncrt_device_memory_in_use_bytes{device="
                        "\"SIM:0\"} 0\n"));
}

TEST(DeviceMemoryMetricsTest, NoDeviceOfItsOwnMemoryNoGauges) {
  RuntimeOptions options;
  options.work_queue = "s";
  options.device_plugins_from_environment = false;
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  ASSERT_TRUE(runtime.ok()) << runtime.status();
  EXPECT_EQ(DeviceMemoryPrometheusText((*runtime)->host().device_manager()),
            "");
}

}  // namespace
}  // namespace asyncrt::serving
