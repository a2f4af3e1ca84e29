#include "asyncrt/core_runtime/shape_memo.h"

namespace asyncrt {

ShapeMemo::~ShapeMemo() {
  const int size = size_.load(std::memory_order_acquire);
  for (int i = 0; i < size; ++i) {
    delete entries_[i].load(std::memory_order_relaxed);
  }
}

void ShapeMemo::Record(absl::Span<const TensorMetadata* const> arguments,
                       absl::Span<const TensorMetadata> results) {
  std::lock_guard<std::mutex> lock(record_mu_);
  const int size = size_.load(std::memory_order_relaxed);
  if (size == kCapacity || Find(arguments) != nullptr) return;
  auto* entry = new Entry;
  for (const TensorMetadata* metadata : arguments) {
    entry->arguments.push_back(*metadata);
  }
  entry->results.assign(results.begin(), results.end());
  entries_[size].store(entry, std::memory_order_relaxed);
  size_.store(size + 1, std::memory_order_release);
}

}  // namespace asyncrt
