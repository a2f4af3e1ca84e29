// The REST APIs of the model server over a ModelRepository: TF Serving's
// (/v1/models/...) and KServe's v2 (/v2/...), as an HttpHandler.
//
//   GET  /v1/models/NAME[/versions/N|/labels/L]  version status
//   GET  /v1/models/NAME[/versions/N]/metadata   signature
//   POST /v1/models/NAME[/versions/N]:predict    row or columnar format
//   POST .../:classify, :regress                 unsupported signature
//   GET  /v2/health/live, /v2/health/ready       liveness, readiness
//   GET  /v2, /v2/models/NAME[/versions/N]       server, model metadata
//   GET  /v2/models/NAME[/versions/N]/ready      model readiness
//   POST /v2/models/NAME[/versions/N]/infer      inference
//   GET  /monitoring/prometheus/metrics          metrics (metrics.h)
//
// A model request that takes longer than the timeout is answered 504
// (DeadlineExceeded), and one whose client closes the connection first is
// answered 499 (Cancelled; nobody reads it); either way its request is
// cancelled: kernels that have not run yet do not run.
//
// Errors are {"error": "..."} with the HTTP status TF Serving gives the
// error's canonical code (400 for InvalidArgument, 404 for NotFound, 503
// for Unavailable, ...). /labels/L stands for the version the model's
// configuration names L.
//
// Ownership: borrows the runtime and the repository, which must outlive
// it. Thread-safety: Handle may be called from any threads at once.
// Blocking: never (replies come when the model is done).
#ifndef ASYNCRT_SERVING_REST_API_H_
#define ASYNCRT_SERVING_REST_API_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/deadline_timer.h"
#include "asyncrt/serving/http_server.h"
#include "asyncrt/serving/inference.h"
#include "asyncrt/serving/metrics.h"
#include "asyncrt/serving/model_repository.h"

namespace asyncrt::serving {

// TF Serving's HTTP status for a canonical error code.
int HttpStatusFor(absl::StatusCode code);

class RestApi {
 public:
  struct Options {
    // The longest a model request may take; zero or less: no limit.
    absl::Duration timeout = absl::Seconds(30);
    // Where Prometheus reads the metrics (empty: not served).
    std::string metrics_path = "/monitoring/prometheus/metrics";
    // How model requests run (a Batcher, ...); null: each at once.
    InferenceRunner runner;
  };
  // `metrics` (borrowed) receives every request and is served.
  RestApi(Runtime& runtime, ModelRepository& repository,
          ServingMetrics& metrics, Options options);
  ~RestApi();

  void Handle(HttpRequest request, HttpResponder respond);

  // Readiness: false once the server drains (answered with 503), or while
  // some model has no version available.
  void set_draining() { draining_.store(true); }

 private:
  struct Reply;
  void Route(const HttpRequest& request, std::shared_ptr<Reply> reply);
  void Predict(const std::string& model, std::optional<int64_t> version,
               std::string body, std::shared_ptr<Reply> reply);
  // `json_length`: KServe's binary-data extension (json_codec.h).
  void Infer(const std::string& model, std::optional<int64_t> version,
             std::string body, std::optional<size_t> json_length,
             std::shared_ptr<Reply> reply);
  // Keeps `request` (the model's, null when batched) with `reply`, to
  // cancel when the reply is abandoned, and arms the timeout.
  void Track(std::shared_ptr<Reply> reply,
             RCReference<RequestContext> request);

  Runtime& runtime_;
  ModelRepository& repository_;
  Options options_;
  ServingMetrics& metrics_;
  std::unique_ptr<DeadlineTimer> timer_;
  std::atomic<bool> draining_{false};
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_REST_API_H_
