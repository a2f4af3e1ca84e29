#include "asyncrt/serving/model_repository.h"

#include <dirent.h>
#include <sys/stat.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <future>
#include <iterator>
#include <set>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/serving/inference.h"
#include "asyncrt/serving/json_codec.h"
#include "rapidjson/document.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace asyncrt::serving {

absl::string_view VersionStateName(VersionState state) {
  switch (state) {
    case VersionState::kStart: return "START";
    case VersionState::kLoading: return "LOADING";
    case VersionState::kAvailable: return "AVAILABLE";
    case VersionState::kUnloading: return "UNLOADING";
    case VersionState::kEnd: return "END";
  }
  return "UNKNOWN";
}

namespace {

// Nanoseconds of the last change of `path`, or -1 if it does not exist.
int64_t ModificationTime(const std::string& path) {
  struct stat info;
  if (stat(path.c_str(), &info) != 0) return -1;
  return static_cast<int64_t>(info.st_mtim.tv_sec) * 1000000000 +
         info.st_mtim.tv_nsec;
}

bool IsFile(const std::string& path) {
  struct stat info;
  return stat(path.c_str(), &info) == 0 && S_ISREG(info.st_mode);
}

// The version directories under `base_path` (all-digit names), with their
// modification times.
absl::StatusOr<std::map<int64_t, int64_t>> VersionsOnDisk(
    const std::string& base_path) {
  DIR* dir = opendir(base_path.c_str());
  if (dir == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("cannot read the model base path '", base_path, "'"));
  }
  std::map<int64_t, int64_t> versions;
  while (dirent* entry = readdir(dir)) {
    const std::string name = entry->d_name;
    int64_t version;
    if (name.empty() ||
        !std::all_of(name.begin(), name.end(), absl::ascii_isdigit) ||
        !absl::SimpleAtoi(name, &version)) {
      continue;
    }
    const std::string path = absl::StrCat(base_path, "/", name);
    struct stat info;
    if (stat(path.c_str(), &info) == 0 && S_ISDIR(info.st_mode)) {
      versions[version] = ModificationTime(path);
    }
  }
  closedir(dir);
  return versions;
}

std::set<int64_t> Wanted(const VersionPolicy& policy,
                         const std::map<int64_t, int64_t>& on_disk) {
  std::set<int64_t> wanted;
  switch (policy.kind) {
    case VersionPolicy::Kind::kAll:
      for (const auto& [version, mtime] : on_disk) wanted.insert(version);
      break;
    case VersionPolicy::Kind::kSpecific:
      for (int64_t version : policy.specific) {
        if (on_disk.count(version)) wanted.insert(version);
      }
      break;
    case VersionPolicy::Kind::kLatest: {
      int64_t left = std::max<int64_t>(policy.latest, 1);
      for (auto it = on_disk.rbegin(); it != on_disk.rend() && left > 0;
           ++it, --left) {
        wanted.insert(it->first);
      }
      break;
    }
  }
  return wanted;
}

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  return std::string((std::istreambuf_iterator<char>(file)),
                     std::istreambuf_iterator<char>());
}

}  // namespace

ModelRepository::ModelRepository(Runtime& runtime,
                                 std::vector<ModelConfig> models,
                                 SignatureReader signature_reader)
    : runtime_(runtime), signature_reader_(std::move(signature_reader)) {
  for (ModelConfig& config : models) {
    models_.push_back(Model{std::move(config), {}});
  }
}

ModelRepository::~ModelRepository() = default;

void ModelRepository::Reconfigure(std::vector<ModelConfig> models) {
  std::lock_guard<std::mutex> poll_lock(poll_mutex_);
  std::vector<Model> next;
  std::vector<Model> dropped;  // Let go of outside the lock.
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (ModelConfig& config : models) {
      auto it = std::find_if(models_.begin(), models_.end(),
                             [&](const Model& m) {
                               return m.config.name == config.name;
                             });
      Model model{std::move(config), {}};
      // A model kept keeps its versions: the next Poll applies its new
      // policy (and base path) to them.
      if (it != models_.end()) model.versions = std::move(it->versions);
      next.push_back(std::move(model));
    }
    for (Model& model : models_) {
      const bool kept = std::any_of(next.begin(), next.end(),
                                    [&](const Model& m) {
                                      return m.config.name == model.config.name;
                                    });
      if (!kept) dropped.push_back(std::move(model));
    }
    models_ = std::move(next);
  }
}

absl::StatusOr<std::shared_ptr<const Servable>> ModelRepository::Load(
    const ModelConfig& config, int64_t version, const std::string& dir) {
  std::string model_path;
  for (const char* name : {"model.bef", "model.onnx", "model.mlir"}) {
    if (IsFile(absl::StrCat(dir, "/", name))) {
      model_path = absl::StrCat(dir, "/", name);
      break;
    }
  }
  if (model_path.empty()) {
    return absl::NotFoundError(absl::StrCat(
        dir, " holds no model.bef, model.onnx or model.mlir"));
  }
  absl::StatusOr<RCReference<BefProgram>> program =
      runtime_.LoadProgramFile(model_path);
  if (!program.ok()) return program.status();
  const Function* function = (*program)->GetFunction("main");
  if (function == nullptr) {
    return absl::NotFoundError(
        absl::StrCat(model_path, " has no function 'main'"));
  }
  auto servable = std::make_shared<Servable>();
  servable->name = config.name;
  servable->version = version;
  servable->function = function;
  const std::string signature_path = absl::StrCat(dir, "/signature.json");
  std::optional<Signature> signature;
  if (IsFile(signature_path)) {
    absl::StatusOr<std::string> json = ReadFile(signature_path);
    if (!json.ok()) return json.status();
    absl::StatusOr<Signature> parsed = ParseSignatureJson(*json);
    if (!parsed.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat(signature_path, ": ", parsed.status().message()));
    }
    signature = *std::move(parsed);
  } else if (signature_reader_ && !absl::EndsWith(model_path, ".bef")) {
    absl::StatusOr<std::string> bytes = ReadFile(model_path);
    if (bytes.ok()) signature = signature_reader_(model_path, *bytes);
  }
  if (!signature) {
    signature.emplace();
    signature->inputs = PositionalSpecs("input_", function->num_arguments());
    signature->outputs = PositionalSpecs("output_", function->num_results());
  }
  if (signature->inputs.size() != function->num_arguments() ||
      signature->outputs.size() != function->num_results()) {
    return absl::InvalidArgumentError(absl::StrCat(
        model_path, ": its signature has ", signature->inputs.size(),
        " inputs and ", signature->outputs.size(),
        " outputs, but 'main' takes ", function->num_arguments(),
        " and returns ", function->num_results()));
  }
  servable->signature = *std::move(signature);
  servable->program = *std::move(program);
  std::shared_ptr<const Servable> loaded = std::move(servable);
  if (absl::Status status = WarmUp(loaded, absl::StrCat(dir, "/warmup.json"));
      !status.ok()) {
    return status;
  }
  return loaded;
}

absl::Status ModelRepository::WarmUp(
    const std::shared_ptr<const Servable>& servable,
    const std::string& path) {
  if (!IsFile(path)) return absl::OkStatus();
  absl::StatusOr<std::string> text = ReadFile(path);
  if (!text.ok()) return text.status();
  // One :predict body, or a list of them.
  rapidjson::Document document;
  document.Parse(text->data(), text->size());
  if (document.HasParseError() || !(document.IsObject() || document.IsArray())) {
    return absl::InvalidArgumentError(
        absl::StrCat(path, ": not a :predict body or a list of them"));
  }
  std::vector<std::string> bodies;
  auto body_of = [](const rapidjson::Value& value) {
    rapidjson::StringBuffer buffer;
    rapidjson::Writer<rapidjson::StringBuffer> writer(buffer);
    value.Accept(writer);
    return std::string(buffer.GetString(), buffer.GetSize());
  };
  if (document.IsArray()) {
    for (const rapidjson::Value& item : document.GetArray()) {
      bodies.push_back(body_of(item));
    }
  } else {
    bodies.push_back(body_of(document));
  }
  for (size_t i = 0; i < bodies.size(); ++i) {
    absl::StatusOr<PredictRequest> request = ParseTfServingPredict(
        bodies[i], servable->signature, *runtime_.host().allocator());
    absl::Status status = request.status();
    if (status.ok()) {
      // The load thread waits: warm-up is what loading is for.
      std::promise<absl::Status> finished;
      RunInference(runtime_, servable, std::move(request->inputs),
                   [&finished](absl::StatusOr<std::vector<ServingTensor>>
                                   outputs) {
                     finished.set_value(outputs.status());
                   });
      status = finished.get_future().get();
    }
    if (!status.ok()) {
      return absl::Status(status.code(),
                          absl::StrCat(path, ": warm-up request ", i + 1,
                                       " failed: ", status.message()));
    }
  }
  return absl::OkStatus();
}

absl::Status ModelRepository::Poll() {
  std::lock_guard<std::mutex> poll_lock(poll_mutex_);
  std::vector<ModelConfig> configs;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const Model& model : models_) configs.push_back(model.config);
  }
  absl::Status first_error;
  for (size_t m = 0; m < configs.size(); ++m) {
    const ModelConfig& config = configs[m];
    absl::StatusOr<std::map<int64_t, int64_t>> on_disk =
        VersionsOnDisk(config.base_path);
    if (!on_disk.ok()) {
      if (first_error.ok()) first_error = on_disk.status();
      continue;
    }
    const std::set<int64_t> wanted = Wanted(config.policy, *on_disk);
    // What to load: wanted and not served yet, unless it failed before
    // and its directory has not changed since.
    std::vector<int64_t> to_load;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      Model& model = models_[m];
      for (int64_t version : wanted) {
        auto it = model.versions.find(version);
        const int64_t mtime = on_disk->at(version);
        if (it == model.versions.end() ||
            (it->second.status.state == VersionState::kEnd &&
             it->second.directory_mtime != mtime)) {
          Version& entry = model.versions[version];
          entry.status = {version, VersionState::kLoading, absl::OkStatus()};
          entry.directory_mtime = mtime;
          to_load.push_back(version);
        }
      }
    }
    for (int64_t version : to_load) {
      const auto start = std::chrono::steady_clock::now();
      absl::StatusOr<std::shared_ptr<const Servable>> servable =
          Load(config, version, absl::StrCat(config.base_path, "/", version));
      const double seconds = std::chrono::duration<double>(
                                 std::chrono::steady_clock::now() - start)
                                 .count();
      std::lock_guard<std::mutex> lock(mutex_);
      Version& entry = models_[m].versions[version];
      entry.load_seconds = seconds;
      if (servable.ok()) {
        entry.servable = *std::move(servable);
        entry.status.state = VersionState::kAvailable;
      } else {
        entry.status.state = VersionState::kEnd;
        entry.status.error = servable.status();
      }
    }
    // Versions no longer wanted are unloaded once their requests finish
    // (the requests hold the servable), but only when a wanted version
    // serves or they left the disk: a new version that fails to load
    // leaves the old one serving (TF Serving's availability-preserving
    // policy).
    std::lock_guard<std::mutex> lock(mutex_);
    bool wanted_available = false;
    for (int64_t version : wanted) {
      auto it = models_[m].versions.find(version);
      wanted_available |=
          it != models_[m].versions.end() && it->second.servable != nullptr;
    }
    for (auto& [version, entry] : models_[m].versions) {
      if (!wanted.count(version) && entry.servable &&
          (wanted_available || !on_disk->count(version))) {
        entry.servable.reset();
        entry.status.state = VersionState::kEnd;
      }
    }
  }
  return first_error;
}

absl::StatusOr<std::shared_ptr<const Servable>> ModelRepository::Find(
    absl::string_view name, std::optional<int64_t> version) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Model& model : models_) {
    if (model.config.name != name) continue;
    if (version) {
      auto it = model.versions.find(*version);
      if (it == model.versions.end() || !it->second.servable) {
        return absl::NotFoundError(absl::StrCat(
            "Servable not found for request: Specific(", name, ", ", *version,
            ")"));
      }
      return it->second.servable;
    }
    for (auto it = model.versions.rbegin(); it != model.versions.rend();
         ++it) {
      if (it->second.servable) return it->second.servable;
    }
    return absl::NotFoundError(
        absl::StrCat("Servable not found for request: Latest(", name, ")"));
  }
  return absl::NotFoundError(absl::StrCat(
      "Servable not found for request: Latest(", name, ")"));
}

absl::StatusOr<int64_t> ModelRepository::ResolveLabel(
    absl::string_view name, absl::string_view label) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Model& model : models_) {
    if (model.config.name != name) continue;
    auto it = model.config.labels.find(std::string(label));
    if (it == model.config.labels.end()) {
      return absl::NotFoundError(absl::StrCat(
          "Unrecognized servable version label: ", label));
    }
    return it->second;
  }
  return absl::NotFoundError(
      absl::StrCat("Servable not found for request: Latest(", name, ")"));
}

absl::StatusOr<std::vector<VersionStatus>> ModelRepository::Status(
    absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Model& model : models_) {
    if (model.config.name != name) continue;
    std::vector<VersionStatus> statuses;
    for (auto it = model.versions.rbegin(); it != model.versions.rend();
         ++it) {
      statuses.push_back(it->second.status);
    }
    return statuses;
  }
  return absl::NotFoundError(
      absl::StrCat("Could not find any versions of model ", name));
}

std::vector<std::string> ModelRepository::ModelNames() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<std::string> names;
  for (const Model& model : models_) names.push_back(model.config.name);
  return names;
}

bool ModelRepository::AllModelsAvailable() const {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const Model& model : models_) {
    bool available = false;
    for (const auto& [version, entry] : model.versions) {
      available |= entry.servable != nullptr;
    }
    if (!available) return false;
  }
  return true;
}

std::vector<ModelRepository::LoadTime> ModelRepository::LoadTimes() const {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<LoadTime> times;
  for (const Model& model : models_) {
    for (const auto& [version, entry] : model.versions) {
      if (entry.status.state == VersionState::kAvailable) {
        times.push_back({model.config.name, version, entry.load_seconds});
      }
    }
  }
  return times;
}

}  // namespace asyncrt::serving
