// Inline hot paths of the frame path: a kernel run through its
// AsyncKernelFrame with boxed operands (the general path), specialised for
// one-result kernels of few operands. Kernels wider than the inline frame
// and the out-of-line entry are in frame_path.cc.
#ifndef ASYNCRT_LIB_BEF_EXECUTOR_FRAME_PATH_INL_H_
#define ASYNCRT_LIB_BEF_EXECUTOR_FRAME_PATH_INL_H_

#include "asyncrt/bef_executor/kernel_utils.h"
#include "lib/bef_executor/unboxed_path_inl.h"

namespace asyncrt::internal {

// Small kernels (nearly all) keep their frame on the stack.
constexpr size_t kInlineOperands = 8;

ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::RunKernelInline(
    uint32_t index, KernelSite& site, Worklist& ready) {
  const KernelPlan& kernel = function_.kernel(index);
  if (kernel.direct_invoke != nullptr) {
    return RunDirectKernels(index, site, ready);
  }
  if (kernel.unboxed != nullptr) {
    switch (kernel.operands.size()) {
      case 1:
        return RunUnboxedKernel<1>(kernel, site, ready);
      case 2:
        return RunUnboxedKernel<2>(kernel, site, ready);
      default:
        return RunUnboxedKernel<kDynamic>(kernel, site, ready);
    }
  }
  if (kernel.results.size() == 1) {
    switch (kernel.operands.size()) {
      case 0:
        return RunOneResultKernel<0>(kernel, site, ready);
      case 1:
        return RunOneResultKernel<1>(kernel, site, ready);
      case 2:
        return RunOneResultKernel<2>(kernel, site, ready);
      case 3:
        return RunOneResultKernel<3>(kernel, site, ready);
      default:
        break;
    }
  }
  if (ABSL_PREDICT_FALSE(kernel.operands.size() > kInlineOperands ||
                         kernel.results.size() > kInlineOperands)) {
    return RunWideKernel(kernel, site, ready);
  }
  AsyncValue* arguments[kInlineOperands];
  // Raw storage with every slot constructed null (a fixed count: a few
  // vector stores, where a loop of `num_results` became a slow `rep stos`).
  // RunKernelWith releases the used ones; the others stay null, so there is
  // nothing to destroy.
  alignas(RCReference<AsyncValue>) unsigned char
      result_storage[kInlineOperands * sizeof(RCReference<AsyncValue>)];
  auto* results = reinterpret_cast<RCReference<AsyncValue>*>(result_storage);
  for (size_t i = 0; i < kInlineOperands; ++i) {
    new (&results[i]) RCReference<AsyncValue>();
  }
  return RunKernelWith(kernel, arguments, results, site, ready);
}

template <size_t kOperands>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::RunOneResultKernel(
    const KernelPlan& kernel, KernelSite& site, Worklist& ready) {
  AsyncValue* arguments[kOperands > 0 ? kOperands : 1];
  // Released by RunKernelWith: nothing to destroy.
  alignas(RCReference<AsyncValue>) unsigned char
      result_storage[sizeof(RCReference<AsyncValue>)];
  auto* result = new (result_storage) RCReference<AsyncValue>();
  return RunKernelWith<kOperands, 1>(kernel, arguments, result, site, ready);
}

template <size_t kOperands, size_t kResults>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::RunKernelWith(
    const KernelPlan& kernel, AsyncValue** arguments,
    RCReference<AsyncValue>* results, KernelSite& site, Worklist& ready) {
  const uint32_t* operands = kernel.operands.data();
  const size_t num_operands =
      kOperands == kDynamic ? kernel.operands.size() : kOperands;
  const size_t num_results =
      kResults == kDynamic ? kernel.results.size() : kResults;
  AsyncValue* error = nullptr;
  if (ABSL_PREDICT_FALSE(kernel.non_strict)) {
    // Errors and pending values are the kernel's to handle.
    for (size_t i = 0; i < num_operands; ++i) {
      arguments[i] = ValueOrPlaceholder(operands[i]);
    }
  } else {
    // Unrolled: with a count known at compile time the loops below become
    // straight-line code (GCC's -O2 kept two-iteration loops).
#pragma GCC unroll 8
    for (size_t i = 0; i < num_operands; ++i) {
      AsyncValue* value = Register(operands[i]).load(std::memory_order_acquire);
      if (ABSL_PREDICT_FALSE(value->IsError()) && error == nullptr) {
        error = value;
      }
      arguments[i] = value;
    }
  }
  if (AsyncValue* cancelled =
          exec_ctx_.request_context()->GetCancelAsyncValue()) {
    error = cancelled;
  }
  if (ABSL_PREDICT_FALSE(error != nullptr)) {
    // Propagate without running and without reporting again: the error was
    // reported where it was created.
    for (size_t i = 0; i < num_results; ++i) results[i] = FormRef(error);
  } else {
    site.context.set_location(Location(&function_.program(), kernel.location));
    AsyncKernelFrame& frame = site.frame;
    frame.Reset(kernel.descriptor, arguments, num_operands, results,
                num_results);
    if (ABSL_PREDICT_FALSE(trace_kernels_)) {
      tracing::ScopedTrace trace(
          tracing::Level::kDebug, kernel.descriptor.name,
          internal::KernelTraceLocation(function_.program(), kernel.location));
      kernel.impl(&frame);
    } else {
      kernel.impl(&frame);
    }
    for (size_t i = 0; i < num_results; ++i) {
      if (ABSL_PREDICT_FALSE(!results[i] ||
                             (is_sync_ && results[i]->IsUnavailable()))) {
        // A result the kernel did not set, or (in a tfrt.sync function)
        // one not yet available.
        internal::ReportBadResults(kernel.descriptor.name, frame, results,
                                   num_results);
        break;
      }
    }
  }
  // This kernel's uses of its operands are over (those it took are null).
  const uint8_t* operand_is_argument = kernel.descriptor.argument_is_shared;
#pragma GCC unroll 8
  for (size_t i = 0; i < num_operands; ++i) {
    if (!operand_is_argument[i] && arguments[i] != nullptr) {
      arguments[i]->DropRef();
    }
  }
  if (num_results == 0) return kNoKernel;
  const uint32_t* result_registers = kernel.results.data();
  for (size_t i = 0; i + 1 < num_results; ++i) {
    DefineRegister(result_registers[i], results[i].release(), ready);
  }
  return DefineLastResult(result_registers[num_results - 1],
                          results[num_results - 1].release(), ready);
}

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_BEF_EXECUTOR_FRAME_PATH_INL_H_
