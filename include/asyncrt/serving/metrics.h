// The model server's metrics, in Prometheus' text format (served at
// /monitoring/prometheus/metrics, TF Serving's path):
//
//   asyncrt_serving_requests_total{model,version,api,code}      counter
//     (code: the HTTP status)
//   asyncrt_serving_request_latency_seconds{model,version,api}  histogram
//   asyncrt_serving_requests_in_flight                          gauge
//   asyncrt_serving_model_load_seconds{model,version}           gauge
//   asyncrt_serving_model_version_available{model,version}      gauge
//   asyncrt_serving_batch_size{model,version}                   histogram
//   asyncrt_serving_batch_queue_seconds{model,version}          sum, count
//
// and, from DeviceMemoryPrometheusText, each device of its own memory
// (a plug-in's: CUDA:0, SIM:0):
//
//   asyncrt_device_memory_in_use_bytes{device}   gauge: what the runtime holds
//   asyncrt_device_memory_peak_bytes{device}     gauge: its peak
//   asyncrt_device_memory_limit_bytes{device}    gauge (where there is one)
//   asyncrt_device_memory_cached_bytes{device}   gauge: what the backend keeps
//                                                 for reuse (where it caches)
//
// Thread-safety: all members are thread-safe. Blocking: a short lock.
#ifndef ASYNCRT_SERVING_METRICS_H_
#define ASYNCRT_SERVING_METRICS_H_

#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <mutex>
#include <string>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "asyncrt/serving/model_repository.h"

namespace asyncrt {
class DeviceManager;
}  // namespace asyncrt

namespace asyncrt::serving {

// The device memory gauges above, for every device of `devices` with memory
// of its own (none for the host's): read at the call, not recorded.
std::string DeviceMemoryPrometheusText(const DeviceManager& devices);

class ServingMetrics {
 public:
  // Latency buckets' upper bounds, in seconds.
  static constexpr std::array<double, 16> kBuckets = {
      0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025,
      0.05,   0.1,     0.25,   0.5,   1,      2.5,   5,    10};

  void RequestStarted() { in_flight_.fetch_add(1, std::memory_order_relaxed); }
  // A request of `api` ("predict", "infer", "metadata", ...) for `model`
  // (empty: none; version 0: none resolved) answered with HTTP status
  // `code` after `seconds`.
  void RequestFinished(absl::string_view model, int64_t version,
                       absl::string_view api, int code, double seconds);

  // A batch of `rows` rows of `model`'s `version` ran, its first request
  // having waited `queue_seconds`.
  void BatchRun(absl::string_view model, int64_t version, int64_t rows,
                double queue_seconds);

  // Everything above, with the repository's load times and states.
  std::string PrometheusText(const ModelRepository& repository) const;

 private:
  struct Latency {
    std::array<uint64_t, kBuckets.size()> buckets{};
    uint64_t count = 0;
    double sum = 0;
  };
  using Key = std::tuple<std::string, int64_t, std::string>;  // model, version, api

  std::atomic<int64_t> in_flight_{0};
  mutable std::mutex mutex_;
  std::map<std::tuple<std::string, int64_t, std::string, std::string>, uint64_t>
      counts_;                          // Guarded: (model, version, api, code).
  std::map<Key, Latency> latencies_;    // Guarded.
  struct Batches {
    std::array<uint64_t, 11> sizes{};  // <= 1, 2, 4, ..., 1024.
    uint64_t count = 0;
    uint64_t rows = 0;
    double queue_seconds = 0;
  };
  std::map<std::pair<std::string, int64_t>, Batches> batches_;  // Guarded.
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_METRICS_H_
