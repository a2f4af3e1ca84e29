#include "asyncrt/host_context/async_value_ref.h"

namespace asyncrt {

RCReference<AsyncValue> MakeErrorAsyncValueRef(absl::Status status) {
  return MakeErrorAsyncValueRef<ErrorOnlyPayload>(std::move(status));
}

RCReference<AsyncValue> MakeErrorAsyncValueRef(absl::string_view message) {
  return MakeErrorAsyncValueRef(absl::InternalError(message));
}

RCReference<IndirectAsyncValue> MakeIndirectAsyncValue() {
  return TakeRef(new IndirectAsyncValue());
}

}  // namespace asyncrt
