#include "asyncrt/host_context/execution_context.h"

#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/host_context.h"

namespace asyncrt {

RequestContext::~RequestContext() {
  if (AsyncValue* cancel = cancel_value_.load(std::memory_order_acquire)) {
    cancel->DropRef();
  }
}

void RequestContext::Cancel() {
  if (IsCancelled()) return;
  AsyncValue* error =
      MakeErrorAsyncValueRef(absl::CancelledError("Cancelled")).release();
  AsyncValue* expected = nullptr;
  if (!cancel_value_.compare_exchange_strong(expected, error,
                                             std::memory_order_acq_rel)) {
    error->DropRef();  // Another thread cancelled first.
  }
}

absl::StatusOr<RCReference<RequestContext>> RequestContextBuilder::Build() && {
  if (host_ == nullptr) {
    return absl::InvalidArgumentError("a request needs a HostContext");
  }
  return TakeRef(
      new RequestContext(host_, resource_context_, id_, std::move(data_)));
}

RCReference<AsyncValue> EmitErrorAsync(const ExecutionContext& exec_ctx,
                                       absl::Status status) {
  exec_ctx.host()->EmitError(
      DecodedDiagnostic(exec_ctx.location().Decode(), status));
  return MakeErrorAsyncValueRef(std::move(status));
}

}  // namespace asyncrt
