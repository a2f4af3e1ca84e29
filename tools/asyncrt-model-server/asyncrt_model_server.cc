// asyncrt_model_server: serves models over TF Serving's REST and gRPC APIs
// and KServe's v2 REST and gRPC APIs (docs/serving.md).
//
//   asyncrt_model_server --port=8500 --rest_api_port=8501 --model_name=m
//       --model_base_path=/models/m
//
// The base path holds numbered version directories (m/1/model.onnx, ...);
// new versions are loaded as they appear, removed ones unloaded once their
// requests finish. SIGTERM or SIGINT drains: no new connections, readiness
// answers 503, requests in flight finish, then exit 0.
#include <signal.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/compiler/onnx_tensors.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/batcher.h"
#include "asyncrt/serving/grpc_server.h"
#include "asyncrt/serving/http_server.h"
#include "asyncrt/serving/metrics.h"
#include "asyncrt/serving/model_repository.h"
#include "asyncrt/serving/rest_api.h"
#include "asyncrt/serving/server_config.h"

ABSL_FLAG(int32_t, port, 8500,
          "gRPC port (TF Serving's PredictionService and ModelService, and "
          "KServe v2's GRPCInferenceService); 0 picks a free port, printed at "
          "start");
ABSL_FLAG(std::string, grpc_address, "0.0.0.0",
          "the address the gRPC APIs listen on");
ABSL_FLAG(int32_t, rest_api_port, 8501,
          "REST API port (TF Serving's and KServe v2); 0 picks a free port, "
          "printed at start");
ABSL_FLAG(std::string, rest_api_address, "0.0.0.0",
          "the address the REST API listens on");
ABSL_FLAG(std::string, model_name, "default", "the name of the served model");
ABSL_FLAG(std::string, model_base_path, "",
          "the model's directory of numbered versions");
ABSL_FLAG(std::string, model_config_file, "",
          "several models, with version policies and labels (TF Serving's "
          "text format; instead of --model_name and --model_base_path)");
ABSL_FLAG(std::string, monitoring_config_file, "",
          "TF Serving's monitoring config (prometheus_config { enable, path "
          "}); without one, metrics are at /monitoring/prometheus/metrics");
ABSL_FLAG(int32_t, model_version_policy_latest, 1,
          "serve the newest N versions");
ABSL_FLAG(int32_t, file_system_poll_wait_seconds, 1,
          "how often to look for new and removed versions; 0 only at start");
ABSL_FLAG(int32_t, model_config_file_poll_wait_seconds, 0,
          "how often to re-read --model_config_file (models added, removed "
          "or changed; a file that does not parse is reported and the "
          "models served stay as they are); 0: read it only at start");
ABSL_FLAG(int32_t, rest_api_num_threads, 0,
          "REST I/O threads (0: one per hardware thread)");
ABSL_FLAG(int64_t, rest_api_max_body_bytes, int64_t{64} << 20,
          "the largest request body accepted (413 past it)");
ABSL_FLAG(int32_t, rest_api_timeout_in_ms, 30000,
          "the longest a model request may take: then 504, and the model's "
          "kernels not yet run are cancelled (0: no limit)");
ABSL_FLAG(bool, enable_batching, false,
          "batch concurrent requests of a model version (see "
          "--batching_parameters_file)");
ABSL_FLAG(std::string, batching_parameters_file, "",
          "TF Serving's batching parameters in text format (max_batch_size, "
          "batch_timeout_micros, max_enqueued_batches, num_batch_threads, "
          "allowed_batch_sizes)");
ABSL_FLAG(int32_t, drain_timeout_seconds, 30,
          "on SIGTERM, how long requests in flight may take to finish");
ABSL_FLAG(std::string, plugins, "",
          "device plug-ins to load (files or directories, ':'-separated)");
ABSL_FLAG(std::string, device_memory_limit, "",
          "KEY=SIZE[,...]: the most memory the runtime may use on a "
          "plug-in's device, by name (CUDA:0) or type (cuda); SIZE in bytes "
          "or with KiB, MiB, GiB");
ABSL_FLAG(std::string, work_queue, "mstd",
          "the runtime's work queue (mstd, mstd:N, mstd:N,M)");

namespace asyncrt::serving {
namespace {

// The nice value of the thread that polls for and loads model versions
// (the lowest: docs/serving.md measures it against 10).
constexpr int kLoadNice = 19;

// Reads the config file `path` with `parse` into `out`; false (the error
// printed, naming the file) if it cannot be read or parsed.
template <typename T, typename Parse>
bool ReadConfig(const std::string& path, Parse parse, T& out) {
  std::ifstream file(path, std::ios::binary);
  absl::StatusOr<T> parsed =
      file ? parse(std::string((std::istreambuf_iterator<char>(file)),
                               std::istreambuf_iterator<char>()))
           : absl::StatusOr<T>(absl::NotFoundError("cannot read it"));
  if (!parsed.ok()) {
    std::fprintf(stderr, "error: %s: %s\n", path.c_str(),
                 std::string(parsed.status().message()).c_str());
    return false;
  }
  out = *std::move(parsed);
  return true;
}

std::optional<Signature> OnnxSignature(const std::string& path,
                                       const std::string& bytes) {
  if (!absl::EndsWith(path, ".onnx")) return std::nullopt;
  absl::StatusOr<OnnxGraphInterface> graph = ReadOnnxGraphInterface(bytes);
  if (!graph.ok()) return std::nullopt;
  Signature signature;
  for (auto* side : {&graph->inputs, &graph->outputs}) {
    std::vector<TensorSpec>& specs =
        side == &graph->inputs ? signature.inputs : signature.outputs;
    for (const OnnxValueInfo& value : *side) {
      specs.push_back({value.name, value.dtype, value.shape});
    }
  }
  return signature;
}

int Serve() {
  std::vector<ModelConfig> models;
  if (const std::string path = absl::GetFlag(FLAGS_model_config_file);
      !path.empty()) {
    if (!ReadConfig(path, ParseModelConfigText, models)) return 1;
  } else if (absl::GetFlag(FLAGS_model_base_path).empty()) {
    std::fprintf(stderr,
                 "error: --model_base_path or --model_config_file is "
                 "required\n");
    return 1;
  } else {
    ModelConfig config;
    config.name = absl::GetFlag(FLAGS_model_name);
    config.base_path = absl::GetFlag(FLAGS_model_base_path);
    config.policy.latest = absl::GetFlag(FLAGS_model_version_policy_latest);
    models.push_back(std::move(config));
  }
  MonitoringOptions monitoring;
  if (const std::string path = absl::GetFlag(FLAGS_monitoring_config_file);
      !path.empty()) {
    if (!ReadConfig(path, ParseMonitoringConfigText, monitoring)) return 1;
  }
  // Every thread made from here on inherits the blocked signals: only the
  // main thread takes them, with sigwait.
  sigset_t signals;
  sigemptyset(&signals);
  sigaddset(&signals, SIGTERM);
  sigaddset(&signals, SIGINT);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);

  RuntimeOptions options;
  options.work_queue = absl::GetFlag(FLAGS_work_queue);
  if (!absl::GetFlag(FLAGS_plugins).empty()) {
    options.device_plugins = {absl::GetFlag(FLAGS_plugins)};
  }
  absl::StatusOr<std::map<std::string, uint64_t, std::less<>>> memory_limits =
      ParseDeviceMemoryLimits(absl::GetFlag(FLAGS_device_memory_limit));
  if (!memory_limits.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(memory_limits.status().message()).c_str());
    return 1;
  }
  options.device_memory_limits = *std::move(memory_limits);
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(runtime.status().message()).c_str());
    return 1;
  }
  ModelRepository repository(**runtime, models, OnnxSignature);
  if (absl::Status status = repository.Poll(); !status.ok()) {
    std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
    return 1;
  }
  for (const ModelConfig& config : models) {
    const absl::StatusOr<std::vector<VersionStatus>> statuses =
        repository.Status(config.name);
    for (const VersionStatus& status : *statuses) {
      if (!status.error.ok()) {
        std::fprintf(stderr, "error: %s version %lld: %s\n",
                     config.name.c_str(),
                     static_cast<long long>(status.version),
                     std::string(status.error.message()).c_str());
      }
    }
  }

  BatchingOptions batching;
  if (const std::string path = absl::GetFlag(FLAGS_batching_parameters_file);
      !path.empty()) {
    if (!ReadConfig(path, ParseBatchingParametersText, batching)) return 1;
  }
  ServingMetrics metrics;
  std::unique_ptr<Batcher> batcher;
  InferenceRunner runner;
  if (absl::GetFlag(FLAGS_enable_batching)) {
    batcher = std::make_unique<Batcher>(**runtime, batching, &metrics);
    runner = [&batcher](std::shared_ptr<const Servable> servable,
                        std::vector<ServingTensor> inputs,
                        InferenceDone done) {
      batcher->Submit(std::move(servable), std::move(inputs), std::move(done));
      return RCReference<RequestContext>();
    };
  }

  RestApi::Options api_options;
  api_options.runner = runner;
  api_options.timeout =
      absl::Milliseconds(absl::GetFlag(FLAGS_rest_api_timeout_in_ms));
  api_options.metrics_path =
      monitoring.prometheus_enabled ? monitoring.prometheus_path : "";
  RestApi api(**runtime, repository, metrics, api_options);
  HttpServer::Options http_options;
  http_options.address = absl::GetFlag(FLAGS_rest_api_address);
  http_options.port = absl::GetFlag(FLAGS_rest_api_port);
  http_options.num_threads = absl::GetFlag(FLAGS_rest_api_num_threads);
  http_options.max_body_bytes =
      static_cast<size_t>(absl::GetFlag(FLAGS_rest_api_max_body_bytes));
  absl::StatusOr<std::unique_ptr<HttpServer>> http = HttpServer::Start(
      http_options, [&api](HttpRequest request, HttpResponder respond) {
        api.Handle(std::move(request), std::move(respond));
      });
  if (!http.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(http.status().message()).c_str());
    return 1;
  }
  GrpcServer::Options grpc_options;
  grpc_options.address = absl::GetFlag(FLAGS_grpc_address);
  grpc_options.port = absl::GetFlag(FLAGS_port);
  grpc_options.timeout = api_options.timeout;
  grpc_options.runner = runner;
  absl::StatusOr<std::unique_ptr<GrpcServer>> grpc =
      GrpcServer::Start(**runtime, repository, grpc_options);
  if (!grpc.ok()) {
    std::fprintf(stderr, "error: %s\n",
                 std::string(grpc.status().message()).c_str());
    return 1;
  }
  std::printf("Running gRPC ModelServer at %s:%d\n",
              grpc_options.address.c_str(), (*grpc)->port());
  std::printf("Exporting HTTP/REST API at:%s:%d\n",
              http_options.address.c_str(), (*http)->port());
  std::fflush(stdout);

  // Polling for versions on a thread of its own (loads run there, apart
  // from the request threads), at a lower priority: under load, a model
  // being compiled takes CPU from requests only when they leave some.
  std::mutex stop_mutex;
  std::condition_variable stop_changed;
  bool stopping = false;
  std::thread poller([&] {
    using Clock = std::chrono::steady_clock;
    const int version_seconds =
        absl::GetFlag(FLAGS_file_system_poll_wait_seconds);
    const std::string config_path = absl::GetFlag(FLAGS_model_config_file);
    const int config_seconds =
        config_path.empty()
            ? 0
            : absl::GetFlag(FLAGS_model_config_file_poll_wait_seconds);
    if (version_seconds <= 0 && config_seconds <= 0) return;
    // Linux's nice is per thread (kLoadNice, the lowest: under 2% of a
    // busy core against a request thread; measured, loads took no longer).
    if (setpriority(PRIO_PROCESS, static_cast<id_t>(syscall(SYS_gettid)),
                    kLoadNice) != 0) {
      std::fprintf(stderr, "warning: the load thread keeps its priority: %s\n",
                   std::strerror(errno));
    }
    const auto tick = std::chrono::seconds(
        version_seconds <= 0   ? config_seconds
        : config_seconds <= 0 ? version_seconds
                              : std::min(version_seconds, config_seconds));
    auto next_versions = Clock::now() + std::chrono::seconds(version_seconds);
    auto next_config = Clock::now() + std::chrono::seconds(config_seconds);
    std::vector<ModelConfig> served = models;
    std::unique_lock<std::mutex> lock(stop_mutex);
    while (!stop_changed.wait_for(lock, tick, [&] { return stopping; })) {
      lock.unlock();
      const auto now = Clock::now();
      bool reconfigured = false;
      if (config_seconds > 0 && now >= next_config) {
        next_config = now + std::chrono::seconds(config_seconds);
        std::vector<ModelConfig> reread;
        if (ReadConfig(config_path, ParseModelConfigText, reread) &&
            reread != served) {
          repository.Reconfigure(reread);
          served = std::move(reread);
          reconfigured = true;
          std::printf("Reloaded %s: %zu model(s)\n", config_path.c_str(),
                      served.size());
          std::fflush(stdout);
        }
      }
      if (reconfigured || (version_seconds > 0 && now >= next_versions)) {
        next_versions = now + std::chrono::seconds(version_seconds);
        if (absl::Status status = repository.Poll(); !status.ok()) {
          std::fprintf(stderr, "warning: %s\n",
                       std::string(status.message()).c_str());
        }
      }
      lock.lock();
    }
  });

  int signal_number = 0;
  sigwait(&signals, &signal_number);
  std::printf("Received signal %d: draining\n", signal_number);
  std::fflush(stdout);
  api.set_draining();
  (*grpc)->set_draining();
  const absl::Duration drain =
      absl::Seconds(absl::GetFlag(FLAGS_drain_timeout_seconds));
  // Both drain at once: a slow REST request does not hold up gRPC's.
  std::thread grpc_drain([&] { (*grpc)->Shutdown(drain); });
  (*http)->Shutdown(drain);
  grpc_drain.join();
  {
    std::lock_guard<std::mutex> lock(stop_mutex);
    stopping = true;
  }
  stop_changed.notify_all();
  poller.join();
  // Requests past the drain timeout may still be running: let them finish
  // (their replies go nowhere) before the servers they would answer
  // through are destroyed.
  batcher.reset();  // Runs what it still holds, then waits for it.
  (*runtime)->Quiesce();
  http->reset();
  grpc->reset();
  return 0;
}

}  // namespace
}  // namespace asyncrt::serving

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "Serves models over TF Serving's and KServe v2's REST APIs.\n"
      "  asyncrt_model_server --rest_api_port=8501 --model_name=NAME "
      "--model_base_path=DIR");
  absl::ParseCommandLine(argc, argv);
  return asyncrt::serving::Serve();
}
