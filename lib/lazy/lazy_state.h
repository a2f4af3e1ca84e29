// Internals of asyncrt::lazy (lazy_tensor.h): recorded values and ops, the
// tape and its template, and the state a LazyContext and its tensors share.
//
// Each thread's recorded ops go on its tape (one per thread and context), in
// order; its barrier takes the tape and runs the ops whose results someone
// still refers to. The tape owns its
// ops and holds a reference to each value they make and to each value from
// outside it that they read, so recording takes no reference per operand.
// A loop records the same tape every step: each tape is compared, op by op
// as it is recorded, with its thread's last one (its template). An op that
// matches takes its result shapes from the template instead of its shape
// function, and a tape that matched throughout runs the template's program
// without building a cache key.
//
// Thread-safety: as each member's comment says; the locks are LazyState's.
#ifndef ASYNCRT_LIB_LAZY_LAZY_STATE_H_
#define ASYNCRT_LIB_LAZY_LAZY_STATE_H_

#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/inlined_vector.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/lazy/lazy_tensor.h"
#include "asyncrt/lazy/trace.h"
#include "lib/lazy/recycling_allocator.h"
#include "lib/lazy/trace_program.h"

namespace asyncrt::lazy::internal {

// The storage dtype of reduced-precision tensors (every device takes bf16;
// its exponent range is f32's, so no value overflows when narrowed).
constexpr DType kReducedDType = DType::kBF16;

struct TraceNode;

// One value: recorded (its node and result index) until a trace computes
// it, then materialized (an async value holding its TensorHandle, possibly
// still being computed or an error).
//
// References (LazyValueRefs::refs): LazyTensors, the tape that recorded it
// (until that tape is released) and later tapes whose ops read it.
struct LazyValue : LazyValueRefs {
  // A recorded value gets its tape, its op's index there and its node
  // here (each field written once: recording is store-bound).
  LazyValue(LazyState* state, const TensorMetadata& storage, Device* device,
            int device_type_id, bool reduced, uint64_t tape = 0,
            int32_t tape_op = -1, TraceNode* node = nullptr,
            int32_t result_index = 0)
      : state(state),
        metadata(storage),
        device(device),
        device_type_id(device_type_id),
        reduced(reduced),
        tape(tape),
        tape_op(tape_op),
        node(node),
        result_index(result_index) {}

  LazyState* const state;
  const TensorMetadata metadata;  // As stored: bf16 when reduced.
  Device* const device;           // Held by the runtime's device manager.
  const int device_type_id;       // OpRegistry::DeviceTypeId of its type.
  const bool reduced;
  // Whether it holds a reference to `state`: values made outside tapes,
  // and tape values that outlive their tape (one atomic add per survivor,
  // not per recorded value).
  bool holds_state = false;

  // Written while it is recorded, before it is published: its tape and the
  // index of its op there (0 and -1 for values made outside tapes).
  uint64_t tape;
  int32_t tape_op;
  // The last tape that took a reference to it as an operand from outside
  // (each tape takes one; a tape of another thread in between makes it
  // take another, released like the first).
  std::atomic<uint64_t> referenced_by_tape{0};

  // Set before the value is published; after, guarded by the context's
  // graph lock (LazyState::graph_mu_), which every materialization and
  // tape release takes. A value reachable from a live value or node has a
  // handle or a node.
  TraceNode* node;  // Owned by its tape; null once released.
  int32_t result_index;
  RCReference<AsyncValue> handle;  // Of a TensorHandle, once materialized.

  // Scratch of the walk that builds a trace (LazyState::Build, under the
  // graph lock): the walk that last placed this value, and where.
  uint64_t walk = 0;
  TraceRef walk_ref;
};

// One recorded op, owned by its tape; immutable once on the tape.
struct TraceNode {
  const OpEntry* entry;  // Its name is the op's; entries live forever.
  OpAttrsRef attrs;
  std::string attrs_key;  // Exact bytes of the attributes, for cache keys.
  // Values of the same tape, or held by the tape's references.
  absl::InlinedVector<LazyValue*, 2> operands;
  absl::InlinedVector<LazyValue*, 1> results;
  // Walk scratch, as LazyValue's (under the graph lock): the walk that
  // placed this node, and where.
  mutable uint64_t walk = 0;
  mutable int32_t walk_index = 0;
};

// What a tape looked like when its trace last ran through the full path:
// the next tape is compared with it op by op. Immutable once made.
struct Template {
  struct Op {
    const OpEntry* entry;
    std::string attrs_key;
    // Results of earlier ops of the tape ({op, index}), or parameters
    // ({kParameter, index into `parameters`}).
    absl::InlinedVector<TraceRef, 2> operands;
    absl::InlinedVector<TensorMetadata, 1> results;
  };
  Device* device;
  std::vector<Op> ops;
  // The values from outside the tape its ops read, by first use.
  std::vector<TensorMetadata> parameters;
  // The values the trace computed (in tape order), and the program that
  // computes them from its parameters: parameter i of the program is
  // parameters[program_parameters[i]] of the tape.
  std::vector<TraceRef> outputs;
  std::vector<int32_t> program_parameters;
  std::shared_ptr<const TraceProgram> program;
};

// The ops one thread recorded on a context since its last barrier (its
// recorder's, then the barrier's that took it).
struct Tape {
  uint64_t id = 0;
  std::vector<TraceNode*> nodes;
  std::vector<LazyValue*> externals;  // A reference to each.
  // The template it is compared with, taken at its first op; `matches`:
  // every op so far matched the template's op at the same index; `bound`:
  // the template's parameters, as the ops met them.
  std::shared_ptr<const Template> expected;
  bool matches = true;
  std::vector<LazyValue*> bound;
};

// What one thread records on one context: its tape, and the template its
// next tape is compared with (its last trace's, so each thread's loop body
// repeats on its own). Touched only by its thread, and by the context's
// destruction.
struct Recorder {
  Recorder() = default;
  Recorder(const Recorder&) = delete;
  Recorder& operator=(const Recorder&) = delete;
  ~Recorder() {
    for (TraceNode* node : free_nodes) delete node;
  }

  // Nodes are reused, not freed: a loop records as many each step.
  TraceNode* NewNode() {
    if (free_nodes.empty()) return new TraceNode;
    TraceNode* node = free_nodes.back();
    free_nodes.pop_back();
    return node;
  }
  void FreeNode(TraceNode* node) {
    node->operands.clear();
    node->results.clear();
    if (!node->attrs_key.empty()) {  // Attributes were set.
      node->attrs = OpAttrsRef();
      node->attrs_key.clear();
    }
    free_nodes.push_back(node);
  }

  Tape tape;
  Tape spare;  // Empty; swapped in at a barrier (keeps vector capacity).
  std::shared_ptr<const Template> last;
  std::vector<TraceNode*> free_nodes;
};

// Records come and go by the hundred per step of a loop: recycled.
// `storage` by reference: copied once, straight into the value.
template <typename... Recorded>
inline LazyValue* AllocateValue(LazyState* state, const TensorMetadata& storage,
                                Device* device, int device_type_id,
                                bool reduced, Recorded... recorded) {
  RecyclingAllocator<LazyValue> allocator;
  LazyValue* value = allocator.allocate(1);
  return new (value)
      LazyValue(state, storage, device, device_type_id, reduced, recorded...);
}

// The state a LazyContext and its tensors share; freed with its last
// reference (the context's, and one per value holding it).
class LazyState {
 public:
  LazyState(Runtime& runtime, LazyOptions options)
      : runtime_(runtime), options_(options) {}

  void Ref() { refs_.fetch_add(1, std::memory_order_relaxed); }
  void Unref() {
    if (refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) delete this;
  }

  Runtime& runtime() const { return runtime_; }

  absl::StatusOr<Device*> FindDevice(absl::string_view name) {
    absl::StatusOr<RCReference<Device>> device =
        runtime_.host().device_manager().FindDevice(name);
    if (!device.ok()) return device.status();
    return device->get();  // The device manager keeps it.
  }

  // A value made outside tapes (FromHost, CopyTo): it holds the state.
  LazyValue* NewValue(const TensorMetadata& storage, Device* device,
                      bool reduced) {
    LazyValue* value =
        AllocateValue(this, storage, device,
                      OpRegistry::DeviceTypeId(device->type()), reduced);
    value->holds_state = true;
    Ref();
    return value;
  }

  absl::StatusOr<LazyTensor> FromHost(DenseHostTensor tensor,
                                      absl::string_view device_name);
  // `reduced_result`: the precision of the results when the op changes it
  // (the casts of ToReducedPrecision and ToFullPrecision); else derived.
  absl::Status Record(absl::string_view op_name, const LazyArgs& args,
                      const OpAttrs& attrs, size_t num_results,
                      absl::Span<LazyTensor> results,
                      std::optional<bool> reduced_result = std::nullopt);
  // Runs the calling thread's tape.
  absl::Status Barrier();
  // Runs every thread's tape (the context is going away: no thread records
  // any more).
  void Shutdown();
  // Runs the traces computing `values` (those not yet materialized); the
  // caller keeps them alive.
  absl::Status Materialize(absl::Span<LazyValue* const> values);
  absl::StatusOr<DenseHostTensor> ToHost(const LazyValue& value);
  // Waits for a materialized value's tensor; its error if it failed.
  absl::Status Await(const LazyValue& value);
  // A materialized value's handle (null while recorded), read under the
  // graph lock.
  RCReference<AsyncValue> HandleOf(const LazyValue& value);
  absl::StatusOr<LazyTensor> CopyTo(LazyValue* source,
                                    absl::string_view device_name);

  LazyCacheStats stats() const {
    std::lock_guard<std::mutex> lock(cache_mu_);
    LazyCacheStats stats = stats_;
    stats.entries = static_cast<int64_t>(lru_.size());
    return stats;
  }

 private:
  // Shutdown released every tape: only ops recorded since (racing the
  // destruction) can be left, their values referred to by no one else.
  ~LazyState() {
    for (auto& [thread, recorder] : recorders_) {
      for (TraceNode* node : recorder->tape.nodes) {
        for (LazyValue* value : node->results) {
          DropTapeReference(value, /*adopt=*/nullptr);
        }
        recorder->FreeNode(node);
      }
      for (LazyValue* value : recorder->tape.externals) UnrefValue(value);
    }
  }

  // A trace found by walking the recorded graph: its key, arguments and
  // outputs; the Trace the compiler takes is made only on a miss.
  struct BuiltTrace {
    std::string device;
    std::string key;
    std::vector<TensorMetadata> parameters;
    std::vector<LazyValue*> parameter_values;
    std::vector<RCReference<AsyncValue>> arguments;
    // Valid while the graph lock is held (a tape release frees nodes).
    std::vector<const TraceNode*> nodes;
    std::vector<TraceRef> operands;  // Each node's, one after the other.
    std::vector<TraceRef> output_refs;
    std::vector<LazyValue*> outputs;
  };
  static Trace ToTrace(const BuiltTrace& built);
  // The trace computing `outputs` (all on one device; one another thread
  // computed meanwhile is a parameter). Requires graph_mu_.
  BuiltTrace Build(absl::Span<LazyValue* const> outputs);
  // Runs the trace computing `outputs` (kept alive by the caller), all on
  // one device. Takes graph_mu_ to build the trace and to materialize its
  // outputs, not while it compiles or starts. With `tape` (the tape the
  // outputs were recorded on, whose trace this is): makes the tape's
  // template, for the next tape to match.
  absl::Status RunTrace(absl::Span<LazyValue* const> outputs,
                        const Tape* tape = nullptr,
                        Recorder* recorder = nullptr);
  // The template of `tape` whose trace `built` is (with its `program`;
  // every op of the trace on the tape), or null if a parameter of the
  // trace is a value of the tape. Requires graph_mu_; reads the tape's
  // nodes, not the trace's.
  static std::shared_ptr<const Template> MakeTemplate(
      const Tape& tape, const BuiltTrace& built,
      std::shared_ptr<const TraceProgram> program);
  // Runs the ops of `tape` (taken from `recorder`) that values still
  // referred to need, then releases it.
  absl::Status RunTape(Tape* tape, Recorder& recorder);
  // The program and arguments of `tape` if it matched its template
  // throughout and computes the same outputs; nullopt otherwise. Requires
  // graph_mu_.
  struct Matched {
    std::shared_ptr<const TraceProgram> program;
    // Borrowed from the bound values.
    absl::InlinedVector<AsyncValue*, 8> arguments;
  };
  std::optional<Matched> MatchTape(const Tape& tape,
                                   absl::Span<LazyValue* const> outputs);
  // Drops a tape's reference to one of its values. A value that survives
  // holds `adopt` (if not null).
  static void DropTapeReference(LazyValue* value, LazyState* adopt);
  // Drops the tape's references (values the program still refers to take
  // one to the state first; values forget their nodes) and recycles its
  // nodes. Requires graph_mu_ (values' nodes are guarded by it).
  void ReleaseTape(Tape* tape, Recorder& recorder);
  // The error of recording `op_name` (null `entry`: not registered) on
  // `args`, which the fast checks of Record refused. Out of line: recording
  // is a hot path, its errors are not.
  [[gnu::noinline, gnu::cold]] absl::Status RecordError(
      absl::string_view op_name, const OpEntry* entry,
      const LazyArgs& args) const;
  // `values` by device, in the order they came (one trace per device).
  static std::vector<std::pair<Device*, std::vector<LazyValue*>>> GroupByDevice(
      absl::Span<LazyValue* const> values);
  // The calling thread's recorder (made at its first use).
  Recorder& ThisThreadsRecorder();
  // Takes the recorder's tape (leaving an empty one) and runs it.
  absl::Status RunRecorded(Recorder& recorder);
  // The template op `node` (recorded with `num_results` results) matches
  // at the next index of the recorder's tape, binding the template's
  // parameters it reads; null (and the tape stops matching) if none does.
  static const Template::Op* Match(Recorder& recorder, const TraceNode& node,
                                   size_t num_results);
  // Appends `node` (its results made, knowing `tape` and their index on
  // it) to `tape`, taking a reference to each operand from outside the
  // tape. Returns whether the tape reached the size limit.
  bool Append(Tape& tape, TraceNode* node);

  // Waits for a materialized value's TensorHandle (`what` names the caller
  // in errors); the handle's own error if it failed.
  absl::StatusOr<RCReference<AsyncValue>> AwaitHandle(const LazyValue& value,
                                                      absl::string_view what);
  // The cached program for `key`, or null; `started`: when the trace's
  // Build began (for LazyCacheStats::hit_time).
  std::shared_ptr<const TraceProgram> LookUp(const std::string& key,
                                             absl::Time started);
  // `repeat`: found by matching the template (LazyCacheStats::repeats).
  void CountHit(absl::Time started, bool repeat = false);
  // Compiles `trace` (replays it if the compiler cannot) and caches it.
  absl::StatusOr<std::shared_ptr<const TraceProgram>> Compile(
      const Trace& trace, const std::string& key);

  std::atomic<int64_t> refs_{1};
  Runtime& runtime_;
  const LazyOptions options_;

  // Unique over the process (thread-local caches of recorders are keyed by
  // it, never by address).
  const uint64_t id_ = NextId();
  static uint64_t NextId() {
    static std::atomic<uint64_t> ids{0};
    return ids.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  std::atomic<uint64_t> tape_ids_{0};
  // The recorders, by thread. Taken when a thread first records or
  // barriers here, and at shutdown.
  std::mutex recorders_mu_;
  absl::flat_hash_map<std::thread::id, std::unique_ptr<Recorder>>
      recorders_;  // Guarded.

  // The graph lock: guards every published value's node and handle, and
  // the walk marks of Build. Held briefly: while a trace's key is built and
  // looked up, while its outputs are materialized and while a tape's
  // values forget their nodes.
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

  // The compiled traces, most recently used first.
  mutable std::mutex cache_mu_;
  using LruList =
      std::list<std::pair<std::string, std::shared_ptr<const TraceProgram>>>;
  LruList lru_;                                                // Guarded.
  absl::flat_hash_map<std::string, LruList::iterator> cache_;  // Guarded.
  LazyCacheStats stats_;                                       // Guarded.
};

}  // namespace asyncrt::lazy::internal

namespace asyncrt::lazy {
// Here, where LazyValue is complete, for the two files that use it.
inline internal::LazyValue* LazyTensor::value() const {
  return static_cast<internal::LazyValue*>(value_);
}
}  // namespace asyncrt::lazy

#endif  // ASYNCRT_LIB_LAZY_LAZY_STATE_H_
