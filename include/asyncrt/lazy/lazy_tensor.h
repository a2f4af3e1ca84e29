// Lazy tensors: ops called as in eager mode are recorded into a trace
// instead of running; the trace is compiled (nn dialect, the model
// pipeline, BEF) and run when a value is needed, and compiled traces are
// cached, so a loop compiles its body once (Swift for TensorFlow's X10).
//
//   auto lazy = *asyncrt::lazy::LazyContext::Create(runtime);
//   LazyTensor x = *lazy->FromHost(std::move(input));        // on CPU:0
//   LazyTensor h = *lazy->Call("nn.relu", {x});               // recorded
//   for (int step = 0; step < 100; ++step) {
//     h = *lazy->Call("nn.add", {h, x});
//     ASYNCRT_CHECK_OK(lazy->Barrier());   // one cached trace per step
//   }
//   DenseHostTensor result = *h.ToHost();   // waits for the value
//
// Recording knows the op's result shapes at once (its shape function, or
// the same op's in the last trace), so a tensor knows its dtype and shape
// as soon as it is made and a shape error is the call's error. Each thread
// records onto its own tape. A trace runs when a value is read on the host
// (ToHost, which runs only what that value needs), at Barrier() (the
// calling thread's tape, so a loop body is one trace that repeats, not one
// growing graph), or when max_trace_ops ops were recorded on a tape. A
// tape that repeats the last trace op by op runs its program without a
// cache lookup (LazyCacheStats::repeats).
// Ops the nn dialect does not model still run inside the trace's program
// (as nn.runtime_op: the registry op, unfused); a trace the compiler cannot
// take at all is replayed op by op (LazyCacheStats::replayed). Runtime-only
// builds, which have no compiler, replay each trace op by op (see
// LazyOptions::compile).
//
// Devices: a tensor lives on one device ("CPU:0", a plug-in's "SIM:0");
// an op on tensors of two devices is an error naming both, and only
// CopyTo moves a tensor. Precision: ToReducedPrecision() keeps a f32
// tensor's logical dtype but stores it as bf16; an op mixing reduced and
// full precision tensors is an error (never a silent widening).
//
// Ownership: a LazyContext borrows its Runtime, which must outlive the
// context and every tensor made through it; LazyTensor is a cheap copyable
// reference to shared data (tensors keep what they need of their context
// alive: they may outlive it). Thread-safety: every member of both classes
// is thread-safe; threads may record into one context at once. Blocking:
// ToHost and Await wait for the value; they, Barrier, CopyTo, a recording
// call that reaches the size limit and ~LazyContext (a last barrier)
// compile a trace on a cache miss (milliseconds) and start it; other calls
// never block.
#ifndef ASYNCRT_LAZY_LAZY_TENSOR_H_
#define ASYNCRT_LAZY_LAZY_TENSOR_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/dtype.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt::lazy {

namespace internal {
struct LazyValue;
class LazyState;
// The reference count a LazyValue starts with, here so that copying a
// LazyTensor is one inline atomic add.
struct LazyValueRefs {
  std::atomic<int32_t> refs{1};
};
// Frees a value whose last reference was dropped.
void DestroyValue(LazyValueRefs* value);
inline void RefValue(LazyValueRefs* value) {
  value->refs.fetch_add(1, std::memory_order_relaxed);
}
inline void UnrefValue(LazyValueRefs* value) {
  if (value->refs.fetch_sub(1, std::memory_order_acq_rel) == 1) {
    DestroyValue(value);
  }
}
}  // namespace internal

struct LazyOptions {
  // A recording call that brings the ops recorded since the last barrier
  // to this many runs a barrier, so a loop without one does not grow a
  // trace without bound.
  size_t max_trace_ops = 10000;
  // Compiled traces kept; the least recently used goes first.
  size_t cache_capacity = 128;
  // Compile traces with the registered trace compiler (asyncrt/lazy/
  // trace.h; linking asyncrt::lazy_compiler registers the optimizing one)
  // when there is one; false, or without one: replay each trace's ops one
  // by one (prepared once per cached trace, nothing fused).
  bool compile = true;
};

// The compiled-trace cache, counted since the context was made.
struct LazyCacheStats {
  int64_t hits = 0;
  // Hits found without a key: the trace's ops matched the previous trace's
  // op by op as they were recorded (a loop body; counted in `hits` too).
  int64_t repeats = 0;
  int64_t misses = 0;  // Each a compilation.
  // Misses the trace compiler could not take (an attribute without a
  // compile-time form, ...), replayed op by op instead.
  int64_t replayed = 0;
  int64_t evictions = 0;
  int64_t entries = 0;
  absl::Duration compile_time;  // Total over the misses.
  // Total over the hits of finding the trace in the cache: walking the
  // recorded graph into its key and looking the key up.
  absl::Duration hit_time;
};

class LazyContext;
class LazyArgs;

class LazyTensor {
 public:
  LazyTensor() = default;  // Invalid: valid() is false.
  // Copies refer to the same value: a value no LazyTensor (and no later
  // trace) refers to is not an output of its trace (only ops still read
  // it).
  LazyTensor(const LazyTensor& other) : value_(other.value_) {
    if (value_ != nullptr) internal::RefValue(value_);
  }
  LazyTensor(LazyTensor&& other) noexcept
      : value_(std::exchange(other.value_, nullptr)) {}
  LazyTensor& operator=(const LazyTensor& other) {
    LazyTensor copy(other);
    std::swap(value_, copy.value_);
    return *this;
  }
  LazyTensor& operator=(LazyTensor&& other) noexcept {
    LazyTensor moved(std::move(other));
    std::swap(value_, moved.value_);
    return *this;
  }
  ~LazyTensor() {
    if (value_ != nullptr) internal::UnrefValue(value_);
  }

  bool valid() const { return value_ != nullptr; }
  // The accessors below require valid().
  // The logical dtype: f32 for a reduced-precision tensor.
  DType dtype() const;
  const TensorShape& shape() const;
  // The short name of the device it lives on ("CPU:0").
  const std::string& device() const;
  // Stored as bf16 behind a f32 dtype (see ToReducedPrecision).
  bool IsReducedPrecision() const;
  // Whether its value has been computed or is being computed (its trace
  // ran), rather than only recorded.
  bool IsMaterialized() const;

  // The value on the host, in its logical dtype: runs the pending ops it
  // depends on (not the context's other pending tensors), then waits.
  // An error of any op it depends on is this call's error.
  absl::StatusOr<DenseHostTensor> ToHost() const;

  // Runs the pending ops it depends on (as ToHost does) and waits until its
  // value is computed, where it lives, without copying it. The error of any
  // op it depends on, if one failed.
  absl::Status Await() const;

  // This tensor on `device` (a short or full device name): itself if it
  // is there, else an explicit copy (its pending ops run first).
  absl::StatusOr<LazyTensor> CopyTo(absl::string_view device) const;
  // The same values stored as bf16, the dtype still f32 (recorded, like an
  // op). InvalidArgument for a tensor that is not f32; itself if it is
  // already reduced.
  absl::StatusOr<LazyTensor> ToReducedPrecision() const;
  // Back to f32 storage; itself if it is not reduced.
  absl::StatusOr<LazyTensor> ToFullPrecision() const;

 private:
  friend class LazyContext;
  friend class internal::LazyState;
  // Takes one reference to `value`.
  explicit LazyTensor(internal::LazyValue* value);
  internal::LazyValue* value() const;
  internal::LazyValueRefs* value_ = nullptr;
};

// One tensor of a braced argument list, referred to (not copied).
class LazyArg {
 public:
  LazyArg(const LazyTensor& tensor)  // NOLINT: implicit, as in `{x, y}`.
      : tensor_(&tensor) {}
  const LazyTensor& get() const { return *tensor_; }

 private:
  const LazyTensor* tensor_;
};

// The arguments of a recorded op: a braced list of tensors (`{x, y}`,
// referred to, not copied) or a contiguous range of them. Borrowed: valid
// for the call it is passed to.
class LazyArgs {
 public:
  LazyArgs() = default;
  LazyArgs(std::initializer_list<LazyArg> tensors)  // NOLINT: implicit.
      : refs_(tensors.begin()), size_(tensors.size()) {}
  LazyArgs(absl::Span<const LazyTensor> tensors)  // NOLINT: implicit.
      : tensors_(tensors.data()), size_(tensors.size()) {}
  LazyArgs(const std::vector<LazyTensor>& tensors)  // NOLINT: implicit.
      : LazyArgs(absl::MakeConstSpan(tensors)) {}

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const LazyTensor& operator[](size_t i) const {
    return refs_ != nullptr ? refs_[i].get() : tensors_[i];
  }

 private:
  const LazyArg* refs_ = nullptr;
  const LazyTensor* tensors_ = nullptr;
  size_t size_ = 0;
};

class LazyContext {
 public:
  // InvalidArgument for options out of range.
  static absl::StatusOr<std::unique_ptr<LazyContext>> Create(
      Runtime& runtime, LazyOptions options = {});
  // Runs every thread's tape (so tensors the program still holds are
  // computed), ignoring errors (the tensors hold them). No thread may
  // record on the context meanwhile.
  ~LazyContext();
  LazyContext(const LazyContext&) = delete;
  LazyContext& operator=(const LazyContext&) = delete;

  // A tensor holding `tensor` (taken), on `device` (copied there if it is
  // not the host). NotFound for an unknown device.
  absl::StatusOr<LazyTensor> FromHost(DenseHostTensor tensor,
                                      absl::string_view device = "CPU:0");

  // Records registry op `op_name` on `args` with `attrs`, giving
  // `num_results` tensors whose dtypes and shapes are known now. Errors
  // now: an unknown op, one without a shape function (lazy tensors need
  // shapes when recorded) or without an implementation on the arguments'
  // device, arguments on different devices or of mixed precision, invalid
  // tensors, and whatever the shape function rejects. Errors of the
  // computation itself arrive when a value is read.
  absl::StatusOr<std::vector<LazyTensor>> Execute(absl::string_view op_name,
                                                  const LazyArgs& args,
                                                  const OpAttrs& attrs = {},
                                                  size_t num_results = 1);
  // Execute for a single-result op.
  absl::StatusOr<LazyTensor> Call(absl::string_view op_name,
                                  const LazyArgs& args,
                                  const OpAttrs& attrs = {});

  // Runs the ops the calling thread recorded since its last barrier as one
  // trace (compiled once per structure, then taken from the cache), its
  // outputs the values something still refers to, and cuts the trace
  // there: what the thread records next starts a new one. Ops other
  // threads recorded run at their barriers, or when their values are read.
  // Returns the compilation's error, if any (the tensors then hold it too);
  // the computation's own errors arrive when values are read.
  absl::Status Barrier();

  LazyCacheStats cache_stats() const;

  Runtime& runtime() const;

 private:
  explicit LazyContext(internal::LazyState* state) : state_(state) {}
  internal::LazyState* state_;  // One reference.
};

// X10's name for LazyContext::Barrier.
inline absl::Status LazyTensorBarrier(LazyContext& context) {
  return context.Barrier();
}

// Collections (a model's parameters) in one call; the first error stops
// and is returned.
absl::StatusOr<std::vector<LazyTensor>> CopyTo(
    absl::Span<const LazyTensor> tensors, absl::string_view device);
absl::StatusOr<std::vector<LazyTensor>> ToReducedPrecision(
    absl::Span<const LazyTensor> tensors);
absl::StatusOr<std::vector<LazyTensor>> ToFullPrecision(
    absl::Span<const LazyTensor> tensors);

}  // namespace asyncrt::lazy

#endif  // ASYNCRT_LAZY_LAZY_TENSOR_H_
