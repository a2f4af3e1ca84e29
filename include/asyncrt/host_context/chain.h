// Chain: the payload of values that only order side effects.
#ifndef ASYNCRT_HOST_CONTEXT_CHAIN_H_
#define ASYNCRT_HOST_CONTEXT_CHAIN_H_

#include "asyncrt/host_context/async_value_ref.h"

namespace asyncrt {

struct Chain {};

// A process-wide available chain. Costs no allocation and no atomic
// operation: the shared value is not refcounted. Thread-safe.
AsyncValueRef<Chain> GetReadyChain();

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_CHAIN_H_
