// ShapeMemo: the shape function's answers remembered at one call site.
//
// A program calls each of its op sites with the same argument shapes again
// and again; an eager caller cannot know that, a compiled program can. The
// corert.executeop kernel keeps one memo per site and looks the result
// metadata up instead of running the op's shape function (a shape function
// is a pure function of its arguments' metadata and the op's attributes,
// and a site's attributes never change).
//
// Ownership: the memo owns its entries; it is owned by its call site (the
// kernel's state, which lives as long as the program).
// Thread-safety: Find is lock-free and may race with Record; Record takes
// a lock. Entries are immutable once published and freed only with the
// memo. Never blocks but for Record's short lock.
#ifndef ASYNCRT_CORE_RUNTIME_SHAPE_MEMO_H_
#define ASYNCRT_CORE_RUNTIME_SHAPE_MEMO_H_

#include <array>
#include <atomic>
#include <mutex>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt {

class ShapeMemo {
 public:
  // Argument shapes a site remembers; a site that sees more (shapes that
  // keep changing) runs the shape function for the rest.
  static constexpr int kCapacity = 4;

  ShapeMemo() = default;
  ShapeMemo(const ShapeMemo&) = delete;
  ShapeMemo& operator=(const ShapeMemo&) = delete;
  ~ShapeMemo();

  // The result metadata recorded for arguments whose metadata equals
  // `arguments` (as many as were recorded with it), or null.
  const TensorMetadata* Find(
      absl::Span<const TensorMetadata* const> arguments) const {
    const int size = size_.load(std::memory_order_acquire);
    for (int i = 0; i < size; ++i) {
      const Entry* entry = entries_[i].load(std::memory_order_relaxed);
      if (entry->Matches(arguments)) return entry->results.data();
    }
    return nullptr;
  }

  // Remembers `results` for `arguments`, unless already known or full.
  void Record(absl::Span<const TensorMetadata* const> arguments,
              absl::Span<const TensorMetadata> results);

  int size() const { return size_.load(std::memory_order_acquire); }

 private:
  struct Entry {
    bool Matches(absl::Span<const TensorMetadata* const> metadata) const {
      if (metadata.size() != arguments.size()) return false;
      for (size_t i = 0; i < metadata.size(); ++i) {
        if (*metadata.data()[i] != arguments.data()[i]) return false;
      }
      return true;
    }
    absl::InlinedVector<TensorMetadata, 4> arguments;
    absl::InlinedVector<TensorMetadata, 2> results;
  };

  std::mutex record_mu_;  // Serializes Record; Find takes no lock.
  std::atomic<int> size_{0};  // Published entries; release after each.
  std::array<std::atomic<const Entry*>, kCapacity> entries_{};
};

}  // namespace asyncrt

#endif  // ASYNCRT_CORE_RUNTIME_SHAPE_MEMO_H_
