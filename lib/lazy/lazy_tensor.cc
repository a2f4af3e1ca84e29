// Lazy tensors (lazy_tensor.h): the public classes, reads and copies. The
// recording and tracing machinery is LazyState's (lazy_state.h).
#include "asyncrt/lazy/lazy_tensor.h"

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/tensor/conversion_registry.h"
#include "lib/lazy/lazy_state.h"

namespace asyncrt::lazy {
namespace internal {

void DestroyValue(LazyValueRefs* refs) {
  auto* value = static_cast<LazyValue*>(refs);
  LazyState* state = value->holds_state ? value->state : nullptr;
  value->~LazyValue();
  RecyclingAllocator<LazyValue>().deallocate(value, 1);
  if (state != nullptr) state->Unref();
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

absl::StatusOr<LazyTensor> LazyState::CopyTo(LazyValue* original,
                                             absl::string_view device_name) {
  absl::StatusOr<Device*> device = FindDevice(device_name);
  if (!device.ok()) return device.status();
  if (*device == original->device) {
    RefValue(original);
    return LazyTensor(original);
  }
  absl::Status status = Materialize({original});
  if (!status.ok()) return status;
  absl::StatusOr<ExecutionContext> exec_ctx = runtime_.CreateExecutionContext();
  if (!exec_ctx.ok()) return exec_ctx.status();
  RCReference<AsyncValue> source = HandleOf(*original);
  LazyValue* value = NewValue(original->metadata, *device, original->reduced);
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
  return LazyTensor(value);
}

}  // namespace internal

using internal::LazyState;
using internal::LazyValue;

LazyTensor::LazyTensor(LazyValue* value) : value_(value) {}

DType LazyTensor::dtype() const {
  return value()->reduced ? DType::kF32 : value()->metadata.dtype;
}

const TensorShape& LazyTensor::shape() const { return value()->metadata.shape; }

const std::string& LazyTensor::device() const {
  return value()->device->name();
}

bool LazyTensor::IsReducedPrecision() const { return value()->reduced; }

bool LazyTensor::IsMaterialized() const {
  return value()->state->HandleOf(*value()) != nullptr;
}

absl::StatusOr<DenseHostTensor> LazyTensor::ToHost() const {
  if (!valid()) return absl::InvalidArgumentError("ToHost: invalid tensor");
  absl::Status status = value()->state->Materialize({value()});
  if (!status.ok()) return status;
  return value()->state->ToHost(*value());
}

absl::Status LazyTensor::Await() const {
  if (!valid()) return absl::InvalidArgumentError("Await: invalid tensor");
  absl::Status status = value()->state->Materialize({value()});
  if (!status.ok()) return status;
  return value()->state->Await(*value());
}

absl::StatusOr<LazyTensor> LazyTensor::CopyTo(absl::string_view device) const {
  if (!valid()) return absl::InvalidArgumentError("CopyTo: invalid tensor");
  return value()->state->CopyTo(value(), device);
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
  absl::Status status = value()->state->Record(
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
      value()->state->Record("nn.cast", {*this}, attrs, 1,
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
      new LazyContext(new LazyState(runtime, options)));
}

LazyContext::~LazyContext() {
  state_->Shutdown();
  state_->Unref();
}

absl::StatusOr<LazyTensor> LazyContext::FromHost(DenseHostTensor tensor,
                                                 absl::string_view device) {
  return state_->FromHost(std::move(tensor), device);
}

absl::StatusOr<std::vector<LazyTensor>> LazyContext::Execute(
    absl::string_view op_name, const LazyArgs& args, const OpAttrs& attrs,
    size_t num_results) {
  std::vector<LazyTensor> results(num_results);
  absl::Status status = state_->Record(op_name, args, attrs, num_results,
                                       absl::MakeSpan(results));
  if (!status.ok()) return status;
  return results;
}

absl::StatusOr<LazyTensor> LazyContext::Call(absl::string_view op_name,
                                             const LazyArgs& args,
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
