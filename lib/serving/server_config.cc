#include "asyncrt/serving/server_config.h"

#include <algorithm>
#include <set>

#include "absl/strings/str_cat.h"
#include "google/protobuf/io/tokenizer.h"
#include "google/protobuf/text_format.h"
#include "tensorflow_serving/config.pb.h"

namespace asyncrt::serving {
namespace {

// Collects the text parser's errors (it would print them otherwise).
class ErrorCollector : public google::protobuf::io::ErrorCollector {
 public:
  void AddError(int line, google::protobuf::io::ColumnNumber column,
                const std::string& message) override {
    if (first_.empty()) {
      first_ = absl::StrCat("line ", line + 1, ", column ", column + 1, ": ",
                            message);
    }
  }
  const std::string& first() const { return first_; }

 private:
  std::string first_;
};

template <typename Message>
absl::Status ParseText(absl::string_view text, absl::string_view what,
                       Message* message) {
  google::protobuf::TextFormat::Parser parser;
  ErrorCollector errors;
  parser.RecordErrorsTo(&errors);
  if (!parser.ParseFromString(std::string(text), message)) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": ", errors.first().empty() ? "does not parse"
                                                        : errors.first()));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<std::vector<ModelConfig>> ParseModelConfigText(
    absl::string_view text) {
  tensorflow::serving::ModelServerConfig config;
  if (absl::Status status = ParseText(text, "model config", &config);
      !status.ok()) {
    return status;
  }
  std::vector<ModelConfig> models;
  std::set<std::string> names;
  for (const tensorflow::serving::ModelConfig& entry :
       config.model_config_list().config()) {
    if (entry.name().empty() || entry.base_path().empty()) {
      return absl::InvalidArgumentError(
          "model config: every model needs a name and a base_path");
    }
    if (!names.insert(entry.name()).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("model config: model '", entry.name(),
                       "' is configured twice"));
    }
    ModelConfig model;
    model.name = entry.name();
    model.base_path = entry.base_path();
    const auto& policy = entry.model_version_policy();
    switch (policy.policy_choice_case()) {
      case tensorflow::serving::ServableVersionPolicy::kAll:
        model.policy.kind = VersionPolicy::Kind::kAll;
        break;
      case tensorflow::serving::ServableVersionPolicy::kSpecific:
        model.policy.kind = VersionPolicy::Kind::kSpecific;
        model.policy.specific.assign(policy.specific().versions().begin(),
                                     policy.specific().versions().end());
        break;
      case tensorflow::serving::ServableVersionPolicy::kLatest:
        model.policy.latest = std::max<int64_t>(1, policy.latest().num_versions());
        break;
      default:
        break;  // TF Serving's default: the latest version.
    }
    for (const auto& [label, version] : entry.version_labels()) {
      const bool served =
          model.policy.kind == VersionPolicy::Kind::kAll ||
          (model.policy.kind == VersionPolicy::Kind::kSpecific &&
           std::count(model.policy.specific.begin(), model.policy.specific.end(),
                      version) > 0) ||
          model.policy.kind == VersionPolicy::Kind::kLatest;
      if (!served) {
        return absl::InvalidArgumentError(absl::StrCat(
            "model config: label '", label, "' of model '", entry.name(),
            "' names version ", version, ", which its policy does not serve"));
      }
      model.labels[label] = version;
    }
    models.push_back(std::move(model));
  }
  if (models.empty()) {
    return absl::InvalidArgumentError("model config: no models");
  }
  return models;
}

absl::StatusOr<MonitoringOptions> ParseMonitoringConfigText(
    absl::string_view text) {
  tensorflow::serving::MonitoringConfig config;
  if (absl::Status status = ParseText(text, "monitoring config", &config);
      !status.ok()) {
    return status;
  }
  MonitoringOptions options;
  options.prometheus_enabled = config.prometheus_config().enable();
  if (!config.prometheus_config().path().empty()) {
    options.prometheus_path = config.prometheus_config().path();
  }
  return options;
}

absl::StatusOr<BatchingOptions> ParseBatchingParametersText(
    absl::string_view text) {
  tensorflow::serving::BatchingParameters parameters;
  if (absl::Status status =
          ParseText(text, "batching parameters", &parameters);
      !status.ok()) {
    return status;
  }
  BatchingOptions options;
  if (parameters.has_max_batch_size()) {
    options.max_batch_size = parameters.max_batch_size().value();
  }
  if (parameters.has_batch_timeout_micros()) {
    options.batch_timeout =
        absl::Microseconds(parameters.batch_timeout_micros().value());
  }
  if (parameters.has_max_enqueued_batches()) {
    options.max_enqueued_batches = parameters.max_enqueued_batches().value();
  }
  if (parameters.has_num_batch_threads()) {
    options.num_batch_threads =
        static_cast<int>(parameters.num_batch_threads().value());
  }
  options.allowed_batch_sizes.assign(parameters.allowed_batch_sizes().begin(),
                                     parameters.allowed_batch_sizes().end());
  if (options.max_batch_size < 1 || options.max_enqueued_batches < 1 ||
      options.num_batch_threads < 1 ||
      options.batch_timeout < absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        "batching parameters: max_batch_size, max_enqueued_batches and "
        "num_batch_threads must be positive, batch_timeout_micros not "
        "negative");
  }
  const std::vector<int64_t>& allowed = options.allowed_batch_sizes;
  if (!allowed.empty() &&
      (!std::is_sorted(allowed.begin(), allowed.end()) || allowed.front() < 1 ||
       allowed.back() != options.max_batch_size)) {
    return absl::InvalidArgumentError(
        "batching parameters: allowed_batch_sizes must ascend and end at "
        "max_batch_size");
  }
  return options;
}

}  // namespace asyncrt::serving
