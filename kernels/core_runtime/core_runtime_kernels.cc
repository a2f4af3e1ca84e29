// Kernels of the corert dialect: op handlers, `corert.executeop` (graph
// mode through the same op registry as eager execution), tensor handles,
// op attributes, composite ops and the corert control flow.
#include "asyncrt/kernels/core_runtime_kernels.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/fixed_array.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/function.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/kernels/tensor_attributes.h"
#include "asyncrt/tensor/conversion_registry.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/scalar_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"
#include "kernels/core_runtime/captured_call_kernel.h"
#include "kernels/core_runtime/constant_kernels.h"
#include "kernels/core_runtime/execute_sequence_kernel.h"
#include "kernels/core_runtime/op_kernel_support.h"

namespace asyncrt {
namespace {

using bef::AttributeKind;

CoreRuntime& Runtime(AsyncKernelFrame* frame) {
  return CoreRuntime::GetOrCreate(frame->GetHostContext());
}

// The string attribute the op names `name`.
absl::StatusOr<absl::string_view> StringAttr(AsyncKernelFrame* frame,
                                             absl::string_view name) {
  const bef::Attribute* attribute = frame->GetAttribute(name);
  if (attribute == nullptr || attribute->kind != AttributeKind::kString) {
    return absl::InvalidArgumentError(
        absl::StrCat("kernel '", frame->kernel_name(),
                     "' needs a string attribute '", name, "'"));
  }
  return attribute->bytes;
}

std::vector<AsyncValue*> Raw(const HeldArguments& held) {
  std::vector<AsyncValue*> raw;
  raw.reserve(held->size());
  for (auto& value : *held) raw.push_back(value.get());
  return raw;
}

// A kernel's result handles, built in place (on the stack for a few).
// absl::InlinedVector's out-of-line growth path and the results' value
// initialization were a tenth of a graph op.
class HandleList {
 public:
  explicit HandleList(size_t capacity)
      : data_(capacity <= kInline
                  ? reinterpret_cast<TensorHandle*>(inline_)
                  : std::allocator<TensorHandle>().allocate(capacity)),
        capacity_(capacity) {}
  HandleList(const HandleList&) = delete;
  HandleList& operator=(const HandleList&) = delete;
  ~HandleList() {
    clear();
    if (capacity_ > kInline) {
      std::allocator<TensorHandle>().deallocate(data_, capacity_);
    }
  }

  // Requires size() + count <= capacity.
  void AppendNull(size_t count) {
    for (size_t i = 0; i < count; ++i) new (data_ + size_++) TensorHandle();
  }
  void clear() {
    std::destroy_n(data_, size_);
    size_ = 0;
  }
  size_t size() const { return size_; }
  TensorHandle& operator[](size_t i) { return data_[i]; }
  absl::Span<TensorHandle> span() { return absl::MakeSpan(data_, size_); }

 private:
  static constexpr size_t kInline = 4;
  alignas(TensorHandle) unsigned char inline_[kInline * sizeof(TensorHandle)];
  TensorHandle* data_;
  size_t size_ = 0;
  size_t capacity_;
};

// Runs `op` on handle arguments args[first_arg..], publishing handles from
// result `first_result` on, and the op's chain in result 0 if `seq`. A
// result is a register that is available once its tensor is.
void RunOp(AsyncKernelFrame* frame, const CoreRuntimeOp& op,
           const OpAttrsRef& attrs, size_t first_arg, bool seq,
           const BufferArena* arena = nullptr,
           OpSiteCache* site_cache = nullptr) {
  const ExecutionContext& exec_ctx = frame->GetExecutionContext();
  const size_t num_args = frame->GetNumArgs();
  // The handles in the argument registers, passed in place: no copy and
  // no reference per argument.
  absl::FixedArray<TensorHandle*, 4> args(num_args -
                                          std::min(first_arg, num_args));
  size_t num_handles = 0;
  // Bit k: handle k is this kernel's last use of a computed tensor, given
  // to the op, which may then write its result into the tensor's buffer.
  // (An error or pending tensor stays shared: errors are recognized
  // through the arguments.)
  uint64_t consumed = 0;
  // The index of a consumed argument: its async value, held by no one
  // else, can carry the result's handle instead of a new one (an
  // allocation and a free less per op in a chain).
  constexpr size_t kNoneSpent = ~size_t{0};
  size_t spent = kNoneSpent;
  TensorHandle* spent_handle = nullptr;
  for (size_t i = first_arg; i < num_args; ++i) {
    AsyncValue* value = frame->GetArgAt(i);
    if (value->IsType<Chain>()) continue;  // A trailing ordering chain.
    if (!value->IsType<TensorHandle>()) {
      return frame->ReportError(absl::InvalidArgumentError(
          absl::StrCat("argument ", i, " is not a !corert.tensorhandle")));
    }
    TensorHandle& handle = value->get<TensorHandle>();
    AsyncValue* tensor = handle.GetAsyncTensor();
    if (num_handles < 64 && frame->IsLastUseOfArg(i) && tensor &&
        tensor->IsConcrete()) {
      consumed |= uint64_t{1} << num_handles;
      if (spent == kNoneSpent) {
        spent = i;
        spent_handle = &handle;
      }
    }
    args.data()[num_handles++] = &handle;
  }
  const size_t first_result = seq ? 1 : 0;
  if (ABSL_PREDICT_FALSE(frame->GetNumResults() < first_result)) {
    return frame->ReportError(
        absl::InvalidArgumentError("a sequenced op needs a chain result"));
  }
  HandleList results(frame->GetNumResults() - first_result);
  results.AppendNull(frame->GetNumResults() - first_result);
  AsyncValueRef<Chain> chain;
  op(exec_ctx, absl::Span<const TensorHandle* const>(args.data(), num_handles),
     consumed, attrs, results.span(), seq ? &chain : nullptr, arena,
     site_cache);
  // Consumed tensors go before the results settle (what was given up is
  // not read again); the spent handle is overwritten by the result below,
  // or cleared after.
  for (; consumed != 0; consumed &= consumed - 1) {
    TensorHandle* handle = args.data()[std::countr_zero(consumed)];
    if (handle != spent_handle) *handle = TensorHandle();
  }

  // Results still being computed settle later and need the arguments (to
  // tell propagated errors from new ones) and an owned context; made once,
  // only if some result needs them.
  HeldArguments held;
  std::optional<ExecutionContext> owned_ctx;
  auto defer = [&]() {
    if (!held) {
      held = std::make_shared<std::vector<RCReference<AsyncValue>>>();
      for (AsyncValue* value : frame->GetArguments()) {
        held->push_back(FormRef(value));
      }
      owned_ctx.emplace(exec_ctx);
    }
  };
  if (seq) {
    RCReference<AsyncValue> value = std::move(chain);
    if (value->IsAvailable()) {
      frame->SetResultAt(
          0, SettleChain(std::move(value), frame->GetArguments(), exec_ctx));
    } else {
      defer();
      RCReference<IndirectAsyncValue> result = MakeIndirectAsyncValue();
      frame->SetResultAt(0, result);
      AsyncValue* raw = value.get();
      raw->AndThen(
          [result, value = std::move(value), held, ctx = *owned_ctx]() mutable {
            result->ForwardTo(SettleChain(std::move(value), Raw(held), ctx));
          });
    }
  }
  for (size_t i = 0; i < results.size(); ++i) {
    AsyncValue* tensor = results[i].GetAsyncTensor();
    // Only a single result, with nothing deferred: deferred settling keeps
    // the arguments to tell propagated errors from new ones.
    if (spent != kNoneSpent && results.size() == 1 && !held &&
        tensor->IsConcrete()) {
      *spent_handle = std::move(results[i]);
      spent_handle = nullptr;
      frame->SetResultAt(first_result + i, frame->TakeArgAt(spent));
      continue;
    }
    if (tensor->IsAvailable()) {
      frame->SetResultAt(
          first_result + i,
          SettleHandle(std::move(results[i]), frame->GetArguments(), exec_ctx));
      continue;
    }
    defer();
    RCReference<IndirectAsyncValue> result = MakeIndirectAsyncValue();
    frame->SetResultAt(first_result + i, result);
    tensor->AndThen([result, handle = std::move(results[i]), held,
                     ctx = *owned_ctx]() mutable {
      result->ForwardTo(SettleHandle(std::move(handle), Raw(held), ctx));
    });
  }
  if (spent_handle != nullptr) *spent_handle = TensorHandle();
}

absl::StatusOr<OpAttrsRef> ExecuteOpAttrs(AsyncKernelFrame* frame) {
  OpAttrs attrs;
  size_t next_function = 0;
  absl::Status status = AddAttributePairs(
      frame, attrs, frame->GetAttribute("op_attrs"), next_function);
  if (!status.ok()) return status;
  status = AddAttributePairs(frame, attrs, frame->GetAttribute("op_func_attrs"),
                             next_function);
  if (!status.ok()) return status;
  return attrs.empty() ? OpAttrsRef() : attrs.Freeze();
}

// What corert.executeop derives once from its attributes: the frozen op
// attributes, the op name, and the op prepared for the first handler it ran
// on (graphs run an op on the same handler every time; another handler
// prepares its op afresh on each run).
struct ExecuteOpState final : KernelState {
  absl::StatusOr<OpAttrsRef> attrs;
  std::string op_name;
  OpHandler* handler = nullptr;
  absl::StatusOr<CoreRuntimeOp> op = absl::UnknownError("not prepared");
  ShapeMemo memo;  // The prepared op's shape answers at this site.
  OpSiteCache site_cache;  // The prepared op's own, at this site.
};

// corert.executeop's common case in one pass (CoreRuntimeOp::RunConcrete,
// which checks that every argument is computed): one result, handle
// arguments only. The result is written
// into the handle of an argument this kernel uses last, whose register
// becomes the result (an allocation and a free less per op in a chain),
// as RunOp does. Returns false having done nothing otherwise.
bool RunConcreteSite(AsyncKernelFrame* frame, ExecuteOpState& state,
                     const BufferArena* arena) {
  constexpr size_t kMaxArguments = 4;
  const size_t num_args = frame->GetNumArgs();  // The handler, then handles.
  if (frame->GetNumResults() != 1 || num_args - 1 > kMaxArguments) {
    return false;
  }
  const TensorHandle* args[kMaxArguments];
  uint64_t consumed = 0;
  size_t spent = 0;  // The register whose value the result takes; 0: none.
  for (size_t i = 1; i < num_args; ++i) {
    AsyncValue* value = frame->GetArgAt(i);
    if (!value->IsType<TensorHandle>()) return false;
    const TensorHandle& handle = value->get<TensorHandle>();
    if (frame->IsLastUseOfArg(i)) {
      consumed |= uint64_t{1} << (i - 1);
      if (spent == 0) spent = i;
    }
    args[i - 1] = &handle;
  }
  // The op reads every argument before it writes `result`, so the spent
  // handle itself can receive it.
  std::optional<TensorHandle> local;
  TensorHandle& result = spent != 0
                             ? frame->GetArgAt(spent)->get<TensorHandle>()
                             : local.emplace();
  if (!state.op->RunConcrete(frame->GetExecutionContext(),
                             absl::MakeConstSpan(args, num_args - 1), consumed,
                             *state.attrs, result, state.memo, arena,
                             &state.site_cache)) {
    return false;
  }
  // What was given up is not read again.
  for (; consumed != 0; consumed &= consumed - 1) {
    const size_t i = std::countr_zero(consumed) + 1;
    if (i != spent) frame->GetArgAt(i)->get<TensorHandle>() = TensorHandle();
  }
  AsyncValue* tensor = result.GetAsyncTensor();
  if (spent != 0 && tensor->IsConcrete()) {
    frame->SetResultAt(0, frame->TakeArgAt(spent));
    return true;
  }
  TensorHandle handle = std::move(result);
  if (tensor->IsAvailable()) {
    frame->SetResultAt(0, SettleHandle(std::move(handle), frame->GetArguments(),
                                       frame->GetExecutionContext()));
    return true;
  }
  // A result still being computed settles later; an error in it is new
  // (every argument was computed).
  RCReference<IndirectAsyncValue> pending = MakeIndirectAsyncValue();
  frame->SetResultAt(0, pending);
  tensor->AndThen([pending, handle = std::move(handle),
                   ctx = frame->GetExecutionContext()]() mutable {
    pending->ForwardTo(SettleHandle(std::move(handle), {}, ctx));
  });
  return true;
}

// corert.arena_op_handler %handler {size}: `handler` with a new arena of
// `size` bytes for this call's planned op results.
absl::StatusOr<ArenaOpHandler> MakeArenaOpHandler(OpHandler* handler,
                                                  AsyncKernelFrame* frame) {
  const bef::Attribute* size = frame->GetAttribute("size");
  if (size == nullptr || size->kind != bef::AttributeKind::kI64 ||
      size->scalar<int64_t>() < 0) {
    return absl::InvalidArgumentError(
        "corert.arena_op_handler needs a non-negative i64 size");
  }
  const int64_t bytes = size->scalar<int64_t>();
  RCReference<BufferArena> arena = BufferArena::Create(
      static_cast<size_t>(bytes), *frame->GetHostContext()->allocator());
  if (!arena) {
    return absl::ResourceExhaustedError(
        absl::StrCat("cannot allocate a planned arena of ", bytes, " bytes"));
  }
  return ArenaOpHandler{handler, std::move(arena)};
}

// corert.executeop(%handler, %args...) / executeop.seq(%handler, %chain,
// %args...). The handler may be an arena op handler: registry ops then get
// its arena (results with `_buffer_offset` and `_buffer_size` go there).
template <bool kSeq>
void ExecuteOp(AsyncKernelFrame* frame) {
  const BufferArena* arena = nullptr;
  OpHandler* handler = frame->GetNumArgs() >= (kSeq ? 2u : 1u)
                           ? OpHandlerOperand(frame->GetArgAt(0), arena)
                           : nullptr;
  if (handler == nullptr) {
    return frame->ReportError(
        absl::InvalidArgumentError("the first operand must be an op handler"));
  }
  ExecuteOpState* state = frame->GetOrCreateState<ExecuteOpState>([&] {
    auto made = std::make_unique<ExecuteOpState>();
    made->attrs = ExecuteOpAttrs(frame);
    made->handler = handler;
    absl::StatusOr<absl::string_view> op_name = StringAttr(frame, "op_name");
    if (!op_name.ok()) {
      made->attrs = op_name.status();
      return made;
    }
    made->op_name = std::string(*op_name);
    made->op = Runtime(frame).MakeOp(made->op_name, handler);
    return made;
  });
  if (!state->attrs.ok()) return frame->ReportError(state->attrs.status());
  if (ABSL_PREDICT_TRUE(state->handler == handler)) {
    if (!state->op.ok()) return frame->ReportError(state->op.status());
    if (!kSeq && RunConcreteSite(frame, *state, arena)) return;
    return RunOp(frame, *state->op, *state->attrs, kSeq ? 2 : 1, kSeq, arena,
                 &state->site_cache);
  }
  absl::StatusOr<CoreRuntimeOp> op =
      Runtime(frame).MakeOp(state->op_name, handler);
  if (!op.ok()) return frame->ReportError(op.status());
  RunOp(frame, *op, *state->attrs, kSeq ? 2 : 1, kSeq, arena);
}

// corert.execute_crt_op(%op, %args...): a prepared (e.g. composite) op.
void ExecuteCrtOp(AsyncKernelFrame* frame) {
  if (frame->GetNumArgs() < 1 || !frame->GetArgAt(0)->IsType<CoreRuntimeOp>()) {
    return frame->ReportError(
        absl::InvalidArgumentError("the first operand must be a !corert.op"));
  }
  absl::StatusOr<OpAttrsRef> attrs = ExecuteOpAttrs(frame);
  if (!attrs.ok()) return frame->ReportError(attrs.status());
  bool seq = frame->GetNumResults() > 0 && frame->GetNumArgs() > 1 &&
             frame->GetArgAt(1)->IsType<Chain>();
  RunOp(frame, frame->GetArgAt(0)->get<CoreRuntimeOp>(), *attrs, seq ? 2 : 1,
        seq);
}

//===--- Op handlers ------------------------------------------------------===//

OpHandler* CreateNullOpHandler(AsyncKernelFrame* frame) {
  return Runtime(frame).CreateNullOpHandler();
}

absl::StatusOr<OpHandler*> CreateCpuOpHandler(OpHandler* fallback,
                                              AsyncKernelFrame* frame) {
  return Runtime(frame).CreateCpuOpHandler(fallback);
}

OpHandler* CreateLoggingOpHandler(OpHandler* wrapped, AsyncKernelFrame* frame) {
  bool sync = false;
  if (const bef::Attribute* a = frame->GetAttribute("sync_log_results")) {
    sync = a->bits != 0;
  }
  return Runtime(frame).CreateLoggingOpHandler(wrapped, sync);
}

// corert.register_op_handler %handler {op_handler_name}; corert_sync's
// returns no chain.
absl::Status RegisterOpHandlerNamed(OpHandler* handler,
                                    AsyncKernelFrame* frame) {
  absl::StatusOr<absl::string_view> name = StringAttr(frame, "op_handler_name");
  if (!name.ok()) return name.status();
  Runtime(frame).RegisterOpHandler(*name, handler);
  return absl::OkStatus();
}

absl::StatusOr<Chain> RegisterOpHandler(OpHandler* handler,
                                        AsyncKernelFrame* frame) {
  absl::Status status = RegisterOpHandlerNamed(handler, frame);
  if (!status.ok()) return status;
  return Chain();
}

absl::Status SyncRegisterOpHandler(OpHandler* handler,
                                   AsyncKernelFrame* frame) {
  return RegisterOpHandlerNamed(handler, frame);
}

// The op handler registered under the string attribute `attribute`.
absl::StatusOr<OpHandler*> GetOpHandlerNamedBy(AsyncKernelFrame* frame,
                                               absl::string_view attribute) {
  absl::StatusOr<absl::string_view> name = StringAttr(frame, attribute);
  if (!name.ok()) return name.status();
  OpHandler* handler = Runtime(frame).GetOpHandler(*name);
  if (!handler) {
    return absl::NotFoundError(absl::StrCat("op_handler not found: ", *name));
  }
  return handler;
}

// corert.get_op_handler %ch {op_handler_name}.
absl::StatusOr<OpHandler*> GetOpHandler(AsyncKernelFrame* frame) {
  return GetOpHandlerNamedBy(frame, "op_handler_name");
}

// corert_sync.get_op_handler {device_name}.
absl::StatusOr<OpHandler*> SyncGetOpHandler(AsyncKernelFrame* frame) {
  return GetOpHandlerNamedBy(frame, "device_name");
}

//===--- Tensor handles ---------------------------------------------------===//

// Runs `fn(handle)` once the handle's tensor is available; returns a chain
// that completes after it.
template <typename Fn>
AsyncValueRef<Chain> WhenTensorReady(const TensorHandle& handle, Fn fn) {
  AsyncValue* tensor = handle.GetAsyncTensor();
  if (tensor->IsAvailable()) {
    fn(handle);
    return GetReadyChain();
  }
  auto chain = MakeUnconstructedAsyncValueRef<Chain>();
  tensor->AndThen([h = handle.CopyRef(), fn, chain] {
    fn(h);
    chain.emplace();
  });
  return chain;
}

void PrintHandle(const TensorHandle& handle) {
  std::string text = handle.DebugString();
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

AsyncValueRef<Chain> PrintTensorHandle(const TensorHandle& handle) {
  return WhenTensorReady(handle, PrintHandle);
}

void SyncPrintTensorHandle(const TensorHandle& handle) { PrintHandle(handle); }

absl::StatusOr<TensorShape> TensorHandleToShape(const TensorHandle& handle) {
  if (!handle.IsMetadataAvailable()) {
    return absl::UnavailableError("the tensor's metadata is not known yet");
  }
  return handle.GetAvailableMetadata().shape;
}

// The handle's tensor value itself (!t.tensor).
RCReference<AsyncValue> TensorHandleToHt(const TensorHandle& handle) {
  return handle.CopyTensorRef();
}

TensorHandle HtToTensorHandle(Argument<DenseHostTensor> tensor,
                              HostContext* host) {
  return TensorHandle(&host->host_device(), tensor->metadata(),
                      FormRef(tensor.value()));
}

absl::StatusOr<int32_t> TensorHandleToInt32(const TensorHandle& handle) {
  const Tensor* tensor = handle.GetAvailableTensor();
  if (!tensor || tensor->dtype() != DType::kI32 || tensor->NumElements() < 1 ||
      tensor->tensor_type() != DenseHostTensorType()) {
    return absl::InvalidArgumentError(
        "tensorhandle_to_int32 needs a dense i32 tensor");
  }
  return static_cast<const DenseHostTensor*>(tensor)->elements<int32_t>()[0];
}

//===--- Devices and transfers --------------------------------------------===//

absl::StatusOr<RCReference<Device>> GetDevice(AsyncKernelFrame* frame) {
  absl::StatusOr<absl::string_view> name = StringAttr(frame, "device_name");
  if (!name.ok()) return name.status();
  RCReference<Device> device =
      frame->GetHostContext()->device_manager().GetDevice(*name);
  if (!device) return absl::NotFoundError(absl::StrCat("no device ", *name));
  return device;
}

TensorType GetDstTensorType(const TensorHandle& handle,
                            const RCReference<Device>& device) {
  return DefaultTensorType(*device);
}

TensorHandle TransferTo(const TensorHandle& handle,
                        const RCReference<Device>& device, TensorType type,
                        const ExecutionContext& exec_ctx) {
  return handle.TransferTo(exec_ctx, *device, type);
}

TensorHandle TransferInferredTensorType(const TensorHandle& handle,
                                        const RCReference<Device>& device,
                                        const ExecutionContext& exec_ctx) {
  return TransferTo(handle, device, GetDstTensorType(handle, device), exec_ctx);
}

// Argument `i` as a T, or nullptr if there is none of that type.
template <typename T>
const T* ArgumentAs(RemainingArguments args, size_t i) {
  return i < args.size() ? args[i]->GetIfPresent<T>() : nullptr;
}

// TFRT's earlier formats bitmask: bit 0 is a dense host tensor.
constexpr int64_t kDenseHostFormat = 1;

// corert.transfer: `%th, %device, %tensor_type`, or TFRT's earlier
// `%th {device = "CPU:0", formats = 1}`.
absl::StatusOr<TensorHandle> Transfer(RemainingArguments args,
                                      AsyncKernelFrame* frame) {
  const TensorHandle* handle = ArgumentAs<TensorHandle>(args, 0);
  if (!handle) {
    return absl::InvalidArgumentError(
        "corert.transfer expects a !corert.tensorhandle");
  }
  const ExecutionContext& exec_ctx = frame->GetExecutionContext();
  if (args.size() == 3) {
    const auto* device = ArgumentAs<RCReference<Device>>(args, 1);
    const auto* type = ArgumentAs<TensorType>(args, 2);
    if (!device || !type) {
      return absl::InvalidArgumentError(
          "corert.transfer expects a !tfrt.device and a !tfrt.tensor_type");
    }
    return TransferTo(*handle, *device, *type, exec_ctx);
  }
  const bef::Attribute* name = frame->GetAttribute("device");
  const bef::Attribute* formats = frame->GetAttribute("formats");
  if (args.size() != 1 || !name || name->kind != AttributeKind::kString ||
      !formats) {
    return absl::InvalidArgumentError(
        "corert.transfer expects a device and a tensor type operand, or "
        "'device' and 'formats' attributes");
  }
  RCReference<Device> device =
      exec_ctx.host()->device_manager().GetDevice(name->bytes);
  if (!device)
    return absl::NotFoundError(absl::StrCat("no device ", name->bytes));
  const int64_t mask = static_cast<int64_t>(formats->bits);
  if (device->type() != "cpu" || (mask & kDenseHostFormat) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("no tensor format in mask ", mask, " for device ",
                     name->bytes, " (1: dense host)"));
  }
  return TransferTo(*handle, device, DenseHostTensorType(), exec_ctx);
}

//===--- Op attributes ----------------------------------------------------===//

OpAttrsHolder CreateOpAttrs() { return std::make_shared<OpAttrs>(); }

absl::StatusOr<Chain> OpAttrsSet(const OpAttrsHolder& attrs,
                                 AsyncKernelFrame* frame) {
  const bef::Attribute* key = frame->GetAttribute("key");
  const bef::Attribute* value = frame->GetAttribute("value");
  if (!key || key->kind != AttributeKind::kString || !value) {
    return absl::InvalidArgumentError("needs 'key' and 'value' attributes");
  }
  size_t next_function = 0;
  absl::Status status =
      AddAttribute(frame, *attrs, key->bytes, *value, next_function);
  if (!status.ok()) return status;
  return Chain();
}

absl::StatusOr<Chain> OpAttrsSetShape(const OpAttrsHolder& attrs,
                                      AsyncKernelFrame* frame) {
  const bef::Attribute* key = frame->GetAttribute("key");
  const bef::Attribute* value = frame->GetAttribute("value");
  if (key && value && value->kind == AttributeKind::kShape) {
    size_t unused_functions = 0;
    absl::Status status =
        AddAttribute(frame, *attrs, key->bytes, *value, unused_functions);
    if (!status.ok()) return status;
    return Chain();
  }
  // Also a plain dimension list (`value = [1, 2]`).
  auto dims = DimensionsAttribute(value);
  if (!key || !dims.ok()) {
    return absl::InvalidArgumentError("needs 'key' and 'value' attributes");
  }
  attrs->SetShape(key->bytes, absl::MakeConstSpan(*dims));
  return Chain();
}

//===--- Composite ops and control flow -----------------------------------===//

absl::StatusOr<CoreRuntimeOp> MakeCompositeOp(AsyncKernelFrame* frame) {
  if (frame->GetNumFunctions() < 1) {
    return absl::InvalidArgumentError("make_composite_op needs a function");
  }
  return Runtime(frame).MakeCompositeOp(frame->GetFunctionAt(0));
}

bool IsTruthy(const Tensor& tensor) {
  if (tensor.NumElements() < 1) return false;
  const void* data = nullptr;
  if (tensor.tensor_type() == DenseHostTensorType()) {
    data = static_cast<const DenseHostTensor&>(tensor).data();
  } else if (tensor.tensor_type() == ScalarHostTensorType()) {
    data = static_cast<const ScalarHostTensor&>(tensor).value_data();
  } else {
    return false;
  }
  const unsigned char* bytes = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < DTypeSize(tensor.dtype()); ++i) {
    if (bytes[i]) return true;
  }
  return false;
}

using Values = std::vector<RCReference<AsyncValue>>;

Values Call(const Function& function, const ExecutionContext& exec_ctx,
            absl::Span<AsyncValue* const> arguments) {
  Values results(function.num_results());
  function.Execute(exec_ctx, arguments, absl::MakeSpan(results));
  return results;
}

std::vector<AsyncValue*> Raw(const Values& values) {
  std::vector<AsyncValue*> raw;
  for (const auto& v : values) raw.push_back(v.get());
  return raw;
}

// corert.cond %cond @true @false (%args...): picks a branch by the
// condition tensor (non-zero first element).
void Cond(AsyncKernelFrame* frame) {
  if (frame->GetNumArgs() < 1 || frame->GetNumFunctions() < 2 ||
      !frame->GetArgAt(0)->IsType<TensorHandle>()) {
    return frame->ReportError(absl::InvalidArgumentError(
        "corert.cond takes a condition handle and two functions"));
  }
  const TensorHandle& condition = frame->GetArgAt(0)->get<TensorHandle>();
  const Function* branches[2] = {frame->GetFunctionAt(0),
                                 frame->GetFunctionAt(1)};
  Values args;
  for (size_t i = 1; i < frame->GetNumArgs(); ++i) {
    args.push_back(FormRef(frame->GetArgAt(i)));
  }
  std::vector<RCReference<IndirectAsyncValue>> outputs;
  for (size_t i = 0; i < frame->GetNumResults(); ++i) {
    outputs.push_back(MakeIndirectAsyncValue());
    frame->SetResultAt(i, outputs.back());
  }
  ExecutionContext exec_ctx = frame->GetExecutionContext();
  RCReference<AsyncValue> tensor = condition.CopyTensorRef();
  AsyncValue* raw = tensor.get();
  raw->AndThen([tensor = std::move(tensor), branches0 = branches[0],
                branches1 = branches[1], args = std::move(args),
                outputs = std::move(outputs), exec_ctx] {
    if (tensor->IsError()) {
      for (auto& output : outputs) output->ForwardTo(tensor);
      return;
    }
    const Tensor* t = GetTensorIfPresent(*tensor);
    const Function* branch = t && IsTruthy(*t) ? branches0 : branches1;
    Values results = Call(*branch, exec_ctx, Raw(args));
    for (size_t i = 0; i < outputs.size(); ++i) {
      outputs[i]->ForwardTo(i < results.size()
                                ? std::move(results[i])
                                : MakeErrorAsyncValueRef("missing result"));
    }
  });
}

// corert.while @cond @body (%args...): while cond(args)'s last result is a
// truthy tensor handle, args = body(args).
struct WhileLoop {
  const Function* cond;
  const Function* body;
  ExecutionContext exec_ctx;
  std::vector<RCReference<IndirectAsyncValue>> outputs;
  int depth = 0;
};

void Finish(std::shared_ptr<WhileLoop> loop, Values values) {
  for (size_t i = 0; i < loop->outputs.size(); ++i) {
    loop->outputs[i]->ForwardTo(i < values.size()
                                    ? std::move(values[i])
                                    : MakeErrorAsyncValueRef("missing result"));
  }
}

void FailLoop(const std::shared_ptr<WhileLoop>& loop,
              const RCReference<AsyncValue>& error) {
  for (auto& output : loop->outputs) output->ForwardTo(error);
}

void WhileStep(std::shared_ptr<WhileLoop> loop, Values state);

void AfterCond(std::shared_ptr<WhileLoop> loop, Values state,
               Values cond_results) {
  for (auto& v : cond_results) {
    if (v->IsError()) return FailLoop(loop, v);
  }
  AsyncValue* last = cond_results.empty() ? nullptr : cond_results.back().get();
  if (!last || !last->IsType<TensorHandle>()) {
    return FailLoop(loop, MakeErrorAsyncValueRef(
                              "corert.while: the condition must return a "
                              "tensor handle last"));
  }
  RCReference<AsyncValue> tensor = last->get<TensorHandle>().CopyTensorRef();
  AsyncValue* raw = tensor.get();
  raw->AndThen([loop = std::move(loop), state = std::move(state),
                tensor = std::move(tensor)]() mutable {
    if (tensor->IsError()) return FailLoop(loop, tensor);
    const Tensor* t = GetTensorIfPresent(*tensor);
    if (!t || !IsTruthy(*t)) return Finish(loop, std::move(state));
    Values next = Call(*loop->body, loop->exec_ctx, Raw(state));
    std::vector<AsyncValue*> raw_next = Raw(next);
    RunWhenReady(raw_next, [loop, next = std::move(next)]() mutable {
      for (auto& v : next) {
        if (v->IsError()) return FailLoop(loop, v);
      }
      WhileStep(std::move(loop), std::move(next));
    });
  });
}

void WhileStep(std::shared_ptr<WhileLoop> loop, Values state) {
  // Synchronous iterations recurse through the continuations: hop to the
  // work queue now and then to bound the stack.
  if (++loop->depth % 64 == 0) {
    HostContext* host = loop->exec_ctx.host();
    EnqueueWork(host,
                [loop = std::move(loop), state = std::move(state)]() mutable {
                  loop->depth = 0;
                  WhileStep(std::move(loop), std::move(state));
                });
    return;
  }
  Values cond_results = Call(*loop->cond, loop->exec_ctx, Raw(state));
  std::vector<AsyncValue*> raw = Raw(cond_results);
  RunWhenReady(raw, [loop = std::move(loop), state = std::move(state),
                     cond_results = std::move(cond_results)]() mutable {
    AfterCond(std::move(loop), std::move(state), std::move(cond_results));
  });
}

void While(AsyncKernelFrame* frame) {
  if (frame->GetNumFunctions() < 2) {
    return frame->ReportError(absl::InvalidArgumentError(
        "corert.while takes a condition and a body function"));
  }
  auto loop =
      std::make_shared<WhileLoop>(WhileLoop{frame->GetFunctionAt(0),
                                            frame->GetFunctionAt(1),
                                            frame->GetExecutionContext(),
                                            {},
                                            0});
  for (size_t i = 0; i < frame->GetNumResults(); ++i) {
    loop->outputs.push_back(MakeIndirectAsyncValue());
    frame->SetResultAt(i, loop->outputs.back());
  }
  Values state;
  for (size_t i = 0; i < frame->GetNumArgs(); ++i) {
    state.push_back(FormRef(frame->GetArgAt(i)));
  }
  WhileStep(std::move(loop), std::move(state));
}

}  // namespace

void RegisterCoreRuntimeKernels(KernelRegistry& registry) {
  auto add = [&](absl::string_view name, KernelDefinition kernel) {
    MustAddKernel(registry, name, kernel);
  };
  add("corert.create_null_op_handler", ASYNCRT_KERNEL(CreateNullOpHandler));
  add("corert.create_cpu_op_handler", ASYNCRT_KERNEL(CreateCpuOpHandler));
  add("corert.create_logging_op_handler",
      ASYNCRT_KERNEL(CreateLoggingOpHandler));
  add("corert.register_op_handler", ASYNCRT_KERNEL(RegisterOpHandler));
  add("corert_sync.register_op_handler", ASYNCRT_KERNEL(SyncRegisterOpHandler));
  add("corert.get_op_handler", ASYNCRT_KERNEL(GetOpHandler));
  add("corert.arena_op_handler", ASYNCRT_KERNEL(MakeArenaOpHandler));
  add("corert_sync.get_op_handler", ASYNCRT_KERNEL(SyncGetOpHandler));
  add("corert.executeop", ExecuteOp<false>);
  add("corert_sync.executeop", ExecuteOp<false>);
  add("corert.executeop.seq", ExecuteOp<true>);
  add("corert.execute_crt_op", ExecuteCrtOp);
  add("corert.print_tensorhandle", ASYNCRT_KERNEL(PrintTensorHandle));
  add("corert_sync.print_tensorhandle", ASYNCRT_KERNEL(SyncPrintTensorHandle));
  add("corert.tensorhandle_to_shape", ASYNCRT_KERNEL(TensorHandleToShape));
  add("corert.tensorhandle_to_ht", ASYNCRT_KERNEL(TensorHandleToHt));
  add("corert.ht_to_tensorhandle", ASYNCRT_KERNEL(HtToTensorHandle));
  add("corert.tensorhandle_to_int32", ASYNCRT_KERNEL(TensorHandleToInt32));
  RegisterConstantTensorKernels(registry);
  RegisterCapturedCallKernel(registry);
  RegisterExecuteSequenceKernel(registry);
  add("tfrt.get_device", ASYNCRT_KERNEL(GetDevice));
  add("corert.get_dst_tensor_type", ASYNCRT_KERNEL(GetDstTensorType));
  add("corert.transfer", ASYNCRT_KERNEL(Transfer));
  add("corert.transfer_inferred_tensortype",
      ASYNCRT_KERNEL(TransferInferredTensorType));
  add("corert.create_op_attrs", ASYNCRT_KERNEL(CreateOpAttrs));
  for (const char* type : {"i32", "i64", "f32", "f64", "bool", "dtype", "dense",
                           "aggregate", "str"}) {
    add(absl::StrCat("corert.op_attrs_set.", type), ASYNCRT_KERNEL(OpAttrsSet));
  }
  add("corert.op_attrs_set.shape", ASYNCRT_KERNEL(OpAttrsSetShape));
  for (const char* type : {"i32", "i64", "f32", "f64", "bool"}) {
    add(absl::StrCat("corert.op_attrs_set_array.", type),
        ASYNCRT_KERNEL(OpAttrsSet));
  }
  add("corert.make_composite_op", ASYNCRT_KERNEL(MakeCompositeOp));
  add("corert.cond", Cond);
  add("corert.while", While);
}

}  // namespace asyncrt
