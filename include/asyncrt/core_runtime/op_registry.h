// OpRegistry: the one table of ops that eager execution
// (CoreRuntime::Execute) and graph execution (`corert.executeop` in BEF)
// share.
//
// Each op has
//   - a metadata (shape) function, run synchronously when the metadata of
//     every argument is known, so a shape error is reported when the op is
//     issued and result handles know their dtype and shape before the data
//     is computed. Optional: ops without one produce handles whose metadata
//     arrives with the tensor.
//   - one dispatch function per device type ("cpu"), called once every
//     argument tensor is available, which computes the results, possibly
//     asynchronously.
//
// Adding an op:
//   absl::Status AddMetadata(ArgumentMetadata args, const OpAttrs& attrs,
//                            absl::Span<TensorMetadata> results) {...}
//   void AddDispatch(OpInvocation& invocation) {...}
//   registry.AddOp("my.add", AddMetadata);
//   registry.AddDispatch("my.add", "cpu", AddDispatch, kOpAcceptsScalarHost);
//
// Thread-safety: registration takes a lock and may happen at any time.
// Lookups take no lock: they read an immutable snapshot of the table, which
// registration replaces (copy on write; registration is rare, lookups are on
// every eager op). Entries are never freed, so pointers returned by Find()
// stay valid for the process; a later registration for the same op makes a
// new entry, which later lookups see.
#ifndef ASYNCRT_CORE_RUNTIME_OP_REGISTRY_H_
#define ASYNCRT_CORE_RUNTIME_OP_REGISTRY_H_

#include <atomic>
#include <cassert>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/core_runtime/buffer_arena.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/core_runtime/op_site_cache.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/chain.h"
#include "asyncrt/host_context/device.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/support/static_registration.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/tensor.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt {

// The metadata of an op's arguments as its shape function reads them: a
// reference to each argument's metadata, read where it lives (in the
// argument's handle or tensor) rather than copied. Valid during the call.
class ArgumentMetadata {
 public:
  explicit ArgumentMetadata(absl::Span<const TensorMetadata* const> metadata)
      : metadata_(metadata) {}

  size_t size() const { return metadata_.size(); }
  bool empty() const { return metadata_.empty(); }
  const TensorMetadata& operator[](size_t index) const {
    assert(index < metadata_.size());
    return *metadata_.data()[index];
  }

 private:
  absl::Span<const TensorMetadata* const> metadata_;
};

// An op's shape function: its results' metadata from its arguments' and
// its attributes, or the error that makes the call invalid. Must be a pure
// function of those two: a program's op site remembers its answers per
// argument metadata (ShapeMemo) and does not call it again.
using OpMetadataFn = absl::Status (*)(ArgumentMetadata args,
                                      const OpAttrs& attrs,
                                      absl::Span<TensorMetadata> results);

// What a dispatch function sees. Arguments are available, error-free
// tensors on the op's device, of a type the implementation accepts (host
// tensors of other types were converted to DenseHostTensor first).
struct OpInvocation {
  const ExecutionContext& exec_ctx;
  absl::Span<AsyncValue* const> arguments;  // Borrowed (+0).
  // The tensor in each argument, found once.
  absl::Span<const Tensor* const> argument_tensors;
  const OpAttrs& attrs;
  // The shape function's results, or empty if the op has none.
  absl::Span<const TensorMetadata> result_metadata;
  // To be set by the dispatch function, each to a value (+1) holding a
  // concrete tensor, possibly unavailable, or an error.
  absl::Span<RCReference<AsyncValue>> results;
  // Completes when the op's side effects are done. Starts ready; an op that
  // finishes later may replace it. May be null (no chain was asked for).
  AsyncValueRef<Chain>* chain;

  // Bit i: the op holds the only reference to argument i (its caller gave
  // the handle up, see ArgumentUse::kConsume). Set by the core runtime.
  uint64_t unshared_arguments = 0;
  // Set by the core runtime when it can take an unshared argument's
  // reference back from the caller's handle: ReuseOrAllocateDense then
  // adopts that reference for the result instead of adding one (and the
  // handle's, dropped later, would be two atomic operations per in-place
  // op), and records the argument in `taken_arguments`.
  bool may_take_arguments = false;
  mutable uint64_t taken_arguments = 0;
  // The calling function's planned memory when it runs the op through its
  // `corert.arena_op_handler` (buffer_arena.h); null otherwise (eager
  // calls, unplanned functions). Borrowed for the dispatch call.
  const BufferArena* arena = nullptr;
  // The device the op runs on (its handler's; every argument lives there).
  Device* device = nullptr;
  // What the implementation was registered with (OpImplementation::data).
  const void* implementation_data = nullptr;
  // The program op site's cache (op_site_cache.h), where the implementation
  // may keep what it prepared for the site's next calls; null for eager
  // calls and for a site's call dispatched later, once pending arguments
  // are computed. Borrowed for the dispatch call.
  OpSiteCache* site_cache = nullptr;

  const Tensor& argument(size_t index) const {
    return *argument_tensors[index];
  }

  // A tensor for `metadata` in the buffer of argument `index`, for an op
  // that computes its result in place: only if nothing else can see the
  // argument (its tensor and buffer are unshared) and it is a dense host
  // tensor of that dtype and shape; nullopt otherwise. The argument keeps
  // its view of the buffer for the op's reads, element i before element i
  // is written.
  std::optional<DenseHostTensor> ReuseArgumentBuffer(
      size_t index, const TensorMetadata& metadata) const {
    // The common answer (no) stays inline and costs a bit test.
    if (index >= 64 || !(unshared_arguments >> index & 1)) return std::nullopt;
    return ReuseUnsharedArgumentBuffer(index, metadata);
  }

  // An available async value holding a dense host tensor for `metadata`
  // (what the op stores in `results` once it has written the elements):
  // over the buffer of the first argument in the mask `reusable_arguments`
  // (bit i: argument i) that ReuseArgumentBuffer allows, else in a new,
  // uninitialized buffer from the host allocator. Null only if that
  // allocation fails. The tensor is built once, in place in the value.
  AsyncValueRef<DenseHostTensor> ReuseOrAllocateDense(
      const TensorMetadata& metadata, uint64_t reusable_arguments = 0) const {
    if (ABSL_PREDICT_TRUE((reusable_arguments & unshared_arguments) == 0)) {
      return AllocateDense(metadata);
    }
    return ReuseOrAllocateDenseSlow(metadata,
                                    reusable_arguments & unshared_arguments);
  }

  // The buffer the function's buffer plan gives the op's (single) result:
  // `bytes` at the op's `_buffer_offset` attribute in `arena`. Null when
  // there is no arena or no slot (`_buffer_offset` and `_buffer_size`), or
  // the slot is smaller than `bytes` or not inside the arena (the result
  // is then allocated as usual). A planned buffer
  // is never reused in place (HostBuffer::IsPlanned).
  RCReference<HostBuffer> PlannedResultBuffer(size_t bytes) const {
    if (ABSL_PREDICT_TRUE(arena == nullptr)) return nullptr;
    return PlannedResultBufferSlow(bytes);
  }

  HostContext* host() const { return exec_ctx.host(); }

 private:
  RCReference<HostBuffer> PlannedResultBufferSlow(size_t bytes) const;
  std::optional<DenseHostTensor> ReuseUnsharedArgumentBuffer(
      size_t index, const TensorMetadata& metadata) const;
  // Argument `index`'s value if it holds a dense host tensor of `metadata`
  // whose buffer is unshared (ReuseArgumentBuffer's test, given that the
  // argument is); else null.
  AsyncValue* ReusableArgument(size_t index,
                               const TensorMetadata& metadata) const;
  AsyncValueRef<DenseHostTensor> AllocateDense(
      const TensorMetadata& metadata) const;
  AsyncValueRef<DenseHostTensor> ReuseOrAllocateDenseSlow(
      const TensorMetadata& metadata, uint64_t candidates) const;
};

using OpDispatchFn = void (*)(OpInvocation& invocation);

// Host tensor types a dispatch function takes as they are. DenseHostTensor
// is always accepted; others are converted to it unless listed here.
enum OpAcceptedTensors : uint32_t {
  kOpAcceptsDenseHostOnly = 0,
  kOpAcceptsScalarHost = 1u << 0,
  kOpAcceptsCooHost = 1u << 1,
  kOpAcceptsStringHost = 1u << 2,
  // Tensor types an op library registers itself (TensorType::Register, ids
  // past the built-in four), such as the nn library's tensors in oneDNN's
  // layouts: the op takes them as they are and handles each type it meets.
  kOpAcceptsRegisteredHost = 1u << 3,
  kOpAcceptsAnyHost = ~0u,
  // A device's implementation takes its device's tensors (DenseDeviceTensor
  // and the like) as they are.
  kOpAcceptsAnyTensor = ~0u,
};

struct OpImplementation {
  std::string device_type;
  int device_type_id = -1;  // OpRegistry::DeviceTypeId(device_type).
  OpDispatchFn dispatch = nullptr;
  uint32_t accepted_tensors = kOpAcceptsDenseHostOnly;
  // Passed to the dispatch function (OpInvocation::implementation_data):
  // what a generic dispatch function needs for this op, such as a plug-in
  // kernel's C function. Not owned; must live as long as the process.
  const void* data = nullptr;
};

struct OpEntry {
  std::string name;
  OpMetadataFn metadata_fn = nullptr;
  absl::InlinedVector<OpImplementation, 2> implementations;

  const OpImplementation* FindImplementation(
      absl::string_view device_type) const;
  // The same by interned id, without string compares (the eager hot path).
  const OpImplementation* FindImplementation(int device_type_id) const {
    for (const OpImplementation& implementation : implementations) {
      if (implementation.device_type_id == device_type_id) {
        return &implementation;
      }
    }
    return nullptr;
  }
};

class OpRegistry {
 public:
  OpRegistry();

  // The process-wide registry that CoreRuntime uses.
  static OpRegistry& Global();

  // Declares `name` with its metadata function (may be null). Declaring an
  // op twice replaces its metadata function.
  void AddOp(absl::string_view name, OpMetadataFn metadata_fn);
  // Adds the implementation for `device_type`, declaring the op if needed.
  // A second implementation for the same device replaces the first.
  void AddDispatch(absl::string_view name, absl::string_view device_type,
                   OpDispatchFn dispatch,
                   uint32_t accepted_tensors = kOpAcceptsDenseHostOnly,
                   const void* data = nullptr);
  // Whether `device_type` has an implementation of any op. Lock-free.
  bool HasDeviceType(absl::string_view device_type) const;
  // The ops with an implementation for `device_type`, sorted by name
  // (what a device runs; for tools and tests). Lock-free.
  std::vector<std::string> OpNamesFor(absl::string_view device_type) const;

  // A small integer naming `device_type` ("cpu", "gpu", ...), the same for
  // the same name for the life of the process. Thread-safe.
  static int DeviceTypeId(absl::string_view device_type);

  // nullptr if unknown. Lock-free.
  const OpEntry* Find(absl::string_view name) const {
    const Table& table = *table_.load(std::memory_order_acquire);
    auto it = table.ops.find(name);
    return it == table.ops.end() ? nullptr : it->second;
  }

  // Find, remembering per thread where `name`'s characters live: a caller
  // that names ops with string literals (an eager loop) then skips hashing.
  // A hit still compares the characters, so a reused buffer is safe, and
  // any registration invalidates the cache. Lock-free.
  const OpEntry* FindByCallSite(absl::string_view name) const;

 private:
  struct Table {
    // Unique among every table of every registry of the process, so a
    // cached lookup can tell that its table is still current.
    uint64_t generation;
    // Keys view the entries' names.
    absl::flat_hash_map<absl::string_view, const OpEntry*> ops;
  };

  // Publishes `entry` in a new table that replaces the current one.
  // Requires mutex_.
  void Publish(std::unique_ptr<OpEntry> entry);
  // A copy of the current entry for `name`, or a new one. Requires mutex_.
  std::unique_ptr<OpEntry> CopyOrNewEntry(absl::string_view name) const;

  std::mutex mutex_;  // Serializes registration.
  std::atomic<const Table*> table_;
  // Every table and entry ever published (guarded by mutex_): a lookup may
  // still be reading an old one.
  std::vector<std::unique_ptr<const Table>> tables_;
  std::vector<std::unique_ptr<const OpEntry>> entries_;
};

// A function that registers an op library's ops.
using OpRegistration = void (*)(OpRegistry& registry);

// Applies `registration` to OpRegistry::Global(). Called from static
// initializers (ASYNCRT_STATIC_OP_REGISTRATION), so that linking an op
// library is what makes its ops available.
void ApplyStaticOpRegistration(OpRegistration registration);

}  // namespace asyncrt

// Registers `fn` (an OpRegistration) at static-initialization time. Use
// only in a library's static_registration.cc, built as an always-linked
// object library.
#define ASYNCRT_STATIC_OP_REGISTRATION(fn) \
  ASYNCRT_STATIC_REGISTRATION(::asyncrt::ApplyStaticOpRegistration(fn))

#endif  // ASYNCRT_CORE_RUNTIME_OP_REGISTRY_H_
