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
//   absl::Status AddMetadata(absl::Span<const TensorMetadata> args,
//                            const OpAttrs& attrs,
//                            absl::Span<TensorMetadata> results) {...}
//   void AddDispatch(OpInvocation& invocation) {...}
//   registry.AddOp("my.add", AddMetadata);
//   registry.AddDispatch("my.add", "cpu", AddDispatch, kOpAcceptsScalarHost);
//
// Thread-safety: registration takes a lock and may happen at any time;
// lookups take the same lock. Entries are never removed, so pointers
// returned by Find() stay valid for the process.
#ifndef ASYNCRT_CORE_RUNTIME_OP_REGISTRY_H_
#define ASYNCRT_CORE_RUNTIME_OP_REGISTRY_H_

#include <memory>
#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/chain.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/tensor/tensor.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt {

using OpMetadataFn = absl::Status (*)(absl::Span<const TensorMetadata> args,
                                      const OpAttrs& attrs,
                                      absl::Span<TensorMetadata> results);

// What a dispatch function sees. Arguments are available, error-free host
// tensors of a type the implementation accepts (others were converted to
// DenseHostTensor first).
struct OpInvocation {
  const ExecutionContext& exec_ctx;
  absl::Span<AsyncValue* const> arguments;  // Borrowed (+0).
  const OpAttrs& attrs;
  // The shape function's results, or empty if the op has none.
  absl::Span<const TensorMetadata> result_metadata;
  // To be set by the dispatch function, each to a value (+1) holding a
  // concrete tensor, possibly unavailable, or an error.
  absl::Span<RCReference<AsyncValue>> results;
  // Completes when the op's side effects are done. Starts ready; an op that
  // finishes later may replace it. May be null (no chain was asked for).
  AsyncValueRef<Chain>* chain;

  const Tensor& argument(size_t index) const {
    return *GetTensorIfPresent(*arguments[index]);
  }
  HostContext* host() const { return exec_ctx.host(); }
};

using OpDispatchFn = void (*)(OpInvocation& invocation);

// Host tensor types a dispatch function takes as they are. DenseHostTensor
// is always accepted; others are converted to it unless listed here.
enum OpAcceptedTensors : uint32_t {
  kOpAcceptsDenseHostOnly = 0,
  kOpAcceptsScalarHost = 1u << 0,
  kOpAcceptsCooHost = 1u << 1,
  kOpAcceptsStringHost = 1u << 2,
  kOpAcceptsAnyHost = ~0u,
};

struct OpImplementation {
  std::string device_type;
  OpDispatchFn dispatch = nullptr;
  uint32_t accepted_tensors = kOpAcceptsDenseHostOnly;
};

struct OpEntry {
  std::string name;
  OpMetadataFn metadata_fn = nullptr;
  absl::InlinedVector<OpImplementation, 2> implementations;

  const OpImplementation* FindImplementation(
      absl::string_view device_type) const;
};

class OpRegistry {
 public:
  // The process-wide registry that CoreRuntime uses.
  static OpRegistry& Global();

  // Declares `name` with its metadata function (may be null). Declaring an
  // op twice replaces its metadata function.
  void AddOp(absl::string_view name, OpMetadataFn metadata_fn);
  // Adds the implementation for `device_type`, declaring the op if needed.
  // A second implementation for the same device replaces the first.
  void AddDispatch(absl::string_view name, absl::string_view device_type,
                   OpDispatchFn dispatch,
                   uint32_t accepted_tensors = kOpAcceptsDenseHostOnly);

  // nullptr if unknown.
  const OpEntry* Find(absl::string_view name) const;

 private:
  OpEntry& GetOrAdd(absl::string_view name);

  mutable std::mutex mutex_;
  // Guarded by mutex_. Boxed: entries must not move.
  absl::flat_hash_map<std::string, std::unique_ptr<OpEntry>> ops_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_CORE_RUNTIME_OP_REGISTRY_H_
