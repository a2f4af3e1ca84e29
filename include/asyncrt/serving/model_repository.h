// The models a server serves: for each, a base path of numbered version
// directories (NAME/1/, NAME/2/), each holding one model file
// (model.bef, model.onnx or model.mlir, looked for in that order),
// optionally signature.json (signature.h) and optionally warmup.json: a
// TF Serving :predict body, or a list of them, run before the version
// serves (so its first requests do not pay for first-run work); a
// warm-up request that fails fails the load.
//
// Poll() scans the base paths: versions that the version policy wants and
// are not loaded yet are loaded (the program compiled and loaded into the
// runtime), then made available; versions no longer wanted are removed
// once a wanted one serves (a new version that fails to load leaves the
// old one serving) or once their directory is gone. A
// request holds its servable (shared_ptr), so a version removed while
// requests use it is unloaded when the last of them finishes: a reload
// never fails a request. A version that fails to load is reported in its
// status (state END with the error) and retried at the next poll only if
// its directory changed.
//
// Loading happens on the caller of Poll (the server's own polling thread,
// a low-priority load thread apart from the request threads).
//
// Ownership: the repository borrows the Runtime, which must outlive it and
// every servable. Thread-safety: every member is thread-safe; Poll calls
// are serialized. Blocking: Poll blocks while it loads.
#ifndef ASYNCRT_SERVING_MODEL_REPOSITORY_H_
#define ASYNCRT_SERVING_MODEL_REPOSITORY_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asyncrt/bef_executor/bef_program.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/signature.h"

namespace asyncrt::serving {

struct VersionPolicy {
  enum class Kind { kLatest, kAll, kSpecific };
  Kind kind = Kind::kLatest;
  int64_t latest = 1;              // kLatest: how many of the newest.
  std::vector<int64_t> specific;   // kSpecific: these versions.

  friend bool operator==(const VersionPolicy&, const VersionPolicy&) = default;
};

struct ModelConfig {
  std::string name;
  std::string base_path;
  VersionPolicy policy;
  // Names for versions ("stable" -> 2): requests may name a label instead
  // of a version.
  std::map<std::string, int64_t> labels;

  friend bool operator==(const ModelConfig&, const ModelConfig&) = default;
};

// One loaded version of a model, ready for requests.
struct Servable {
  std::string name;
  int64_t version = 0;
  RCReference<BefProgram> program;
  const Function* function = nullptr;  // "main", in `program`.
  Signature signature;
  // How long a call of `function` typically takes (a moving average of the
  // calls after the first, which is cold; -1 until then), which decides
  // where requests start (see RunInference). Updated by every call, from
  // any thread.
  mutable std::atomic<int64_t> typical_run_ns{-1};
  mutable std::atomic<int64_t> calls{0};
};

// TF Serving's version states.
enum class VersionState { kStart, kLoading, kAvailable, kUnloading, kEnd };
absl::string_view VersionStateName(VersionState state);

struct VersionStatus {
  int64_t version = 0;
  VersionState state = VersionState::kStart;
  absl::Status error;  // Why a version ended without being served.
};

// Reads a model file's own signature (an ONNX graph's inputs and
// outputs); nullopt when the file says nothing. Set by the server, which
// links the format's reader.
using SignatureReader = std::function<std::optional<Signature>(
    const std::string& model_path, const std::string& bytes)>;

class ModelRepository {
 public:
  ModelRepository(Runtime& runtime, std::vector<ModelConfig> models,
                  SignatureReader signature_reader = nullptr);
  ~ModelRepository();

  // Scans every base path once (see above). Errors of single versions go
  // into their status; the returned error is for a base path that cannot
  // be read.
  absl::Status Poll();

  // Serves `models` from now on (a re-read config file): models no longer
  // listed stop taking requests (those in flight finish on the servables
  // they hold); new ones are loaded by the next Poll; those kept keep
  // their loaded versions, and the next Poll applies their new policy,
  // labels and base path to them. Waits for a Poll in progress.
  void Reconfigure(std::vector<ModelConfig> models);

  // The servable for `name`: `version`, or the newest available. NotFound
  // naming what there is otherwise.
  absl::StatusOr<std::shared_ptr<const Servable>> Find(
      absl::string_view name, std::optional<int64_t> version) const;

  // The version `label` names for model `name`; NotFound for an unknown
  // model or label.
  absl::StatusOr<int64_t> ResolveLabel(absl::string_view name,
                                       absl::string_view label) const;

  // The statuses of `name`'s versions, newest first; NotFound for a model
  // the repository does not serve.
  absl::StatusOr<std::vector<VersionStatus>> Status(
      absl::string_view name) const;

  // The names of the models served, and whether every model has a version
  // available (readiness).
  std::vector<std::string> ModelNames() const;
  bool AllModelsAvailable() const;

  // Seconds the last load of each version took, for metrics: (model,
  // version, seconds).
  struct LoadTime {
    std::string model;
    int64_t version;
    double seconds;
  };
  std::vector<LoadTime> LoadTimes() const;

 private:
  struct Version {
    VersionStatus status;
    std::shared_ptr<const Servable> servable;
    int64_t directory_mtime = 0;
    double load_seconds = 0;
  };
  struct Model {
    ModelConfig config;
    std::map<int64_t, Version> versions;  // By version number.
  };

  absl::StatusOr<std::shared_ptr<const Servable>> Load(
      const ModelConfig& config, int64_t version, const std::string& dir);
  // Runs the requests of `path` (warmup.json) on `servable`, if the file
  // exists; the first failure fails the load.
  absl::Status WarmUp(const std::shared_ptr<const Servable>& servable,
                      const std::string& path);

  Runtime& runtime_;
  SignatureReader signature_reader_;
  std::mutex poll_mutex_;  // Serializes Poll.
  mutable std::mutex mutex_;
  std::vector<Model> models_;  // Guarded by mutex_.
};

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_MODEL_REPOSITORY_H_
