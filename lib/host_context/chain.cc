#include "asyncrt/host_context/chain.h"

#include "asyncrt/host_context/async_value_ref.h"

namespace asyncrt {

AsyncValueRef<Chain> GetReadyChain() {
  // Leaked on purpose: it must outlive every user, including static
  // destructors.
  static AsyncValue* const ready_chain =
      ConcreteAsyncValue<Chain>::MakeSingleton();
  // Not refcounted: AddRef/DropRef are no-ops, so this costs nothing.
  return AsyncValueRef<Chain>(TakeRef(ready_chain));
}

}  // namespace asyncrt
