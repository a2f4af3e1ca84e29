// A call of a BEF function on the fast executor: one block holding the call
// state, the registers, the ready counts and the result slots, and the
// operations on them. The hot ones are inline in the private *_inl.h
// headers (call_state_inl.h: defining registers and counting users down;
// unboxed_path_inl.h, frame_path_inl.h, ready_loop_inl.h: running kernels),
// included by the .cc files whose loops use them, so the ready loop compiles
// into one function as it did in a single file. Private to lib/bef_executor.
//
// Thread-safety: a call's registers, counts and slots are read and written
// atomically (std::atomic_ref) by whichever threads run its kernels.
#ifndef ASYNCRT_LIB_BEF_EXECUTOR_CALL_STATE_H_
#define ASYNCRT_LIB_BEF_EXECUTOR_CALL_STATE_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/types/span.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/host_context/tracing.h"
#include "lib/bef_executor/execution_plan.h"

namespace asyncrt::internal {

// Marks a function result slot whose register was defined before anyone
// waited on it.
constexpr uintptr_t kResultDefined = 1;

// The ready kernels of a thread, last in first out. Every kernel run pushes
// and pops once, so this is a plain array with inline room and a heap
// fallback: absl::InlinedVector's inline-or-heap test and hardened bounds
// checks on each access were a measurable share of a small kernel's cost.
class KernelStack {
 public:
  KernelStack() = default;
  KernelStack(KernelStack&& other) noexcept { *this = std::move(other); }
  KernelStack& operator=(KernelStack&& other) noexcept {
    if (this == &other) return *this;
    if (other.heap_ != nullptr) {
      heap_ = std::move(other.heap_);
      data_ = heap_.get();
      capacity_ = other.capacity_;
      size_ = other.size_;
    } else {
      assign(other.begin(), other.end());
    }
    other.data_ = other.inline_;
    other.capacity_ = kInline;
    other.size_ = 0;
    return *this;
  }

  bool empty() const { return size_ == 0; }
  size_t size() const { return size_; }
  uint32_t* begin() { return data_; }
  uint32_t* end() { return data_ + size_; }
  void clear() { size_ = 0; }
  ABSL_ATTRIBUTE_ALWAYS_INLINE void push_back(uint32_t kernel) {
    if (ABSL_PREDICT_FALSE(size_ == capacity_)) Grow();
    data_[size_++] = kernel;
  }
  // Requires !empty().
  uint32_t pop_back() { return data_[--size_]; }
  template <typename It>
  void assign(It first, It last) {
    const size_t count = std::distance(first, last);
    size_ = 0;
    if (count <= kInline) {
      // Usually a kernel or two: pushes cost less than a memmove call.
      for (; first != last; ++first) push_back(*first);
      return;
    }
    Reserve(count);
    std::copy(first, last, data_);
    size_ = count;
  }
  // Drops the `count` oldest (bottom) kernels.
  void erase_bottom(size_t count) {
    std::copy(data_ + count, data_ + size_, data_);
    size_ -= count;
  }

 private:
  static constexpr uint32_t kInline = 16;

  [[gnu::noinline]] void Grow() { Reserve(2 * capacity_); }
  void Reserve(size_t capacity) {
    if (capacity <= capacity_) return;
    auto grown = std::make_unique<uint32_t[]>(capacity);
    std::copy(data_, data_ + size_, grown.get());
    heap_ = std::move(grown);
    data_ = heap_.get();
    capacity_ = capacity;
  }

  uint32_t* data_ = inline_;
  size_t size_ = 0;
  size_t capacity_ = kInline;
  std::unique_ptr<uint32_t[]> heap_;
  uint32_t inline_[kInline];
};

// The context and frame kernels run in: made once per ready loop (they
// live on its stack) and pointed at each kernel in turn.
struct KernelSite {
  explicit KernelSite(const ExecutionContext& call_context)
      : context(ExecutionContext::Borrow(call_context, Location())),
        frame(context) {}
  KernelSite(const KernelSite&) = delete;
  KernelSite& operator=(const KernelSite&) = delete;

  ExecutionContext context;  // Borrowed: must not outlive the call's.
  AsyncKernelFrame frame;
};

// The state of one call: a header followed, in the same allocation, by the
// registers, the ready counts and the late-result slots.

class CallState {
 public:
  // With `arguments_available`, ready counts leave out argument operands.
  static CallState* Create(const BefFunction& function,
                           const ExecutionContext& exec_ctx,
                           bool arguments_available);

  // For another owner (a continuation or a task) that uses the call after
  // Execute may have returned.
  void AddRef() {
    if (!pinned_) Pin();
    refs_.fetch_add(1, std::memory_order_relaxed);
  }
  void DropRef() {
    if (refs_.load(std::memory_order_acquire) == 1 ||
        refs_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      Destroy();
    }
  }

  // The kernels that became ready on this thread.
  struct Worklist {
    // Run here, last in first out.
    KernelStack kernels;
    // With streams: ready kernels of other streams, started on the work
    // queue (one task per stream) once the running kernel is done.
    absl::InlinedVector<uint32_t, 4> outline;
  };

  // Defines `reg` as `value` (+1 consumed) and, if `count_down`, counts
  // down its users, adding those that become ready to `ready`. With
  // `before_kernels`, no kernel of the call can have run yet (arguments
  // when all are available: nothing counts down, so nothing runs
  // elsewhere while Execute defines them).
  void DefineRegister(uint32_t reg, AsyncValue* value, Worklist& ready,
                      bool count_down = true, bool before_kernels = false);
  // DefineRegister for a kernel's last result: a sole user that becomes
  // ready is returned (kNoKernel if none) instead of pushed, and the ready
  // loop runs it next, as it would have popped it next.
  static constexpr uint32_t kNoKernel = ~uint32_t{0};
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t DefineLastResult(uint32_t reg,
                                                         AsyncValue* value,
                                                         Worklist& ready);
  void RunReady(Worklist& ready);
  // RunReady's body, and the same within a trace event (kept out of line:
  // the trace's storage made every RunReady's frame larger). With
  // `kInlineKernels`, the loop holds the kernel path itself: no call,
  // saved registers or frame setup per kernel on the hottest loop.
  template <bool kInlineKernels>
  void RunReadyUntraced(Worklist& ready);
  [[gnu::noinline]] void RunReadyTraced(Worklist& ready);
  // Past kOffloadThreshold ready kernels: the older half becomes a task on
  // the work queue. False (and nothing offloaded) if the queue has only one
  // thread.
  [[gnu::noinline]] bool OffloadOlderHalf(KernelStack& kernels);
  // tfrt.sync functions: every kernel once, in program order, on this thread.
  void RunInOrder();
  // Counts each kernel's visit in program order, running what it makes
  // ready before the next (see BefFunction::CountVisits).
  // `arguments_available` as given to Create.
  void VisitInOrder(Worklist& ready, bool arguments_available);
  // The value for function result `index` (+1): the register's value, or an
  // indirect value forwarded once the register is defined.
  RCReference<AsyncValue> TakeResult(size_t index, uint32_t reg);
  // Copies the arguments that kernels take unboxed into their value slots,
  // or, if one is not available, concrete and of its type, sends every
  // unboxed kernel of the call to the slow path (which reads it boxed).
  void UnboxArguments(absl::Span<AsyncValue* const> arguments,
                      bool arguments_available);

 private:
  CallState(const BefFunction& function, const ExecutionContext& exec_ctx);
  // A call that finishes inside Execute borrows its caller's context and
  // program (two atomic increments and decrements less per call); the
  // first other owner makes it take references to both.
  void Pin();
  void Destroy();
  // DefineRegister's two paths. The first returns the user if it became
  // ready (kNoKernel if not), for the caller to run or push.
  uint32_t DefineForSoleUser(const RegisterPlan& plan, uint32_t reg,
                             AsyncValue* value, bool count_down);
  void DefineForManyUses(const RegisterPlan& plan, uint32_t reg,
                         AsyncValue* value, Worklist& ready, bool count_down,
                         bool before_kernels);
  void DefineForNonStrictUsers(uint32_t reg, AsyncValue* value, Worklist& ready,
                               bool count_down, bool before_kernels);
  void PublishResultSlots(const RegisterPlan& plan, AsyncValue* value);
  // Strict users count down now if `value` is available, else once it is.
  void CountDownStrictUsers(const RegisterPlan& plan, uint32_t reg,
                            AsyncValue* value, bool available, Worklist& ready);
  void CountDownUsers(uint32_t reg, Worklist& ready);
  void CountDown(const RegisterPlan& plan, Worklist& ready);
  // Counts down one strict kernel's operands; true if it is now ready.
  bool CountDownOne(uint32_t kernel);
  // Counts down plan.outline_users and offloads those that become ready.
  void CountDownOutline(const RegisterPlan& plan, Worklist& ready);
  // RunReady for functions with streams, in TFRT's order.
  void RunStreams(Worklist& ready);
  // With no kernel left to run here, adopts the stream of the first
  // outline kernel: its kernels run here instead of on the work queue.
  void SwitchStream(Worklist& ready);
  // Starts ready.outline on the work queue, one task per stream.
  void OffloadStreams(Worklist& ready);
  // The kernel path out of line (tfrt.sync functions, traced runs): a
  // kernel handed back is pushed.
  void RunKernel(uint32_t kernel, KernelSite& site, Worklist& ready);
  // A direct kernel (KernelPlan::direct_invoke) and, while each hands
  // over to the next, the direct kernels after it, with no dispatch
  // between them. Returns a ready kernel of another kind, or kNoKernel.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t RunDirectKernels(uint32_t index,
                                                         KernelSite& site,
                                                         Worklist& ready);
  // Kernels on their unboxed entries (KernelPlan::unboxed).
  template <size_t kOperands>
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t
  RunUnboxedKernel(const KernelPlan& kernel, KernelSite& site, Worklist& ready);
  // The async value for a kernel's boxed result: a spent operand's or a
  // new one. Drops the operand references FinishUnboxedKernel left.
  [[gnu::noinline]] AsyncValue* BoxUnboxedResult(const KernelPlan& kernel,
                                                 uint32_t result);
  [[gnu::noinline, gnu::cold]] uint32_t SlowUnboxedKernel(
      const KernelPlan& kernel, KernelSite& site, Worklist& ready);
  // Drops the operands' references and defines the result.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t FinishUnboxedKernel(
      const KernelPlan& kernel, uint32_t result, Worklist& ready);
  // Counts down the users of an unboxed result (its slot written, or its
  // register holding an error); returns the sole user if it became ready.
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t CountDownUnboxedUsers(
      const KernelPlan& kernel, uint32_t result, Worklist& ready);
  // The kernel path; returns the kernel to run next (see DefineLastResult).
  // Always inline: GCC takes the attribute from the declaration (one on
  // the definition alone left these out of line once they had two callers).
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t RunKernelInline(uint32_t kernel,
                                                        KernelSite& site,
                                                        Worklist& ready);
  // Kernels with more operands or results than fit the stack arrays.
  uint32_t RunWideKernel(const KernelPlan& kernel, KernelSite& site,
                         Worklist& ready);
  // Kernels with `kOperands` operands and one result, the most common
  // shapes, with loops the compiler unrolls.
  template <size_t kOperands>
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t RunOneResultKernel(
      const KernelPlan& kernel, KernelSite& site, Worklist& ready);
  // The body of all: `results` holds one null reference per result. Counts
  // other than kDynamic are the kernel's, known at compile time.
  static constexpr size_t kDynamic = ~size_t{0};
  template <size_t kOperands = kDynamic, size_t kResults = kDynamic>
  ABSL_ATTRIBUTE_ALWAYS_INLINE uint32_t RunKernelWith(
      const KernelPlan& kernel, AsyncValue** arguments,
      RCReference<AsyncValue>* results, KernelSite& site, Worklist& ready);
  void ResumeAfter(uint32_t reg);
  // The register's value for a non-strict kernel: the defined value or, if
  // there is none yet, a placeholder the definer will forward.
  AsyncValue* ValueOrPlaceholder(uint32_t reg);
  [[gnu::noinline]] AsyncValue* MakePlaceholder(uint32_t reg);

  std::atomic<uint32_t> refs_{1};
  // Set once, by the calling thread inside Execute (no other thread can
  // reach the call before it has a second owner); read by later owners,
  // which the continuation or task hand-off orders after it.
  bool pinned_ = false;
  // Debug tracing, read once per call rather than once per kernel.
  const bool trace_kernels_ = tracing::IsEnabled(tracing::Level::kDebug);
  // Unboxed kernels take SlowUnboxedKernel: in traced runs, in calls
  // whose unboxed arguments could not be copied (see UnboxArguments), and
  // once an error has reached an unboxed register. Set before that error
  // is published, so every kernel the error reaches sees it (the ready
  // count orders them): the fast paths need not check their operands.
  std::atomic<bool> unboxed_slow_path_{trace_kernels_};
  bool is_sync_ = false;  // The function's, read once per call.
  const BefFunction& function_;
  ExecutionContext exec_ctx_;
  // The block's arrays hold plain values, each accessed atomically through
  // std::atomic_ref, so that Create initializes them with one memcpy of the
  // function's image (see BefFunction::CallImage).
  std::atomic_ref<AsyncValue*> Register(uint32_t reg) {
    return std::atomic_ref<AsyncValue*>(registers_[reg]);
  }
  std::atomic_ref<int32_t> ReadyCount(uint32_t kernel) {
    return std::atomic_ref<int32_t>(ready_counts_[kernel]);
  }
  std::atomic_ref<uintptr_t> ResultSlot(size_t index) {
    return std::atomic_ref<uintptr_t>(result_slots_[index]);
  }

  AsyncValue** registers_;
  int32_t* ready_counts_;
  uintptr_t* result_slots_;
  // One 8-byte slot per register, for unboxed registers (uninitialized:
  // each is written by its definer before any user reads it).
  uint64_t* unboxed_values_;
  uint32_t block_class_ = 0;  // See CallBlockCache::ClassOf.
};

// A call's block: the CallState header, then the registers, the ready
// counts and the result slots (one allocation per call).
inline constexpr size_t kCallRegistersAt =
    AlignUp<AsyncValue*>(sizeof(CallState));

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_BEF_EXECUTOR_CALL_STATE_H_
