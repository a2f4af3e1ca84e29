// AsyncKernelFrame: what a kernel sees when it runs.
//
// The executor fills a frame with the kernel's arguments (available async
// values, borrowed +0), attributes, function operands and execution context,
// calls the kernel, then reads the results the kernel set (each +1, possibly
// still unavailable). A frame lives only for the duration of the call: a
// kernel that finishes later must keep what it needs (copy the
// ExecutionContext, take references to arguments, keep its result
// AsyncValueRefs).
//
// Not thread-safe; used by the one thread running the kernel.
#ifndef ASYNCRT_BEF_EXECUTOR_KERNEL_FRAME_H_
#define ASYNCRT_BEF_EXECUTOR_KERNEL_FRAME_H_

#include <atomic>
#include <memory>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/execution_context.h"

namespace asyncrt {

class Function;

// State that a kernel derives once from its attributes (a resolved op, frozen
// attributes, a parsed constant) and reuses on every later run of the same
// kernel in the same loaded function. See AsyncKernelFrame::GetOrCreateState.
class KernelState {
 public:
  virtual ~KernelState() = default;
};

// One kernel's state, owned by its BEF function. Thread-safe.
class KernelStateSlot {
 public:
  KernelStateSlot() = default;
  KernelStateSlot(const KernelStateSlot&) = delete;
  KernelStateSlot& operator=(const KernelStateSlot&) = delete;
  ~KernelStateSlot() { delete state_.load(std::memory_order_acquire); }

  KernelState* Get() const { return state_.load(std::memory_order_acquire); }
  // Stores `state` unless another thread stored one first; returns the one
  // stored (and drops `state` if it lost).
  KernelState* Install(std::unique_ptr<KernelState> state) {
    KernelState* expected = nullptr;
    if (state_.compare_exchange_strong(expected, state.get(),
                                       std::memory_order_acq_rel,
                                       std::memory_order_acquire)) {
      return state.release();
    }
    return expected;
  }

 private:
  std::atomic<KernelState*> state_{nullptr};
};

class AsyncKernelFrame {
 public:
  AsyncKernelFrame(const ExecutionContext& exec_ctx, const bef::BefFile& file,
                   absl::string_view kernel_name,
                   absl::Span<AsyncValue* const> arguments,
                   absl::Span<const bef::NamedAttribute> attributes,
                   absl::Span<const Function* const> functions,
                   absl::Span<RCReference<AsyncValue>> results,
                   KernelStateSlot* state_slot = nullptr,
                   const uint8_t* argument_is_shared = nullptr)
      : exec_ctx_(exec_ctx),
        file_(file),
        kernel_name_(kernel_name),
        arguments_(arguments),
        attributes_(attributes),
        functions_(functions),
        results_(results),
        state_slot_(state_slot),
        argument_is_shared_(argument_is_shared) {}

  const ExecutionContext& GetExecutionContext() const { return exec_ctx_; }
  HostContext* GetHostContext() const { return exec_ctx_.host(); }
  absl::string_view kernel_name() const { return kernel_name_; }

  //===--- Arguments (+0, available) --------------------------------------===//
  size_t GetNumArgs() const { return arguments_.size(); }
  AsyncValue* GetArgAt(size_t index) const { return arguments_[index]; }
  // Whether this kernel holds the last reference to argument `index`: no
  // other kernel, function result or caller will see the value, so the
  // kernel may take its payload apart (move it out, reuse its buffer).
  // Function arguments never qualify: the caller owns them.
  bool IsLastUseOfArg(size_t index) const {
    if (argument_is_shared_ == nullptr || argument_is_shared_[index]) {
      return false;
    }
    AsyncValue* value = arguments_[index];
    return !value->IsIndirect() && value->IsUnique();
  }
  absl::Span<AsyncValue* const> GetArguments() const { return arguments_; }

  //===--- Attributes -----------------------------------------------------===//
  size_t GetNumAttributes() const { return attributes_.size(); }
  const bef::Attribute& GetAttributeAt(size_t index) const {
    return file_.attribute(attributes_[index].attribute);
  }
  absl::string_view GetAttributeNameAt(size_t index) const {
    return file_.string(attributes_[index].name);
  }
  // The attribute named `name`, or nullptr.
  const bef::Attribute* GetAttribute(absl::string_view name) const {
    for (size_t i = 0; i < attributes_.size(); ++i) {
      if (GetAttributeNameAt(i) == name) return &GetAttributeAt(i);
    }
    return nullptr;
  }
  const bef::BefFile& bef_file() const { return file_; }

  //===--- Function operands
  //------------------------------------------------===//
  size_t GetNumFunctions() const { return functions_.size(); }
  const Function* GetFunctionAt(size_t index) const {
    return functions_[index];
  }
  absl::Span<const Function* const> GetFunctions() const { return functions_; }

  //===--- Results
  //----------------------------------------------------------===//
  size_t GetNumResults() const { return results_.size(); }
  // Sets result `index` (+1 consumed). Each result is set once.
  void SetResultAt(size_t index, RCReference<AsyncValue> value) {
    results_[index] = std::move(value);
  }
  template <typename T, typename... Args>
  void EmplaceResultAt(size_t index, Args&&... args) {
    SetResultAt(index,
                MakeAvailableAsyncValueRef<T>(std::forward<Args>(args)...));
  }
  // An unconstructed result to publish later (+1 returned; the frame keeps
  // its own reference).
  template <typename T>
  AsyncValueRef<T> AllocateResultAt(size_t index) {
    auto value = MakeUnconstructedAsyncValueRef<T>();
    SetResultAt(index, value);
    return value;
  }
  bool HasResultAt(size_t index) const { return bool(results_[index]); }
  // All result slots (null until set), for a kernel that hands them to a
  // Function::Execute of the same arity.
  absl::Span<RCReference<AsyncValue>> GetResults() { return results_; }

  //===--- Per-kernel state -----------------------------------------------===//
  // The state of this kernel (T derives from KernelState), made by `make()`
  // (returning std::unique_ptr<T>) the first time and kept by the function
  // for later runs. The state depends only on what does not change between
  // runs (attributes, function operands), never on argument values. Two
  // first runs racing may both call make(); one state wins. A frame with no
  // slot (not run from a BEF function) makes a fresh state each time.
  template <typename T, typename Make>
  T* GetOrCreateState(Make&& make) {
    static_assert(std::is_base_of_v<KernelState, T>);
    if (state_slot_ == nullptr) {
      owned_state_ = make();
      return static_cast<T*>(owned_state_.get());
    }
    if (KernelState* state = state_slot_->Get()) return static_cast<T*>(state);
    std::unique_ptr<KernelState> made = make();
    return static_cast<T*>(state_slot_->Install(std::move(made)));
  }

  //===--- Errors
  //-----------------------------------------------------------===//
  // Reports `status` at this kernel's location (once: this is where the
  // error is created) and sets every result not yet set to it.
  void ReportError(absl::Status status) {
    RCReference<AsyncValue> error =
        EmitErrorAsync(exec_ctx_, std::move(status));
    for (auto& result : results_) {
      if (!result) result = error;
    }
  }

 private:
  const ExecutionContext& exec_ctx_;
  const bef::BefFile& file_;
  absl::string_view kernel_name_;
  absl::Span<AsyncValue* const> arguments_;
  absl::Span<const bef::NamedAttribute> attributes_;
  absl::Span<const Function* const> functions_;
  absl::Span<RCReference<AsyncValue>> results_;
  KernelStateSlot* state_slot_;
  // Per argument: 1 if others may share it regardless of its refcount (a
  // function argument); null: treat all as shared.
  const uint8_t* argument_is_shared_;
  std::unique_ptr<KernelState> owned_state_;  // Only without a slot.
};

}  // namespace asyncrt

#endif  // ASYNCRT_BEF_EXECUTOR_KERNEL_FRAME_H_
