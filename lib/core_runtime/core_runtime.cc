#include "asyncrt/core_runtime/core_runtime.h"

#include <atomic>
#include <bit>
#include <cstddef>
#include <cstdio>
#include <iterator>
#include <memory>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/cleanup/cleanup.h"
#include "absl/container/fixed_array.h"
#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/bef_executor/function.h"
#include "asyncrt/core_runtime/op_handler_factory.h"
#include "asyncrt/core_runtime/shape_memo.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/concurrent_work_queue.h"
#include "asyncrt/host_context/diagnostic.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/host_context/resource_context.h"
#include "asyncrt/host_context/tracing.h"
#include "asyncrt/tensor/conversion_registry.h"

namespace asyncrt {

//===--- Running registry ops ---------------------------------------------===//

namespace {

using ValueVector = absl::InlinedVector<RCReference<AsyncValue>, 2>;
// Ops take a few arguments and results: up to this many, the per-op arrays
// live on the stack.
constexpr size_t kStackArguments = 4;
using MetadataVector = absl::InlinedVector<TensorMetadata, 2>;

void FailOp(const RCReference<AsyncValue>& error,
            absl::Span<TensorHandle> results, AsyncValueRef<Chain>* chain) {
  for (TensorHandle& result : results) {
    result = TensorHandle::CreateError(error);
  }
  if (chain) *chain = AsyncValueRef<Chain>(error);
}

bool Accepts(const OpImplementation& implementation, TensorType type) {
  if (type == DenseHostTensorType()) return true;
  uint32_t accepted = implementation.accepted_tensors;
  if (accepted == kOpAcceptsAnyHost) return true;
  if (type == ScalarHostTensorType()) return accepted & kOpAcceptsScalarHost;
  if (type == CooHostTensorType()) return accepted & kOpAcceptsCooHost;
  if (type == StringHostTensorType()) return accepted & kOpAcceptsStringHost;
  if (type.id() > internal::kNumBuiltinTensorTypes) {
    return accepted & kOpAcceptsRegisteredHost;
  }
  return false;
}

// "f32 [1, 2]" per tensor, joined by ';', in parentheses (TFRT's trace).
template <typename Range, typename GetMetadata>
std::string TraceMetadataList(const Range& range, GetMetadata get) {
  std::string text = "(";
  bool first = true;
  for (const auto& item : range) {
    if (!first) text.append(";");
    first = false;
    const TensorMetadata& metadata = get(item);
    absl::StrAppend(&text, DTypeName(metadata.dtype), " ",
                    metadata.shape.DebugString());
  }
  text.append(")");
  return text;
}

void FailDispatch(RCReference<AsyncValue> error,
                  absl::Span<RCReference<AsyncValue>> tensors,
                  AsyncValueRef<Chain>* chain) {
  for (auto& tensor : tensors) tensor = error;
  if (chain) *chain = AsyncValueRef<Chain>(std::move(error));
}

// Calls the implementation on `inputs` (their tensors in `input_tensors`,
// all of a type it accepts).
// Runs the implementation on a prepared invocation; returns the arguments
// whose references the op took (see OpInvocation::may_take_arguments).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint64_t Invoke(
    absl::string_view op_name, const OpImplementation& implementation,
    OpInvocation& invocation) {
  tracing::ScopedTrace trace(tracing::Level::kDebug, [&] {
    std::string name =
        absl::StrCat("RunDispatchFunction: ", op_name, "#op_name=", op_name);
    // The op's name scope, from the program's name location.
    if (std::optional<DecodedLocation> location =
            invocation.exec_ctx.location().Decode();
        location && !location->name.empty()) {
      absl::StrAppend(&name, ",long_name=", location->name);
    }
    absl::StrAppend(
        &name, ",Inputs=",
        TraceMetadataList(invocation.argument_tensors,
                          [](const Tensor* t) { return t->metadata(); }),
        ",Results=",
        TraceMetadataList(invocation.result_metadata,
                          [](const TensorMetadata& m) { return m; }),
        ",Attributes=");
    invocation.attrs.Print(&name);
    name.append("#");
    return name;
  });
  invocation.implementation_data = implementation.data;
  implementation.dispatch(invocation);
  for (auto& tensor : invocation.results) {
    if (ABSL_PREDICT_FALSE(!tensor)) {
      tensor = MakeErrorAsyncValueRef("op implementation produced no result");
    }
  }
  return invocation.taken_arguments;
}

// Calls the implementation on `inputs` (their tensors in `input_tensors`,
// all of a type it accepts).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CallImplementation(
    absl::string_view op_name, const OpImplementation& implementation,
    const ExecutionContext& exec_ctx, absl::Span<AsyncValue* const> inputs,
    absl::Span<const Tensor* const> input_tensors, const OpAttrs& attrs,
    absl::Span<const TensorMetadata> result_metadata,
    absl::Span<RCReference<AsyncValue>> tensors, AsyncValueRef<Chain>* chain,
    uint64_t unshared_arguments, const BufferArena* arena, Device* device,
    OpSiteCache* site_cache) {
  OpInvocation invocation{
      exec_ctx,        inputs,  input_tensors, attrs,
      result_metadata, tensors, chain,         unshared_arguments};
  invocation.arena = arena;
  invocation.device = device;
  invocation.site_cache = site_cache;
  Invoke(op_name, implementation, invocation);
}

// Dispatch's path for arguments the implementation does not take as they
// are: converts them to dense host tensors first.
ABSL_ATTRIBUTE_NOINLINE void DispatchConverted(
    absl::string_view op_name, const OpImplementation& implementation,
    const ExecutionContext& exec_ctx, absl::Span<AsyncValue* const> arguments,
    absl::Span<const Tensor*> input_tensors, const OpAttrs& attrs,
    absl::Span<const TensorMetadata> result_metadata,
    absl::Span<RCReference<AsyncValue>> tensors, AsyncValueRef<Chain>* chain,
    uint64_t unshared_arguments, const BufferArena* arena, Device* device,
    OpSiteCache* site_cache) {
  absl::InlinedVector<AsyncValue*, kStackArguments> inputs(arguments.begin(),
                                                           arguments.end());
  ValueVector converted;  // Keeps converted arguments alive.
  Device& host = exec_ctx.host()->host_device();
  for (size_t i = 0; i < inputs.size(); ++i) {
    if (Accepts(implementation, input_tensors[i]->tensor_type())) continue;
    RCReference<AsyncValue> value = ConvertTensor(
        *input_tensors[i], host, host, DenseHostTensorType(), exec_ctx);
    if (value->IsError()) return FailDispatch(std::move(value), tensors, chain);
    if (!value->IsAvailable()) {
      // Host conversions finish at once; devices will need a wait here.
      return FailDispatch(
          MakeErrorAsyncValueRef(
              "asynchronous tensor conversions are not supported"),
          tensors, chain);
    }
    inputs[i] = value.get();
    input_tensors[i] = GetTensorIfPresent(*value);
    converted.push_back(std::move(value));
    unshared_arguments &= ~(uint64_t{1} << (i & 63));
  }
  CallImplementation(op_name, implementation, exec_ctx, inputs, input_tensors,
                     attrs, result_metadata, tensors, chain, unshared_arguments,
                     arena, device, site_cache);
}

// Runs the implementation on available arguments; fills `tensors`. Inline:
// it is on every op's path, and its many parameters cost more to pass than
// its body.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void Dispatch(
    absl::string_view op_name, const OpImplementation& implementation,
    const ExecutionContext& exec_ctx, absl::Span<AsyncValue* const> arguments,
    const OpAttrs& attrs, absl::Span<const TensorMetadata> result_metadata,
    absl::Span<RCReference<AsyncValue>> tensors, AsyncValueRef<Chain>* chain,
    uint64_t unshared_arguments, const BufferArena* arena, Device* device,
    OpSiteCache* site_cache = nullptr) {
  // Fixed size, on the stack for the usual few arguments; indexed through
  // data() (hardened Abseil checks every operator[]).
  absl::FixedArray<const Tensor*, kStackArguments> input_tensor_storage(
      arguments.size());
  const Tensor** input_tensors = input_tensor_storage.data();
  bool all_accepted = true;
  for (size_t i = 0; i < arguments.size(); ++i) {
    AsyncValue* argument = arguments[i];
    if (argument->IsError()) {
      return FailDispatch(FormRef(argument), tensors, chain);
    }
    // Dense host tensors inline; other types through the registry.
    const Tensor* tensor = argument->GetIfPresent<DenseHostTensor>();
    if (!tensor) tensor = GetTensorIfPresent(*argument);
    if (!tensor) {
      return FailDispatch(MakeErrorAsyncValueRef(absl::StrCat(
                              "argument ", i, " is not a tensor")),
                          tensors, chain);
    }
    input_tensors[i] = tensor;
    all_accepted &= Accepts(implementation, tensor->tensor_type());
  }
  absl::Span<const Tensor*> input_span(input_tensors, arguments.size());
  if (ABSL_PREDICT_FALSE(!all_accepted)) {
    return DispatchConverted(op_name, implementation, exec_ctx, arguments,
                             input_span, attrs, result_metadata, tensors, chain,
                             unshared_arguments, arena, device, site_cache);
  }
  CallImplementation(op_name, implementation, exec_ctx, arguments, input_span,
                     attrs, result_metadata, tensors, chain, unshared_arguments,
                     arena, device, site_cache);
}

// An op's argument handles: the caller's own array (CoreRuntime::Execute,
// prepared ops) or pointers to handles that stay where they are (the
// corert.executeop kernel's registers). Read only.
const TensorHandle& HandleAt(absl::Span<TensorHandle> args, size_t i) {
  return args.data()[i];
}
const TensorHandle& HandleAt(absl::Span<const TensorHandle* const> args,
                             size_t i) {
  return *args.data()[i];
}

// Bit i: the caller gives argument i up (ArgumentUse::kConsume sets all).
uint64_t ConsumedArguments(ArgumentUse use) {
  return use == ArgumentUse::kConsume ? ~uint64_t{0} : 0;
}

// Tensors only the consumed handles reference: the op may reuse their
// buffers. An indirect value may share its target, so it never counts.
uint64_t UnsharedArguments(absl::Span<AsyncValue* const> values,
                           uint64_t consumed_arguments) {
  uint64_t unshared_arguments = 0;
  for (; consumed_arguments != 0;
       consumed_arguments &= consumed_arguments - 1) {
    const size_t i = std::countr_zero(consumed_arguments);
    if (i >= values.size()) break;
    if (!values[i]->IsIndirect() && values[i]->IsUnique()) {
      unshared_arguments |= uint64_t{1} << i;
    }
  }
  return unshared_arguments;
}

// The handles of a dispatched op: its tensors with the shape function's
// metadata, or (none) the tensors' own.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void SetResults(
    Device* device, absl::Span<TensorMetadata> result_metadata,
    RCReference<AsyncValue>* tensors, absl::Span<TensorHandle> results) {
  if (result_metadata.empty()) {
    for (size_t i = 0; i < results.size(); ++i) {
      results[i] = TensorHandle(device, std::move(tensors[i]));
    }
  } else {
    TensorMetadata* metadata = result_metadata.data();
    for (size_t i = 0; i < results.size(); ++i) {
      results[i] =
          TensorHandle(device, std::move(metadata[i]), std::move(tensors[i]));
    }
  }
}

// An argument of the common path: a computed tensor on `device` of a type
// `implementation` takes as it is, its value, tensor and metadata set;
// false otherwise (an argument on another device, pending, failed or to
// convert: the general path handles, and reports, those).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool ConcreteArgument(
    const TensorHandle& handle, Device* device,
    const OpImplementation& implementation, AsyncValue*& value,
    const Tensor*& tensor, const TensorMetadata*& metadata) {
  value = handle.GetAsyncTensor();
  if (value == nullptr || handle.device() != device) return false;
  tensor = value->GetIfPresent<DenseHostTensor>();
  if (ABSL_PREDICT_FALSE(tensor == nullptr)) {
    tensor = GetTensorIfPresent(*value);  // Null unless concrete.
    if (tensor == nullptr || !Accepts(implementation, tensor->tensor_type())) {
      return false;
    }
  }
  metadata = &handle.GetAvailableMetadata();
  return true;
}

// ConcreteArgument for each of `args` (at most kStackArguments).
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool ConcreteArguments(
    absl::Span<const TensorHandle* const> args, Device* device,
    const OpImplementation& implementation, AsyncValue** values,
    const Tensor** tensors, const TensorMetadata** metadata) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (!ConcreteArgument(*args.data()[i], device, implementation, values[i],
                          tensors[i], metadata[i])) {
      return false;
    }
  }
  return true;
}

// The scope of one registry op in a Chrome trace (verbose level), opened
// by whichever path runs it.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline tracing::ScopedTrace OpTrace(
    const OpEntry& entry, const OpImplementation& implementation) {
  return tracing::ScopedTrace(tracing::Level::kVerbose, [&] {
    return absl::StrCat(entry.name, "#op_handler=", implementation.device_type,
                        "#");
  });
}

// Runs the op; the handles whose references it adopted (given up by their
// caller, see OpInvocation::may_take_arguments) forget them instead of
// dropping them.
template <typename Handles>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void InvokeTakingArguments(
    absl::string_view op_name, const OpImplementation& implementation,
    OpInvocation& invocation, Handles args) {
  for (uint64_t taken = Invoke(op_name, implementation, invocation);
       taken != 0; taken &= taken - 1) {
    const_cast<TensorHandle&>(HandleAt(args, std::countr_zero(taken)))
        .ForgetTakenTensor();
  }
}

// RunRegisteredOp's common case, in full and on the stack: at most
// kStackArguments arguments and results, each argument concrete and of a
// tensor type the implementation takes as it is, and a shape function.
// Anything else returns false having done nothing, for the general path.
template <typename Handles>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool RunConcreteOp(
    const OpEntry& entry, const OpImplementation& implementation,
    Device* device, const ExecutionContext& exec_ctx, Handles args,
    const OpAttrsRef& attrs, absl::Span<TensorHandle> results,
    AsyncValueRef<Chain>* chain, uint64_t consumed_arguments,
    const BufferArena* arena, OpSiteCache* site_cache) {
  const size_t num_args = args.size();
  const size_t num_results = results.size();
  if (num_args > kStackArguments || num_results > kStackArguments ||
      entry.metadata_fn == nullptr) {
    return false;
  }
  AsyncValue* values[kStackArguments];
  const Tensor* tensors[kStackArguments];
  const TensorMetadata* arg_metadata[kStackArguments];
  for (size_t i = 0; i < num_args; ++i) {
    if (!ConcreteArgument(HandleAt(args, i), device, implementation,
                          values[i], tensors[i], arg_metadata[i])) {
      return false;
    }
  }
  tracing::ScopedTrace trace = OpTrace(entry, implementation);
  // Constructed for the results only.
  alignas(TensorMetadata) unsigned char
      metadata_storage[kStackArguments * sizeof(TensorMetadata)];
  alignas(RCReference<AsyncValue>) unsigned char
      output_storage[kStackArguments * sizeof(RCReference<AsyncValue>)];
  auto* result_metadata = reinterpret_cast<TensorMetadata*>(metadata_storage);
  auto* outputs = reinterpret_cast<RCReference<AsyncValue>*>(output_storage);
  std::uninitialized_default_construct_n(result_metadata, num_results);
  std::uninitialized_value_construct_n(outputs, num_results);
  absl::Cleanup destroy = [&] {
    std::destroy_n(result_metadata, num_results);
    std::destroy_n(outputs, num_results);
  };
  // Built here, well before the call: filled just before it, its spans
  // would be reloaded while their stores are still in flight (a failed
  // store-to-load forwarding costs more than the rest of the setup).
  OpInvocation invocation{
      exec_ctx,
      absl::MakeConstSpan(values, num_args),
      absl::MakeConstSpan(tensors, num_args),
      *attrs,
      absl::MakeConstSpan(result_metadata, num_results),
      absl::MakeSpan(outputs, num_results),
      chain,
      UnsharedArguments(absl::MakeConstSpan(values, num_args),
                        consumed_arguments),
      /*may_take_arguments=*/true};
  invocation.arena = arena;
  invocation.device = device;
  invocation.site_cache = site_cache;
  {
    tracing::ScopedTrace trace(tracing::Level::kDebug, "RunMetadataFunction");
    absl::Status status = entry.metadata_fn(
        ArgumentMetadata(absl::MakeConstSpan(arg_metadata, num_args)), *attrs,
        absl::MakeSpan(result_metadata, num_results));
    if (ABSL_PREDICT_FALSE(!status.ok())) {
      FailOp(MakeErrorAsyncValueRef(std::move(status)), results, chain);
      return true;
    }
  }
  if (chain) *chain = GetReadyChain();
  InvokeTakingArguments(entry.name, implementation, invocation, args);
  SetResults(device, absl::MakeSpan(result_metadata, num_results), outputs,
             results);
  return true;
}

// The shape function of an op issued before its arguments' metadata was
// known, run once they are available (into the empty `result_metadata`),
// so that implementations always get result metadata and a shape error is
// still reported as one. Nothing to do if the metadata was known, the op
// has no shape function, or an argument failed or is not a host tensor
// (dispatch reports those).
absl::Status LateMetadata(const OpEntry& entry,
                          absl::Span<AsyncValue* const> arguments,
                          const OpAttrs& attrs, MetadataVector& result_metadata,
                          size_t num_results) {
  if (!result_metadata.empty() || entry.metadata_fn == nullptr) {
    return absl::OkStatus();
  }
  absl::InlinedVector<const TensorMetadata*, kStackArguments> arg_metadata;
  for (AsyncValue* argument : arguments) {
    const Tensor* tensor =
        argument->IsError() ? nullptr : GetTensorIfPresent(*argument);
    if (tensor == nullptr) return absl::OkStatus();
    arg_metadata.push_back(&tensor->metadata());
  }
  MetadataVector computed(num_results);
  absl::Status status =
      entry.metadata_fn(ArgumentMetadata(absl::MakeConstSpan(arg_metadata)),
                        attrs, absl::MakeSpan(computed));
  if (status.ok()) result_metadata = std::move(computed);
  return status;
}

// Nothing moves between devices implicitly: an argument on another device
// than the op's is an error that says how to move it.
[[gnu::noinline]] absl::Status PlacementError(absl::string_view op_name,
                                             const Device& op_device,
                                             size_t argument,
                                             const Device& argument_device) {
  return absl::InvalidArgumentError(absl::StrCat(
      op_name, " runs on ", op_device.name(), " but its argument ", argument,
      " is on ", argument_device.name(),
      ": copy it there first (TensorHandle::TransferTo, or corert.transfer in "
      "a program)"));
}

// RunRegisteredOp for everything RunConcreteOp leaves: pending, failed or
// converted arguments, more of them, no shape function.
[[gnu::noinline]] void RunGeneralOp(
    const OpEntry& entry, const OpImplementation& implementation,
    Device* device, const ExecutionContext& exec_ctx,
    absl::Span<const TensorHandle* const> args, const OpAttrsRef& attrs,
    absl::Span<TensorHandle> results, AsyncValueRef<Chain>* chain,
    uint64_t consumed_arguments, const BufferArena* arena,
    OpSiteCache* site_cache) {
  tracing::ScopedTrace trace = OpTrace(entry, implementation);
  const size_t num_results = results.size();
  absl::FixedArray<AsyncValue*, kStackArguments> arg_values(args.size());
  AsyncValue** arg_value = arg_values.data();  // No per-index hardening.
  // Where each argument's metadata lives: the shape function reads it
  // there, uncopied.
  absl::FixedArray<const TensorMetadata*, kStackArguments> arg_metadata_storage(
      args.size());
  const TensorMetadata** arg_metadata = arg_metadata_storage.data();
  // One pass over the arguments: their values, whether all are available,
  // and whether the shape function can run now.
  bool all_available = true;
  bool metadata_known = entry.metadata_fn != nullptr;
  for (size_t i = 0; i < args.size(); ++i) {
    const TensorHandle& handle = HandleAt(args, i);
    AsyncValue* value = handle.GetAsyncTensor();
    if (ABSL_PREDICT_FALSE(!value)) {
      return FailOp(MakeErrorAsyncValueRef("invalid tensorhandle"), results,
                    chain);
    }
    if (ABSL_PREDICT_FALSE(handle.device() != device) &&
        handle.device() != nullptr && device != nullptr) {
      return FailOp(MakeErrorAsyncValueRef(PlacementError(
                        entry.name, *device, i, *handle.device())),
                    results, chain);
    }
    all_available &= value->IsAvailable();
    const bool known = !value->IsError() && handle.IsMetadataAvailable();
    metadata_known &= known;
    arg_metadata[i] = known ? &handle.GetAvailableMetadata() : nullptr;
    arg_value[i] = value;
  }

  // Sized once (empty if the shape function cannot run now): no container
  // bookkeeping on the hot path.
  absl::FixedArray<TensorMetadata, kStackArguments> result_metadata(
      metadata_known ? num_results : 0);
  if (metadata_known) {
    tracing::ScopedTrace trace(tracing::Level::kDebug, "RunMetadataFunction");
    absl::Status status = entry.metadata_fn(
        ArgumentMetadata(absl::MakeConstSpan(arg_metadata, args.size())),
        *attrs, absl::MakeSpan(result_metadata));
    if (ABSL_PREDICT_FALSE(!status.ok())) {
      return FailOp(MakeErrorAsyncValueRef(std::move(status)), results, chain);
    }
  }

  if (all_available) {
    absl::FixedArray<RCReference<AsyncValue>, kStackArguments> tensors(
        num_results);
    if (chain) *chain = GetReadyChain();
    Dispatch(entry.name, implementation, exec_ctx, arg_values, *attrs,
             result_metadata, absl::MakeSpan(tensors), chain,
             UnsharedArguments(arg_values, consumed_arguments), arena, device,
             site_cache);
    SetResults(device, absl::MakeSpan(result_metadata), tensors.data(),
               results);
    return;
  }

  // Some argument is still being computed: hand out indirect results now
  // and dispatch on whichever thread completes the last argument.
  absl::InlinedVector<RCReference<IndirectAsyncValue>, 2> pending;
  for (size_t i = 0; i < num_results; ++i) {
    pending.push_back(MakeIndirectAsyncValue());
    // Copied, not moved: the deferred dispatch needs the metadata too.
    results[i] = result_metadata.empty()
                     ? TensorHandle(device, pending.back())
                     : TensorHandle(device, result_metadata[i], pending.back());
  }
  RCReference<IndirectAsyncValue> pending_chain;
  if (chain) {
    pending_chain = MakeIndirectAsyncValue();
    *chain = AsyncValueRef<Chain>(pending_chain);
  }
  ValueVector held_args;
  for (AsyncValue* value : arg_values) held_args.push_back(FormRef(value));
  RunWhenReady(arg_values,
               [&entry, &implementation, device, exec_ctx,
                held_args = std::move(held_args), attrs,
                result_metadata = MetadataVector(
                    std::make_move_iterator(result_metadata.begin()),
                    std::make_move_iterator(result_metadata.end())),
                pending = std::move(pending),
                pending_chain = std::move(pending_chain),
                // The dispatch may outlive the caller's hold on the arena.
                held_arena = arena ? FormRef(const_cast<BufferArena*>(arena))
                                   : RCReference<BufferArena>()]() mutable {
                 absl::InlinedVector<AsyncValue*, 4> raw;
                 for (auto& value : held_args) raw.push_back(value.get());
                 if (absl::Status status = LateMetadata(
                         entry, raw, *attrs, result_metadata, pending.size());
                     !status.ok()) {
                   RCReference<AsyncValue> error =
                       MakeErrorAsyncValueRef(std::move(status));
                   for (auto& result : pending) result->ForwardTo(error);
                   if (pending_chain) pending_chain->ForwardTo(error);
                   return;
                 }
                 ValueVector tensors(pending.size());
                 AsyncValueRef<Chain> op_chain = GetReadyChain();
                 Dispatch(entry.name, implementation, exec_ctx, raw, *attrs,
                          result_metadata, absl::MakeSpan(tensors),
                          pending_chain ? &op_chain : nullptr,
                          /*unshared_arguments=*/0, held_arena.get(), device);
                 for (size_t i = 0; i < pending.size(); ++i) {
                   pending[i]->ForwardTo(std::move(tensors[i]));
                 }
                 if (pending_chain)
                   pending_chain->ForwardTo(std::move(op_chain));
               });
}

// Runs a registry op. `args` are read, never taken: bit i of
// `consumed_arguments` says the caller gives argument i's handle up, so the
// op may reuse its tensor's buffer or async value if nothing else holds
// them (the caller drops the handle after the call and does not read it).
template <typename Handles>
void RunRegisteredOp(const OpEntry& entry,
                     const OpImplementation& implementation, Device* device,
                     const ExecutionContext& exec_ctx, Handles args,
                     const OpAttrsRef& attrs, absl::Span<TensorHandle> results,
                     AsyncValueRef<Chain>* chain, uint64_t consumed_arguments,
                     const BufferArena* arena = nullptr,
                     OpSiteCache* site_cache = nullptr) {
  if (RunConcreteOp(entry, implementation, device, exec_ctx, args, attrs,
                    results, chain, consumed_arguments, arena, site_cache)) {
    return;
  }
  if constexpr (std::is_same_v<Handles, absl::Span<TensorHandle>>) {
    absl::FixedArray<const TensorHandle*, kStackArguments> pointers(
        args.size());
    for (size_t i = 0; i < args.size(); ++i) {
      pointers.data()[i] = args.data() + i;
    }
    RunGeneralOp(entry, implementation, device, exec_ctx, pointers, attrs,
                 results, chain, consumed_arguments, arena, site_cache);
  } else {
    RunGeneralOp(entry, implementation, device, exec_ctx, args, attrs, results,
                 chain, consumed_arguments, arena, site_cache);
  }
}

//===--- Op handlers ------------------------------------------------------===//

class NullOpHandler final : public OpHandler {
 public:
  explicit NullOpHandler(CoreRuntime* runtime)
      : OpHandler("null", runtime, nullptr) {}

  absl::StatusOr<CoreRuntimeOp> MakeOp(absl::string_view op_name) override {
    return absl::InvalidArgumentError(
        absl::StrCat(op_name, " was not supported by NullOpHandler."));
  }
};

// The op registry's implementations for one device's type, run on that
// device. Ops without one fall back, or fail naming the op and the device.
class DeviceOpHandler final : public OpHandler {
 public:
  DeviceOpHandler(CoreRuntime* runtime, Device* device, OpHandler* fallback)
      : OpHandler(device->name(), runtime, fallback) {
    set_registry_device({OpRegistry::DeviceTypeId(device->type()), device});
  }

  absl::StatusOr<CoreRuntimeOp> MakeOp(absl::string_view op_name) override {
    const RegistryDevice& target = registry_device();
    const OpEntry* entry = OpRegistry::Global().Find(op_name);
    if (const OpImplementation* implementation =
            entry ? entry->FindImplementation(target.device_type_id)
                  : nullptr) {
      return CoreRuntimeOp(entry, implementation, target.device);
    }
    if (fallback()) return fallback()->MakeOp(op_name);
    return absl::NotFoundError(absl::StrCat(
        entry ? "" : "unknown op ", op_name, entry ? " has" : ": there is",
        " no implementation for ", target.device->name(), " (device type ",
        target.device->type(), ")"));
  }
};

// Prints every dispatch (and, with sync_log_results, every result once it
// is computed) to stdout, then runs the op on the wrapped handler.
class LoggingOpHandler final : public OpHandler {
 public:
  LoggingOpHandler(CoreRuntime* runtime, OpHandler* wrapped,
                   bool sync_log_results)
      : OpHandler("logging", runtime, wrapped),
        sync_log_results_(sync_log_results) {}

  absl::StatusOr<CoreRuntimeOp> MakeOp(absl::string_view op_name) override {
    absl::StatusOr<CoreRuntimeOp> inner = fallback()->MakeOp(op_name);
    if (!inner.ok()) return inner.status();
    return CoreRuntimeOp(
        [this, inner = *std::move(inner), name = std::string(op_name)](
            const ExecutionContext& exec_ctx, absl::Span<TensorHandle> args,
            const OpAttrsRef& attrs, absl::Span<TensorHandle> results,
            AsyncValueRef<Chain>* chain) {
          int64_t id = next_id_.fetch_add(1, std::memory_order_relaxed);
          std::string line = absl::StrCat(
              "[", id, "] dispatch '", name, "' ", args.size(),
              args.size() == 1 ? " argument, " : " arguments, ", results.size(),
              results.size() == 1 ? " result, " : " results, ");
          if (attrs->empty()) {
            line.append("no attributes\n");
          } else {
            attrs->Print(&line);
          }
          std::fwrite(line.data(), 1, line.size(), stdout);
          std::fflush(stdout);
          inner(exec_ctx, args, attrs, results, chain);
          if (!sync_log_results_) return;
          for (size_t i = 0; i < results.size(); ++i) {
            RCReference<AsyncValue> tensor = results[i].CopyTensorRef();
            AsyncValue* raw = tensor.get();
            raw->AndThen([id, i, tensor = std::move(tensor)] {
              TensorHandle view(nullptr, tensor);
              std::string text = absl::StrCat("[", id, "] result ", i, ": ",
                                              view.DebugString(), "\n");
              std::fwrite(text.data(), 1, text.size(), stdout);
              std::fflush(stdout);
            });
          }
        });
  }

 private:
  const bool sync_log_results_;
  std::atomic<int64_t> next_id_{0};
};

}  // namespace

void CoreRuntimeOp::operator()(const ExecutionContext& exec_ctx,
                               absl::Span<TensorHandle> args,
                               const OpAttrsRef& attrs,
                               absl::Span<TensorHandle> results,
                               AsyncValueRef<Chain>* chain,
                               ArgumentUse use) const {
  if (implementation_) {
    RunRegisteredOp(*entry_, *implementation_, device_, exec_ctx, args, attrs,
                    results, chain, ConsumedArguments(use));
  } else if (fn_) {
    fn_(exec_ctx, args, attrs, results, chain);
  } else {
    FailOp(MakeErrorAsyncValueRef("invalid op"), results, chain);
  }
}

void CoreRuntimeOp::operator()(const ExecutionContext& exec_ctx,
                               absl::Span<const TensorHandle* const> args,
                               uint64_t consumed_arguments,
                               const OpAttrsRef& attrs,
                               absl::Span<TensorHandle> results,
                               AsyncValueRef<Chain>* chain,
                               const BufferArena* arena,
                               OpSiteCache* site_cache) const {
  if (implementation_) {
    RunRegisteredOp(*entry_, *implementation_, device_, exec_ctx, args, attrs,
                    results, chain, consumed_arguments, arena, site_cache);
    return;
  }
  // Other ops take handles of their own: copies, which keep every tensor
  // shared (nothing is reused).
  std::vector<TensorHandle> copies;
  copies.reserve(args.size());
  for (const TensorHandle* arg : args) copies.push_back(arg->CopyRef());
  (*this)(exec_ctx, absl::MakeSpan(copies), attrs, results, chain);
}

// Inlined into both RunConcrete overloads: it is most of their work.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CoreRuntimeOp::InvokeConcrete(
    const ExecutionContext& exec_ctx, AsyncValue* const* values,
    const Tensor* const* tensors, absl::Span<const TensorHandle* const> args,
    uint64_t consumed_arguments, const OpAttrsRef& attrs,
    const TensorMetadata& result_metadata, TensorHandle& result,
    const BufferArena* arena, OpSiteCache* site_cache) const {
  const size_t num_args = args.size();
  RCReference<AsyncValue> output;
  OpInvocation invocation{exec_ctx,
                          absl::MakeConstSpan(values, num_args),
                          absl::MakeConstSpan(tensors, num_args),
                          *attrs,
                          absl::MakeConstSpan(&result_metadata, 1),
                          absl::MakeSpan(&output, 1),
                          /*chain=*/nullptr,
                          UnsharedArguments(absl::MakeConstSpan(values, num_args),
                                            consumed_arguments),
                          /*may_take_arguments=*/true};
  invocation.arena = arena;
  invocation.device = device_;
  invocation.site_cache = site_cache;
  InvokeTakingArguments(entry_->name, *implementation_, invocation, args);
  result.Reset(device_, result_metadata, std::move(output));
}

bool CoreRuntimeOp::RunConcrete(const ExecutionContext& exec_ctx,
                                absl::Span<const TensorHandle* const> args,
                                uint64_t consumed_arguments,
                                const OpAttrsRef& attrs, TensorHandle& result,
                                ShapeMemo& memo, const BufferArena* arena,
                                OpSiteCache* site_cache) const {
  // RunConcreteOp for one result, with the shape answer looked up: what a
  // program knows that an eager caller does not.
  const size_t num_args = args.size();
  if (implementation_ == nullptr || entry_->metadata_fn == nullptr ||
      num_args > kStackArguments) {
    return false;
  }
  AsyncValue* values[kStackArguments];
  const Tensor* tensors[kStackArguments];
  const TensorMetadata* arg_metadata[kStackArguments];
  if (!ConcreteArguments(args, device_, *implementation_, values, tensors,
                         arg_metadata)) {
    return false;
  }
  tracing::ScopedTrace trace = OpTrace(*entry_, *implementation_);
  const auto arg_metadata_span = absl::MakeConstSpan(arg_metadata, num_args);
  // The memo's entry outlives the call: the op reads it in place.
  const TensorMetadata* result_metadata = memo.Find(arg_metadata_span);
  std::optional<TensorMetadata> computed;  // Built only on a miss.
  if (result_metadata == nullptr) {
    tracing::ScopedTrace metadata_trace(tracing::Level::kDebug,
                                        "RunMetadataFunction");
    absl::Status status = entry_->metadata_fn(
        ArgumentMetadata(arg_metadata_span), *attrs,
        absl::MakeSpan(&computed.emplace(), 1));
    if (ABSL_PREDICT_FALSE(!status.ok())) {
      FailOp(MakeErrorAsyncValueRef(std::move(status)),
             absl::MakeSpan(&result, 1), nullptr);
      return true;
    }
    memo.Record(arg_metadata_span, absl::MakeConstSpan(&*computed, 1));
    result_metadata = &*computed;
  }
  InvokeConcrete(exec_ctx, values, tensors, args, consumed_arguments, attrs,
                 *result_metadata, result, arena, site_cache);
  return true;
}

bool CoreRuntimeOp::RunConcrete(const ExecutionContext& exec_ctx,
                                absl::Span<const TensorHandle* const> args,
                                uint64_t consumed_arguments,
                                const OpAttrsRef& attrs,
                                const TensorMetadata& result_metadata,
                                TensorHandle& result, const BufferArena* arena,
                                OpSiteCache* site_cache) const {
  const size_t num_args = args.size();
  if (implementation_ == nullptr || num_args > kStackArguments) return false;
  AsyncValue* values[kStackArguments];
  const Tensor* tensors[kStackArguments];
  const TensorMetadata* arg_metadata[kStackArguments];
  if (!ConcreteArguments(args, device_, *implementation_, values, tensors,
                         arg_metadata)) {
    return false;
  }
  tracing::ScopedTrace trace = OpTrace(*entry_, *implementation_);
  InvokeConcrete(exec_ctx, values, tensors, args, consumed_arguments, attrs,
                 result_metadata, result, arena, site_cache);
  return true;
}

//===--- CoreRuntime ------------------------------------------------------===//

absl::StatusOr<std::unique_ptr<CoreRuntime>> CoreRuntime::Create(
    const CoreRuntimeOptions& options) {
  MultiThreadedWorkQueueOptions queue_options;
  queue_options.num_threads = options.num_threads;
  // Eager errors reach the caller through the result handles; nothing is
  // printed behind the application's back.
  auto host = std::make_unique<HostContext>(
      [](const DecodedDiagnostic&) {}, CreateMallocAllocator(),
      CreateMultiThreadedWorkQueue(queue_options));
  auto runtime = std::make_unique<CoreRuntime>(host.get());
  runtime->owned_host_ = std::move(host);
  if (options.register_cpu_op_handler) {
    absl::StatusOr<OpHandler*> cpu =
        runtime->CreateOpHandler("cpu", runtime->CreateNullOpHandler());
    if (!cpu.ok()) return cpu.status();
    runtime->RegisterOpHandler("cpu", *cpu);
  }
  return runtime;
}

CoreRuntime::CoreRuntime(HostContext* host) : host_(host) {}

CoreRuntime::~CoreRuntime() {
  // In-flight ops may still use the handlers: let them finish first.
  if (owned_host_) owned_host_->Quiesce();
}

CoreRuntime& CoreRuntime::GetOrCreate(HostContext* host) {
  return host->GetOrCreateSharedContext<CoreRuntime>();
}

OpHandler* CoreRuntime::AddOpHandler(std::unique_ptr<OpHandler> handler) {
  std::lock_guard<std::mutex> lock(mutex_);
  handlers_.push_back(std::move(handler));
  return handlers_.back().get();
}

absl::StatusOr<OpHandler*> CoreRuntime::CreateOpHandler(
    absl::string_view device_type, OpHandler* fallback) {
  OpHandlerFactory factory = FindOpHandlerFactory(device_type);
  if (factory == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("no backend for device type '", device_type,
                     "' is linked into this binary (linked: ",
                     absl::StrJoin(RegisteredDeviceTypes(), ", "), ")"));
  }
  return factory(this, fallback);
}

absl::StatusOr<OpHandler*> CoreRuntime::CreateCpuOpHandler(
    OpHandler* fallback) {
  return CreateOpHandler("cpu", fallback);
}

OpHandler* CoreRuntime::CreateDeviceOpHandler(Device* device,
                                              OpHandler* fallback) {
  return AddOpHandler(std::make_unique<DeviceOpHandler>(this, device, fallback));
}

OpHandler* CoreRuntime::CreateNullOpHandler() {
  return AddOpHandler(std::make_unique<NullOpHandler>(this));
}

OpHandler* CoreRuntime::CreateLoggingOpHandler(OpHandler* wrapped,
                                               bool sync_log_results) {
  return AddOpHandler(
      std::make_unique<LoggingOpHandler>(this, wrapped, sync_log_results));
}

void CoreRuntime::RegisterOpHandler(absl::string_view name,
                                    OpHandler* handler) {
  std::lock_guard<std::mutex> lock(mutex_);
  named_handlers_[name] = handler;
}

OpHandler* CoreRuntime::GetOpHandler(absl::string_view name) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = named_handlers_.find(name);
  return it == named_handlers_.end() ? nullptr : it->second;
}

absl::StatusOr<CoreRuntimeOp> CoreRuntime::MakeOp(absl::string_view op_name,
                                                  OpHandler* handler) {
  if (!handler) return absl::InvalidArgumentError("no op handler");
  return handler->MakeOp(op_name);
}

void CoreRuntime::Execute(const ExecutionContext& exec_ctx,
                          absl::string_view op_name, OpHandler* handler,
                          absl::Span<TensorHandle> args,
                          const OpAttrsRef& attrs,
                          absl::Span<TensorHandle> results,
                          AsyncValueRef<Chain>* chain, ArgumentUse use) {
  if (handler && handler->registry_device().device) {
    const OpHandler::RegistryDevice& target = handler->registry_device();
    if (const OpEntry* entry = OpRegistry::Global().FindByCallSite(op_name)) {
      if (const OpImplementation* implementation =
              entry->FindImplementation(target.device_type_id)) {
        return RunRegisteredOp(*entry, *implementation, target.device, exec_ctx,
                               args, attrs, results, chain,
                               ConsumedArguments(use));
      }
    }
  }
  absl::StatusOr<CoreRuntimeOp> op = MakeOp(op_name, handler);
  if (!op.ok()) {
    return FailOp(MakeErrorAsyncValueRef(op.status()), results, chain);
  }
  (*op)(exec_ctx, args, attrs, results, chain, use);
}

CoreRuntimeOp CoreRuntime::MakeCompositeOp(const Function* fn) {
  Device* device = &host_->host_device();
  return CoreRuntimeOp([fn, device](const ExecutionContext& exec_ctx,
                                    absl::Span<TensorHandle> args,
                                    const OpAttrsRef& attrs,
                                    absl::Span<TensorHandle> results,
                                    AsyncValueRef<Chain>* chain) {
    // The function takes the handles, optionally after a chain, and returns
    // handles, optionally after a chain.
    bool chain_in = fn->num_arguments() == args.size() + 1;
    bool chain_out = fn->num_results() == results.size() + 1;
    if (fn->num_arguments() != args.size() + (chain_in ? 1 : 0) ||
        fn->num_results() != results.size() + (chain_out ? 1 : 0)) {
      return FailOp(
          MakeErrorAsyncValueRef(absl::StrCat(
              "composite op '", fn->name(), "' takes ", fn->num_arguments(),
              " arguments and returns ", fn->num_results(), " results")),
          results, chain);
    }
    ValueVector arg_values;
    if (chain_in) arg_values.push_back(GetReadyChain());
    for (const TensorHandle& arg : args) {
      arg_values.push_back(
          MakeAvailableAsyncValueRef<TensorHandle>(arg.CopyRef()));
    }
    absl::InlinedVector<AsyncValue*, 4> raw;
    for (auto& value : arg_values) raw.push_back(value.get());
    ValueVector fn_results(fn->num_results());
    fn->Execute(exec_ctx, raw, absl::MakeSpan(fn_results));
    size_t first = chain_out ? 1 : 0;
    if (chain) {
      *chain =
          chain_out ? AsyncValueRef<Chain>(fn_results[0]) : GetReadyChain();
    }
    for (size_t i = 0; i < results.size(); ++i) {
      RCReference<AsyncValue>& value = fn_results[first + i];
      if (value->IsConcrete()) {
        results[i] = value->get<TensorHandle>().CopyRef();
        continue;
      }
      if (value->IsError()) {
        results[i] = TensorHandle::CreateError(value);
        continue;
      }
      // The handle itself is not known yet: its tensor is forwarded later.
      RCReference<IndirectAsyncValue> tensor = MakeIndirectAsyncValue();
      results[i] = TensorHandle(device, tensor);
      AsyncValue* raw_value = value.get();
      raw_value->AndThen([value = std::move(value), tensor] {
        if (value->IsError()) {
          tensor->ForwardTo(value);
        } else {
          tensor->ForwardTo(value->get<TensorHandle>().CopyTensorRef());
        }
      });
    }
  });
}

absl::StatusOr<ExecutionContext> CoreRuntime::CreateExecutionContext() {
  absl::StatusOr<RCReference<RequestContext>> request =
      RequestContextBuilder(host_, nullptr).Build();
  if (!request.ok()) return request.status();
  return ExecutionContext(*std::move(request));
}

const Tensor* CoreRuntime::Await(const TensorHandle& handle) {
  if (!handle.IsValid()) return nullptr;
  RCReference<AsyncValue> tensor = handle.CopyTensorRef();
  host_->Await(absl::MakeConstSpan(&tensor, 1));
  return handle.GetAvailableTensor();
}

TensorHandle CoreRuntime::MakeTensorHandle(DenseHostTensor tensor) {
  TensorMetadata metadata = tensor.metadata();
  return TensorHandle(
      &host_->host_device(), metadata,
      MakeAvailableAsyncValueRef<DenseHostTensor>(std::move(tensor)));
}

AsyncValue* OpInvocation::ReusableArgument(
    size_t index, const TensorMetadata& metadata) const {
  AsyncValue* argument = arguments[index];
  const auto* dense = argument->GetIfPresent<DenseHostTensor>();
  if (dense == nullptr || dense->metadata() != metadata ||
      !dense->IsBufferUnique()) {
    return nullptr;
  }
  return argument;
}

std::optional<DenseHostTensor> OpInvocation::ReuseUnsharedArgumentBuffer(
    size_t index, const TensorMetadata& metadata) const {
  if (AsyncValue* argument = ReusableArgument(index, metadata)) {
    return argument->get<DenseHostTensor>().CopyRef();
  }
  return std::nullopt;
}

RCReference<HostBuffer> OpInvocation::PlannedResultBufferSlow(
    size_t bytes) const {
  // The slot's planned size bounds the result: a result larger than the
  // compiler planned (a model called with larger inputs than it was
  // compiled for) would run into the bytes of other values.
  const std::optional<int64_t> offset = attrs.GetInteger("_buffer_offset");
  const std::optional<int64_t> size = attrs.GetInteger("_buffer_size");
  if (!offset || !size || *offset < 0 || *size < 0 ||
      bytes > static_cast<uint64_t>(*size)) {
    return nullptr;
  }
  return arena->Slot(static_cast<size_t>(*offset), bytes);
}

AsyncValueRef<DenseHostTensor> OpInvocation::AllocateDense(
    const TensorMetadata& metadata) const {
  if (ABSL_PREDICT_FALSE(arena != nullptr)) {
    // Not for strings (their elements are objects) or invalid metadata.
    if (std::optional<size_t> bytes = internal::DenseByteSize(metadata)) {
      if (RCReference<HostBuffer> planned = PlannedResultBuffer(*bytes)) {
        return MakeAvailableAsyncValueRef<DenseHostTensor>(metadata,
                                                           std::move(planned));
      }
    }
  }
  return DenseHostTensor::MakeUninitializedAsyncValue(metadata,
                                                      *host()->allocator());
}

AsyncValueRef<DenseHostTensor> OpInvocation::ReuseOrAllocateDenseSlow(
    const TensorMetadata& metadata, uint64_t candidates) const {
  for (; candidates != 0; candidates &= candidates - 1) {
    const size_t index = std::countr_zero(candidates);
    if (index >= argument_tensors.size()) break;
    if (AsyncValue* argument = ReusableArgument(index, metadata)) {
      // The argument's async value is the op's alone too: it becomes the
      // result as it is (no value made for the result, none freed), with
      // the caller's reference when the core runtime lets us take it.
      if (may_take_arguments) {
        taken_arguments |= uint64_t{1} << index;
        return AsyncValueRef<DenseHostTensor>(TakeRef(argument));
      }
      return AsyncValueRef<DenseHostTensor>(FormRef(argument));
    }
  }
  return AllocateDense(metadata);
}

}  // namespace asyncrt
