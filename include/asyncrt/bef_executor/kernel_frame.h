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

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/numeric/bits.h"
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

// What the executor decoded once about a kernel of a loaded function: its
// name, attributes, function operands and state. Owned by the function and
// immutable while it is loaded, so a frame only points at it.
struct KernelDescriptor {
  const bef::BefFile* file = nullptr;
  absl::string_view name;
  absl::Span<const bef::NamedAttribute> attributes;
  absl::Span<const Function* const> functions;
  KernelStateSlot* state_slot = nullptr;  // Never null.
  // Per argument: 1 if others may share it regardless of its refcount (a
  // function argument, whose reference the caller holds).
  const uint8_t* argument_is_shared = nullptr;
  // Bit i (i < 8): argument i may be at its last use here (not a function
  // argument, not passed twice). SetReturnedResultAt looks only at these.
  // Set only for strict kernels, whose arguments are concrete (available
  // and not errors) while they run.
  uint8_t maybe_spent_arguments = 0;
};

class AsyncKernelFrame {
 public:
  // `results` holds one null reference per result for the kernel to set.
  // The frame may take an argument at its last use (TakeArgAt), leaving its
  // slot in `arguments` null: the executor drops only what remains.
  AsyncKernelFrame(const ExecutionContext& exec_ctx,
                   const KernelDescriptor& kernel, AsyncValue** arguments,
                   size_t num_arguments, RCReference<AsyncValue>* results,
                   size_t num_results)
      : exec_ctx_(exec_ctx),
        kernel_(&kernel),
        arguments_(arguments),
        results_(results),
        num_arguments_(num_arguments),
        num_results_(num_results) {}
  // A frame for no kernel yet: the executor keeps one frame per ready loop,
  // with `exec_ctx` re-pointed at each kernel's location, and Resets it for
  // each kernel (a few stores, where building both was a tenth of a small
  // kernel's cost).
  explicit AsyncKernelFrame(const ExecutionContext& exec_ctx)
      : exec_ctx_(exec_ctx) {}
  void Reset(const KernelDescriptor& kernel, AsyncValue** arguments,
             size_t num_arguments, RCReference<AsyncValue>* results,
             size_t num_results) {
    kernel_ = &kernel;
    arguments_ = arguments;
    results_ = results;
    num_arguments_ = num_arguments;
    num_results_ = num_results;
  }

  const ExecutionContext& GetExecutionContext() const { return exec_ctx_; }
  HostContext* GetHostContext() const { return exec_ctx_.host(); }
  absl::string_view kernel_name() const { return kernel_->name; }

  //===--- Arguments (+0, available) --------------------------------------===//
  size_t GetNumArgs() const { return num_arguments_; }
  AsyncValue* GetArgAt(size_t index) const { return arguments_[index]; }
  // Whether this kernel holds the last reference to argument `index`: no
  // other kernel, function result or caller will see the value, so the
  // kernel may take its payload apart (move it out, reuse its buffer).
  // Function arguments never qualify: the caller owns them.
  bool IsLastUseOfArg(size_t index) const {
    if (kernel_->argument_is_shared[index]) return false;
    AsyncValue* value = arguments_[index];
    return value != nullptr && !value->IsIndirect() && value->IsUnique();
  }
  // Takes the executor's reference to argument `index` (+1 returned), which
  // must be at its last use (IsLastUseOfArg). GetArgAt(index) is null after.
  RCReference<AsyncValue> TakeArgAt(size_t index) {
    AsyncValue* value = arguments_[index];
    arguments_[index] = nullptr;
    return TakeRef(value);
  }
  absl::Span<AsyncValue* const> GetArguments() const {
    return absl::MakeConstSpan(arguments_, num_arguments_);
  }

  //===--- Attributes -----------------------------------------------------===//
  size_t GetNumAttributes() const { return kernel_->attributes.size(); }
  const bef::Attribute& GetAttributeAt(size_t index) const {
    return kernel_->file->attribute(kernel_->attributes[index].attribute);
  }
  absl::string_view GetAttributeNameAt(size_t index) const {
    return kernel_->file->string(kernel_->attributes[index].name);
  }
  // The attribute named `name`, or nullptr.
  const bef::Attribute* GetAttribute(absl::string_view name) const {
    for (size_t i = 0; i < kernel_->attributes.size(); ++i) {
      if (GetAttributeNameAt(i) == name) return &GetAttributeAt(i);
    }
    return nullptr;
  }
  const bef::BefFile& bef_file() const { return *kernel_->file; }

  //===--- Function operands
  //------------------------------------------------===//
  size_t GetNumFunctions() const { return kernel_->functions.size(); }
  const Function* GetFunctionAt(size_t index) const {
    return kernel_->functions[index];
  }
  absl::Span<const Function* const> GetFunctions() const {
    return kernel_->functions;
  }

  //===--- Results
  //----------------------------------------------------------===//
  size_t GetNumResults() const { return num_results_; }
  // Sets result `index` (+1 consumed). Each result is set once.
  void SetResultAt(size_t index, RCReference<AsyncValue> value) {
    results_[index] = std::move(value);
  }
  template <typename T, typename... Args>
  void EmplaceResultAt(size_t index, Args&&... args) {
    SetResultAt(index,
                MakeAvailableAsyncValueRef<T>(std::forward<Args>(args)...));
  }
  // Sets result `index` to the value a kernel returned, once the kernel is
  // done with its arguments. Plain data goes into the async value of an
  // argument of the same type at its last use when there is one: a chain of
  // scalar kernels then allocates nothing. (Not for EmplaceResultAt, which a
  // kernel may call while it still reads its arguments' payloads.)
  template <typename T>
  ABSL_ATTRIBUTE_ALWAYS_INLINE void SetReturnedResultAt(size_t index,
                                                        T&& value) {
    using Value = std::decay_t<T>;
    if constexpr (std::is_trivially_copyable_v<Value> &&
                  std::is_trivially_destructible_v<Value>) {
      for (unsigned mask = kernel_->maybe_spent_arguments; mask != 0;
           mask &= mask - 1) {
        const size_t i = absl::countr_zero(mask);
        AsyncValue* argument = arguments_[i];
        // Plain fields first, then the atomic loads: the compiler re-reads
        // fields after an acquire load.
        // Concrete, as a strict kernel's argument (see the mask).
        if (argument == nullptr || argument->IsIndirect() ||
            !argument->IsType<Value>() || !argument->IsUnique()) {
          continue;
        }
        // Direct, so no resolution: the payload is the value's own.
        static_cast<ConcreteAsyncValue<Value>*>(argument)->payload() = value;
        arguments_[i] = nullptr;
        // Released first, so the store below has no old reference to drop
        // inline (the slot is empty unless the kernel filled it itself).
        AsyncValue* previous = results_[index].release();
        results_[index] = TakeRef(argument);
        if (ABSL_PREDICT_FALSE(previous != nullptr)) previous->DropRef();
        return;
      }
    }
    EmplaceResultAt<Value>(index, std::forward<T>(value));
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
  absl::Span<RCReference<AsyncValue>> GetResults() {
    return absl::MakeSpan(results_, num_results_);
  }

  //===--- Per-kernel state -----------------------------------------------===//
  // The state of this kernel (T derives from KernelState), made by `make()`
  // (returning std::unique_ptr<T>) the first time and kept by the function
  // for later runs. The state depends only on what does not change between
  // runs (attributes, function operands), never on argument values. Two
  // first runs racing may both call make(); one state wins.
  template <typename T, typename Make>
  T* GetOrCreateState(Make&& make) {
    static_assert(std::is_base_of_v<KernelState, T>);
    KernelStateSlot& slot = *kernel_->state_slot;
    if (KernelState* state = slot.Get()) return static_cast<T*>(state);
    std::unique_ptr<KernelState> made = make();
    return static_cast<T*>(slot.Install(std::move(made)));
  }

  //===--- Errors
  //-----------------------------------------------------------===//
  // Reports `status` at this kernel's location (once: this is where the
  // error is created) and sets every result not yet set to it.
  void ReportError(absl::Status status) {
    RCReference<AsyncValue> error =
        EmitErrorAsync(exec_ctx_, std::move(status));
    for (size_t i = 0; i < num_results_; ++i) {
      if (!results_[i]) results_[i] = error;
    }
  }

 private:
  const ExecutionContext& exec_ctx_;
  // Left unset by the one-argument constructor (Reset sets them all).
  const KernelDescriptor* kernel_;
  AsyncValue** arguments_;
  RCReference<AsyncValue>* results_;
  size_t num_arguments_;
  size_t num_results_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_BEF_EXECUTOR_KERNEL_FRAME_H_
