// One inference request on a servable: inputs checked against its
// signature, its function called in a new request of the runtime, its
// outputs brought back as dense host tensors (copied from the device they
// were computed on, converted from other host tensor types).
//
// Thread-safety: thread-safe. Blocking: never; `done` runs on a runtime
// thread (or the caller's, for errors found at once).
#ifndef ASYNCRT_SERVING_INFERENCE_H_
#define ASYNCRT_SERVING_INFERENCE_H_

#include <functional>
#include <memory>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/status/statusor.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/serving/model_repository.h"
#include "asyncrt/serving/serving_tensor.h"
#include "asyncrt/tensor/dense_host_tensor.h"

namespace asyncrt::serving {

using InferenceDone = absl::AnyInvocable<void(
    absl::StatusOr<std::vector<ServingTensor>> outputs) &&>;

// `inputs` in signature order. InvalidArgument naming the input for a
// wrong count, dtype or shape; the model's own errors as they come.
// Returns the request running the model (null if it did not start):
// Cancel() it to stop the kernels that have not run yet (a deadline, a
// client gone).
//
// Where it runs: a model whose calls typically take under kInlineRunLimit
// runs on the calling thread (a server's I/O thread), which answers
// without handing the request to another thread and back; any other
// (and every model's first request, before it has been timed) starts as a
// task on the runtime's work queue, so that a long model never holds the
// caller's thread.
inline constexpr int64_t kInlineRunLimitNs = 50'000;  // 50 us

RCReference<RequestContext> RunInference(
    Runtime& runtime, std::shared_ptr<const Servable> servable,
    std::vector<ServingTensor> inputs, InferenceDone done);

// How a server runs a request: RunInference, or a Batcher's Submit (which
// returns no request to cancel: a batch is shared). Null means
// RunInference.
using InferenceRunner = std::function<RCReference<RequestContext>(
    std::shared_ptr<const Servable> servable,
    std::vector<ServingTensor> inputs, InferenceDone done)>;

// Runs through `runner`, or RunInference if it is null.
RCReference<RequestContext> RunWith(const InferenceRunner& runner,
                                    Runtime& runtime,
                                    std::shared_ptr<const Servable> servable,
                                    std::vector<ServingTensor> inputs,
                                    InferenceDone done);

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_INFERENCE_H_
