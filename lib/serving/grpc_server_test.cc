// The gRPC APIs with real clients (stubs generated from our protos) on
// loopback: TF Serving's Predict (tensor_content and typed values, the
// single-value broadcast), GetModelMetadata and GetModelStatus; KServe
// v2's health, metadata and ModelInfer (typed and raw contents); errors
// with their codes; concurrent clients.
#include "asyncrt/serving/grpc_server.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/model_repository.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "kserve/grpc_predict_v2.grpc.pb.h"
#include "lib/serving/serving_test_util.h"
#include "tensorflow_serving/apis.grpc.pb.h"

namespace asyncrt::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr char kSignature[] = R"(
{"inputs": [{"name": "x", "dtype": "float32", "shape": [-1, 2]}],
 "outputs": [{"name": "y", "dtype": "float32", "shape": [-1, 2]}]})";

// serving_test.reverse: each string reversed.
constexpr char kStringSignature[] = R"(
{"inputs": [{"name": "x", "dtype": "string", "shape": [-1]}],
 "outputs": [{"name": "y", "dtype": "string", "shape": [-1]}]})";

class GrpcServerTest : public ::testing::Test {
 protected:
  void SetUp() override {
    base_ = std::filesystem::temp_directory_path() /
            ("asyncrt_grpc_test_" + std::to_string(getpid()));
    testing::WriteBefVersion(base_ / "m", 3,
                             testing::TestModelBef("serving_test.double"),
                             kSignature);
    testing::WriteBefVersion(
        base_ / "gated", 1,
        testing::TestModelBef("serving_test.double", testing::kGatedChain),
        kSignature);
    testing::WriteBefVersion(base_ / "strings", 1,
                             testing::TestModelBef("serving_test.reverse"),
                             kStringSignature);
    testing::marks = 0;
    runtime_ = testing::TestRuntime();
    repository_ = std::make_unique<ModelRepository>(
        *runtime_,
        std::vector<ModelConfig>{{"m", (base_ / "m").string(), {}},
                                 {"gated", (base_ / "gated").string(), {}},
                                 {"strings", (base_ / "strings").string(), {}}});
    ASSERT_TRUE(repository_->Poll().ok());
    auto statuses = repository_->Status("m");
    ASSERT_TRUE(statuses.ok());
    ASSERT_TRUE((*statuses)[0].error.ok()) << (*statuses)[0].error;
    GrpcServer::Options server_options;
    server_options.address = "127.0.0.1";
    server_options.port = 0;
    auto server = GrpcServer::Start(*runtime_, *repository_, server_options);
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
    channel_ = grpc::CreateChannel(
        "127.0.0.1:" + std::to_string(server_->port()),
        grpc::InsecureChannelCredentials());
    prediction_ = tensorflow::serving::PredictionService::NewStub(channel_);
    models_ = tensorflow::serving::ModelService::NewStub(channel_);
    inference_ = inference::GRPCInferenceService::NewStub(channel_);
  }

  void TearDown() override {
    testing::OpenGate();
    testing::gate_reached = nullptr;
    server_.reset();
    repository_.reset();
    runtime_.reset();
    std::filesystem::remove_all(base_);
  }

  static tensorflow::TensorProto Floats(std::vector<int64_t> shape,
                                        std::vector<float> values,
                                        bool as_content) {
    tensorflow::TensorProto proto;
    proto.set_dtype(tensorflow::DT_FLOAT);
    for (int64_t d : shape) proto.mutable_tensor_shape()->add_dim()->set_size(d);
    if (as_content) {
      proto.set_tensor_content(std::string(
          reinterpret_cast<const char*>(values.data()), values.size() * 4));
    } else {
      for (float v : values) proto.add_float_val(v);
    }
    return proto;
  }

  static std::vector<float> FloatsOf(const tensorflow::TensorProto& proto) {
    std::vector<float> values(proto.tensor_content().size() / 4);
    std::memcpy(values.data(), proto.tensor_content().data(),
                proto.tensor_content().size());
    return values;
  }

  grpc::Status Predict(const tensorflow::TensorProto& x,
                       tensorflow::serving::PredictResponse* response,
                       const std::string& model = "m",
                       grpc::ClientContext* given_context = nullptr) {
    tensorflow::serving::PredictRequest request;
    request.mutable_model_spec()->set_name(model);
    (*request.mutable_inputs())["x"] = x;
    grpc::ClientContext context;
    return prediction_->Predict(given_context ? given_context : &context,
                                request, response);
  }

  std::filesystem::path base_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<ModelRepository> repository_;
  std::unique_ptr<GrpcServer> server_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<tensorflow::serving::PredictionService::Stub> prediction_;
  std::unique_ptr<tensorflow::serving::ModelService::Stub> models_;
  std::unique_ptr<inference::GRPCInferenceService::Stub> inference_;
};

TEST_F(GrpcServerTest, PredictTakesContentTypedValuesAndOneValueToFill) {
  tensorflow::serving::PredictResponse response;
  grpc::Status status = Predict(Floats({2, 2}, {1, 2, 3, 4}, true), &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.model_spec().name(), "m");
  EXPECT_EQ(response.model_spec().version().value(), 3);
  const tensorflow::TensorProto& y = response.outputs().at("y");
  EXPECT_EQ(y.dtype(), tensorflow::DT_FLOAT);
  EXPECT_EQ(y.tensor_shape().dim_size(), 2);
  EXPECT_THAT(FloatsOf(y), ElementsAre(2, 4, 6, 8));

  response.Clear();
  ASSERT_TRUE(Predict(Floats({1, 2}, {5, 6}, false), &response).ok());
  EXPECT_THAT(FloatsOf(response.outputs().at("y")), ElementsAre(10, 12));
  response.Clear();
  ASSERT_TRUE(Predict(Floats({2, 2}, {7}, false), &response).ok());
  EXPECT_THAT(FloatsOf(response.outputs().at("y")), ElementsAre(14, 14, 14, 14));
}

TEST_F(GrpcServerTest, StringTensorsBothWays) {
  // TF Serving: DT_STRING in string_val (bytes, not only text; one value
  // fills the shape).
  tensorflow::serving::PredictRequest request;
  request.mutable_model_spec()->set_name("strings");
  tensorflow::TensorProto& x = (*request.mutable_inputs())["x"];
  x.set_dtype(tensorflow::DT_STRING);
  x.mutable_tensor_shape()->add_dim()->set_size(2);
  x.add_string_val("abc");
  x.add_string_val(std::string("\x00\xff", 2));
  tensorflow::serving::PredictResponse response;
  {
    grpc::ClientContext context;
    grpc::Status status = prediction_->Predict(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
  }
  const tensorflow::TensorProto& y = response.outputs().at("y");
  EXPECT_EQ(y.dtype(), tensorflow::DT_STRING);
  EXPECT_THAT(y.string_val(), ElementsAre("cba", std::string("\xff\x00", 2)));
  // One empty string cannot fill a shape of millions of elements.
  {
    tensorflow::serving::PredictRequest huge = request;
    tensorflow::TensorProto& filled = (*huge.mutable_inputs())["x"];
    filled.clear_string_val();
    filled.add_string_val("");
    filled.mutable_tensor_shape()->mutable_dim(0)->set_size(int64_t{1} << 28);
    grpc::ClientContext context;
    grpc::Status status = prediction_->Predict(&context, huge, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("strings; at most"));
  }
  // A string input to a float model is an error naming it.
  (*request.mutable_inputs())["x"].mutable_tensor_shape()->mutable_dim(0)->set_size(1);
  request.mutable_model_spec()->set_name("m");
  {
    grpc::ClientContext context;
    grpc::Status status = prediction_->Predict(&context, request, &response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr("is str; the model takes f32"));
  }
  // KServe: BYTES in bytes_contents, or raw, each element after its
  // 4-byte little-endian length.
  auto bytes_request = [](int64_t count) {
    inference::ModelInferRequest infer;
    infer.set_model_name("strings");
    auto* input = infer.add_inputs();
    input->set_name("x");
    input->set_datatype("BYTES");
    input->add_shape(count);
    return infer;
  };
  for (bool raw : {false, true}) {
    grpc::ClientContext context;
    inference::ModelInferRequest infer = bytes_request(2);
    if (raw) {
      infer.add_raw_input_contents(std::string("\x02\0\0\0hi\0\0\0\0", 10));
    } else {
      infer.mutable_inputs(0)->mutable_contents()->add_bytes_contents("hi");
      infer.mutable_inputs(0)->mutable_contents()->add_bytes_contents("");
    }
    inference::ModelInferResponse reply;
    grpc::Status status = inference_->ModelInfer(&context, infer, &reply);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(reply.outputs(0).datatype(), "BYTES");
    if (raw) {
      EXPECT_EQ(reply.raw_output_contents(0),
                std::string("\x02\0\0\0ih\0\0\0\0", 10));
    } else {
      EXPECT_THAT(reply.outputs(0).contents().bytes_contents(),
                  ElementsAre("ih", ""));
    }
  }
  grpc::ClientContext context;
  inference::ModelInferRequest cut = bytes_request(1);
  cut.add_raw_input_contents(std::string("\x09\0\0\0hi", 6));
  inference::ModelInferResponse reply;
  grpc::Status status = inference_->ModelInfer(&context, cut, &reply);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("cut short"));
}

TEST_F(GrpcServerTest, PredictErrorsCarryTheirCodes) {
  tensorflow::serving::PredictResponse response;
  grpc::Status status = Predict(Floats({1, 2}, {1, 2}, false), &response, "nope");
  EXPECT_EQ(status.error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(status.error_message(), HasSubstr("Latest(nope)"));
  status = Predict(Floats({1, 3}, {1, 2, 3}, false), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("has shape [1, 3]; the model takes [-1, 2]"));
  status = Predict(Floats({2, 2}, {1, 2, 3}, false), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("has 3 values for 4 elements"));
  tensorflow::TensorProto wrong = Floats({1, 2}, {1, 2}, false);
  wrong.set_dtype(tensorflow::DT_INT64);
  status = Predict(wrong, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("is i64; the model takes f32"));
  // One value may fill a shape, but not gigabytes of it; and a shape is
  // never allocated before its bytes are there.
  status = Predict(Floats({int64_t{1} << 28, 2}, {1}, false), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("one value would fill 2147483648 bytes"));
  status = Predict(Floats({int64_t{1} << 40, 2}, {1, 2}, true), &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("has 8 bytes"));
}

TEST_F(GrpcServerTest, MetadataAndStatus) {
  tensorflow::serving::GetModelMetadataRequest request;
  request.mutable_model_spec()->set_name("m");
  request.add_metadata_field("signature_def");
  tensorflow::serving::GetModelMetadataResponse response;
  grpc::ClientContext context;
  ASSERT_TRUE(prediction_->GetModelMetadata(&context, request, &response).ok());
  tensorflow::serving::SignatureDefMap map;
  ASSERT_TRUE(response.metadata().at("signature_def").UnpackTo(&map));
  const tensorflow::SignatureDef& def = map.signature_def().at("serving_default");
  EXPECT_EQ(def.method_name(), "tensorflow/serving/predict");
  EXPECT_EQ(def.inputs().at("x").dtype(), tensorflow::DT_FLOAT);
  EXPECT_EQ(def.inputs().at("x").tensor_shape().dim(0).size(), -1);

  tensorflow::serving::GetModelStatusRequest status_request;
  status_request.mutable_model_spec()->set_name("m");
  tensorflow::serving::GetModelStatusResponse status_response;
  grpc::ClientContext status_context;
  ASSERT_TRUE(
      models_->GetModelStatus(&status_context, status_request, &status_response)
          .ok());
  ASSERT_EQ(status_response.model_version_status_size(), 1);
  EXPECT_EQ(status_response.model_version_status(0).version(), 3);
  EXPECT_EQ(status_response.model_version_status(0).state(),
            tensorflow::serving::ModelVersionStatus::AVAILABLE);
}

TEST_F(GrpcServerTest, KServeHealthMetadataAndInfer) {
  {
    grpc::ClientContext context;
    inference::ServerLiveResponse live;
    ASSERT_TRUE(inference_->ServerLive(&context, {}, &live).ok());
    EXPECT_TRUE(live.live());
  }
  {
    grpc::ClientContext context;
    inference::ServerReadyResponse ready;
    ASSERT_TRUE(inference_->ServerReady(&context, {}, &ready).ok());
    EXPECT_TRUE(ready.ready());
  }
  {
    grpc::ClientContext context;
    inference::ModelMetadataRequest request;
    request.set_name("m");
    inference::ModelMetadataResponse metadata;
    ASSERT_TRUE(inference_->ModelMetadata(&context, request, &metadata).ok());
    EXPECT_THAT(metadata.versions(), ElementsAre("3"));
    EXPECT_EQ(metadata.inputs(0).datatype(), "FP32");
  }
  for (bool raw : {false, true}) {
    grpc::ClientContext context;
    inference::ModelInferRequest request;
    request.set_model_name("m");
    request.set_id("req-1");
    auto* input = request.add_inputs();
    input->set_name("x");
    input->set_datatype("FP32");
    input->add_shape(1);
    input->add_shape(2);
    const float values[] = {1.5f, -1};
    if (raw) {
      request.add_raw_input_contents(
          std::string(reinterpret_cast<const char*>(values), sizeof(values)));
    } else {
      input->mutable_contents()->add_fp32_contents(values[0]);
      input->mutable_contents()->add_fp32_contents(values[1]);
    }
    inference::ModelInferResponse response;
    grpc::Status status = inference_->ModelInfer(&context, request, &response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.id(), "req-1");
    EXPECT_EQ(response.model_version(), "3");
    ASSERT_EQ(response.outputs_size(), 1);
    EXPECT_EQ(response.outputs(0).name(), "y");
    if (raw) {
      ASSERT_EQ(response.raw_output_contents_size(), 1);
      float out[2];
      std::memcpy(out, response.raw_output_contents(0).data(), sizeof(out));
      EXPECT_THAT(out, ElementsAre(3, -2));
    } else {
      EXPECT_THAT(response.outputs(0).contents().fp32_contents(),
                  ElementsAre(3, -2));
    }
  }
  grpc::ClientContext context;
  inference::ModelInferRequest request;
  request.set_model_name("m");
  inference::ModelInferResponse response;
  grpc::Status status = inference_->ModelInfer(&context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("input 'x' is missing"));
  grpc::ClientContext unknown_context;
  auto* unknown = request.add_inputs();
  unknown->set_name("nope");
  unknown->set_datatype("FP32");
  status = inference_->ModelInfer(&unknown_context, request, &response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("the model has no input 'nope'"));
}

// A model still running when the client's deadline passes, or when the
// client cancels, is cancelled: the kernels after its gate never run.
TEST_F(GrpcServerTest, DeadlinesAndCancellationStopTheModel) {
  tensorflow::serving::PredictResponse response;
  grpc::ClientContext with_deadline;
  with_deadline.set_deadline(std::chrono::system_clock::now() +
                             std::chrono::milliseconds(100));
  grpc::Status status =
      Predict(Floats({1, 2}, {1, 2}, false), &response, "gated", &with_deadline);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED);
  // The client gives up at the deadline; the server's timer for the same
  // deadline fires on its own time.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  testing::OpenGate();
  runtime_->Quiesce();
  EXPECT_EQ(testing::marks.load(), 0);

  testing::Notification reached;
  testing::gate_reached = &reached;
  grpc::ClientContext cancelled;
  std::thread canceller([&] {
    reached.WaitForNotification();
    cancelled.TryCancel();
  });
  status = Predict(Floats({1, 2}, {1, 2}, false), &response, "gated", &cancelled);
  canceller.join();
  EXPECT_EQ(status.error_code(), grpc::StatusCode::CANCELLED);
  testing::gate_reached = nullptr;
  // The client's cancellation reaches the server (RST_STREAM on loopback)
  // on its own time; nothing observable says when.
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  testing::OpenGate();
  runtime_->Quiesce();
  EXPECT_EQ(testing::marks.load(), 0);

  // Let through once it waits at the gate (not before: a gate opened
  // before the request reaches it stays closed for it), it answers.
  testing::Notification waiting;
  testing::gate_reached = &waiting;
  grpc::ClientContext plain;
  std::thread opener([&] {
    waiting.WaitForNotification();
    testing::OpenGate();
  });
  status = Predict(Floats({1, 2}, {1, 2}, false), &response, "gated", &plain);
  opener.join();
  testing::gate_reached = nullptr;
  EXPECT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(testing::marks.load(), 1);
}

TEST_F(GrpcServerTest, ConcurrentClientsStress) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&, t] {
      for (int i = 0; i < 50; ++i) {
        tensorflow::serving::PredictResponse response;
        const float v = t * 100 + i;
        if (!Predict(Floats({1, 2}, {v, -v}, true), &response).ok() ||
            FloatsOf(response.outputs().at("y")) != std::vector<float>{2 * v, -2 * v}) {
          wrong.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

}  // namespace
}  // namespace asyncrt::serving
