#include "asyncrt/tensor/tensor.h"

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <deque>
#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "asyncrt/tensor/coo_host_tensor.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/scalar_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"

namespace asyncrt {

//===--- TensorType -------------------------------------------------------===//

namespace {

// Interned names. The registry is never destroyed: TensorType values point
// into it and may be used during static destruction.
class TensorTypeRegistry {
 public:
  static TensorTypeRegistry& Get() {
    static auto* registry = new TensorTypeRegistry();
    return *registry;
  }

  const internal::TensorTypeEntry* Register(absl::string_view name) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_name_.find(name);
    if (it != by_name_.end()) return it->second;
    // A deque never moves its elements, so the views stay valid.
    const std::string& stored = names_.emplace_back(name);
    const auto& entry = entries_.emplace_back(internal::TensorTypeEntry{
        static_cast<int32_t>(entries_.size() + 1 +
                             internal::kNumBuiltinTensorTypes),
        stored});
    by_name_.emplace(stored, &entry);
    return &entry;
  }

 private:
  TensorTypeRegistry() {
    for (const internal::TensorTypeEntry* entry :
         {&internal::kInvalidTensorTypeEntry,
          &internal::kDenseHostTensorTypeEntry,
          &internal::kStringHostTensorTypeEntry,
          &internal::kCooHostTensorTypeEntry,
          &internal::kScalarHostTensorTypeEntry}) {
      by_name_.emplace(entry->name, entry);
    }
  }

  std::mutex mutex_;
  // Guarded by mutex_. Append-only; keys and entries view names_.
  std::deque<std::string> names_;
  std::deque<internal::TensorTypeEntry> entries_;
  absl::flat_hash_map<absl::string_view, const internal::TensorTypeEntry*>
      by_name_;
};

}  // namespace

TensorType TensorType::Register(absl::string_view name) {
  return TensorType(TensorTypeRegistry::Get().Register(name));
}

//===--- Tensor -----------------------------------------------------------===//

std::string Tensor::ToString() const {
  std::string out;
  Print(&out);
  return out;
}

//===--- Payload casters --------------------------------------------------===//

namespace {

constexpr int kMaxTensorPayloadTypes = 32;

// Readers never lock: a caster slot is written once, before the release
// store of g_num_casters that makes it visible.
std::mutex g_casters_mutex;
internal::TensorPayloadCaster g_casters[kMaxTensorPayloadTypes] = {
    &internal::CastTensorPayload<DenseHostTensor>,
    &internal::CastTensorPayload<StringHostTensor>,
    &internal::CastTensorPayload<CooHostTensor>,
    &internal::CastTensorPayload<ScalarHostTensor>,
};
std::atomic<int> g_num_casters{4};

}  // namespace

void internal::RegisterTensorPayloadCaster(TensorPayloadCaster caster) {
  std::lock_guard<std::mutex> lock(g_casters_mutex);
  const int n = g_num_casters.load(std::memory_order_relaxed);
  for (int i = 0; i < n; ++i) {
    if (g_casters[i] == caster) return;
  }
  if (n == kMaxTensorPayloadTypes) {
    std::fprintf(stderr, "RegisterTensorPayloadType: more than %d types\n",
                 kMaxTensorPayloadTypes);
    std::abort();
  }
  g_casters[n] = caster;
  g_num_casters.store(n + 1, std::memory_order_release);
}

Tensor* GetTensorIfPresent(AsyncValue& value) {
  // The common case, without touching the registry.
  if (auto* dense = value.GetIfPresent<DenseHostTensor>()) return dense;
  if (!value.IsConcrete()) return nullptr;
  const int n = g_num_casters.load(std::memory_order_acquire);
  for (int i = 1; i < n; ++i) {
    if (Tensor* tensor = g_casters[i](value)) return tensor;
  }
  return nullptr;
}

const Tensor* GetTensorIfPresent(const AsyncValue& value) {
  return GetTensorIfPresent(const_cast<AsyncValue&>(value));
}

}  // namespace asyncrt
