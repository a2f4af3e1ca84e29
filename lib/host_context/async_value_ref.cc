#include "asyncrt/host_context/async_value_ref.h"

#include "asyncrt/host_context/chain.h"

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

AsyncValueRef<Chain> GetReadyChain() {
  // Leaked on purpose: it must outlive every user, including static
  // destructors.
  static AsyncValue* const ready_chain =
      ConcreteAsyncValue<Chain>::MakeSingleton();
  // Not refcounted: AddRef/DropRef are no-ops, so this costs nothing.
  return AsyncValueRef<Chain>(TakeRef(ready_chain));
}

}  // namespace asyncrt
