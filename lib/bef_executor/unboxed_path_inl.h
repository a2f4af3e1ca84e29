// Inline hot paths of the unboxed path: direct kernels run back to back
// from their compact records, and kernels on their unboxed entry, whose
// plain values live in the call's value slots (docs/executor.md, "Unboxed
// values"). The slow cases are in unboxed_path.cc.
#ifndef ASYNCRT_LIB_BEF_EXECUTOR_UNBOXED_PATH_INL_H_
#define ASYNCRT_LIB_BEF_EXECUTOR_UNBOXED_PATH_INL_H_

#include "absl/numeric/bits.h"
#include "lib/bef_executor/call_state_inl.h"

namespace asyncrt::internal {

ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::RunDirectKernels(
    uint32_t index, KernelSite& site, Worklist& ready) {
  const KernelPlan* const kernels = &function_.kernel(0);
  uint64_t* const values = unboxed_values_;
  const RequestContext& request = *exec_ctx_.request_context();
  const KernelPlan* kernel = &kernels[index];
  do {
    if (ABSL_PREDICT_FALSE(unboxed_slow_path_.load(std::memory_order_relaxed) ||
                           request.GetCancelAsyncValue())) {
      return SlowUnboxedKernel(*kernel, site, ready);
    }
    const uint32_t* slots = kernel->operand_slots;
    values[kernel->result_slot] = kernel->direct_invoke(
        values[slots[0]], values[slots[1]], values[slots[2]], values[slots[3]]);
    index = CountDownUnboxedUsers(*kernel, kernel->result_slot, ready);
    if (index == kNoKernel) return kNoKernel;
    kernel = &kernels[index];
  } while (kernel->direct_invoke != nullptr);
  return index;
}

template <size_t kOperands>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::RunUnboxedKernel(
    const KernelPlan& kernel, KernelSite& site, Worklist& ready) {
  const UnboxedKernel& entry = *kernel.unboxed;
  const uint32_t* operands = kernel.operands.data();
  const size_t num_operands =
      kOperands == kDynamic ? kernel.operands.size() : kOperands;
  // Planned so (PlanUnboxed); tells the compiler the array suffices.
  if (num_operands > kMaxUnboxedOperands) __builtin_unreachable();
  const unsigned unboxed_operands = kernel.unboxed_operands;
  // Passed in registers; the unused ones are zero.
  uint64_t bits[kMaxUnboxedOperands] = {};
  bool failed = false;  // An error operand, or one of the wrong type.
#pragma GCC unroll 4
  for (size_t i = 0; i < num_operands; ++i) {
    const uint32_t reg = operands[i];
    if (unboxed_operands & (1u << i)) {
      // An error here would have set unboxed_slow_path_.
      bits[i] = unboxed_values_[reg];
    } else if (const void* payload =
                   Register(reg)
                       .load(std::memory_order_acquire)
                       ->GetIfConcreteTypeId(kernel.operand_types[i])) {
      // All 8 bytes: a payload is followed by its padding up to the next
      // multiple of 8 (the header is 8-byte aligned).
      std::memcpy(&bits[i], payload, sizeof(uint64_t));
    } else {
      // An error, an indirect value or another type.
      failed = true;
    }
  }
  if (ABSL_PREDICT_FALSE(
          failed | unboxed_slow_path_.load(std::memory_order_relaxed) ||
          exec_ctx_.request_context()->GetCancelAsyncValue())) {
    return SlowUnboxedKernel(kernel, site, ready);
  }
  const uint32_t result = kernel.results.data()[0];
  unboxed_values_[result] = entry.invoke(bits[0], bits[1], bits[2], bits[3]);
  return FinishUnboxedKernel(kernel, result, ready);
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::CountDownUnboxedUsers(
    const KernelPlan& kernel, uint32_t result, Worklist& ready) {
  // The counts order the value slot's store before its users' reads.
  const uint32_t user = kernel.unboxed_sole_user;
  if (ABSL_PREDICT_TRUE(user != kNoKernel)) {
    return CountDownOne(user) ? user : kNoKernel;
  }
  CountDown(function_.register_plan(result), ready);
  return kNoKernel;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::FinishUnboxedKernel(
    const KernelPlan& kernel, uint32_t result, Worklist& ready) {
  const uint32_t* operands = kernel.operands.data();
  // This use's references: boxed operands that are not function arguments
  // (unboxed ones hold none without an error). A boxed result may reuse a
  // spent operand: BoxUnboxedResult drops those.
  auto drop = [&](unsigned mask) {
    for (; mask != 0; mask &= mask - 1) {
      Register(operands[absl::countr_zero(mask)])
          .load(std::memory_order_relaxed)
          ->DropRef();
    }
  };
  if (ABSL_PREDICT_TRUE(kernel.unboxed_result)) {
    drop(kernel.owned_boxed_operands);
    return CountDownUnboxedUsers(kernel, result, ready);
  }
  const unsigned spent =
      kernel.owned_boxed_operands & kernel.descriptor.maybe_spent_arguments;
  drop(kernel.owned_boxed_operands & ~spent);
  return DefineLastResult(result,
                          spent != 0
                              ? BoxUnboxedResult(kernel, result)
                              : kernel.unboxed->box(unboxed_values_[result]),
                          ready);
}

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_BEF_EXECUTOR_UNBOXED_PATH_INL_H_
