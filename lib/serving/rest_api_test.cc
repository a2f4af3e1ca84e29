// The REST API on a real HttpServer, with raw sockets as clients (so that a
// test controls exactly when a client sends, pipelines or hangs up): a
// client that closes its connection while the model runs gets its request
// cancelled (the model's later kernels never run), as does one whose
// request outlives the timeout; pipelined requests are not mistaken for a
// hang-up.
#include "asyncrt/serving/rest_api.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <filesystem>
#include <memory>
#include <string>
#include <thread>

#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/chain.h"
#include "asyncrt/serving/http_server.h"
#include "asyncrt/serving/inference.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "lib/serving/serving_test_util.h"

namespace asyncrt::serving {
namespace {

using ::testing::HasSubstr;

using testing::gate_reached;
using testing::kGatedChain;
using testing::marks;
using testing::OpenGate;

constexpr char kSignature[] = R"(
{"inputs": [{"name": "x", "dtype": "float32", "shape": [-1, 2]}],
 "outputs": [{"name": "y", "dtype": "float32", "shape": [-1, 2]}]})";

// A blocking loopback client on a raw socket.
class RawClient {
 public:
  explicit RawClient(int port) {
    fd_ = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in address{};
    address.sin_family = AF_INET;
    address.sin_port = htons(port);
    address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    connected_ =
        connect(fd_, reinterpret_cast<sockaddr*>(&address), sizeof(address)) == 0;
  }
  ~RawClient() { Close(); }

  bool connected() const { return connected_; }
  void Send(const std::string& bytes) {
    ASSERT_EQ(write(fd_, bytes.data(), bytes.size()),
              static_cast<ssize_t>(bytes.size()));
  }
  void Close() {
    if (fd_ >= 0) close(fd_);
    fd_ = -1;
  }
  // Reads until `count` responses' bodies have come (Content-Length) or
  // the connection ends.
  std::string ReadResponses(int count) {
    std::string received;
    char chunk[4096];
    while (Complete(received) < count) {
      const ssize_t n = read(fd_, chunk, sizeof(chunk));
      if (n <= 0) break;
      received.append(chunk, n);
    }
    return received;
  }

 private:
  static int Complete(const std::string& text) {
    int complete = 0;
    size_t at = 0;
    while (true) {
      const size_t head_end = text.find("\r\n\r\n", at);
      if (head_end == std::string::npos) return complete;
      const size_t length_at = text.find("Content-Length: ", at);
      if (length_at == std::string::npos || length_at > head_end) return complete;
      const size_t length = std::stoul(text.substr(length_at + 16));
      if (text.size() < head_end + 4 + length) return complete;
      at = head_end + 4 + length;
      ++complete;
    }
  }

  int fd_ = -1;
  bool connected_ = false;
};

std::string PredictRequest() {
  const std::string body = R"({"instances": [[1.0, 2.0]]})";
  return "POST /v1/models/m:predict HTTP/1.1\r\nHost: test\r\n"
         "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

class RestApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    marks = 0;
    base_ = std::filesystem::temp_directory_path() /
            ("asyncrt_rest_test_" + std::to_string(getpid()));
    testing::WriteBefVersion(
        base_, 1, testing::TestModelBef("serving_test.double", kGatedChain),
        kSignature);
    runtime_ = testing::TestRuntime();
    repository_ = std::make_unique<ModelRepository>(
        *runtime_, std::vector<ModelConfig>{{"m", base_.string(), {}}});
    ASSERT_TRUE(repository_->Poll().ok());
    ASSERT_TRUE(repository_->Find("m", std::nullopt).ok());
  }

  void StartServer(absl::Duration timeout) {
    RestApi::Options api_options;
    api_options.timeout = timeout;
    api_ = std::make_unique<RestApi>(*runtime_, *repository_, metrics_,
                                     api_options);
    HttpServer::Options options;
    options.address = "127.0.0.1";
    options.port = 0;
    options.num_threads = 2;
    auto server = HttpServer::Start(
        options, [this](HttpRequest request, HttpResponder respond) {
          api_->Handle(std::move(request), std::move(respond));
        });
    ASSERT_TRUE(server.ok()) << server.status();
    server_ = *std::move(server);
  }

  void TearDown() override {
    OpenGate();
    server_.reset();
    api_.reset();
    runtime_->Quiesce();
    repository_.reset();
    runtime_.reset();
    gate_reached = nullptr;
    std::filesystem::remove_all(base_);
  }

  // Waits (up to 5 s) until the server has answered everything; returns
  // whether it has.
  bool WaitForNoneInFlight() {
    for (int i = 0; i < 5000 && server_->in_flight() > 0; ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    return server_->in_flight() == 0;
  }

  std::string Metrics() { return metrics_.PrometheusText(*repository_); }

  // A notification of the next request to reach the gate.
  testing::Notification& NextAtGate() {
    reached_.push_back(std::make_unique<testing::Notification>());
    gate_reached = reached_.back().get();
    return *reached_.back();
  }

  // Connects `client`, sends `requests` and waits until the first reaches
  // the gate.
  void SendAndWaitAtGate(RawClient& client, const std::string& requests) {
    ASSERT_TRUE(client.connected());
    testing::Notification& reached = NextAtGate();
    client.Send(requests);
    ASSERT_TRUE(reached.WaitForNotificationWithTimeout(absl::Seconds(10)));
  }

  std::filesystem::path base_;
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<ModelRepository> repository_;
  ServingMetrics metrics_;
  std::unique_ptr<RestApi> api_;
  std::unique_ptr<HttpServer> server_;
  // Kept until TearDown: a late Gate may still notify one.
  std::vector<std::unique_ptr<testing::Notification>> reached_;
};

TEST_F(RestApiTest, AnOpenGateAnswers) {
  StartServer(absl::Seconds(30));
  RawClient client(server_->port());
  ASSERT_NO_FATAL_FAILURE(SendAndWaitAtGate(client, PredictRequest()));
  OpenGate();
  const std::string response = client.ReadResponses(1);
  EXPECT_THAT(response, HasSubstr("HTTP/1.1 200"));
  EXPECT_THAT(response, HasSubstr(R"({"predictions":[[2,4]]})"));
  EXPECT_EQ(marks.load(), 1);
}

TEST_F(RestApiTest, AClientThatHangsUpCancelsItsRequest) {
  StartServer(absl::Seconds(30));
  {
    RawClient client(server_->port());
    ASSERT_NO_FATAL_FAILURE(SendAndWaitAtGate(client, PredictRequest()));
  }  // Hangs up while the model waits at the gate.
  // The server hears it and answers (into the closed connection) 499.
  EXPECT_TRUE(WaitForNoneInFlight()) << "the hang-up went unnoticed";
  OpenGate();
  runtime_->Quiesce();
  // The request was cancelled before its next kernel: it never ran.
  EXPECT_EQ(marks.load(), 0);
  EXPECT_THAT(Metrics(), HasSubstr(R"(api="predict",code="499"} 1)"));
}

TEST_F(RestApiTest, ATimeoutAnswers504AndCancels) {
  StartServer(absl::Milliseconds(50));
  RawClient client(server_->port());
  ASSERT_TRUE(client.connected());
  client.Send(PredictRequest());
  const std::string response = client.ReadResponses(1);
  EXPECT_THAT(response, HasSubstr("HTTP/1.1 504"));
  EXPECT_THAT(response, HasSubstr("Deadline exceeded"));
  OpenGate();
  EXPECT_TRUE(WaitForNoneInFlight());
  runtime_->Quiesce();
  EXPECT_EQ(marks.load(), 0);
}

TEST_F(RestApiTest, PipelinedRequestsAreNotAHangUp) {
  StartServer(absl::Seconds(30));
  RawClient client(server_->port());
  // The second request arrives while the first waits at the gate: the
  // connection turns readable, but its client is still there.
  ASSERT_NO_FATAL_FAILURE(
      SendAndWaitAtGate(client, PredictRequest() + PredictRequest()));
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  testing::Notification& second = NextAtGate();
  OpenGate();
  ASSERT_TRUE(second.WaitForNotificationWithTimeout(absl::Seconds(10)));
  OpenGate();
  const std::string responses = client.ReadResponses(2);
  EXPECT_EQ(marks.load(), 2);
  size_t first = responses.find("HTTP/1.1 200");
  ASSERT_NE(first, std::string::npos) << responses;
  EXPECT_NE(responses.find("HTTP/1.1 200", first + 1), std::string::npos)
      << responses;
}

// Where RunInference runs a model: a quick one on the caller's thread, a
// slow or not yet timed one on the work queue.
TEST(InferenceTest, QuickModelsRunOnTheCallersThreadOthersOnTheQueue) {
  const std::filesystem::path base =
      std::filesystem::temp_directory_path() /
      ("asyncrt_inference_test_" + std::to_string(getpid()));
  testing::WriteBefVersion(base, 1, testing::TestModelBef("serving_test.double"),
                           kSignature);
  std::unique_ptr<Runtime> runtime = testing::TestRuntime();
  {
    ModelRepository repository(
        *runtime, std::vector<ModelConfig>{{"m", base.string(), {}}});
    ASSERT_TRUE(repository.Poll().ok());
    std::shared_ptr<const Servable> servable =
        *repository.Find("m", std::nullopt);
    auto run_once = [&] {
      std::vector<ServingTensor> inputs;
      auto x = DenseHostTensor::CreateUninitialized(
          TensorMetadata(DType::kF32, TensorShape({1, 2})),
          *runtime->host().allocator());
      for (float& element : x->elements<float>()) element = 1.0f;
      inputs.push_back(std::move(*x));
      testing::Notification done;
      std::thread::id ran_on;
      RunInference(*runtime, servable, std::move(inputs),
                   [&](absl::StatusOr<std::vector<ServingTensor>> outputs) {
                     EXPECT_TRUE(outputs.ok()) << outputs.status();
                     ran_on = std::this_thread::get_id();
                     done.Notify();
                   });
      done.WaitForNotification();
      return ran_on;
    };
    // Not timed yet: the queue. The first call is cold and not timed.
    EXPECT_NE(run_once(), std::this_thread::get_id());
    EXPECT_EQ(servable->typical_run_ns.load(), -1);
    EXPECT_NE(run_once(), std::this_thread::get_id());
    EXPECT_GE(servable->typical_run_ns.load(), 0);
    // Quick (as y = 2x is, but a loaded test machine may time it slower):
    // here.
    servable->typical_run_ns.store(kInlineRunLimitNs / 10);
    EXPECT_EQ(run_once(), std::this_thread::get_id());
    // Slow: the queue again.
    servable->typical_run_ns.store(kInlineRunLimitNs * 100);
    EXPECT_NE(run_once(), std::this_thread::get_id());
  }
  runtime.reset();
  std::filesystem::remove_all(base);
}

// While a request runs, its connection turning readable with nothing to
// read is no hang-up: epoll can report the request's own bytes late, after
// they were read (on a loaded machine such wake-ups cancelled requests
// whose clients still waited). Peeking takes nothing.
TEST(PeekPeerTest, TellsMoreBytesAHangUpAndNothingApart) {
  using internal::PeekPeer;
  using internal::PeerActivity;
  int pair[2];
  ASSERT_EQ(socketpair(AF_UNIX, SOCK_STREAM, 0, pair), 0);
  EXPECT_EQ(PeekPeer(pair[0]), PeerActivity::kNothing);
  ASSERT_EQ(write(pair[1], "x", 1), 1);
  EXPECT_EQ(PeekPeer(pair[0]), PeerActivity::kSentMore);
  EXPECT_EQ(PeekPeer(pair[0]), PeerActivity::kSentMore);
  ASSERT_EQ(shutdown(pair[1], SHUT_WR), 0);
  EXPECT_EQ(PeekPeer(pair[0]), PeerActivity::kSentMore);  // Bytes first.
  char byte;
  ASSERT_EQ(read(pair[0], &byte, 1), 1);
  EXPECT_EQ(PeekPeer(pair[0]), PeerActivity::kHungUp);
  close(pair[0]);
  close(pair[1]);

  // A reset (a client killed mid-request) over TCP.
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof(address);
  ASSERT_EQ(bind(listener, reinterpret_cast<sockaddr*>(&address), length), 0);
  ASSERT_EQ(listen(listener, 1), 0);
  ASSERT_EQ(
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length), 0);
  const int client = socket(AF_INET, SOCK_STREAM, 0);
  ASSERT_EQ(connect(client, reinterpret_cast<sockaddr*>(&address), length), 0);
  const int server = accept(listener, nullptr, nullptr);
  ASSERT_GE(server, 0);
  EXPECT_EQ(PeekPeer(server), PeerActivity::kNothing);
  const linger abort_on_close{.l_onoff = 1, .l_linger = 0};
  ASSERT_EQ(setsockopt(client, SOL_SOCKET, SO_LINGER, &abort_on_close,
                       sizeof(abort_on_close)),
            0);
  close(client);  // Sends a reset.
  PeerActivity seen = PeerActivity::kNothing;
  for (int i = 0; i < 1000 && seen == PeerActivity::kNothing; ++i) {
    seen = PeekPeer(server);
    if (seen == PeerActivity::kNothing) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  EXPECT_EQ(seen, PeerActivity::kHungUp);
  close(server);
  close(listener);
}

TEST(ClientGoneTest, ACallbackRunsOnceAndAResetDropsIt) {
  ClientGone late;
  int runs = 0;
  late.Notify();
  late.OnGone([&] { ++runs; });  // Gone already: runs at once.
  EXPECT_EQ(runs, 1);

  ClientGone answered;
  answered.OnGone([&] { ++runs; });
  answered.Reset();
  answered.Notify();
  EXPECT_EQ(runs, 1);
  EXPECT_TRUE(answered.gone());

  ClientGone twice;
  twice.OnGone([&] { ++runs; });
  twice.Notify();
  twice.Notify();
  EXPECT_EQ(runs, 2);
}

}  // namespace
}  // namespace asyncrt::serving
