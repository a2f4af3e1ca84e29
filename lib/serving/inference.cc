#include "asyncrt/serving/inference.h"

#include <chrono>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/tensor/conversion_registry.h"

namespace asyncrt::serving {
namespace {

absl::Status CheckInputs(const Signature& signature,
                         const std::vector<ServingTensor>& inputs) {
  if (inputs.size() != signature.inputs.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("the model takes ", signature.inputs.size(),
                     " inputs; the request has ", inputs.size()));
  }
  for (size_t i = 0; i < inputs.size(); ++i) {
    const TensorSpec& spec = signature.inputs[i];
    const ServingTensor& input = inputs[i];
    if (spec.dtype != DType::kInvalid && spec.dtype != input.dtype()) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", spec.name, "' is ", DTypeName(input.dtype()),
                       "; the model takes ", DTypeName(spec.dtype)));
    }
  }
  return absl::OkStatus();
}

// The host tensors of `handles`' tensors (available), or the first error.
absl::StatusOr<std::vector<ServingTensor>> HostOutputs(
    absl::Span<const RCReference<AsyncValue>> tensors,
    const ExecutionContext& exec_ctx) {
  std::vector<ServingTensor> outputs;
  outputs.reserve(tensors.size());
  for (const RCReference<AsyncValue>& value : tensors) {
    if (const absl::Status* error = value->GetErrorIfPresent()) return *error;
    if (const auto* dense = value->GetIfPresent<DenseHostTensor>()) {
      outputs.push_back(dense->CopyRef());
      continue;
    }
    if (const auto* strings = value->GetIfPresent<StringHostTensor>()) {
      outputs.push_back(strings->CopyRef());
      continue;
    }
    const Tensor* tensor = GetTensorIfPresent(*value);
    if (tensor == nullptr) {
      return absl::InternalError("the model returned something not a tensor");
    }
    Device& host = exec_ctx.host()->host_device();
    RCReference<AsyncValue> converted =
        ConvertTensor(*tensor, host, host, DenseHostTensorType(), exec_ctx);
    if (const absl::Status* error = converted->GetErrorIfPresent()) {
      return *error;
    }
    if (!converted->IsType<DenseHostTensor>()) {
      return absl::InternalError("an output did not convert to a host tensor");
    }
    outputs.push_back(converted->get<DenseHostTensor>().CopyRef());
  }
  return outputs;
}

// Folds one call's time into the servable's moving average (weight 1/8).
void RecordRunTime(const Servable& servable,
                   std::chrono::steady_clock::time_point start) {
  // The first call is cold (caches, state built on first use): not typical.
  if (servable.calls.fetch_add(1, std::memory_order_relaxed) == 0) return;
  const int64_t took = std::chrono::duration_cast<std::chrono::nanoseconds>(
                           std::chrono::steady_clock::now() - start)
                           .count();
  const int64_t typical =
      servable.typical_run_ns.load(std::memory_order_relaxed);
  // Racing requests may lose a sample: an average does not mind.
  servable.typical_run_ns.store(
      typical < 0 ? took : typical + (took - typical) / 8,
      std::memory_order_relaxed);
}

// Calls the servable's function on this thread and hands its outputs, on
// the host, to `done` when they are ready.
void Execute(CoreRuntime& core, ExecutionContext exec_ctx,
             std::shared_ptr<const Servable> servable,
             std::vector<ServingTensor> inputs, InferenceDone done) {
  const auto start = std::chrono::steady_clock::now();
  std::vector<RCReference<AsyncValue>> arguments;
  std::vector<AsyncValue*> raw;
  for (ServingTensor& input : inputs) {
    arguments.push_back(MakeAvailableAsyncValueRef<TensorHandle>(
        std::move(input).ToHandle(core)));
    raw.push_back(arguments.back().get());
  }
  std::vector<RCReference<AsyncValue>> results(
      servable->function->num_results());
  servable->function->Execute(exec_ctx, raw, absl::MakeSpan(results));
  std::vector<AsyncValue*> pending;
  for (const auto& result : results) pending.push_back(result.get());
  RunWhenReady(pending, [results = std::move(results),
                         servable = std::move(servable),
                         exec_ctx = std::move(exec_ctx), start,
                         done = std::move(done)]() mutable {
    RecordRunTime(*servable, start);
    // Each result is a tensor handle: its tensor, on the host.
    std::vector<RCReference<AsyncValue>> tensors;
    Device& host = exec_ctx.host()->host_device();
    for (const RCReference<AsyncValue>& result : results) {
      if (const absl::Status* error = result->GetErrorIfPresent()) {
        return std::move(done)(*error);
      }
      if (!result->IsType<TensorHandle>()) {
        return std::move(done)(absl::InternalError(
            "the model's function returned something not a tensor"));
      }
      const TensorHandle& handle = result->get<TensorHandle>();
      tensors.push_back(handle.device() == nullptr || handle.device() == &host
                            ? handle.CopyTensorRef()
                            : handle.TransferTo(exec_ctx, host).CopyTensorRef());
    }
    std::vector<AsyncValue*> waiting;
    for (const auto& tensor : tensors) waiting.push_back(tensor.get());
    RunWhenReady(waiting, [tensors = std::move(tensors),
                           exec_ctx = std::move(exec_ctx),
                           done = std::move(done)]() mutable {
      std::move(done)(HostOutputs(tensors, exec_ctx));
    });
  });
}

}  // namespace

RCReference<RequestContext> RunInference(
    Runtime& runtime, std::shared_ptr<const Servable> servable,
    std::vector<ServingTensor> inputs, InferenceDone done) {
  if (absl::Status status = CheckInputs(servable->signature, inputs);
      !status.ok()) {
    std::move(done)(status);
    return nullptr;
  }
  absl::StatusOr<ExecutionContext> exec_ctx = runtime.CreateExecutionContext();
  if (!exec_ctx.ok()) {
    std::move(done)(exec_ctx.status());
    return nullptr;
  }
  RCReference<RequestContext> request = FormRef(exec_ctx->request_context());
  const int64_t typical_ns =
      servable->typical_run_ns.load(std::memory_order_relaxed);
  auto run = [&core = runtime.core_runtime(), exec_ctx = *std::move(exec_ctx),
              servable = std::move(servable), inputs = std::move(inputs),
              done = std::move(done)]() mutable {
    Execute(core, std::move(exec_ctx), std::move(servable), std::move(inputs),
            std::move(done));
  };
  if (typical_ns >= 0 && typical_ns < kInlineRunLimitNs) {
    run();
  } else {
    EnqueueWork(&runtime.host(), std::move(run));
  }
  return request;
}

RCReference<RequestContext> RunWith(const InferenceRunner& runner,
                                    Runtime& runtime,
                                    std::shared_ptr<const Servable> servable,
                                    std::vector<ServingTensor> inputs,
                                    InferenceDone done) {
  if (runner) return runner(std::move(servable), std::move(inputs), std::move(done));
  return RunInference(runtime, std::move(servable), std::move(inputs),
                      std::move(done));
}

}  // namespace asyncrt::serving
