#include "asyncrt/serving/grpc_server.h"

#include <atomic>
#include <chrono>
#include <mutex>
#include <optional>
#include <set>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/serving/deadline_timer.h"
#include "asyncrt/serving/inference.h"
#include "grpcpp/grpcpp.h"
#include "kserve/grpc_predict_v2.grpc.pb.h"
#include "lib/serving/tensor_proto_codec.h"
#include "tensorflow_serving/apis.grpc.pb.h"

namespace asyncrt::serving {
namespace {

grpc::Status ToGrpc(const absl::Status& status) {
  if (status.ok()) return grpc::Status::OK;
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()),
                      std::string(status.message()));
}

// A unary call whose reply comes when the model is done. If the client
// goes away or the deadline passes first, the model's request is
// cancelled and the call finishes with CANCELLED or DEADLINE_EXCEEDED.
class ModelReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit ModelReactor(DeadlineTimer& timer) : timer_(timer) {}

  // Finishes once; later calls (a model ending after its deadline) are
  // dropped.
  void Answer(const absl::Status& status) {
    AnswerWith([&] { return status; });
  }
  // The same with the status `fill` returns, having filled the response:
  // under the lock, so that a deadline never finishes the call while the
  // response is being written, and a late model never writes a response
  // gRPC has let go of.
  template <typename Fill>
  void AnswerWith(Fill fill) {
    absl::Status status;
    DeadlineTimer::Handle deadline;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (answered_) return;
      answered_ = true;
      status = fill();
      deadline = deadline_;
    }
    timer_.Cancel(deadline);  // Answered in time.
    Finish(ToGrpc(status));
  }

  // Answers DEADLINE_EXCEEDED at `deadline` unless answered before.
  void ExpireAt(std::chrono::steady_clock::time_point deadline,
                std::shared_ptr<ModelReactor> self) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (answered_) return;
    deadline_ = timer_.At(deadline, [self = std::move(self)] { self->Expire(); });
  }

  // The model's request, to cancel.
  void set_request(RCReference<RequestContext> request) {
    std::lock_guard<std::mutex> lock(mutex_);
    request_ = std::move(request);
  }

  void Expire() {
    RCReference<RequestContext> request;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      request = request_;
    }
    if (request) request->Cancel();
    Answer(absl::DeadlineExceededError(
        "Deadline exceeded: the model took longer than the request allows"));
  }

  void OnCancel() override {
    RCReference<RequestContext> request;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      request = request_;
    }
    if (request) request->Cancel();
    Answer(absl::CancelledError("the client cancelled the request"));
  }

  // gRPC's last call: the reactor is unreferenced by gRPC from here on;
  // the model's callback and the deadline may still hold it.
  void OnDone() override { self_.reset(); }

  // Keeps the reactor alive for gRPC until OnDone.
  void Hold(std::shared_ptr<ModelReactor> self) { self_ = std::move(self); }

 private:
  DeadlineTimer& timer_;
  std::mutex mutex_;
  bool answered_ = false;                 // Guarded by mutex_.
  RCReference<RequestContext> request_;  // Guarded by mutex_.
  DeadlineTimer::Handle deadline_;        // Guarded by mutex_.
  std::shared_ptr<ModelReactor> self_;
};

std::optional<int64_t> RequestedVersion(
    const tensorflow::serving::ModelSpec& spec,
    const ModelRepository& repository, absl::Status* error) {
  if (spec.has_version()) return spec.version().value();
  if (!spec.version_label().empty()) {
    absl::StatusOr<int64_t> version =
        repository.ResolveLabel(spec.name(), spec.version_label());
    if (!version.ok()) {
      *error = version.status();
      return std::nullopt;
    }
    return *version;
  }
  return std::nullopt;
}

std::optional<int64_t> ParseVersion(const std::string& text,
                                    absl::Status* error) {
  if (text.empty()) return std::nullopt;
  int64_t version;
  if (!absl::SimpleAtoi(text, &version)) {
    *error = absl::InvalidArgumentError(
        absl::StrCat("version '", text, "' is not a number"));
    return std::nullopt;
  }
  return version;
}

void FillSpec(const Servable& servable,
              tensorflow::serving::ModelSpec* spec) {
  spec->set_name(servable.name);
  spec->mutable_version()->set_value(servable.version);
  spec->set_signature_name("serving_default");
}

}  // namespace

class GrpcServer::Impl {
 public:
  Impl(Runtime& runtime, ModelRepository& repository, const Options& options)
      : runtime_(runtime),
        repository_(repository),
        options_(options),
        prediction_(*this),
        model_(*this),
        inference_(*this) {}

  absl::Status Start() {
    grpc::ServerBuilder builder;
    builder.AddListeningPort(absl::StrCat(options_.address, ":", options_.port),
                             grpc::InsecureServerCredentials(), &port_);
    builder.SetMaxReceiveMessageSize(options_.max_message_bytes);
    builder.SetMaxSendMessageSize(options_.max_message_bytes);
    builder.RegisterService(&prediction_);
    builder.RegisterService(&model_);
    builder.RegisterService(&inference_);
    server_ = builder.BuildAndStart();
    if (!server_ || port_ == 0) {
      return absl::UnavailableError(absl::StrCat(
          "cannot serve gRPC on ", options_.address, ":", options_.port));
    }
    return absl::OkStatus();
  }

  void Shutdown(absl::Duration timeout) {
    std::lock_guard<std::mutex> lock(shutdown_mutex_);
    if (!server_) return;
    draining_.store(true);
    server_->Shutdown(std::chrono::system_clock::now() +
                      absl::ToChronoNanoseconds(timeout));
    server_->Wait();
    server_.reset();
  }

  int port() const { return port_; }
  void set_draining() { draining_.store(true); }

 private:
  // Runs `inputs` on `servable`; `reply(outputs)` fills the response and
  // returns the call's status. Returns the call's reactor: gRPC's default
  // one, finished at once, when the model answered before RunWith returned
  // (a quick model runs on this thread); else a ModelReactor, which the
  // model's answer, the deadline or the client's cancellation finishes.
  template <typename Reply>
  grpc::ServerUnaryReactor* Run(grpc::CallbackServerContext* context,
                                std::shared_ptr<const Servable> servable,
                                std::vector<ServingTensor> inputs,
                                Reply reply) {
    struct Pending {
      std::mutex mutex;
      bool returned = false;                  // Guarded by mutex.
      std::optional<absl::Status> answered;   // Guarded by mutex.
      std::shared_ptr<ModelReactor> reactor;  // Guarded by mutex.
    };
    auto pending = std::make_shared<Pending>();
    RCReference<RequestContext> request = RunWith(
        options_.runner, runtime_, servable, std::move(inputs),
        [pending, reply = std::move(reply)](
            absl::StatusOr<std::vector<ServingTensor>> outputs) mutable {
          std::shared_ptr<ModelReactor> reactor;
          {
            std::lock_guard<std::mutex> lock(pending->mutex);
            if (!pending->returned) {
              // Before Run returned, on its thread: the response is ours.
              pending->answered =
                  outputs.ok() ? reply(*outputs) : outputs.status();
              return;
            }
            reactor = pending->reactor;
          }
          if (!outputs.ok()) return reactor->Answer(outputs.status());
          reactor->AnswerWith([&] { return reply(*outputs); });
        });
    std::lock_guard<std::mutex> lock(pending->mutex);
    pending->returned = true;
    if (pending->answered) return FinishNow(context, *pending->answered);
    std::shared_ptr<ModelReactor> reactor = NewReactor();
    pending->reactor = reactor;
    if (request) reactor->set_request(std::move(request));
    // The earlier of the client's deadline and the server's timeout.
    auto deadline = std::chrono::steady_clock::time_point::max();
    if (options_.timeout > absl::ZeroDuration()) {
      deadline = std::chrono::steady_clock::now() +
                 absl::ToChronoNanoseconds(options_.timeout);
    }
    const auto client = context->deadline();
    if (client != std::chrono::system_clock::time_point::max()) {
      deadline = std::min(deadline, std::chrono::steady_clock::now() +
                                        (client - std::chrono::system_clock::now()));
    }
    if (deadline != std::chrono::steady_clock::time_point::max()) {
      reactor->ExpireAt(deadline, reactor);
    }
    return reactor.get();
  }

  // Finishes the call at once with `status`, through gRPC's default
  // reactor.
  static grpc::ServerUnaryReactor* FinishNow(
      grpc::CallbackServerContext* context, const absl::Status& status = {}) {
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(ToGrpc(status));
    return reactor;
  }

  std::shared_ptr<ModelReactor> NewReactor() {
    auto reactor = std::make_shared<ModelReactor>(timer_);
    reactor->Hold(reactor);
    return reactor;
  }

  class PredictionService final
      : public tensorflow::serving::PredictionService::CallbackService {
   public:
    explicit PredictionService(Impl& server) : server_(server) {}

    grpc::ServerUnaryReactor* Predict(
        grpc::CallbackServerContext* context,
        const tensorflow::serving::PredictRequest* request,
        tensorflow::serving::PredictResponse* response) override {
      absl::Status error;
      std::optional<int64_t> version =
          RequestedVersion(request->model_spec(), server_.repository_, &error);
      if (!error.ok()) return server_.FinishNow(context, error);
      absl::StatusOr<std::shared_ptr<const Servable>> servable =
          server_.repository_.Find(request->model_spec().name(), version);
      if (!servable.ok()) return server_.FinishNow(context, servable.status());
      const Signature& signature = (*servable)->signature;
      std::vector<ServingTensor> inputs;
      for (const TensorSpec& spec : signature.inputs) {
        auto it = request->inputs().find(spec.name);
        if (it == request->inputs().end()) {
          return server_.FinishNow(
              context, absl::InvalidArgumentError(
              absl::StrCat("input '", spec.name, "' is missing")));
        }
        absl::StatusOr<ServingTensor> tensor = FromTensorProto(
            it->second, spec, *server_.runtime_.host().allocator());
        if (!tensor.ok()) return server_.FinishNow(context, tensor.status());
        inputs.push_back(*std::move(tensor));
      }
      for (const auto& [name, tensor] : request->inputs()) {
        bool known = false;
        for (const TensorSpec& spec : signature.inputs) known |= spec.name == name;
        if (!known) {
          return server_.FinishNow(
              context, absl::InvalidArgumentError(
              absl::StrCat("the model has no input '", name, "'")));
        }
      }
      std::set<std::string> wanted(request->output_filter().begin(),
                                   request->output_filter().end());
      for (const std::string& name : wanted) {
        bool known = false;
        for (const TensorSpec& spec : signature.outputs) known |= spec.name == name;
        if (!known) {
          return server_.FinishNow(
              context, absl::InvalidArgumentError(
              absl::StrCat("output_filter names '", name,
                           "', which the model does not have")));
        }
      }
      FillSpec(**servable, response->mutable_model_spec());
      std::shared_ptr<const Servable> held = *servable;
      return server_.Run(context, *std::move(servable), std::move(inputs),
                  [held, response, wanted = std::move(wanted)](
                      const std::vector<ServingTensor>& outputs) {
                    for (size_t i = 0; i < outputs.size(); ++i) {
                      const std::string& name = held->signature.outputs[i].name;
                      if (!wanted.empty() && !wanted.count(name)) continue;
                      absl::Status status = ToTensorProto(
                          outputs[i], &(*response->mutable_outputs())[name]);
                      if (!status.ok()) return status;
                    }
                    return absl::OkStatus();
                  });
    }

    grpc::ServerUnaryReactor* GetModelMetadata(
        grpc::CallbackServerContext* context,
        const tensorflow::serving::GetModelMetadataRequest* request,
        tensorflow::serving::GetModelMetadataResponse* response) override {
      grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
      absl::Status error;
      std::optional<int64_t> version =
          RequestedVersion(request->model_spec(), server_.repository_, &error);
      if (error.ok() && request->metadata_field_size() == 0) {
        error = absl::InvalidArgumentError(
            "GetModelMetadataRequest must specify at least one "
            "metadata_field");
      }
      for (const std::string& field : request->metadata_field()) {
        if (error.ok() && field != "signature_def") {
          error = absl::InvalidArgumentError(
              absl::StrCat("Metadata field ", field, " is not supported"));
        }
      }
      if (!error.ok()) return reactor->Finish(ToGrpc(error)), reactor;
      absl::StatusOr<std::shared_ptr<const Servable>> servable =
          server_.repository_.Find(request->model_spec().name(), version);
      if (!servable.ok()) {
        return reactor->Finish(ToGrpc(servable.status())), reactor;
      }
      FillSpec(**servable, response->mutable_model_spec());
      tensorflow::serving::SignatureDefMap map;
      tensorflow::SignatureDef& def = (*map.mutable_signature_def())["serving_default"];
      def.set_method_name("tensorflow/serving/predict");
      for (auto [specs, infos] :
           {std::pair{&(*servable)->signature.inputs, def.mutable_inputs()},
            std::pair{&(*servable)->signature.outputs, def.mutable_outputs()}}) {
        for (const TensorSpec& spec : *specs) {
          tensorflow::TensorInfo& info = (*infos)[spec.name];
          info.set_name(spec.name);
          info.set_dtype(ToTfDataType(spec.dtype));
          if (!spec.shape) {
            info.mutable_tensor_shape()->set_unknown_rank(true);
            continue;
          }
          for (int64_t size : *spec.shape) {
            info.mutable_tensor_shape()->add_dim()->set_size(size);
          }
        }
      }
      (*response->mutable_metadata())["signature_def"].PackFrom(map);
      reactor->Finish(grpc::Status::OK);
      return reactor;
    }

   private:
    Impl& server_;
  };

  class ModelService final
      : public tensorflow::serving::ModelService::CallbackService {
   public:
    explicit ModelService(Impl& server) : server_(server) {}

    grpc::ServerUnaryReactor* GetModelStatus(
        grpc::CallbackServerContext* context,
        const tensorflow::serving::GetModelStatusRequest* request,
        tensorflow::serving::GetModelStatusResponse* response) override {
      grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
      absl::Status error;
      std::optional<int64_t> version =
          RequestedVersion(request->model_spec(), server_.repository_, &error);
      if (!error.ok()) return reactor->Finish(ToGrpc(error)), reactor;
      absl::StatusOr<std::vector<VersionStatus>> statuses =
          server_.repository_.Status(request->model_spec().name());
      if (!statuses.ok()) {
        return reactor->Finish(ToGrpc(statuses.status())), reactor;
      }
      for (const VersionStatus& status : *statuses) {
        if (version && status.version != *version) continue;
        auto* entry = response->add_model_version_status();
        entry->set_version(status.version);
        entry->set_state(static_cast<tensorflow::serving::ModelVersionStatus::State>(
            (static_cast<int>(status.state) + 1) * 10));
        entry->mutable_status()->set_error_code(
            static_cast<tensorflow::error::Code>(status.error.code()));
        entry->mutable_status()->set_error_message(
            std::string(status.error.message()));
      }
      if (response->model_version_status_size() == 0) {
        return reactor->Finish(ToGrpc(absl::NotFoundError(absl::StrCat(
                   "Could not find version ", version.value_or(0),
                   " of model ", request->model_spec().name())))),
               reactor;
      }
      reactor->Finish(grpc::Status::OK);
      return reactor;
    }

   private:
    Impl& server_;
  };

  class InferenceService final
      : public inference::GRPCInferenceService::CallbackService {
   public:
    explicit InferenceService(Impl& server) : server_(server) {}

    grpc::ServerUnaryReactor* ServerLive(
        grpc::CallbackServerContext* context,
        const inference::ServerLiveRequest*,
        inference::ServerLiveResponse* response) override {
      response->set_live(true);
      return server_.FinishNow(context);
    }

    grpc::ServerUnaryReactor* ServerReady(
        grpc::CallbackServerContext* context,
        const inference::ServerReadyRequest*,
        inference::ServerReadyResponse* response) override {
      response->set_ready(!server_.draining_.load() &&
                          server_.repository_.AllModelsAvailable());
      return server_.FinishNow(context);
    }

    grpc::ServerUnaryReactor* ModelReady(
        grpc::CallbackServerContext* context,
        const inference::ModelReadyRequest* request,
        inference::ModelReadyResponse* response) override {
      absl::Status error;
      std::optional<int64_t> version = ParseVersion(request->version(), &error);
      if (!error.ok()) return server_.FinishNow(context, error);
      response->set_ready(
          server_.repository_.Find(request->name(), version).ok());
      return server_.FinishNow(context);
    }

    grpc::ServerUnaryReactor* ServerMetadata(
        grpc::CallbackServerContext* context,
        const inference::ServerMetadataRequest*,
        inference::ServerMetadataResponse* response) override {
      response->set_name("asyncrt_model_server");
      response->set_version("0.1.0");
      return server_.FinishNow(context);
    }

    grpc::ServerUnaryReactor* ModelMetadata(
        grpc::CallbackServerContext* context,
        const inference::ModelMetadataRequest* request,
        inference::ModelMetadataResponse* response) override {
      absl::Status error;
      std::optional<int64_t> version = ParseVersion(request->version(), &error);
      if (!error.ok()) return server_.FinishNow(context, error);
      absl::StatusOr<std::shared_ptr<const Servable>> servable =
          server_.repository_.Find(request->name(), version);
      if (!servable.ok()) return server_.FinishNow(context, servable.status());
      response->set_name((*servable)->name);
      response->set_platform("asyncrt");
      if (absl::StatusOr<std::vector<VersionStatus>> statuses =
              server_.repository_.Status(request->name());
          statuses.ok()) {
        for (const VersionStatus& status : *statuses) {
          if (status.state == VersionState::kAvailable) {
            response->add_versions(absl::StrCat(status.version));
          }
        }
      }
      for (auto [specs, side] :
           {std::pair{&(*servable)->signature.inputs, response->mutable_inputs()},
            std::pair{&(*servable)->signature.outputs,
                      response->mutable_outputs()}}) {
        for (const TensorSpec& spec : *specs) {
          auto* tensor = side->Add();
          tensor->set_name(spec.name);
          tensor->set_datatype(spec.dtype == DType::kInvalid
                                   ? "ANY"
                                   : std::string(KServeDTypeName(spec.dtype)));
          if (spec.shape) {
            for (int64_t size : *spec.shape) tensor->add_shape(size);
          }
        }
      }
      return server_.FinishNow(context);
    }

    grpc::ServerUnaryReactor* ModelInfer(
        grpc::CallbackServerContext* context,
        const inference::ModelInferRequest* request,
        inference::ModelInferResponse* response) override {
      absl::Status error;
      std::optional<int64_t> version =
          ParseVersion(request->model_version(), &error);
      if (!error.ok()) return server_.FinishNow(context, error);
      absl::StatusOr<std::shared_ptr<const Servable>> servable =
          server_.repository_.Find(request->model_name(), version);
      if (!servable.ok()) return server_.FinishNow(context, servable.status());
      const Signature& signature = (*servable)->signature;
      const bool raw = request->raw_input_contents_size() > 0;
      if (raw && request->raw_input_contents_size() != request->inputs_size()) {
        return server_.FinishNow(
            context, absl::InvalidArgumentError(
                         "raw_input_contents must hold one entry per input"));
      }
      std::vector<std::optional<ServingTensor>> found(signature.inputs.size());
      for (int i = 0; i < request->inputs_size(); ++i) {
        const auto& input = request->inputs(i);
        size_t index = signature.inputs.size();
        for (size_t j = 0; j < signature.inputs.size(); ++j) {
          if (signature.inputs[j].name == input.name()) index = j;
        }
        if (index == signature.inputs.size()) {
          return server_.FinishNow(
              context, absl::InvalidArgumentError(absl::StrCat(
                           "the model has no input '", input.name(), "'")));
        }
        absl::StatusOr<ServingTensor> tensor = FromInferInput(
            input, raw ? &request->raw_input_contents(i) : nullptr,
            signature.inputs[index], *server_.runtime_.host().allocator());
        if (!tensor.ok()) return server_.FinishNow(context, tensor.status());
        found[index] = *std::move(tensor);
      }
      std::vector<ServingTensor> inputs;
      for (size_t j = 0; j < found.size(); ++j) {
        if (!found[j]) {
          return server_.FinishNow(
              context, absl::InvalidArgumentError(
              absl::StrCat("input '", signature.inputs[j].name, "' is missing")));
        }
        inputs.push_back(std::move(*found[j]));
      }
      response->set_model_name((*servable)->name);
      response->set_model_version(absl::StrCat((*servable)->version));
      response->set_id(request->id());
      std::shared_ptr<const Servable> held = *servable;
      return server_.Run(
          context, *std::move(servable), std::move(inputs),
          [held, response, raw](const std::vector<ServingTensor>& outputs) {
            // Raw for all outputs if the request was raw, or if one is
            // f16/bf16 (which only raw contents carry).
            bool all_raw = raw;
            for (const ServingTensor& output : outputs) {
              all_raw |= output.dtype() == DType::kF16 ||
                         output.dtype() == DType::kBF16;
            }
            for (size_t i = 0; i < outputs.size(); ++i) {
              absl::Status status = ToInferOutput(
                  outputs[i], held->signature.outputs[i].name,
                  response->add_outputs(),
                  all_raw ? response->add_raw_output_contents() : nullptr);
              if (!status.ok()) return status;
            }
            return absl::OkStatus();
          });
    }

   private:
    Impl& server_;
  };

  Runtime& runtime_;
  ModelRepository& repository_;
  Options options_;
  PredictionService prediction_;
  ModelService model_;
  InferenceService inference_;
  DeadlineTimer timer_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
  std::atomic<bool> draining_{false};
  std::mutex shutdown_mutex_;
};

absl::StatusOr<std::unique_ptr<GrpcServer>> GrpcServer::Start(
    Runtime& runtime, ModelRepository& repository, const Options& options) {
  auto impl = std::make_unique<Impl>(runtime, repository, options);
  if (absl::Status status = impl->Start(); !status.ok()) return status;
  return std::unique_ptr<GrpcServer>(new GrpcServer(std::move(impl)));
}

GrpcServer::GrpcServer(std::unique_ptr<Impl> impl) : impl_(std::move(impl)) {}
GrpcServer::~GrpcServer() { Shutdown(absl::Seconds(30)); }
int GrpcServer::port() const { return impl_->port(); }
void GrpcServer::set_draining() { impl_->set_draining(); }
void GrpcServer::Shutdown(absl::Duration timeout) { impl_->Shutdown(timeout); }

}  // namespace asyncrt::serving
