// Lazy tensors: recording, traces, the compiled-trace cache (lazy_tensor.h).
#include "asyncrt/lazy/lazy_tensor.h"

#include <algorithm>
#include <atomic>
#include <cstring>
#include <list>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "asyncrt/tensor/conversion_registry.h"
#include "lib/lazy/recycling_allocator.h"
#include "lib/lazy/trace_program.h"

namespace asyncrt::lazy {
namespace internal {

// The storage dtype of reduced-precision tensors (every device takes bf16;
// its exponent range is f32's, so no value overflows when narrowed).
constexpr DType kReducedDType = DType::kBF16;

struct TraceNode;

// One value: recorded (its node and result index) until a trace computes
// it, then materialized (an async value holding its TensorHandle, possibly
// still being computed or an error). Once materialized it forgets its node,
// so the recorded graph behind it is freed.
struct LazyValue {
  LazyValue(std::shared_ptr<LazyState> state, TensorMetadata storage,
            Device* device, bool reduced)
      : state(std::move(state)),
        metadata(std::move(storage)),
        device(device),
        device_type_id(OpRegistry::DeviceTypeId(device->type())),
        reduced(reduced) {}
  // A value on the device of `like`, whose type id is known.
  LazyValue(std::shared_ptr<LazyState> state, TensorMetadata storage,
            const LazyValue& like, bool reduced)
      : state(std::move(state)),
        metadata(std::move(storage)),
        device(like.device),
        device_type_id(like.device_type_id),
        reduced(reduced) {}

  const std::shared_ptr<LazyState> state;
  const TensorMetadata metadata;  // As stored: bf16 when reduced.
  Device* const device;           // Held by the runtime's device manager.
  const int device_type_id;       // OpRegistry::DeviceTypeId of its type.
  const bool reduced;
  // LazyTensors referring to it. The context's pending list watches values
  // weakly and makes outputs of those with users, so a value that only an
  // op of the trace still reads is not an output.
  std::atomic<int32_t> users{0};

  // Set before the value is published; after, guarded by the context's
  // graph lock (LazyState::graph_mu_), which every materialization takes.
  std::shared_ptr<const TraceNode> node;  // Null once materialized.
  int32_t result_index = 0;
  RCReference<AsyncValue> handle;  // Of a TensorHandle, once materialized.

  // Scratch of the walk that builds a trace (LazyState::Build, under the
  // graph lock): the walk that last placed this value, and where.
  uint64_t walk = 0;
  TraceRef walk_ref;
};

// One recorded op; immutable.
struct TraceNode {
  const OpEntry* entry;  // Its name is the op's; entries live forever.
  OpAttrsRef attrs;
  std::string attrs_key;  // Exact bytes of the attributes, for cache keys.
  absl::InlinedVector<std::shared_ptr<LazyValue>, 2> operands;
  absl::InlinedVector<TensorMetadata, 1> results;
  // Walk scratch, as LazyValue's (under the graph lock): the walk that
  // placed this node, and where.
  mutable uint64_t walk = 0;
  mutable int32_t walk_index = 0;
};

namespace {

template <typename T>
void AppendBytes(std::string& out, const T& value) {
  out.append(reinterpret_cast<const char*>(&value), sizeof(value));
}

// A byte string equal for equal attributes (names, types, every value byte;
// OpAttrs::Print elides long arrays, so it cannot serve).
std::string AttrsKey(const OpAttrs& attrs) {
  std::string key;
  for (const OpAttrs::Entry& entry : attrs.entries()) {
    AppendBytes(key, static_cast<uint32_t>(entry.name.size()));
    key.append(entry.name);
    AppendBytes(key, entry.type);
    AppendBytes(key, entry.is_array);
    AppendBytes(key, entry.count);
    const size_t size = OpAttrs::ValueSize(entry);
    key.append(static_cast<const char*>(attrs.data(entry)), size);
  }
  return key;
}

void AppendMetadataKey(std::string& key, const TensorMetadata& metadata) {
  AppendBytes(key, metadata.dtype);
  absl::Span<const int64_t> dims = metadata.shape.GetDimensions();
  AppendBytes(key, static_cast<uint32_t>(dims.size()));
  key.append(reinterpret_cast<const char*>(dims.data()),
             dims.size() * sizeof(int64_t));
}

}  // namespace

// The state a LazyContext and its tensors share.
class LazyState : public std::enable_shared_from_this<LazyState> {
 public:
  LazyState(Runtime& runtime, LazyOptions options)
      : runtime_(runtime), options_(options) {}

  Runtime& runtime() const { return runtime_; }

  absl::StatusOr<Device*> FindDevice(absl::string_view name) {
    absl::StatusOr<RCReference<Device>> device =
        runtime_.host().device_manager().FindDevice(name);
    if (!device.ok()) return device.status();
    return device->get();  // The device manager keeps it.
  }

  std::shared_ptr<LazyValue> NewValue(TensorMetadata storage, Device* device,
                                      bool reduced) {
    return std::allocate_shared<LazyValue>(RecyclingAllocator<LazyValue>(),
                                           shared_from_this(),
                                           std::move(storage), device, reduced);
  }

  absl::StatusOr<LazyTensor> FromHost(DenseHostTensor tensor,
                                      absl::string_view device_name);
  // `reduced_result`: the precision of the results when the op changes it
  // (the casts of ToReducedPrecision and ToFullPrecision); else derived.
  absl::Status Record(absl::string_view op_name,
                      absl::Span<const LazyTensor> args, const OpAttrs& attrs,
                      size_t num_results, absl::Span<LazyTensor> results,
                      std::optional<bool> reduced_result = std::nullopt);
  absl::Status Barrier();
  // Runs the traces computing `values` (those not yet materialized).
  absl::Status Materialize(absl::Span<const std::shared_ptr<LazyValue>> values);
  absl::StatusOr<DenseHostTensor> ToHost(const LazyValue& value);
  // Waits for a materialized value's tensor; its error if it failed.
  absl::Status Await(const LazyValue& value);
  // A materialized value's handle (null while recorded), read under the
  // graph lock.
  RCReference<AsyncValue> HandleOf(const LazyValue& value);
  absl::StatusOr<LazyTensor> CopyTo(const std::shared_ptr<LazyValue>& source,
                                    absl::string_view device_name);

  LazyCacheStats stats() const {
    std::lock_guard<std::mutex> lock(cache_mu_);
    LazyCacheStats stats = stats_;
    stats.entries = static_cast<int64_t>(lru_.size());
    return stats;
  }

 private:
  // A trace found by walking the recorded graph: its key, arguments and
  // outputs; the Trace the compiler takes is made only on a miss.
  struct BuiltTrace {
    std::string device;
    std::string key;
    std::vector<TensorMetadata> parameters;
    std::vector<RCReference<AsyncValue>> arguments;
    // Valid while the graph lock is held (a materialization frees nodes).
    std::vector<const TraceNode*> nodes;
    std::vector<TraceRef> operands;  // Each node's, one after the other.
    std::vector<TraceRef> output_refs;
    std::vector<std::shared_ptr<LazyValue>> outputs;
  };
  static Trace ToTrace(const BuiltTrace& built);
  // The trace computing `outputs` (all on one device; one another thread
  // computed meanwhile is a parameter). Requires graph_mu_.
  BuiltTrace Build(std::vector<std::shared_ptr<LazyValue>> outputs);
  // Runs the trace computing `outputs`, all on one device. Takes graph_mu_
  // to build the trace and to materialize its outputs, not while it
  // compiles or starts.
  absl::Status RunTrace(std::vector<std::shared_ptr<LazyValue>> outputs);
  // Waits for a materialized value's TensorHandle (`what` names the caller
  // in errors); the handle's own error if it failed.
  absl::StatusOr<RCReference<AsyncValue>> AwaitHandle(const LazyValue& value,
                                                      absl::string_view what);
  // The cached program for `key`, or null; `started`: when the trace's
  // Build began (for LazyCacheStats::hit_time).
  std::shared_ptr<const TraceProgram> LookUp(const std::string& key,
                                             absl::Time started);
  // Compiles `trace` (replays it if the compiler cannot) and caches it.
  absl::StatusOr<std::shared_ptr<const TraceProgram>> Compile(
      const Trace& trace, const std::string& key);
  void AddPending(const std::shared_ptr<LazyValue>& value);

  Runtime& runtime_;
  const LazyOptions options_;

  // The graph lock: guards every published value's node and handle, and
  // the walk marks of Build. Held briefly: while a trace's key is built and
  // looked up, and while its outputs are materialized.
  std::mutex graph_mu_;
  uint64_t walks_ = 0;  // Guarded by graph_mu_.
  // Build's depth-first stack, kept for the next walk. Guarded by graph_mu_.
  struct WalkFrame {
    const TraceNode* node;
    size_t next_operand = 0;
  };
  std::vector<WalkFrame> walk_stack_;
  // The last trace's key and node count, to size the next one's.
  size_t last_key_size_ = 0;   // Guarded by graph_mu_.
  size_t last_num_nodes_ = 0;  // Guarded by graph_mu_.

  // User tensors recorded since the last barrier (weakly: a tensor the user
  // dropped is no output of the next trace).
  std::mutex pending_mu_;
  std::vector<std::weak_ptr<LazyValue>> pending_;  // Guarded.
  size_t prune_at_ = 64;                           // Guarded.
  size_t recorded_since_barrier_ = 0;              // Guarded.

  // The compiled traces, most recently used first.
  mutable std::mutex cache_mu_;
  using LruList =
      std::list<std::pair<std::string, std::shared_ptr<const TraceProgram>>>;
  LruList lru_;                                                // Guarded.
  absl::flat_hash_map<std::string, LruList::iterator> cache_;  // Guarded.
  LazyCacheStats stats_;                                       // Guarded.
};

absl::StatusOr<LazyTensor> LazyState::FromHost(DenseHostTensor tensor,
                                               absl::string_view device_name) {
  absl::StatusOr<Device*> device = FindDevice(device_name);
  if (!device.ok()) return device.status();
  if (tensor.dtype() == DType::kInvalid) {
    return absl::InvalidArgumentError("FromHost: the tensor is empty (moved?)");
  }
  TensorMetadata metadata = tensor.metadata();
  Device& host = runtime_.host().host_device();
  TensorHandle handle(
      &host, metadata,
      MakeAvailableAsyncValueRef<DenseHostTensor>(std::move(tensor)));
  if (*device != &host) {
    absl::StatusOr<ExecutionContext> exec_ctx =
        runtime_.CreateExecutionContext();
    if (!exec_ctx.ok()) return exec_ctx.status();
    handle = handle.TransferTo(*exec_ctx, **device);
  }
  std::shared_ptr<LazyValue> value =
      NewValue(std::move(metadata), *device, /*reduced=*/false);
  value->handle = MakeAvailableAsyncValueRef<TensorHandle>(std::move(handle));
  return LazyTensor(std::move(value));
}

void LazyState::AddPending(const std::shared_ptr<LazyValue>& value) {
  // Requires pending_mu_.
  pending_.push_back(value);
  if (pending_.size() < prune_at_) return;
  std::erase_if(pending_, [](const std::weak_ptr<LazyValue>& weak) {
    std::shared_ptr<LazyValue> value = weak.lock();
    return value == nullptr || value->users.load() == 0;
  });
  prune_at_ = std::max<size_t>(64, 2 * pending_.size());
}

absl::Status LazyState::Record(absl::string_view op_name,
                               absl::Span<const LazyTensor> args,
                               const OpAttrs& attrs, size_t num_results,
                               absl::Span<LazyTensor> results,
                               std::optional<bool> reduced_result) {
  // Callers name ops with literals: the per-thread call-site cache skips
  // hashing the name.
  const OpEntry* entry = OpRegistry::Global().FindByCallSite(op_name);
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown op ", op_name));
  }
  if (entry->metadata_fn == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        op_name,
        " has no shape function: a lazy op needs its result shapes when it "
        "is recorded"));
  }
  Device* device = &runtime_.host().host_device();
  const LazyValue* first = nullptr;  // Results go on its device.
  bool reduced = false;
  absl::InlinedVector<const TensorMetadata*, 4> arg_metadata;
  // Records come and go by the hundred per step of a loop: recycled.
  auto node = std::allocate_shared<TraceNode>(RecyclingAllocator<TraceNode>());
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_name, ": argument ", i, " is an invalid tensor"));
    }
    const std::shared_ptr<LazyValue>& value = args[i].value_;
    if (value->state.get() != this) {
      return absl::InvalidArgumentError(absl::StrCat(
          op_name, ": argument ", i, " belongs to another LazyContext"));
    }
    if (i == 0) {
      first = value.get();
      device = value->device;
      reduced = value->reduced;
    } else if (value->device != device) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_name, ": argument 0 is on ", device->name(),
                       " but argument ", i, " is on ", value->device->name(),
                       "; copy one to the other's device with CopyTo"));
    } else if (value->reduced != reduced) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_name, ": argument 0 is ",
                       reduced ? "reduced" : "full", " precision but argument ",
                       i, " is ", value->reduced ? "reduced" : "full",
                       " precision; convert one with ToReducedPrecision or "
                       "ToFullPrecision"));
    }
    arg_metadata.push_back(&value->metadata);
    node->operands.push_back(value);
  }
  const int device_type_id = first != nullptr
                                 ? first->device_type_id
                                 : OpRegistry::DeviceTypeId(device->type());
  if (entry->FindImplementation(device_type_id) == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(op_name, " has no implementation for ", device->name()));
  }
  node->results.resize(num_results);
  absl::Status status = entry->metadata_fn(
      ArgumentMetadata(arg_metadata), attrs, absl::MakeSpan(node->results));
  if (!status.ok()) return status;
  node->entry = entry;
  if (!attrs.empty()) {
    node->attrs = attrs.Freeze();
    node->attrs_key = AttrsKey(attrs);
  }
  // One reference to the context for all results (shared_from_this would
  // lock a weak reference per value).
  std::shared_ptr<LazyState> self =
      first != nullptr ? first->state : shared_from_this();
  for (size_t i = 0; i < num_results; ++i) {
    const bool result_reduced = reduced_result.value_or(
        reduced && !args.empty() && node->results[i].dtype == kReducedDType);
    std::shared_ptr<LazyValue> value =
        first != nullptr ? std::allocate_shared<LazyValue>(
                               RecyclingAllocator<LazyValue>(), self,
                               node->results[i], *first, result_reduced)
                         : NewValue(node->results[i], device, result_reduced);
    value->node = node;
    value->result_index = static_cast<int32_t>(i);
    results[i] = LazyTensor(std::move(value));
  }
  bool run_barrier = false;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    for (const LazyTensor& tensor : results) AddPending(tensor.value_);
    run_barrier = ++recorded_since_barrier_ >= options_.max_trace_ops;
  }
  // The trace is as long as allowed: it runs now, and the next op starts
  // another. A compilation error reaches these tensors' readers.
  if (run_barrier) (void)Barrier();
  return absl::OkStatus();
}

absl::Status LazyState::Barrier() {
  std::vector<std::weak_ptr<LazyValue>> pending;
  {
    std::lock_guard<std::mutex> lock(pending_mu_);
    pending.swap(pending_);
    prune_at_ = 64;
    recorded_since_barrier_ = 0;
  }
  std::vector<std::shared_ptr<LazyValue>> values;
  for (const std::weak_ptr<LazyValue>& weak : pending) {
    std::shared_ptr<LazyValue> value = weak.lock();
    if (value != nullptr && value->users.load(std::memory_order_acquire) > 0) {
      values.push_back(std::move(value));
    }
  }
  return Materialize(values);
}

absl::Status LazyState::Materialize(
    absl::Span<const std::shared_ptr<LazyValue>> values) {
  // One trace per device, in the order the values came.
  std::vector<std::pair<Device*, std::vector<std::shared_ptr<LazyValue>>>>
      by_device;
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    for (const std::shared_ptr<LazyValue>& value : values) {
      if (value->handle) continue;
      auto it = std::find_if(
          by_device.begin(), by_device.end(),
          [&](const auto& group) { return group.first == value->device; });
      if (it == by_device.end()) {
        by_device.emplace_back(value->device,
                               std::vector<std::shared_ptr<LazyValue>>());
        it = by_device.end() - 1;
      }
      it->second.push_back(value);
    }
  }
  absl::Status status;
  for (auto& [device, outputs] : by_device) {
    status.Update(RunTrace(std::move(outputs)));
  }
  return status;
}

LazyState::BuiltTrace LazyState::Build(
    std::vector<std::shared_ptr<LazyValue>> outputs) {
  BuiltTrace built;
  built.device = outputs.front()->device->name();
  // Sized like the last trace (a loop's traces repeat).
  built.key.reserve(last_key_size_);
  built.nodes.reserve(last_num_nodes_);
  built.operands.reserve(2 * built.nodes.capacity());
  std::string& key = built.key;
  key.append(built.device);
  key.push_back('\0');

  // Values and nodes carry the walk's marks: no hash maps and, under the
  // graph lock, no reference counting (this walk runs on every barrier,
  // cache hits included).
  const uint64_t walk = ++walks_;
  // Iterative depth-first order (a trace may be thousands of ops long), on
  // a stack kept between walks (no allocation on a hit).
  std::vector<WalkFrame>& stack = walk_stack_;
  using Frame = WalkFrame;
  stack.clear();
  // The value's ref if it is known or a parameter; else pushes its node.
  auto resolve = [&](LazyValue& value) -> std::optional<TraceRef> {
    if (value.walk == walk) return value.walk_ref;
    if (value.handle) {
      value.walk_ref = TraceRef{TraceRef::kParameter,
                                static_cast<int32_t>(built.parameters.size())};
      built.parameters.push_back(value.metadata);
      built.arguments.push_back(value.handle);
      key.push_back('P');
      AppendMetadataKey(key, value.metadata);
    } else if (value.node->walk == walk) {
      value.walk_ref = TraceRef{value.node->walk_index, value.result_index};
    } else {
      stack.push_back(Frame{value.node.get()});
      return std::nullopt;
    }
    value.walk = walk;
    return value.walk_ref;
  };
  for (const std::shared_ptr<LazyValue>& output : outputs) {
    std::optional<TraceRef> ref;
    while (!(ref = resolve(*output))) {
      while (!stack.empty()) {
        Frame& frame = stack.back();
        if (frame.next_operand < frame.node->operands.size()) {
          if (resolve(*frame.node->operands[frame.next_operand])) {
            ++stack.back().next_operand;  // `frame` may have moved.
          }
          continue;
        }
        const TraceNode& node = *frame.node;
        // The op by its registry entry (entries live as long as the
        // process; one name has one entry until it is registered again).
        // With both counts, a key decodes one way only (variadic ops:
        // the same op with another operand count is another trace).
        struct OpKey {
          uint64_t entry;
          uint32_t attrs_size;
          uint16_t num_results;  // kManyCounts: both counts follow.
          uint16_t num_operands;
        };
        static_assert(sizeof(OpKey) == 16, "no padding in keys");
        constexpr uint16_t kManyCounts = 0xFFFF;
        const size_t num_results = node.results.size();
        const size_t num_operands = node.operands.size();
        const bool many = num_results >= kManyCounts ||
                          num_operands >= kManyCounts;
        key.push_back('O');
        AppendBytes(
            key,
            OpKey{reinterpret_cast<uintptr_t>(node.entry),
                  static_cast<uint32_t>(node.attrs_key.size()),
                  many ? kManyCounts : static_cast<uint16_t>(num_results),
                  many ? kManyCounts : static_cast<uint16_t>(num_operands)});
        if (ABSL_PREDICT_FALSE(many)) {
          AppendBytes(key, static_cast<uint64_t>(num_results));
          AppendBytes(key, static_cast<uint64_t>(num_operands));
        }
        key.append(node.attrs_key);
        for (const std::shared_ptr<LazyValue>& operand : node.operands) {
          // Resolved just before: a parameter of this walk or a node of it.
          TraceRef operand_ref = *resolve(*operand);
          built.operands.push_back(operand_ref);
          AppendBytes(key, operand_ref);
        }
        node.walk = walk;
        node.walk_index = static_cast<int32_t>(built.nodes.size());
        built.nodes.push_back(&node);
        stack.pop_back();
      }
    }
    built.output_refs.push_back(*ref);
    built.outputs.push_back(output);
    key.push_back('R');
    AppendBytes(key, *ref);
  }
  last_key_size_ = key.size();
  last_num_nodes_ = built.nodes.size();
  return built;
}

Trace LazyState::ToTrace(const BuiltTrace& built) {
  Trace trace;
  trace.device = built.device;
  trace.parameters = built.parameters;
  trace.outputs = built.output_refs;
  size_t next_operand = 0;
  for (const TraceNode* node : built.nodes) {
    TraceOp op;
    op.op_name = node->entry->name;
    op.attrs = node->attrs;
    op.results.assign(node->results.begin(), node->results.end());
    op.operands.assign(
        built.operands.begin() + next_operand,
        built.operands.begin() + next_operand + node->operands.size());
    next_operand += node->operands.size();
    trace.ops.push_back(std::move(op));
  }
  return trace;
}

std::shared_ptr<const TraceProgram> LazyState::LookUp(const std::string& key,
                                                      absl::Time started) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  auto it = cache_.find(key);
  if (it == cache_.end()) return nullptr;
  lru_.splice(lru_.begin(), lru_, it->second);
  ++stats_.hits;
  stats_.hit_time += absl::Now() - started;
  // A mark in the Chrome trace (a scope of no length).
  tracing::ScopedTrace hit(tracing::Level::kDefault, "LazyCacheHit");
  return it->second->second;
}

absl::StatusOr<std::shared_ptr<const TraceProgram>> LazyState::Compile(
    const Trace& trace, const std::string& key) {
  // Compiled without a lock: hits on other traces go on meanwhile. Two
  // threads missing on one trace both compile; the first to finish is kept.
  tracing::ScopedTrace scope(tracing::Level::kDefault, [&] {
    return absl::StrCat("LazyCompile#ops=", trace.ops.size(), "#");
  });
  const absl::Time start = absl::Now();
  const TraceCompilerFn compiler =
      options_.compile ? GetTraceCompiler() : nullptr;
  absl::StatusOr<std::shared_ptr<const TraceProgram>> program =
      TraceProgram::Create(trace, runtime_, compiler);
  // What the compiler cannot take (an attribute without a compile-time
  // form, a compiler bug) still runs: its ops replayed, unfused.
  bool fell_back = false;
  if (!program.ok() && compiler != nullptr) {
    program = TraceProgram::Create(trace, runtime_, nullptr);
    fell_back = program.ok();
  }
  const absl::Duration elapsed = absl::Now() - start;
  std::lock_guard<std::mutex> lock(cache_mu_);
  ++stats_.misses;
  if (fell_back) ++stats_.replayed;
  stats_.compile_time += elapsed;
  if (!program.ok()) return program.status();
  std::shared_ptr<const TraceProgram> compiled = *std::move(program);
  if (auto it = cache_.find(key); it != cache_.end()) {
    return it->second->second;
  }
  lru_.emplace_front(key, compiled);
  cache_.emplace(key, lru_.begin());
  while (lru_.size() > options_.cache_capacity) {
    cache_.erase(lru_.back().first);
    lru_.pop_back();
    ++stats_.evictions;
  }
  return compiled;
}

absl::Status LazyState::RunTrace(
    std::vector<std::shared_ptr<LazyValue>> outputs) {
  const absl::Time started = absl::Now();
  BuiltTrace built;
  std::shared_ptr<const TraceProgram> cached;
  std::optional<Trace> trace;
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    built = Build(std::move(outputs));
    cached = LookUp(built.key, started);
    // The nodes are read while the graph lock holds them.
    if (cached == nullptr) trace = ToTrace(built);
  }
  absl::StatusOr<std::shared_ptr<const TraceProgram>> program =
      cached != nullptr ? std::move(cached) : Compile(*trace, built.key);
  std::vector<RCReference<AsyncValue>> results;
  if (program.ok()) {
    std::vector<AsyncValue*> arguments;
    for (const RCReference<AsyncValue>& argument : built.arguments) {
      arguments.push_back(argument.get());
    }
    results = (*program)->Run(runtime_, arguments);
  } else {
    RCReference<AsyncValue> error = MakeErrorAsyncValueRef(program.status());
    results.assign(built.outputs.size(), error);
  }
  // The recorded graphs behind the outputs, freed after the lock.
  std::vector<std::shared_ptr<const TraceNode>> recorded;
  std::lock_guard<std::mutex> lock(graph_mu_);
  for (size_t i = 0; i < built.outputs.size(); ++i) {
    LazyValue& value = *built.outputs[i];
    if (value.handle) continue;  // Another thread's trace computed it.
    value.handle = std::move(results[i]);
    recorded.push_back(std::move(value.node));
  }
  return program.status();
}

RCReference<AsyncValue> LazyState::HandleOf(const LazyValue& value) {
  std::lock_guard<std::mutex> lock(graph_mu_);
  return value.handle;
}

absl::StatusOr<RCReference<AsyncValue>> LazyState::AwaitHandle(
    const LazyValue& value, absl::string_view what) {
  RCReference<AsyncValue> handle_value = HandleOf(value);
  if (!handle_value) {
    return absl::InternalError(
        absl::StrCat(what, ": the value was not materialized"));
  }
  runtime_.Await(absl::MakeConstSpan(&handle_value, 1));
  if (const absl::Status* error = handle_value->GetErrorIfPresent()) {
    return *error;
  }
  return handle_value;
}

absl::Status LazyState::Await(const LazyValue& value) {
  absl::StatusOr<RCReference<AsyncValue>> handle_value =
      AwaitHandle(value, "Await");
  if (!handle_value.ok()) return handle_value.status();
  RCReference<AsyncValue> tensor =
      (*handle_value)->get<TensorHandle>().CopyTensorRef();
  runtime_.Await(absl::MakeConstSpan(&tensor, 1));
  if (const absl::Status* error = tensor->GetErrorIfPresent()) return *error;
  return absl::OkStatus();
}

absl::StatusOr<DenseHostTensor> LazyState::ToHost(const LazyValue& value) {
  absl::StatusOr<RCReference<AsyncValue>> handle_value =
      AwaitHandle(value, "ToHost");
  if (!handle_value.ok()) return handle_value.status();
  absl::StatusOr<ExecutionContext> exec_ctx = runtime_.CreateExecutionContext();
  if (!exec_ctx.ok()) return exec_ctx.status();
  Device& host = runtime_.host().host_device();
  const TensorHandle& handle = (*handle_value)->get<TensorHandle>();
  TensorHandle on_host = handle.device() == &host
                             ? handle.CopyRef()
                             : handle.TransferTo(*exec_ctx, host);
  if (value.reduced) {
    OpAttrs attrs;
    attrs.Set("to", DType::kF32);
    TensorHandle widened;
    runtime_.core_runtime().Execute(*exec_ctx, "nn.cast",
                                    runtime_.core_runtime().GetOpHandler("cpu"),
                                    absl::MakeSpan(&on_host, 1), attrs.Freeze(),
                                    absl::MakeSpan(&widened, 1), nullptr);
    on_host = std::move(widened);
  }
  const Tensor* tensor = runtime_.core_runtime().Await(on_host);
  if (tensor == nullptr) {
    const absl::Status* error = on_host.GetErrorIfPresent();
    return error ? *error : absl::InternalError("ToHost: no tensor");
  }
  RCReference<AsyncValue> dense =
      ConvertTensor(*tensor, host, host, DenseHostTensorType(), *exec_ctx);
  runtime_.Await(absl::MakeConstSpan(&dense, 1));
  if (const absl::Status* error = dense->GetErrorIfPresent()) return *error;
  const auto& source = dense->get<DenseHostTensor>();
  // A copy: the caller may write it, the lazy value stays as it was.
  std::optional<DenseHostTensor> copy = DenseHostTensor::CreateUninitialized(
      source.metadata(), *runtime_.host().allocator());
  if (!copy) return absl::ResourceExhaustedError("ToHost: out of memory");
  if (source.DataSizeInBytes() > 0) {
    std::memcpy(copy->data(), source.data(), source.DataSizeInBytes());
  }
  return *std::move(copy);
}

absl::StatusOr<LazyTensor> LazyState::CopyTo(
    const std::shared_ptr<LazyValue>& original, absl::string_view device_name) {
  absl::StatusOr<Device*> device = FindDevice(device_name);
  if (!device.ok()) return device.status();
  if (*device == original->device) return LazyTensor(original);
  absl::Status status = Materialize(absl::MakeConstSpan(&original, 1));
  if (!status.ok()) return status;
  absl::StatusOr<ExecutionContext> exec_ctx = runtime_.CreateExecutionContext();
  if (!exec_ctx.ok()) return exec_ctx.status();
  RCReference<AsyncValue> source = HandleOf(*original);
  std::shared_ptr<LazyValue> value =
      NewValue(original->metadata, *device, original->reduced);
  // The copy starts once the source is computed; its errors travel along.
  RCReference<AsyncValue> copied = MakeIndirectAsyncValue();
  AsyncValue* raw = source.get();
  raw->AndThen([source = std::move(source), copied, target = *device,
                exec_ctx = *std::move(exec_ctx)]() {
    auto* indirect = static_cast<IndirectAsyncValue*>(copied.get());
    if (source->IsError()) return indirect->ForwardTo(source);
    indirect->ForwardTo(MakeAvailableAsyncValueRef<TensorHandle>(
        source->get<TensorHandle>().TransferTo(exec_ctx, *target)));
  });
  value->handle = std::move(copied);
  return LazyTensor(std::move(value));
}

}  // namespace internal

using internal::LazyState;
using internal::LazyValue;

LazyTensor::LazyTensor(std::shared_ptr<LazyValue> value)
    : value_(std::move(value)) {
  if (value_) value_->users.fetch_add(1, std::memory_order_relaxed);
}

LazyTensor::LazyTensor(const LazyTensor& other) : LazyTensor(other.value_) {}

LazyTensor& LazyTensor::operator=(const LazyTensor& other) {
  if (this != &other) *this = LazyTensor(other.value_);
  return *this;
}

LazyTensor& LazyTensor::operator=(LazyTensor&& other) noexcept {
  if (this != &other) {
    if (value_) value_->users.fetch_sub(1, std::memory_order_release);
    value_ = std::move(other.value_);
  }
  return *this;
}

LazyTensor::~LazyTensor() {
  if (value_) value_->users.fetch_sub(1, std::memory_order_release);
}

DType LazyTensor::dtype() const {
  return value_->reduced ? DType::kF32 : value_->metadata.dtype;
}

const TensorShape& LazyTensor::shape() const { return value_->metadata.shape; }

const std::string& LazyTensor::device() const { return value_->device->name(); }

bool LazyTensor::IsReducedPrecision() const { return value_->reduced; }

bool LazyTensor::IsMaterialized() const {
  return value_->state->HandleOf(*value_) != nullptr;
}

absl::StatusOr<DenseHostTensor> LazyTensor::ToHost() const {
  if (!valid()) return absl::InvalidArgumentError("ToHost: invalid tensor");
  absl::Status status =
      value_->state->Materialize(absl::MakeConstSpan(&value_, 1));
  if (!status.ok()) return status;
  return value_->state->ToHost(*value_);
}

absl::Status LazyTensor::Await() const {
  if (!valid()) return absl::InvalidArgumentError("Await: invalid tensor");
  absl::Status status =
      value_->state->Materialize(absl::MakeConstSpan(&value_, 1));
  if (!status.ok()) return status;
  return value_->state->Await(*value_);
}

absl::StatusOr<LazyTensor> LazyTensor::CopyTo(absl::string_view device) const {
  if (!valid()) return absl::InvalidArgumentError("CopyTo: invalid tensor");
  return value_->state->CopyTo(value_, device);
}

absl::StatusOr<LazyTensor> LazyTensor::ToReducedPrecision() const {
  if (!valid()) {
    return absl::InvalidArgumentError("ToReducedPrecision: invalid tensor");
  }
  if (IsReducedPrecision()) return *this;
  if (dtype() != DType::kF32) {
    return absl::InvalidArgumentError(
        absl::StrCat("ToReducedPrecision: only f32 tensors have a reduced "
                     "precision, not ",
                     DTypeName(dtype())));
  }
  OpAttrs attrs;
  attrs.Set("to", internal::kReducedDType);
  LazyTensor cast;
  absl::Status status = value_->state->Record(
      "nn.cast", {*this}, attrs, 1, absl::MakeSpan(&cast, 1), /*reduced=*/true);
  if (!status.ok()) return status;
  return cast;
}

absl::StatusOr<LazyTensor> LazyTensor::ToFullPrecision() const {
  if (!valid()) {
    return absl::InvalidArgumentError("ToFullPrecision: invalid tensor");
  }
  if (!IsReducedPrecision()) return *this;
  OpAttrs attrs;
  attrs.Set("to", DType::kF32);
  LazyTensor cast;
  absl::Status status =
      value_->state->Record("nn.cast", {*this}, attrs, 1,
                            absl::MakeSpan(&cast, 1), /*reduced=*/false);
  if (!status.ok()) return status;
  return cast;
}

absl::StatusOr<std::unique_ptr<LazyContext>> LazyContext::Create(
    Runtime& runtime, LazyOptions options) {
  if (options.max_trace_ops == 0 || options.cache_capacity == 0) {
    return absl::InvalidArgumentError(
        "LazyOptions: max_trace_ops and cache_capacity must be positive");
  }
  return std::unique_ptr<LazyContext>(
      new LazyContext(std::make_shared<LazyState>(runtime, options)));
}

LazyContext::~LazyContext() = default;

absl::StatusOr<LazyTensor> LazyContext::FromHost(DenseHostTensor tensor,
                                                 absl::string_view device) {
  return state_->FromHost(std::move(tensor), device);
}

absl::StatusOr<std::vector<LazyTensor>> LazyContext::Execute(
    absl::string_view op_name, absl::Span<const LazyTensor> args,
    const OpAttrs& attrs, size_t num_results) {
  std::vector<LazyTensor> results(num_results);
  absl::Status status = state_->Record(op_name, args, attrs, num_results,
                                       absl::MakeSpan(results));
  if (!status.ok()) return status;
  return results;
}

absl::StatusOr<LazyTensor> LazyContext::Call(absl::string_view op_name,
                                             absl::Span<const LazyTensor> args,
                                             const OpAttrs& attrs) {
  LazyTensor result;
  absl::Status status =
      state_->Record(op_name, args, attrs, 1, absl::MakeSpan(&result, 1));
  if (!status.ok()) return status;
  return result;
}

absl::Status LazyContext::Barrier() { return state_->Barrier(); }

LazyCacheStats LazyContext::cache_stats() const { return state_->stats(); }

Runtime& LazyContext::runtime() const { return state_->runtime(); }

namespace {

template <typename Fn>
absl::StatusOr<std::vector<LazyTensor>> ForEach(
    absl::Span<const LazyTensor> tensors, Fn fn) {
  std::vector<LazyTensor> converted;
  converted.reserve(tensors.size());
  for (const LazyTensor& tensor : tensors) {
    absl::StatusOr<LazyTensor> result = fn(tensor);
    if (!result.ok()) return result.status();
    converted.push_back(*std::move(result));
  }
  return converted;
}

}  // namespace

absl::StatusOr<std::vector<LazyTensor>> CopyTo(
    absl::Span<const LazyTensor> tensors, absl::string_view device) {
  return ForEach(
      tensors, [&](const LazyTensor& tensor) { return tensor.CopyTo(device); });
}

absl::StatusOr<std::vector<LazyTensor>> ToReducedPrecision(
    absl::Span<const LazyTensor> tensors) {
  return ForEach(tensors, [](const LazyTensor& tensor) {
    return tensor.ToReducedPrecision();
  });
}

absl::StatusOr<std::vector<LazyTensor>> ToFullPrecision(
    absl::Span<const LazyTensor> tensors) {
  return ForEach(tensors, [](const LazyTensor& tensor) {
    return tensor.ToFullPrecision();
  });
}

}  // namespace asyncrt::lazy
