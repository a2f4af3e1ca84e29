// A closed-loop gRPC load generator for TF Serving's Predict, and the floor
// to hold the model server against: a gRPC server (the same library, the
// same protos) that answers every Predict with a ready-made reply.
//
//   grpc_load --target=127.0.0.1:8500 --model=tiny --shape=1,4
//             [--input=x] [--input_file=raw_f32.bin] [--connections=8]
//             [--seconds=3]
//     keeps --connections calls in flight, each on a channel (a TCP
//     connection) of its own, from one thread and one completion queue (as
//     wrk does over HTTP), for --seconds after a short warm-up; prints one
//     JSON line: {"requests", "errors", "rps", "p50_us", "p99_us"}.
//
//   grpc_load --serve_floor=PORT --shape=1,4 [--output=y]
//     answers Predict with a float32 output of that shape (the size of the
//     model server's reply) until killed.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <iterator>
#include <memory>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "grpcpp/grpcpp.h"
#include "tensorflow_serving/apis.grpc.pb.h"

ABSL_FLAG(std::string, target, "", "host:port of the server to load");
ABSL_FLAG(int, serve_floor, 0, "serve the floor on this port instead");
ABSL_FLAG(std::string, model, "tiny", "model name");
ABSL_FLAG(std::string, input, "x", "input name");
ABSL_FLAG(std::string, output, "y", "output name (floor)");
ABSL_FLAG(std::string, shape, "1,4", "input (and floor output) shape");
ABSL_FLAG(std::string, input_file, "",
          "raw little-endian float32 input values (default: all 1)");
ABSL_FLAG(int, connections, 8, "calls in flight, one channel each");
ABSL_FLAG(double, seconds, 3, "measured seconds");
ABSL_FLAG(double, warmup_seconds, 0.5, "unmeasured seconds first");

namespace {

using Clock = std::chrono::steady_clock;

std::vector<int64_t> ParseShape(const std::string& text) {
  std::vector<int64_t> shape;
  for (absl::string_view part : absl::StrSplit(text, ',')) {
    int64_t dim = 0;
    if (!absl::SimpleAtoi(part, &dim) || dim < 0) {
      std::fprintf(stderr, "bad --shape '%s'\n", text.c_str());
      std::exit(2);
    }
    shape.push_back(dim);
  }
  return shape;
}

tensorflow::TensorProto FloatTensor(const std::vector<int64_t>& shape,
                                    std::string content) {
  tensorflow::TensorProto tensor;
  tensor.set_dtype(tensorflow::DT_FLOAT);
  for (int64_t d : shape) tensor.mutable_tensor_shape()->add_dim()->set_size(d);
  tensor.set_tensor_content(std::move(content));
  return tensor;
}

std::string Content(const std::vector<int64_t>& shape, const std::string& file) {
  size_t count = 1;
  for (int64_t d : shape) count *= d;
  if (!file.empty()) {
    std::ifstream in(file, std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), {});
    if (bytes.size() != count * sizeof(float)) {
      std::fprintf(stderr, "%s has %zu bytes; the shape needs %zu\n",
                   file.c_str(), bytes.size(), count * sizeof(float));
      std::exit(2);
    }
    return bytes;
  }
  std::vector<float> ones(count, 1.0f);
  return std::string(reinterpret_cast<const char*>(ones.data()),
                     ones.size() * sizeof(float));
}

// The floor: the reply is made once; each call copies it out.
class FloorService final
    : public tensorflow::serving::PredictionService::CallbackService {
 public:
  explicit FloorService(tensorflow::serving::PredictResponse reply)
      : reply_(std::move(reply)) {}

  grpc::ServerUnaryReactor* Predict(
      grpc::CallbackServerContext* context,
      const tensorflow::serving::PredictRequest* request,
      tensorflow::serving::PredictResponse* response) override {
    *response = reply_;
    response->mutable_model_spec()->set_name(request->model_spec().name());
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    reactor->Finish(grpc::Status::OK);
    return reactor;
  }

 private:
  const tensorflow::serving::PredictResponse reply_;
};

int ServeFloor(int port, const std::vector<int64_t>& shape) {
  tensorflow::serving::PredictResponse reply;
  (*reply.mutable_outputs())[absl::GetFlag(FLAGS_output)] =
      FloatTensor(shape, Content(shape, ""));
  reply.mutable_model_spec()->mutable_version()->set_value(1);
  FloorService service(std::move(reply));
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:" + std::to_string(port),
                           grpc::InsecureServerCredentials());
  builder.RegisterService(&service);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  if (!server) {
    std::fprintf(stderr, "cannot serve on port %d\n", port);
    return 1;
  }
  std::printf("serving the floor on 127.0.0.1:%d\n", port);
  std::fflush(stdout);
  server->Wait();
  return 0;
}

// One call in flight on one channel; reissued as it completes.
struct Call {
  std::unique_ptr<tensorflow::serving::PredictionService::Stub> stub;
  std::unique_ptr<grpc::ClientContext> context;
  tensorflow::serving::PredictResponse response;
  grpc::Status status;
  std::unique_ptr<grpc::ClientAsyncResponseReader<
      tensorflow::serving::PredictResponse>>
      reader;
  Clock::time_point start;
};

int Load(const std::string& target, const std::vector<int64_t>& shape) {
  tensorflow::serving::PredictRequest request;
  request.mutable_model_spec()->set_name(absl::GetFlag(FLAGS_model));
  (*request.mutable_inputs())[absl::GetFlag(FLAGS_input)] =
      FloatTensor(shape, Content(shape, absl::GetFlag(FLAGS_input_file)));

  grpc::CompletionQueue queue;
  const int connections = std::max(1, absl::GetFlag(FLAGS_connections));
  std::vector<Call> calls(connections);
  auto issue = [&](Call& call) {
    call.context = std::make_unique<grpc::ClientContext>();
    call.response.Clear();
    call.start = Clock::now();
    call.reader = call.stub->AsyncPredict(call.context.get(), request, &queue);
    call.reader->Finish(&call.response, &call.status, &call);
  };
  for (int i = 0; i < connections; ++i) {
    grpc::ChannelArguments args;
    // A connection per channel, as wrk's connections.
    args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
    args.SetInt("asyncrt.bench.channel", i);
    args.SetMaxReceiveMessageSize(-1);
    auto channel = grpc::CreateCustomChannel(
        target, grpc::InsecureChannelCredentials(), args);
    if (!channel->WaitForConnected(std::chrono::system_clock::now() + std::chrono::seconds(10))) {
      std::fprintf(stderr, "cannot connect to %s\n", target.c_str());
      return 1;
    }
    calls[i].stub = tensorflow::serving::PredictionService::NewStub(channel);
  }
  for (Call& call : calls) issue(call);

  const auto measure_from =
      Clock::now() + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(
                             absl::GetFlag(FLAGS_warmup_seconds)));
  const auto stop_at =
      measure_from + std::chrono::duration_cast<Clock::duration>(
                         std::chrono::duration<double>(
                             absl::GetFlag(FLAGS_seconds)));
  std::vector<double> latencies_us;
  int64_t errors = 0;
  std::string first_error;
  int in_flight = connections;
  void* tag;
  bool ok;
  while (in_flight > 0 && queue.Next(&tag, &ok)) {
    Call& call = *static_cast<Call*>(tag);
    const auto now = Clock::now();
    if (call.start >= measure_from && now <= stop_at) {
      if (ok && call.status.ok()) {
        latencies_us.push_back(
            std::chrono::duration<double, std::micro>(now - call.start).count());
      } else {
        if (first_error.empty()) first_error = call.status.error_message();
        ++errors;
      }
    }
    if (now < stop_at) {
      issue(call);
    } else {
      --in_flight;
    }
  }
  queue.Shutdown();
  while (queue.Next(&tag, &ok)) {
  }
  std::sort(latencies_us.begin(), latencies_us.end());
  auto percentile = [&](double p) {
    if (latencies_us.empty()) return 0.0;
    return latencies_us[std::min(latencies_us.size() - 1,
                                 static_cast<size_t>(p * latencies_us.size()))];
  };
  std::printf(
      "{\"requests\": %zu, \"errors\": %lld, \"rps\": %.1f, \"p50_us\": %.1f, "
      "\"p99_us\": %.1f}\n",
      latencies_us.size(), static_cast<long long>(errors),
      latencies_us.size() / absl::GetFlag(FLAGS_seconds), percentile(0.5),
      percentile(0.99));
  if (!first_error.empty()) {
    std::fprintf(stderr, "first error: %s\n", first_error.c_str());
  }
  return errors == 0 && !latencies_us.empty() ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv) {
  absl::ParseCommandLine(argc, argv);
  const std::vector<int64_t> shape = ParseShape(absl::GetFlag(FLAGS_shape));
  if (absl::GetFlag(FLAGS_serve_floor) > 0) {
    return ServeFloor(absl::GetFlag(FLAGS_serve_floor), shape);
  }
  if (absl::GetFlag(FLAGS_target).empty()) {
    std::fprintf(stderr, "give --target=HOST:PORT or --serve_floor=PORT\n");
    return 2;
  }
  return Load(absl::GetFlag(FLAGS_target), shape);
}
