// TF Serving's configuration files, read with protobuf's text format:
// --model_config_file (several models, version policies, version labels),
// --monitoring_config_file (the Prometheus path) and
// --batching_parameters_file.
//
//   model_config_list {
//     config {
//       name: "resnet"
//       base_path: "/models/resnet"
//       model_version_policy { specific { versions: 1 versions: 2 } }
//       version_labels { key: "stable" value: 1 }
//     }
//   }
//
// Thread-safety: pure functions.
#ifndef ASYNCRT_SERVING_SERVER_CONFIG_H_
#define ASYNCRT_SERVING_SERVER_CONFIG_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/serving/batcher.h"
#include "asyncrt/serving/model_repository.h"

namespace asyncrt::serving {

// The models of a model config file's text. InvalidArgument (with the
// parser's line and column) for text that does not parse, a model without
// a name or base path, a name given twice, or a label of a version the
// policy does not serve.
absl::StatusOr<std::vector<ModelConfig>> ParseModelConfigText(
    absl::string_view text);

struct MonitoringOptions {
  bool prometheus_enabled = true;
  std::string prometheus_path = "/monitoring/prometheus/metrics";
};
absl::StatusOr<MonitoringOptions> ParseMonitoringConfigText(
    absl::string_view text);

// TF Serving's batching parameters:
//   max_batch_size { value: 32 } batch_timeout_micros { value: 2000 }
//   max_enqueued_batches { value: 100 } num_batch_threads { value: 4 }
//   allowed_batch_sizes: 8 allowed_batch_sizes: 32
// Unset values keep BatchingOptions' defaults. InvalidArgument for values
// out of range or allowed sizes that do not ascend to max_batch_size.
absl::StatusOr<BatchingOptions> ParseBatchingParametersText(
    absl::string_view text);

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_SERVER_CONFIG_H_
