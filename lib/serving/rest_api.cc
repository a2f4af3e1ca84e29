#include "asyncrt/serving/rest_api.h"

#include <chrono>
#include <mutex>
#include <vector>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "asyncrt/serving/inference.h"
#include "asyncrt/serving/json_codec.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace asyncrt::serving {

int HttpStatusFor(absl::StatusCode code) {
  switch (code) {
    case absl::StatusCode::kOk: return 200;
    case absl::StatusCode::kCancelled: return 499;
    case absl::StatusCode::kInvalidArgument: return 400;
    case absl::StatusCode::kDeadlineExceeded: return 504;
    case absl::StatusCode::kNotFound: return 404;
    case absl::StatusCode::kAlreadyExists: return 409;
    case absl::StatusCode::kPermissionDenied: return 403;
    case absl::StatusCode::kResourceExhausted: return 429;
    case absl::StatusCode::kFailedPrecondition: return 400;
    case absl::StatusCode::kAborted: return 409;
    case absl::StatusCode::kOutOfRange: return 400;
    case absl::StatusCode::kUnimplemented: return 501;
    case absl::StatusCode::kUnavailable: return 503;
    case absl::StatusCode::kUnauthenticated: return 401;
    default: return 500;
  }
}

namespace {

// KServe's binary-data extension: the length of the body's JSON part.
constexpr char kInferenceHeaderContentLength[] =
    "Inference-Header-Content-Length";

using Writer = rapidjson::Writer<rapidjson::StringBuffer>;

HttpResponse Json(int status, std::string body) {
  HttpResponse response;
  response.status = status;
  response.body = std::move(body);
  return response;
}

HttpResponse Error(const absl::Status& status) {
  return Json(HttpStatusFor(status.code()), ErrorJson(status.message()));
}

void Key(Writer& writer, absl::string_view key) {
  writer.Key(key.data(), key.size());
}
void String(Writer& writer, absl::string_view value) {
  writer.String(value.data(), value.size());
}

// A parsed /v1 or /v2 model path.
struct ModelPath {
  std::string model;
  std::optional<int64_t> version;
  std::string label;             // /labels/L.
  std::string rest;              // What follows: "metadata", "ready", ...
  std::string verb;              // After ':' (v1): "predict", ...
};

// Segments after /vN/models: NAME [versions N | labels L] [rest].
absl::StatusOr<ModelPath> ParseModelPath(absl::Span<const std::string> parts) {
  if (parts.empty() || parts[0].empty()) {
    return absl::InvalidArgumentError("Malformed request: no model name");
  }
  ModelPath path;
  std::vector<std::string> items(parts.begin(), parts.end());
  // A verb sticks to the last segment ("m:predict", "1:predict").
  std::string& last = items.back();
  if (size_t colon = last.find(':'); colon != std::string::npos) {
    path.verb = last.substr(colon + 1);
    last = last.substr(0, colon);
  }
  path.model = items[0];
  size_t next = 1;
  if (next + 1 < items.size() + 1 && next < items.size() &&
      (items[next] == "versions" || items[next] == "labels")) {
    if (next + 1 >= items.size()) {
      return absl::InvalidArgumentError("Malformed request: no version");
    }
    if (items[next] == "labels") {
      path.label = items[next + 1];
    } else {
      int64_t version;
      if (!absl::SimpleAtoi(items[next + 1], &version)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "Malformed request: version '", items[next + 1],
            "' is not a number"));
      }
      path.version = version;
    }
    next += 2;
  }
  if (next < items.size()) path.rest = items[next++];
  if (next < items.size()) {
    return absl::InvalidArgumentError("Malformed request: too many segments");
  }
  return path;
}

void WriteShape(Writer& writer, const TensorSpec& spec) {
  Key(writer, "tensor_shape");
  writer.StartObject();
  Key(writer, "dim");
  writer.StartArray();
  if (spec.shape) {
    for (int64_t size : *spec.shape) {
      writer.StartObject();
      Key(writer, "size");
      String(writer, absl::StrCat(size));
      Key(writer, "name");
      String(writer, "");
      writer.EndObject();
    }
  }
  writer.EndArray();
  Key(writer, "unknown_rank");
  writer.Bool(!spec.shape.has_value());
  writer.EndObject();
}

std::string TfMetadata(const Servable& servable) {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartObject();
  Key(writer, "model_spec");
  writer.StartObject();
  Key(writer, "name");
  String(writer, servable.name);
  Key(writer, "signature_name");
  String(writer, "");
  Key(writer, "version");
  String(writer, absl::StrCat(servable.version));
  writer.EndObject();
  Key(writer, "metadata");
  writer.StartObject();
  Key(writer, "signature_def");
  writer.StartObject();
  Key(writer, "signature_def");
  writer.StartObject();
  Key(writer, "serving_default");
  writer.StartObject();
  for (const char* side : {"inputs", "outputs"}) {
    const std::vector<TensorSpec>& specs = side[0] == 'i'
                                               ? servable.signature.inputs
                                               : servable.signature.outputs;
    Key(writer, side);
    writer.StartObject();
    for (const TensorSpec& spec : specs) {
      Key(writer, spec.name);
      writer.StartObject();
      Key(writer, "dtype");
      String(writer, TfDTypeName(spec.dtype));
      WriteShape(writer, spec);
      Key(writer, "name");
      String(writer, spec.name);
      writer.EndObject();
    }
    writer.EndObject();
  }
  Key(writer, "method_name");
  String(writer, "tensorflow/serving/predict");
  writer.EndObject();
  writer.EndObject();
  writer.EndObject();
  writer.EndObject();
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string KServeMetadata(const Servable& servable,
                           const std::vector<VersionStatus>& versions) {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartObject();
  Key(writer, "name");
  String(writer, servable.name);
  Key(writer, "versions");
  writer.StartArray();
  for (const VersionStatus& status : versions) {
    if (status.state == VersionState::kAvailable) {
      String(writer, absl::StrCat(status.version));
    }
  }
  writer.EndArray();
  Key(writer, "platform");
  String(writer, "asyncrt");
  for (const char* side : {"inputs", "outputs"}) {
    const std::vector<TensorSpec>& specs = side[0] == 'i'
                                               ? servable.signature.inputs
                                               : servable.signature.outputs;
    Key(writer, side);
    writer.StartArray();
    for (const TensorSpec& spec : specs) {
      writer.StartObject();
      Key(writer, "name");
      String(writer, spec.name);
      Key(writer, "datatype");
      String(writer, spec.dtype == DType::kInvalid
                         ? absl::string_view("ANY")
                         : KServeDTypeName(spec.dtype));
      Key(writer, "shape");
      writer.StartArray();
      if (spec.shape) {
        for (int64_t size : *spec.shape) writer.Int64(size);
      }
      writer.EndArray();
      writer.EndObject();
    }
    writer.EndArray();
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

std::string TfStatus(const std::vector<VersionStatus>& statuses) {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartObject();
  Key(writer, "model_version_status");
  writer.StartArray();
  for (const VersionStatus& status : statuses) {
    writer.StartObject();
    Key(writer, "version");
    String(writer, absl::StrCat(status.version));
    Key(writer, "state");
    String(writer, VersionStateName(status.state));
    Key(writer, "status");
    writer.StartObject();
    Key(writer, "error_code");
    String(writer, absl::StatusCodeToString(status.error.code()));
    Key(writer, "error_message");
    String(writer, status.error.message());
    writer.EndObject();
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace

struct RestApi::Reply {
  RestApi* api;
  HttpResponder respond;
  std::chrono::steady_clock::time_point start;
  // Metric labels, filled in as the route is known.
  std::string model;
  int64_t version = 0;
  std::string api_name = "other";
  std::mutex mutex;
  bool answered = false;            // Guarded by mutex.
  bool abandoned = false;           // Guarded by mutex.
  DeadlineTimer::Handle deadline;   // Guarded by mutex.
  RCReference<RequestContext> running;  // Guarded by mutex.

  // The first answer goes out; later ones (a model finishing after its
  // deadline) are dropped. Returns whether this one went out.
  bool Answer(HttpResponse response) {
    HttpResponder send;
    DeadlineTimer::Handle timer;
    RCReference<RequestContext> finished;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (answered) return false;
      answered = true;
      send = std::move(respond);
      timer = deadline;
      finished = std::move(running);
    }
    // Answered in time: the timer lets go of this request.
    api->timer_->Cancel(timer);
    api->metrics_.RequestFinished(
        model, version, api_name, response.status,
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
            .count());
    std::move(send)(std::move(response));
    return true;
  }

  // Nobody will read the model's answer (its deadline passed, its client
  // went away): answers with `error` unless answered, and cancels the
  // model's request, whose kernels not yet run then do not run.
  void Abandon(const absl::Status& error) {
    RCReference<RequestContext> request;
    {
      std::lock_guard<std::mutex> lock(mutex);
      if (answered) return;
      abandoned = true;
      request = running;
    }
    // Cancelled before the answer goes out: whoever reads the answer sees
    // a request that runs no more kernels.
    if (request) request->Cancel();
    Answer(Error(error));
  }

  bool Abandoned() {
    std::lock_guard<std::mutex> lock(mutex);
    return abandoned;
  }
};

RestApi::RestApi(Runtime& runtime, ModelRepository& repository,
                 ServingMetrics& metrics, Options options)
    : runtime_(runtime),
      repository_(repository),
      options_(std::move(options)),
      metrics_(metrics),
      timer_(std::make_unique<DeadlineTimer>()) {}

RestApi::~RestApi() = default;

void RestApi::Handle(HttpRequest request, HttpResponder respond) {
  auto reply = std::make_shared<Reply>();
  reply->api = this;
  reply->respond = std::move(respond);
  reply->start = std::chrono::steady_clock::now();
  metrics_.RequestStarted();
  if (request.client_gone) {
    // Weak: the signal outlives an answered request on a kept-alive
    // connection.
    request.client_gone->OnGone([weak = std::weak_ptr<Reply>(reply)] {
      if (std::shared_ptr<Reply> reply = weak.lock()) {
        reply->Abandon(absl::CancelledError(
            "Cancelled: the client closed the connection"));
      }
    });
  }
  Route(request, std::move(reply));
}

void RestApi::Track(std::shared_ptr<Reply> reply,
                    RCReference<RequestContext> request) {
  std::lock_guard<std::mutex> lock(reply->mutex);
  if (reply->abandoned) {
    // Abandoned while it started: stop it now.
    if (request) request->Cancel();
    return;
  }
  if (reply->answered) return;  // The model was quicker.
  // A batched request has none to cancel (the batch is shared): abandoning
  // it still answers, and cancels nothing.
  reply->running = std::move(request);
  if (options_.timeout <= absl::ZeroDuration()) return;
  reply->deadline = timer_->At(
      std::chrono::steady_clock::now() +
          absl::ToChronoNanoseconds(options_.timeout),
      [reply]() {
        reply->Abandon(absl::DeadlineExceededError(
            "Deadline exceeded: the model took longer than the request "
            "timeout"));
      });
}

void RestApi::Route(const HttpRequest& request, std::shared_ptr<Reply> reply) {
  std::string path = request.target.substr(0, request.target.find('?'));
  std::vector<std::string> parts = absl::StrSplit(path, '/');
  // parts[0] is "" (the path starts with '/').
  auto malformed = [&] {
    reply->Answer(Json(404, ErrorJson(absl::StrCat(
                                     "Malformed request: ", request.method,
                                     " ", request.target))));
  };
  if (parts.size() < 2 || !parts[0].empty()) return malformed();
  const bool get = request.method == "GET";
  const bool post = request.method == "POST";
  if (get && !options_.metrics_path.empty() && path == options_.metrics_path) {
    reply->api_name = "metrics";
    HttpResponse response;
    response.content_type = "text/plain; version=0.0.4";
    response.body =
        metrics_.PrometheusText(repository_) +
        DeviceMemoryPrometheusText(runtime_.host().device_manager());
    return (void)reply->Answer(std::move(response));
  }
  if (parts[1] == "v2" && parts.size() == 2 && get) {
    return (void)reply->Answer(Json(
        200, R"({"name":"asyncrt_model_server","version":"0.1.0","extensions":["binary_tensor_data"]})"));
  }
  if (parts[1] == "v2" && parts.size() == 4 && parts[2] == "health" && get) {
    if (parts[3] == "live") {
      return (void)reply->Answer(Json(200, R"({"live":true})"));
    }
    if (parts[3] == "ready") {
      const bool ready = !draining_.load() && repository_.AllModelsAvailable();
      return (void)reply->Answer(
          Json(ready ? 200 : 503, ready ? R"({"ready":true})"
                                        : R"({"ready":false})"));
    }
  }
  if (parts.size() < 4 || parts[2] != "models" ||
      (parts[1] != "v1" && parts[1] != "v2")) {
    return malformed();
  }
  absl::StatusOr<ModelPath> model_path =
      ParseModelPath(absl::MakeConstSpan(parts).subspan(3));
  if (!model_path.ok()) return (void)reply->Answer(Error(model_path.status()));
  const std::string& model = model_path->model;
  std::optional<int64_t> version = model_path->version;
  if (!model_path->label.empty()) {
    absl::StatusOr<int64_t> labeled =
        repository_.ResolveLabel(model, model_path->label);
    if (!labeled.ok()) return (void)reply->Answer(Error(labeled.status()));
    version = *labeled;
  }
  reply->model = model;
  reply->version = version.value_or(0);
  reply->api_name = model_path->rest.empty() ? "status" : model_path->rest;

  if (parts[1] == "v1") {
    if (get && model_path->verb.empty() && model_path->rest.empty()) {
      absl::StatusOr<std::vector<VersionStatus>> statuses =
          repository_.Status(model);
      if (!statuses.ok()) return (void)reply->Answer(Error(statuses.status()));
      std::vector<VersionStatus> selected;
      for (const VersionStatus& status : *statuses) {
        if (!version || status.version == *version) selected.push_back(status);
      }
      if (selected.empty()) {
        return (void)reply->Answer(Error(absl::NotFoundError(absl::StrCat(
            "Could not find version ", *version, " of model ", model))));
      }
      return (void)reply->Answer(Json(200, TfStatus(selected)));
    }
    if (get && model_path->rest == "metadata" && model_path->verb.empty()) {
      absl::StatusOr<std::shared_ptr<const Servable>> servable =
          repository_.Find(model, version);
      if (!servable.ok()) return (void)reply->Answer(Error(servable.status()));
      return (void)reply->Answer(Json(200, TfMetadata(**servable)));
    }
    if (post && model_path->rest.empty()) {
      if (model_path->verb == "predict") {
        reply->api_name = "predict";
        return Predict(model, version, request.body, std::move(reply));
      }
      if (model_path->verb == "classify" || model_path->verb == "regress") {
        return (void)reply->Answer(Error(absl::InvalidArgumentError(absl::StrCat(
            "Expected ", model_path->verb,
            " signature method_name to be tensorflow/serving/",
            model_path->verb, ". Was: tensorflow/serving/predict"))));
      }
    }
    return malformed();
  }

  // KServe v2.
  if (get && model_path->rest.empty()) {
    absl::StatusOr<std::shared_ptr<const Servable>> servable =
        repository_.Find(model, version);
    if (!servable.ok()) return (void)reply->Answer(Error(servable.status()));
    absl::StatusOr<std::vector<VersionStatus>> statuses =
        repository_.Status(model);
    return (void)reply->Answer(Json(
        200, KServeMetadata(**servable, statuses.ok() ? *statuses
                                                      : std::vector<VersionStatus>{})));
  }
  if (get && model_path->rest == "ready") {
    const bool ready = repository_.Find(model, version).ok();
    return (void)reply->Answer(Json(
        ready ? 200 : 400,
        absl::StrCat(R"({"name":")", model, R"(","ready":)",
                     ready ? "true" : "false", "}")));
  }
  if (post && model_path->rest == "infer") {
    reply->api_name = "infer";
    // The binary-data extension: the JSON's length, the rest binary.
    std::optional<size_t> json_length;
    if (std::optional<absl::string_view> header =
            request.Header(kInferenceHeaderContentLength)) {
      size_t length = 0;
      if (!absl::SimpleAtoi(*header, &length)) {
        return (void)reply->Answer(Json(
            400, ErrorJson(absl::StrCat("bad ", kInferenceHeaderContentLength,
                                        ": '", *header, "'"))));
      }
      json_length = length;
    }
    return Infer(model, version, request.body, json_length, std::move(reply));
  }
  return malformed();
}

void RestApi::Predict(const std::string& model,
                      std::optional<int64_t> version, std::string body,
                      std::shared_ptr<Reply> reply) {
  absl::StatusOr<std::shared_ptr<const Servable>> servable =
      repository_.Find(model, version);
  if (!servable.ok()) return (void)reply->Answer(Error(servable.status()));
  reply->version = (*servable)->version;
  absl::StatusOr<PredictRequest> request = ParseTfServingPredict(
      body, (*servable)->signature, *runtime_.host().allocator());
  if (!request.ok()) return (void)reply->Answer(Error(request.status()));
  if (reply->Abandoned()) return;
  const bool row_format = request->row_format;
  std::shared_ptr<const Servable> held = *servable;
  RCReference<RequestContext> running = RunWith(
      options_.runner, runtime_, *std::move(servable),
      std::move(request->inputs),
      [held = std::move(held), row_format, reply](
          absl::StatusOr<std::vector<ServingTensor>> outputs) {
        if (!outputs.ok()) return (void)reply->Answer(Error(outputs.status()));
        absl::StatusOr<std::string> text =
            WriteTfServingPredict(*outputs, held->signature, row_format);
        if (!text.ok()) return (void)reply->Answer(Error(text.status()));
        reply->Answer(Json(200, *std::move(text)));
      });
  Track(std::move(reply), std::move(running));
}

void RestApi::Infer(const std::string& model, std::optional<int64_t> version,
                    std::string body, std::optional<size_t> json_length,
                    std::shared_ptr<Reply> reply) {
  absl::StatusOr<std::shared_ptr<const Servable>> servable =
      repository_.Find(model, version);
  if (!servable.ok()) return (void)reply->Answer(Error(servable.status()));
  reply->version = (*servable)->version;
  absl::StatusOr<KServeInferRequest> request =
      ParseKServeInfer(body, (*servable)->signature,
                       *runtime_.host().allocator(), json_length);
  if (!request.ok()) {
    return (void)reply->Answer(
        Json(400, ErrorJson(request.status().message())));
  }
  if (reply->Abandoned()) return;
  std::shared_ptr<const Servable> held = *servable;
  std::vector<ServingTensor> inputs = std::move(request->inputs);
  RCReference<RequestContext> running = RunWith(
      options_.runner, runtime_, *std::move(servable), std::move(inputs),
      [held = std::move(held), request = *std::move(request), reply](
          absl::StatusOr<std::vector<ServingTensor>> outputs) {
        if (!outputs.ok()) {
          return (void)reply->Answer(
              Json(HttpStatusFor(outputs.status().code()),
                   ErrorJson(outputs.status().message())));
        }
        absl::StatusOr<KServeInferReply> written =
            WriteKServeInfer(held->name, absl::StrCat(held->version),
                             *outputs, held->signature, &request);
        if (!written.ok()) return (void)reply->Answer(Error(written.status()));
        HttpResponse response = Json(200, std::move(written->body));
        if (written->json_length) {
          response.content_type = "application/octet-stream";
          response.headers.emplace_back(kInferenceHeaderContentLength,
                                        absl::StrCat(*written->json_length));
        }
        reply->Answer(std::move(response));
      });
  Track(std::move(reply), std::move(running));
}

}  // namespace asyncrt::serving
