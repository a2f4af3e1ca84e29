// LazyState (lazy_state.h): recording, tapes and their templates, traces,
// the compiled-trace cache.
#include "lib/lazy/lazy_state.h"

#include <algorithm>
#include <cstring>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"

namespace asyncrt::lazy::internal {
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

Recorder& LazyState::ThisThreadsRecorder() {
  // One context at a time per thread: found without a lock.
  thread_local struct {
    uint64_t context = 0;
    Recorder* recorder = nullptr;
  } last;
  if (last.context == id_) return *last.recorder;
  std::lock_guard<std::mutex> lock(recorders_mu_);
  std::unique_ptr<Recorder>& recorder = recorders_[std::this_thread::get_id()];
  if (recorder == nullptr) {
    recorder = std::make_unique<Recorder>();
    recorder->tape.id = tape_ids_.fetch_add(1, std::memory_order_relaxed) + 1;
  }
  last.context = id_;
  last.recorder = recorder.get();
  return *recorder;
}

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
  LazyValue* value = NewValue(metadata, *device, /*reduced=*/false);
  value->handle = MakeAvailableAsyncValueRef<TensorHandle>(std::move(handle));
  return LazyTensor(value);
}

const Template::Op* LazyState::Match(Recorder& recorder, const TraceNode& node,
                                     size_t num_results) {
  Tape& tape = recorder.tape;
  if (!tape.matches) return nullptr;
  if (tape.nodes.empty()) {
    tape.expected = recorder.last;
    if (tape.expected == nullptr) {
      tape.matches = false;
      return nullptr;
    }
    tape.bound.assign(tape.expected->parameters.size(), nullptr);
  }
  const Template& expected = *tape.expected;
  const size_t index = tape.nodes.size();
  const size_t num_operands = node.operands.size();
  const Template::Op* op =
      index < expected.ops.size() ? &expected.ops[index] : nullptr;
  auto mismatch = [&tape] {
    tape.matches = false;  // For the rest of the tape: bindings may be off.
    return nullptr;
  };
  if (op == nullptr || op->entry != node.entry ||
      op->results.size() != num_results ||
      op->operands.size() != num_operands || op->attrs_key != node.attrs_key) {
    return mismatch();
  }
  LazyValue* const* operands = node.operands.data();
  const TraceRef* refs = op->operands.data();
  LazyValue** bound = tape.bound.data();
  for (size_t i = 0; i < num_operands; ++i) {
    LazyValue* value = operands[i];
    const TraceRef ref = refs[i];
    if (value->tape == tape.id) {
      if (ref.op != value->tape_op || ref.index != value->result_index) {
        return mismatch();
      }
    } else if (ref.op != TraceRef::kParameter) {
      return mismatch();
    } else if (bound[ref.index] == nullptr) {
      // The parameter's first use binds it (values of the template's
      // parameter's device, dtype and shape only).
      if (value->device != expected.device ||
          !(value->metadata == expected.parameters[ref.index])) {
        return mismatch();
      }
      bound[ref.index] = value;
    } else if (bound[ref.index] != value) {
      return mismatch();
    }
  }
  return op;
}

bool LazyState::Append(Tape& tape, TraceNode* node) {
  for (LazyValue* operand : absl::MakeSpan(node->operands)) {
    if (operand->tape == tape.id || operand->referenced_by_tape.load(
                                        std::memory_order_relaxed) == tape.id) {
      continue;
    }
    operand->referenced_by_tape.store(tape.id, std::memory_order_relaxed);
    RefValue(operand);
    tape.externals.push_back(operand);
  }
  tape.nodes.push_back(node);  // Its results know their tape and index.
  return tape.nodes.size() >= options_.max_trace_ops;
}

absl::Status LazyState::RecordError(absl::string_view op_name,
                                    const OpEntry* entry,
                                    const LazyArgs& args) const {
  if (entry == nullptr) {
    return absl::NotFoundError(absl::StrCat("unknown op ", op_name));
  }
  if (entry->metadata_fn == nullptr) {
    return absl::UnimplementedError(absl::StrCat(
        op_name,
        " has no shape function: a lazy op needs its result shapes when it "
        "is recorded"));
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (!args[i].valid()) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_name, ": argument ", i, " is an invalid tensor"));
    }
    const LazyValue& value = *args[i].value();
    if (value.state != this) {
      return absl::InvalidArgumentError(absl::StrCat(
          op_name, ": argument ", i, " belongs to another LazyContext"));
    }
    const LazyValue& first = *args[0].value();
    if (value.device != first.device) {
      return absl::InvalidArgumentError(
          absl::StrCat(op_name, ": argument 0 is on ", first.device->name(),
                       " but argument ", i, " is on ", value.device->name(),
                       "; copy one to the other's device with CopyTo"));
    }
    if (value.reduced != first.reduced) {
      return absl::InvalidArgumentError(absl::StrCat(
          op_name, ": argument 0 is ", first.reduced ? "reduced" : "full",
          " precision but argument ", i, " is ",
          value.reduced ? "reduced" : "full",
          " precision; convert one with ToReducedPrecision or "
          "ToFullPrecision"));
    }
  }
  return absl::InternalError(absl::StrCat(op_name, ": refused"));
}

absl::Status LazyState::Record(absl::string_view op_name, const LazyArgs& args,
                               const OpAttrs& attrs, size_t num_results,
                               absl::Span<LazyTensor> results,
                               std::optional<bool> reduced_result) {
  // Callers name ops with literals: the per-thread call-site cache skips
  // hashing the name.
  const OpEntry* entry = OpRegistry::Global().FindByCallSite(op_name);
  if (ABSL_PREDICT_FALSE(entry == nullptr || entry->metadata_fn == nullptr)) {
    return RecordError(op_name, entry, args);
  }
  // The arguments: valid, this context's, on one device, of one precision.
  // Results go on their device (the host without arguments).
  const LazyValue* first = args.empty() ? nullptr : args[0].value();
  for (size_t i = 0; i < args.size(); ++i) {
    const LazyValue* value = args[i].value();
    if (ABSL_PREDICT_FALSE(value == nullptr || value->state != this ||
                           value->device != first->device ||
                           value->reduced != first->reduced)) {
      return RecordError(op_name, entry, args);
    }
  }
  Device* device =
      first != nullptr ? first->device : &runtime_.host().host_device();
  const bool reduced = first != nullptr && first->reduced;
  const int device_type_id = first != nullptr
                                 ? first->device_type_id
                                 : OpRegistry::DeviceTypeId(device->type());
  Recorder& recorder = ThisThreadsRecorder();
  TraceNode* node = recorder.NewNode();
  node->entry = entry;
  for (size_t i = 0; i < args.size(); ++i) {
    node->operands.push_back(args[i].value());
  }
  if (!attrs.empty()) {
    node->attrs = attrs.Freeze();
    node->attrs_key = AttrsKey(attrs);
  }
  const Template::Op* expected = Match(recorder, *node, num_results);
  absl::InlinedVector<TensorMetadata, 1> inferred;
  // A matched op was checked when its template op was recorded (the same
  // op on the same device).
  if (expected == nullptr) {
    if (ABSL_PREDICT_FALSE(entry->FindImplementation(device_type_id) ==
                           nullptr)) {
      recorder.FreeNode(node);
      return absl::UnimplementedError(
          absl::StrCat(op_name, " has no implementation for ", device->name()));
    }
    // Not the template's op: the shape function says.
    absl::InlinedVector<const TensorMetadata*, 4> arg_metadata;
    for (const LazyValue* value : node->operands) {
      arg_metadata.push_back(&value->metadata);
    }
    inferred.resize(num_results);
    absl::Status status = entry->metadata_fn(ArgumentMetadata(arg_metadata),
                                             attrs, absl::MakeSpan(inferred));
    if (!status.ok()) {
      recorder.FreeNode(node);
      return status;
    }
  }
  // The template's op read values of the same shapes with the same
  // attributes: its shape function gave its results.
  absl::Span<const TensorMetadata> metadata =
      expected != nullptr ? absl::MakeConstSpan(expected->results)
                          : absl::MakeConstSpan(inferred);
  // Each result: a reference for the tape and one for its LazyTensor; the
  // op's index on the tape is the next one (Append below).
  const auto op_index = static_cast<int32_t>(recorder.tape.nodes.size());
  for (size_t i = 0; i < num_results; ++i) {
    const bool result_reduced =
        reduced_result.value_or(reduced && metadata[i].dtype == kReducedDType);
    LazyValue* value = AllocateValue(this, metadata[i], device, device_type_id,
                                     result_reduced, recorder.tape.id, op_index,
                                     node, static_cast<int32_t>(i));
    value->refs.store(2, std::memory_order_relaxed);
    node->results.push_back(value);
    results[i] = LazyTensor(value);  // Adopts the second reference.
  }
  // The trace is as long as allowed: it runs now, and the next op starts
  // another. A compilation error reaches these tensors' readers.
  if (Append(recorder.tape, node)) (void)RunRecorded(recorder);
  return absl::OkStatus();
}

std::vector<std::pair<Device*, std::vector<LazyValue*>>>
LazyState::GroupByDevice(absl::Span<LazyValue* const> values) {
  std::vector<std::pair<Device*, std::vector<LazyValue*>>> by_device;
  for (LazyValue* value : values) {
    auto it = std::find_if(
        by_device.begin(), by_device.end(),
        [&](const auto& group) { return group.first == value->device; });
    if (it == by_device.end()) {
      by_device.emplace_back(value->device, std::vector<LazyValue*>());
      it = by_device.end() - 1;
    }
    it->second.push_back(value);
  }
  return by_device;
}

absl::Status LazyState::Barrier() { return RunRecorded(ThisThreadsRecorder()); }

void LazyState::Shutdown() {
  std::vector<Recorder*> recorders;
  {
    std::lock_guard<std::mutex> lock(recorders_mu_);
    for (auto& [thread, recorder] : recorders_) {
      recorders.push_back(recorder.get());
    }
  }
  for (Recorder* recorder : recorders) (void)RunRecorded(*recorder);
}

absl::Status LazyState::RunRecorded(Recorder& recorder) {
  if (recorder.tape.nodes.empty()) return absl::OkStatus();
  Tape tape = std::move(recorder.tape);
  recorder.tape = std::move(recorder.spare);
  recorder.tape.id = tape_ids_.fetch_add(1, std::memory_order_relaxed) + 1;
  absl::Status status = RunTape(&tape, recorder);
  recorder.spare = std::move(tape);  // Released: empty.
  return status;
}

absl::Status LazyState::RunTape(Tape* tape, Recorder& recorder) {
  const absl::Time started = absl::Now();
  // Outputs: the values something besides the tape refers to (a
  // LazyTensor, a later tape's op) that are not computed yet.
  absl::InlinedVector<LazyValue*, 8> outputs;
  std::optional<Matched> matched;
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    for (const TraceNode* node : tape->nodes) {
      for (LazyValue* value : node->results) {
        if (!value->handle && value->refs.load(std::memory_order_acquire) > 1) {
          outputs.push_back(value);
        }
      }
    }
    matched = MatchTape(*tape, outputs);
  }
  if (matched) {
    CountHit(started, /*repeat=*/true);
    std::vector<RCReference<AsyncValue>> results =
        matched->program->Run(runtime_, matched->arguments);
    std::lock_guard<std::mutex> lock(graph_mu_);
    for (size_t i = 0; i < outputs.size(); ++i) {
      if (!outputs[i]->handle) outputs[i]->handle = std::move(results[i]);
    }
    ReleaseTape(tape, recorder);
    return absl::OkStatus();
  }
  // One trace per device.
  const auto by_device = GroupByDevice(outputs);
  absl::Status status;
  for (auto& [device, values] : by_device) {
    status.Update(
        RunTrace(values, by_device.size() == 1 ? tape : nullptr, &recorder));
  }
  std::lock_guard<std::mutex> lock(graph_mu_);
  ReleaseTape(tape, recorder);
  return status;
}

std::optional<LazyState::Matched> LazyState::MatchTape(
    const Tape& tape, absl::Span<LazyValue* const> outputs) {
  if (!tape.matches || tape.expected == nullptr) return std::nullopt;
  const Template& expected = *tape.expected;
  if (tape.nodes.size() != expected.ops.size() ||
      outputs.size() != expected.outputs.size()) {
    return std::nullopt;
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (outputs[i]->tape_op != expected.outputs[i].op ||
        outputs[i]->result_index != expected.outputs[i].index) {
      return std::nullopt;
    }
  }
  Matched matched;
  matched.arguments.reserve(expected.program_parameters.size());
  for (int32_t parameter : expected.program_parameters) {
    const LazyValue* value = tape.bound[parameter];
    // A parameter another trace is still computing goes the full way.
    if (value == nullptr || !value->handle) return std::nullopt;
    matched.arguments.push_back(value->handle.get());
  }
  matched.program = expected.program;
  return matched;
}

void LazyState::DropTapeReference(LazyValue* value, LazyState* adopt) {
  // Only the tape refers to it: no reference can be taken any more, no
  // atomic operation is needed.
  if (value->refs.load(std::memory_order_acquire) == 1) {
    DestroyValue(value);
    return;
  }
  // It may outlive the context: it holds the state (set before the
  // reference is dropped, after which another thread may free it).
  if (adopt != nullptr) {
    value->holds_state = true;
    adopt->Ref();
  }
  UnrefValue(value);
}

void LazyState::ReleaseTape(Tape* tape, Recorder& recorder) {
  for (TraceNode* node : tape->nodes) {
    for (LazyValue* value : node->results) {
      value->node = nullptr;
      DropTapeReference(value, this);
    }
    recorder.FreeNode(node);
  }
  for (LazyValue* value : tape->externals) UnrefValue(value);
  tape->nodes.clear();
  tape->externals.clear();
  tape->expected.reset();
  tape->bound.clear();
  tape->matches = true;
}

absl::Status LazyState::Materialize(absl::Span<LazyValue* const> values) {
  // Those not computed (or being computed) yet, one trace per device.
  absl::InlinedVector<LazyValue*, 4> pending;
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    for (LazyValue* value : values) {
      if (!value->handle) pending.push_back(value);
    }
  }
  if (pending.empty()) return absl::OkStatus();
  absl::Status status;
  for (auto& [device, outputs] : GroupByDevice(pending)) {
    status.Update(RunTrace(outputs));
  }
  return status;
}

LazyState::BuiltTrace LazyState::Build(absl::Span<LazyValue* const> outputs) {
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
      built.parameter_values.push_back(&value);
      built.arguments.push_back(value.handle);
      key.push_back('P');
      AppendMetadataKey(key, value.metadata);
    } else if (value.node->walk == walk) {
      value.walk_ref = TraceRef{value.node->walk_index, value.result_index};
    } else {
      stack.push_back(Frame{value.node});
      return std::nullopt;
    }
    value.walk = walk;
    return value.walk_ref;
  };
  for (LazyValue* output : outputs) {
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
        const bool many =
            num_results >= kManyCounts || num_operands >= kManyCounts;
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
        for (LazyValue* operand : node.operands) {
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
    for (const LazyValue* result : node->results) {
      op.results.push_back(result->metadata);
    }
    op.operands.assign(
        built.operands.begin() + next_operand,
        built.operands.begin() + next_operand + node->operands.size());
    next_operand += node->operands.size();
    trace.ops.push_back(std::move(op));
  }
  return trace;
}

std::shared_ptr<const Template> LazyState::MakeTemplate(
    const Tape& tape, const BuiltTrace& built,
    std::shared_ptr<const TraceProgram> program) {
  auto made = std::make_shared<Template>();
  made->device = built.outputs.front()->device;
  std::vector<const LazyValue*> parameters;  // By first use on the tape.
  auto parameter_index = [&](const LazyValue* value) {
    auto it = std::find(parameters.begin(), parameters.end(), value);
    if (it != parameters.end())
      return static_cast<int32_t>(it - parameters.begin());
    parameters.push_back(value);
    made->parameters.push_back(value->metadata);
    return static_cast<int32_t>(parameters.size() - 1);
  };
  made->ops.reserve(tape.nodes.size());
  for (const TraceNode* node : tape.nodes) {
    Template::Op& op = made->ops.emplace_back();
    op.entry = node->entry;
    op.attrs_key = node->attrs_key;
    for (const LazyValue* operand : node->operands) {
      op.operands.push_back(
          operand->tape == tape.id
              ? TraceRef{operand->tape_op, operand->result_index}
              : TraceRef{TraceRef::kParameter, parameter_index(operand)});
    }
    for (const LazyValue* result : node->results) {
      op.results.push_back(result->metadata);
    }
  }
  for (const LazyValue* output : built.outputs) {
    made->outputs.push_back(TraceRef{output->tape_op, output->result_index});
  }
  for (const LazyValue* value : built.parameter_values) {
    // A value of this tape that a read computed is a parameter of the
    // trace but not of the tape: the next tape would compute it.
    auto it = std::find(parameters.begin(), parameters.end(), value);
    if (it == parameters.end()) return nullptr;
    made->program_parameters.push_back(
        static_cast<int32_t>(it - parameters.begin()));
  }
  made->program = std::move(program);
  return made;
}

void LazyState::CountHit(absl::Time started, bool repeat) {
  std::lock_guard<std::mutex> lock(cache_mu_);
  ++stats_.hits;
  stats_.repeats += repeat;
  stats_.hit_time += absl::Now() - started;
  // A mark in the Chrome trace (a scope of no length).
  tracing::ScopedTrace hit(tracing::Level::kDefault, "LazyCacheHit");
}

std::shared_ptr<const TraceProgram> LazyState::LookUp(const std::string& key,
                                                      absl::Time started) {
  std::shared_ptr<const TraceProgram> program;
  {
    std::lock_guard<std::mutex> lock(cache_mu_);
    auto it = cache_.find(key);
    if (it == cache_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    program = it->second->second;
  }
  CountHit(started);
  return program;
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

absl::Status LazyState::RunTrace(absl::Span<LazyValue* const> outputs,
                                 const Tape* tape, Recorder* recorder) {
  const absl::Time started = absl::Now();
  BuiltTrace built;
  std::shared_ptr<const TraceProgram> cached;
  std::optional<Trace> trace;
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    built = Build(outputs);
    // A template needs the trace's ops all on the tape (nodes of other
    // tapes may be freed once the lock is released).
    for (const TraceNode* node : built.nodes) {
      if (tape == nullptr) break;
      if (node->results.empty() || node->results.front()->tape != tape->id) {
        tape = nullptr;
      }
    }
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
  std::shared_ptr<const Template> made;
  {
    std::lock_guard<std::mutex> lock(graph_mu_);
    for (size_t i = 0; i < built.outputs.size(); ++i) {
      LazyValue& value = *built.outputs[i];
      if (value.handle) continue;  // Another thread's trace computed it.
      value.handle = std::move(results[i]);
    }
    // The tape is the barrier's: its nodes live until it is released.
    if (tape != nullptr && program.ok()) {
      made = MakeTemplate(*tape, built, *program);
    }
  }
  if (made != nullptr) recorder->last = std::move(made);
  return program.status();
}

}  // namespace asyncrt::lazy::internal
