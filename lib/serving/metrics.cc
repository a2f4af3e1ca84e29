#include "asyncrt/serving/metrics.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "asyncrt/device/stream_device.h"
#include "asyncrt/host_context/device.h"

namespace asyncrt::serving {
namespace {

// A label value with Prometheus' escapes.
std::string Escaped(absl::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out.push_back('\\');
    if (c == '\n') {
      out.append("\\n");
      continue;
    }
    out.push_back(c);
  }
  return out;
}

}  // namespace

void ServingMetrics::RequestFinished(absl::string_view model, int64_t version,
                                     absl::string_view api, int code,
                                     double seconds) {
  in_flight_.fetch_sub(1, std::memory_order_relaxed);
  std::lock_guard<std::mutex> lock(mutex_);
  ++counts_[{std::string(model), version, std::string(api),
             absl::StrCat(code)}];
  Latency& latency =
      latencies_[{std::string(model), version, std::string(api)}];
  for (size_t i = 0; i < kBuckets.size(); ++i) {
    if (seconds <= kBuckets[i]) ++latency.buckets[i];
  }
  ++latency.count;
  latency.sum += seconds;
}

void ServingMetrics::BatchRun(absl::string_view model, int64_t version,
                              int64_t rows, double queue_seconds) {
  std::lock_guard<std::mutex> lock(mutex_);
  Batches& batches = batches_[{std::string(model), version}];
  for (size_t i = 0; i < batches.sizes.size(); ++i) {
    if (rows <= (int64_t{1} << i)) ++batches.sizes[i];
  }
  ++batches.count;
  batches.rows += rows;
  batches.queue_seconds += queue_seconds;
}

std::string DeviceMemoryPrometheusText(const DeviceManager& devices) {
  struct Gauge {
    const char* name;
    const char* help;
    std::string samples;
  };
  Gauge gauges[] = {
      {"asyncrt_device_memory_in_use_bytes", "Device memory the runtime holds.",
       ""},
      {"asyncrt_device_memory_peak_bytes",
       "The most device memory the runtime has held at once.", ""},
      {"asyncrt_device_memory_limit_bytes",
       "The most device memory the runtime may hold.", ""},
      {"asyncrt_device_memory_cached_bytes",
       "Device memory the backend keeps for reuse beyond what the runtime "
       "holds.",
       ""}};
  for (const RCReference<Device>& device : devices.ListDevices()) {
    StreamDevice* stream_device = AsStreamDevice(device.get());
    if (stream_device == nullptr) continue;
    const std::string label =
        absl::StrCat("{device=\"", Escaped(device->name()), "\"} ");
    const DeviceAllocator::Stats stats = stream_device->allocator().GetStats();
    absl::StrAppend(&gauges[0].samples, gauges[0].name, label, stats.live_bytes,
                    "\n");
    absl::StrAppend(&gauges[1].samples, gauges[1].name, label, stats.peak_bytes,
                    "\n");
    if (stats.limit_bytes > 0) {
      absl::StrAppend(&gauges[2].samples, gauges[2].name, label,
                      stats.limit_bytes, "\n");
    }
    if (std::optional<StreamDevice::BackendMemoryStats> backend =
            stream_device->GetBackendMemoryStats()) {
      absl::StrAppend(&gauges[3].samples, gauges[3].name, label,
                      backend->cached_bytes, "\n");
    }
  }
  std::string text;
  for (const Gauge& gauge : gauges) {
    if (gauge.samples.empty()) continue;
    absl::StrAppend(&text, "# HELP ", gauge.name, " ", gauge.help, "\n",
                    "# TYPE ", gauge.name, " gauge\n", gauge.samples);
  }
  return text;
}

std::string ServingMetrics::PrometheusText(
    const ModelRepository& repository) const {
  std::string text;
  absl::StrAppend(&text,
                  "# HELP asyncrt_serving_requests_total Requests answered.\n"
                  "# TYPE asyncrt_serving_requests_total counter\n");
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [key, count] : counts_) {
    const auto& [model, version, api, code] = key;
    absl::StrAppend(&text, "asyncrt_serving_requests_total{model=\"",
                    Escaped(model), "\",version=\"", version, "\",api=\"", api,
                    "\",code=\"", code, "\"} ", count, "\n");
  }
  absl::StrAppend(&text,
                  "# HELP asyncrt_serving_request_latency_seconds Time from "
                  "a request's arrival to its reply.\n"
                  "# TYPE asyncrt_serving_request_latency_seconds histogram\n");
  for (const auto& [key, latency] : latencies_) {
    const auto& [model, version, api] = key;
    const std::string labels = absl::StrCat(
        "model=\"", Escaped(model), "\",version=\"", version, "\",api=\"", api,
        "\"");
    for (size_t i = 0; i < kBuckets.size(); ++i) {
      absl::StrAppend(&text, "asyncrt_serving_request_latency_seconds_bucket{",
                      labels, ",le=\"", absl::StrFormat("%g", kBuckets[i]),
                      "\"} ", latency.buckets[i], "\n");
    }
    absl::StrAppend(&text, "asyncrt_serving_request_latency_seconds_bucket{",
                    labels, ",le=\"+Inf\"} ", latency.count, "\n",
                    "asyncrt_serving_request_latency_seconds_sum{", labels,
                    "} ", absl::StrFormat("%.9g", latency.sum), "\n",
                    "asyncrt_serving_request_latency_seconds_count{", labels,
                    "} ", latency.count, "\n");
  }
  absl::StrAppend(&text,
                  "# HELP asyncrt_serving_batch_size Rows per batch run.\n"
                  "# TYPE asyncrt_serving_batch_size histogram\n");
  for (const auto& [key, batches] : batches_) {
    const std::string labels = absl::StrCat(
        "model=\"", Escaped(key.first), "\",version=\"", key.second, "\"");
    for (size_t i = 0; i < batches.sizes.size(); ++i) {
      absl::StrAppend(&text, "asyncrt_serving_batch_size_bucket{", labels,
                      ",le=\"", int64_t{1} << i, "\"} ", batches.sizes[i],
                      "\n");
    }
    absl::StrAppend(&text, "asyncrt_serving_batch_size_bucket{", labels,
                    ",le=\"+Inf\"} ", batches.count, "\n",
                    "asyncrt_serving_batch_size_sum{", labels, "} ",
                    batches.rows, "\n", "asyncrt_serving_batch_size_count{",
                    labels, "} ", batches.count, "\n");
    absl::StrAppend(&text, "asyncrt_serving_batch_queue_seconds_sum{", labels,
                    "} ", absl::StrFormat("%.9g", batches.queue_seconds), "\n",
                    "asyncrt_serving_batch_queue_seconds_count{", labels, "} ",
                    batches.count, "\n");
  }
  absl::StrAppend(&text,
                  "# HELP asyncrt_serving_requests_in_flight Requests being "
                  "handled.\n"
                  "# TYPE asyncrt_serving_requests_in_flight gauge\n"
                  "asyncrt_serving_requests_in_flight ",
                  in_flight_.load(std::memory_order_relaxed), "\n");
  absl::StrAppend(&text,
                  "# HELP asyncrt_serving_model_load_seconds How long loading "
                  "a version took.\n"
                  "# TYPE asyncrt_serving_model_load_seconds gauge\n");
  for (const ModelRepository::LoadTime& load : repository.LoadTimes()) {
    absl::StrAppend(&text, "asyncrt_serving_model_load_seconds{model=\"",
                    Escaped(load.model), "\",version=\"", load.version, "\"} ",
                    absl::StrFormat("%.6g", load.seconds), "\n");
  }
  absl::StrAppend(&text,
                  "# HELP asyncrt_serving_model_version_available 1 while a "
                  "version serves requests.\n"
                  "# TYPE asyncrt_serving_model_version_available gauge\n");
  for (const std::string& model : repository.ModelNames()) {
    absl::StatusOr<std::vector<VersionStatus>> statuses =
        repository.Status(model);
    if (!statuses.ok()) continue;
    for (const VersionStatus& status : *statuses) {
      absl::StrAppend(
          &text, "asyncrt_serving_model_version_available{model=\"",
          Escaped(model), "\",version=\"", status.version, "\"} ",
          status.state == VersionState::kAvailable ? 1 : 0, "\n");
    }
  }
  return text;
}

}  // namespace asyncrt::serving
