// The unboxed path's slow cases: copying unboxed arguments at the start of a
// call, boxing a result that reuses a spent operand, and kernels whose
// operands are errors or of the wrong type, cancelled or traced.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstring>
#include <vector>

#include "absl/base/optimization.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "lib/bef_executor/unboxed_path_inl.h"

namespace asyncrt::internal {

void CallState::UnboxArguments(absl::Span<AsyncValue* const> arguments,
                               bool arguments_available) {
  if (!arguments_available) {
    unboxed_slow_path_.store(true, std::memory_order_relaxed);
    return;
  }
  for (const BefFunction::UnboxedArgument& unboxed :
       function_.unboxed_arguments()) {
    AsyncValue* argument = arguments[unboxed.index];
    const void* payload =
        argument->IsConcrete() ? argument->GetIfTypeId(unboxed.type) : nullptr;
    if (payload == nullptr) {
      unboxed_slow_path_.store(true, std::memory_order_relaxed);
      return;
    }
    // All 8 bytes: a value's payload is followed by at least its padding
    // up to the next multiple of 8 (the header is 8-byte aligned).
    std::memcpy(&unboxed_values_[unboxed.reg], payload, sizeof(uint64_t));
  }
}

AsyncValue* CallState::BoxUnboxedResult(const KernelPlan& kernel,
                                        uint32_t result) {
  const UnboxedKernel& entry = *kernel.unboxed;
  const uint64_t bits = unboxed_values_[result];
  const uint32_t* operands = kernel.operands.data();
  auto operand = [&](unsigned mask) {
    return Register(operands[absl::countr_zero(mask)])
        .load(std::memory_order_relaxed);
  };
  // As SetReturnedResultAt on the frame path: an operand of the result's
  // type that nobody else references becomes the result. FinishUnboxedKernel
  // left these candidates' references; the one taken becomes the result's.
  const unsigned candidates =
      kernel.owned_boxed_operands & kernel.descriptor.maybe_spent_arguments;
  AsyncValue* reused = nullptr;
  unsigned reused_bit = 0;
  for (unsigned mask = candidates; mask != 0; mask &= mask - 1) {
    AsyncValue* value = operand(mask);
    void* payload = value->GetIfConcreteTypeId(entry.result_type);
    if (payload != nullptr && value->IsUnique()) {
      std::memcpy(payload, &bits, entry.result_size);
      reused = value;
      reused_bit = mask & (~mask + 1);
      break;
    }
  }
  for (unsigned mask = candidates & ~reused_bit; mask != 0; mask &= mask - 1) {
    operand(mask)->DropRef();
  }
  return reused != nullptr ? reused : entry.box(bits);
}

// RunUnboxedKernel when an operand is an error or of the wrong type, or
// the request is cancelled (what the frame path does then), in a traced
// run, or when the call's unboxed arguments are read boxed.
uint32_t CallState::SlowUnboxedKernel(const KernelPlan& kernel,
                                      KernelSite& site, Worklist& ready) {
  const UnboxedKernel& entry = *kernel.unboxed;
  const absl::Span<const uint32_t> operands = kernel.operands;
  uint64_t bits[kMaxUnboxedOperands] = {};
  AsyncValue* error = nullptr;
  size_t wrong_type = operands.size();
  for (size_t i = 0; i < operands.size(); ++i) {
    AsyncValue* value = Register(operands[i]).load(std::memory_order_acquire);
    if (kernel.checked_operands & (1u << i)) {
      if (value != nullptr && error == nullptr) error = value;
      bits[i] = unboxed_values_[operands[i]];
    } else if (value->IsError()) {
      if (error == nullptr) error = value;
    } else if (const void* payload =
                   value->GetIfTypeId(kernel.operand_types[i])) {
      // Resolved here: the fast path takes no indirect value.
      std::memcpy(&bits[i], payload, sizeof(uint64_t));
    } else if (wrong_type == operands.size()) {
      wrong_type = i;
    }
  }
  if (AsyncValue* cancelled =
          exec_ctx_.request_context()->GetCancelAsyncValue()) {
    error = cancelled;
  }
  if (error == nullptr && wrong_type == operands.size()) {
    const uint32_t result = kernel.results[0];
    {
      tracing::ScopedTrace trace(
          tracing::Level::kDebug, kernel.descriptor.name,
          internal::KernelTraceLocation(function_.program(), kernel.location));
      unboxed_values_[result] =
          entry.invoke(bits[0], bits[1], bits[2], bits[3]);
    }
    return FinishUnboxedKernel(kernel, result, ready);
  }
  AsyncValue* failure;  // +1
  if (error != nullptr) {
    // Passed on without reporting again: it was reported where it arose.
    failure = error->AddRef();
  } else {
    site.context.set_location(Location(&function_.program(), kernel.location));
    RCReference<AsyncValue> report;
    site.frame.Reset(kernel.descriptor, nullptr, operands.size(), &report, 1);
    internal::WrongArgumentType(&site.frame, wrong_type);
    failure = report.release();
  }
  for (size_t i = 0; i < operands.size(); ++i) {
    if (kernel.descriptor.argument_is_shared[i]) continue;
    AsyncValue* value = Register(operands[i]).load(std::memory_order_relaxed);
    if (value != nullptr) value->DropRef();
  }
  const uint32_t result = kernel.results[0];
  if (!kernel.unboxed_result) return DefineLastResult(result, failure, ready);
  // One reference per use, as for a boxed register.
  const RegisterPlan& plan = function_.register_plan(result);
  if (plan.references == 0) {
    failure->DropRef();
  } else {
    if (plan.references > 1) failure->AddRef(plan.references - 1);
    // Before the users can run: the fast paths read no register.
    unboxed_slow_path_.store(true, std::memory_order_relaxed);
    Register(result).store(failure, std::memory_order_release);
  }
  return CountDownUnboxedUsers(kernel, result, ready);
}

}  // namespace asyncrt::internal
