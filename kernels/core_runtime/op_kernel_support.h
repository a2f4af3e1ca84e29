// What the corert kernels that run registry ops share (corert.executeop,
// corert.execute_crt_op, corert.execute_sequence): op attributes from BEF,
// the op handler operand, and how an op's result becomes a kernel result.
// Internal to the corert kernel library. Thread-safe: no state of its own.
#ifndef ASYNCRT_KERNELS_CORE_RUNTIME_OP_KERNEL_SUPPORT_H_
#define ASYNCRT_KERNELS_CORE_RUNTIME_OP_KERNEL_SUPPORT_H_

#include <cstddef>
#include <memory>
#include <vector>

#include "absl/status/status.h"
#include "absl/types/span.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/core_runtime/buffer_arena.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/host_context/async_value_ref.h"

namespace asyncrt {

// Copies one BEF attribute into `attrs` under `name`. Function attributes
// take the frame's functions in order (`next_function`).
absl::Status AddAttribute(AsyncKernelFrame* frame, OpAttrs& attrs,
                          absl::string_view name,
                          const bef::Attribute& attribute,
                          size_t& next_function);

// Adds `pairs`, a BEF aggregate of ["key", value] pairs as corert.executeop
// writes `op_attrs` and `op_func_attrs` (may be null: none), to `attrs`.
// Function values take the frame's functions in order (`next_function`).
absl::Status AddAttributePairs(AsyncKernelFrame* frame, OpAttrs& attrs,
                               const bef::Attribute* pairs,
                               size_t& next_function);

// What `corert.arena_op_handler` makes for each call of its function: the
// handler its ops run on, and the call's planned memory (buffer_arena.h).
struct ArenaOpHandler {
  OpHandler* handler;
  RCReference<BufferArena> arena;
};

// The op handler a kernel's operand holds (an OpHandler*, or an
// ArenaOpHandler whose arena then goes to `arena`, borrowed for as long as
// the operand is held); null if it holds neither.
inline OpHandler* OpHandlerOperand(AsyncValue* value,
                                   const BufferArena*& arena) {
  arena = nullptr;
  if (value->IsType<OpHandler*>()) return value->get<OpHandler*>();
  if (value->IsType<ArenaOpHandler>()) {
    const auto& planned = value->get<ArenaOpHandler>();
    arena = planned.arena.get();
    return planned.handler;
  }
  return nullptr;
}

// True if `error` is one of `arguments` (after forwarding), or the tensor
// of a handle among them: it was reported where it was created.
bool IsPropagated(const AsyncValue* error,
                  absl::Span<AsyncValue* const> arguments);

// A kernel's arguments kept for a result that settles later.
using HeldArguments = std::shared_ptr<std::vector<RCReference<AsyncValue>>>;

// The kernel result for an available op result: the handle itself, or its
// error. An error is new (reported now, at this kernel, through
// `exec_ctx`) unless it is one of `arguments`' errors, which were reported
// where they were made.
RCReference<AsyncValue> SettleHandle(TensorHandle handle,
                                     absl::Span<AsyncValue* const> arguments,
                                     const ExecutionContext& exec_ctx);
// The same for an available chain.
RCReference<AsyncValue> SettleChain(RCReference<AsyncValue> chain,
                                    absl::Span<AsyncValue* const> arguments,
                                    const ExecutionContext& exec_ctx);

}  // namespace asyncrt

#endif  // ASYNCRT_KERNELS_CORE_RUNTIME_OP_KERNEL_SUPPORT_H_
