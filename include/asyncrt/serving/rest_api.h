// The REST APIs of the model server over a ModelRepository: TF Serving's
// (/v1/models/...) and KServe's v2 (/v2/...), as an HttpHandler.
//
//   GET  /v1/models/NAME[/versions/N]            version status
//   GET  /v1/models/NAME[/versions/N]/metadata   signature
//   POST /v1/models/NAME[/versions/N]:predict    row or columnar format
//   POST .../:classify, :regress                 unsupported signature
//   GET  /v2/health/live, /v2/health/ready       liveness, readiness
//   GET  /v2, /v2/models/NAME[/versions/N]       server, model metadata
//   GET  /v2/models/NAME[/versions/N]/ready      model readiness
//   POST /v2/models/NAME[/versions/N]/infer      inference
//
// Errors are {"error": "..."} with the HTTP status TF Serving gives the
// error's canonical code (400 for InvalidArgument, 404 for NotFound, 503
// for Unavailable, ...). Labels (/labels/L) are not supported: NotFound.
//
// Ownership: borrows the runtime and the repository, which must outlive
// it. Thread-safety: Handle may be called from any threads at once.
// Blocking: never (replies come when the model is done).
#ifndef ASYNCRT_SERVING_REST_API_H_
#define ASYNCRT_SERVING_REST_API_H_

#include <atomic>

#include "absl/status/status.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/http_server.h"
#include "asyncrt/serving/model_repository.h"

namespace asyncrt::serving {

// TF Serving's HTTP status for a canonical error code.
int HttpStatusFor(absl::StatusCode code);

class RestApi {
 public:
  RestApi(Runtime& runtime, ModelRepository& repository)
      : runtime_(runtime), repository_(repository) {}

  void Handle(HttpRequest request, HttpResponder respond);

  // Readiness: false once the server drains (answered with 503), or while
  // some model has no version available.
  void set_draining() { draining_.store(true); }

 private:
  void Predict(const std::string& model, std::optional<int64_t> version,
               std::string body, HttpResponder respond);
  void Infer(const std::string& model, std::optional<int64_t> version,
             std::string body, HttpResponder respond);

  Runtime& runtime_;
  ModelRepository& repository_;
  std::atomic<bool> draining_{false};
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_REST_API_H_
