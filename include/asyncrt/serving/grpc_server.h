// The model server's gRPC APIs over a ModelRepository, wire-compatible with
// TF Serving's and KServe's clients:
//
//   tensorflow.serving.PredictionService/Predict, /GetModelMetadata
//   tensorflow.serving.ModelService/GetModelStatus
//   inference.GRPCInferenceService/ServerLive, ServerReady, ModelReady,
//       ServerMetadata, ModelMetadata, ModelInfer
//
// Tensors come as TensorProto (tensor_content or the typed fields, a
// single value filling the shape) or as KServe's typed contents or raw
// bytes; replies carry tensor_content (TF Serving) and the request's form
// (KServe). On gRPC's callback API: a request never holds a gRPC thread
// while its model runs. A request whose client goes away, or whose
// deadline (the client's, or the server's timeout, whichever is first)
// passes, is cancelled: the model's kernels not yet run do not run.
//
// Ownership: borrows the runtime and the repository, which must outlive
// it. Thread-safety: thread-safe. Blocking: Start binds; Shutdown and the
// destructor wait for requests in flight (up to the timeout given).
#ifndef ASYNCRT_SERVING_GRPC_SERVER_H_
#define ASYNCRT_SERVING_GRPC_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/inference.h"
#include "asyncrt/serving/model_repository.h"

namespace asyncrt::serving {

class GrpcServer {
 public:
  struct Options {
    std::string address = "0.0.0.0";
    int port = 8500;  // 0: any free port (see port()).
    // The longest a model request may take; zero or less: no limit.
    absl::Duration timeout = absl::Seconds(30);
    int max_message_bytes = 64 << 20;
    // How model requests run (a Batcher, ...); null: each at once.
    InferenceRunner runner;
  };

  static absl::StatusOr<std::unique_ptr<GrpcServer>> Start(
      Runtime& runtime, ModelRepository& repository, const Options& options);
  ~GrpcServer();

  int port() const;
  // ServerReady answers false from now on.
  void set_draining();
  // Stops taking requests, lets those in flight finish up to `timeout`,
  // then cancels the rest. Idempotent.
  void Shutdown(absl::Duration timeout);

  class Impl;

 private:
  explicit GrpcServer(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_GRPC_SERVER_H_
