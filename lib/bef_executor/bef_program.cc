// The BEF executor: per-function execution plans and the lock-free dataflow
// interpreter. Design notes are in docs/executor.md.
#include "asyncrt/bef_executor/bef_program.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <memory>
#include <new>
#include <optional>

#include "absl/base/optimization.h"
#include "absl/container/flat_hash_set.h"
#include "absl/container/inlined_vector.h"
#include "absl/numeric/bits.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/bef_executor/native_function.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/tracing.h"
#include "asyncrt/support/block_cache.h"
#include "lib/bef_executor/executor_common.h"
#include "lib/bef_executor/reference_executor.h"

namespace asyncrt {
namespace {

using internal::TypeNames;

//===--- Native functions -------------------------------------------------===//

class NativeFunction final : public Function {
 public:
  NativeFunction(const bef::BefFile& file, const bef::Function& function,
                 NativeFunctionImplementation impl)
      : Function(std::string(function.name),
                 TypeNames(file, function.argument_types),
                 TypeNames(file, function.result_types)),
        impl_(impl) {}

  void Execute(const ExecutionContext& exec_ctx,
               absl::Span<AsyncValue* const> arguments,
               absl::Span<RCReference<AsyncValue>> results) const override {
    if (arguments.size() != num_arguments() ||
        results.size() != num_results()) {
      RCReference<AsyncValue> error =
          MakeErrorAsyncValueRef(absl::InvalidArgumentError(absl::StrCat(
              "native function '", name(), "' called with ", arguments.size(),
              " arguments and ", results.size(), " results; it takes ",
              num_arguments(), " and returns ", num_results())));
      for (auto& result : results) result = error;
      return;
    }
    for (AsyncValue* argument : arguments) {
      if (argument->IsUnavailable()) {
        ExecuteWhenReady(exec_ctx, arguments, results);
        return;
      }
    }
    impl_(exec_ctx, arguments, results);
  }

 private:
  // Native code reads its arguments at once; callers may pass pending ones
  // (tfrt.call is non-strict), so wait and forward.
  void ExecuteWhenReady(const ExecutionContext& exec_ctx,
                        absl::Span<AsyncValue* const> arguments,
                        absl::Span<RCReference<AsyncValue>> results) const {
    std::vector<RCReference<IndirectAsyncValue>> outputs;
    for (auto& result : results) {
      outputs.push_back(MakeIndirectAsyncValue());
      result = outputs.back();
    }
    std::vector<RCReference<AsyncValue>> kept;
    for (AsyncValue* argument : arguments) kept.push_back(FormRef(argument));
    std::vector<AsyncValue*> raw(arguments.begin(), arguments.end());
    RunWhenReady(absl::MakeConstSpan(raw),
                 [impl = impl_, exec_ctx = ExecutionContext(exec_ctx),
                  kept = std::move(kept), outputs = std::move(outputs)] {
                   std::vector<AsyncValue*> available;
                   for (const auto& value : kept) {
                     available.push_back(value.get());
                   }
                   std::vector<RCReference<AsyncValue>> values(outputs.size());
                   impl(exec_ctx, available, absl::MakeSpan(values));
                   for (size_t i = 0; i < outputs.size(); ++i) {
                     outputs[i]->ForwardTo(std::move(values[i]));
                   }
                 });
  }

  NativeFunctionImplementation impl_;
};

//===--- BEF functions ----------------------------------------------------===//

template <typename T>
constexpr size_t AlignUp(size_t offset) {
  return (offset + alignof(T) - 1) / alignof(T) * alignof(T);
}

// Operands of a kernel on its unboxed entry: KernelPlan::unboxed_operands
// has one bit each.
constexpr size_t kMaxUnboxedOperands = UnboxedKernel::kMaxOperands;

// Call blocks are short-lived and come in few sizes: each thread keeps a
// few freed ones per class (64 bytes to 8 KiB, about a thousand registers),
// which saves glibc's malloc and free (about a tenth of a small call).
using CallBlockCache = BlockCache</*kMinBytes=*/64, /*kClasses=*/8,
                                  /*kPerClass=*/4>;

struct KernelPlan {
  // Set for a direct kernel (see PlanUnboxed): one on its unboxed entry
  // whose operands and result all live in the call's value slots. What
  // CallState::RunDirectKernels reads comes first: half a cache line.
  uint64_t (*direct_invoke)(uint64_t, uint64_t, uint64_t, uint64_t) = nullptr;
  // The value slots of the operands; the words past the operand count
  // repeat the first (the entry ignores them), so that every direct kernel
  // reads four.
  uint32_t operand_slots[kMaxUnboxedOperands] = {};
  uint32_t result_slot = 0;
  // With `unboxed_result`: the register's sole user, if it has one
  // (RegisterPlan::has_sole_user), else CallState::kNoKernel.
  uint32_t unboxed_sole_user = ~uint32_t{0};
  // What a kernel on its unboxed entry reads next.
  absl::Span<const uint32_t> operands;
  absl::Span<const uint32_t> results;
  // Set if the kernel runs on its unboxed entry (see PlanUnboxed): it reads
  // the operands marked in `unboxed_operands` from the call's value slots,
  // the others from their async values, and its result is a value slot if
  // `unboxed_result`.
  const UnboxedKernel* unboxed = nullptr;
  uint8_t unboxed_operands = 0;
  // The unboxed operands that are not function arguments: their registers
  // are null unless their definer passed on an error instead (which sends
  // the rest of the call to SlowUnboxedKernel).
  uint8_t checked_operands = 0;
  // Boxed operands that are not function arguments: each holds a
  // reference for this use.
  uint8_t owned_boxed_operands = 0;
  bool unboxed_result = false;
  const AsyncValue::TypeId* operand_types = nullptr;  // The entry's.
  AsyncKernelImplementation impl;
  uint32_t location;
  // What the kernel's frame shows. Its argument_is_shared marks operands
  // that are function arguments: the call holds their reference, so the
  // kernel must not drop one.
  KernelDescriptor descriptor;
  // Ready counts at the start of a call, when every argument is available
  // (argument operands then never count down) and when some is not.
  int32_t ready_count_with_arguments = 0;
  int32_t ready_count = 0;
  // See KernelStrictness: runs once any operand is defined, taking
  // placeholders for the others, and sees error operands.
  bool non_strict = false;
  // A non-strict kernel whose operands are all function arguments: when
  // they are available its visit is its only event (see CountVisits), so
  // the visit starts it without touching the count.
  bool visit_is_only_event_with_arguments = false;
  // With streams (see SplitUsersByStream): the kernel's stream id.
  uint32_t stream = 0;
  KernelStateSlot* state_slot = nullptr;  // Owned by the function.
};

struct RegisterPlan {
  // The common case in a chain: one strict user in the definer's stream,
  // one reference, no function result and no non-strict user.
  // DefineRegister then counts down `sole_user` and looks at nothing else.
  bool has_sole_user = false;
  uint32_t sole_user = 0;
  absl::Span<const uint32_t> users;         // Strict kernel per use.
  absl::Span<const uint32_t> result_slots;  // Function results it feeds.
  // Arguments live for the whole call anyway (the caller holds them): the
  // call keeps one reference instead of one per use.
  bool is_argument = false;
  bool has_non_strict_users = false;
  uint32_t references = 0;  // Held while the call runs; see DefineRegister.
  // Non-strict kernel per use: counted down when the register is defined,
  // available or not. Last: the hot path only reads the flag above.
  absl::Span<const uint32_t> non_strict_users;
  // Strict users in another stream than the register's definer (only in
  // functions compiled with streams): once ready they go to the work queue.
  absl::Span<const uint32_t> outline_users;
  // The value lives in the call's value slot, not in an async value (see
  // PlanUnboxed); the register itself holds null, or an error its definer
  // passed on instead of a value (one reference per use).
  bool is_unboxed = false;
  // A function argument whose users all take it unboxed: each call copies
  // its payload into its value slot (CallState::UnboxArguments); the
  // register keeps the argument's async value.
  bool is_unboxed_argument = false;
};

class BefFunction;

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
                            AsyncValue* value, bool available,
                            Worklist& ready);
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

class BefFunction final : public Function {
 public:
  BefFunction(const BefProgram& program, const bef::Function& function)
      : Function(std::string(function.name),
                 TypeNames(program.file(), function.argument_types),
                 TypeNames(program.file(), function.result_types)),
        program_(program),
        decoded_(function) {}

  // Resolves kernels and function operands. Reports unknown kernels through
  // the host's diagnostic handler; returns how many there were.
  int Prepare(const std::vector<const Function*>& all_functions) {
    const bef::BefFile& file = program_.file();
    int unknown = 0;
    // A kernel's function operands: its regions, then the functions its
    // attributes name (`tfrt.call @f`, `tfrt.case [@a, @b]`), in attribute
    // order.
    std::vector<std::vector<uint32_t>> operands_per_kernel;
    size_t num_function_operands = 0;
    for (const bef::Kernel& kernel : decoded_.kernels) {
      operands_per_kernel.push_back(internal::FunctionOperands(file, kernel));
      num_function_operands += operands_per_kernel.back().size();
    }
    function_pool_.reserve(num_function_operands);
    size_t kernel_index = 0;
    kernels_.reserve(decoded_.kernels.size());
    for (const bef::Kernel& kernel : decoded_.kernels) {
      KernelPlan plan;
      absl::string_view name = file.kernel_name(kernel.kernel_name);
      plan.descriptor.file = &file;
      plan.descriptor.name = name;
      plan.impl = program_.host()->registry().GetKernel(name);
      plan.non_strict = program_.host()->registry().IsNonStrict(name);
      plan.location = kernel.location;
      plan.operands = kernel.operands;
      plan.results = kernel.results;
      plan.descriptor.attributes = kernel.attributes;
      size_t start = function_pool_.size();
      const std::vector<uint32_t>& operands =
          operands_per_kernel[kernel_index++];
      for (uint32_t f : operands) function_pool_.push_back(all_functions[f]);
      plan.descriptor.functions =
          absl::MakeConstSpan(function_pool_).subspan(start, operands.size());
      if (plan.impl == nullptr) {
        ++unknown;
        internal::ReportUnknownKernel(program_, kernel, name);
      }
      kernels_.push_back(plan);
    }
    BuildRegisterPlans();
    // tfrt.sync functions keep every value boxed: their kernels run in
    // program order, with results checked as they come.
    if (!is_sync()) PlanUnboxed();
    runs_in_order_ = is_sync() && internal::OperandsDefinedInOrder(decoded_);
    return unknown;
  }

  bool has_non_strict_kernels() const {
    return std::any_of(kernels_.begin(), kernels_.end(),
                       [](const KernelPlan& k) { return k.non_strict; });
  }

  // Called once every function is prepared. Functions with streams follow
  // them (SplitUsersByStream) unless `dataflow_order`, which visits kernels
  // in program order (CountVisits); tfrt.sync functions have neither.
  // Otherwise the first ready kernel in program order runs first and its
  // users right after it, depth first.
  void ChooseSchedule(bool dataflow_order) {
    has_streams_ =
        !decoded_.kernel_streams.empty() && !is_sync() && !dataflow_order;
    if (has_streams_) {
      SplitUsersByStream();
    } else if (dataflow_order && !is_sync()) {
      CountVisits();
    } else {
      // The worklist is LIFO.
      std::reverse(initially_ready_.begin(), initially_ready_.end());
      std::reverse(ready_with_arguments_.begin(), ready_with_arguments_.end());
    }
    for (RegisterPlan& plan : registers_) {
      plan.has_sole_user = plan.users.size() == 1 &&
                           plan.outline_users.empty() &&
                           plan.result_slots.empty() &&
                           !plan.has_non_strict_users && plan.references == 1;
      if (plan.has_sole_user) plan.sole_user = plan.users[0];
    }
    for (KernelPlan& kernel : kernels_) {
      if (!kernel.unboxed_result) continue;
      const RegisterPlan& plan = registers_[kernel.results[0]];
      if (plan.has_sole_user) kernel.unboxed_sole_user = plan.sole_user;
      const size_t num_operands = kernel.operands.size();
      if (num_operands == 0 ||
          kernel.unboxed_operands != (1u << num_operands) - 1) {
        continue;
      }
      kernel.direct_invoke = kernel.unboxed->invoke;
      for (size_t i = 0; i < kMaxUnboxedOperands; ++i) {
        kernel.operand_slots[i] = kernel.operands[i < num_operands ? i : 0];
      }
      kernel.result_slot = kernel.results[0];
    }
    BuildCallImages();
  }

  // The layout of a call's block past the CallState header (offsets from
  // the block's start) and its size class, fixed per function.
  struct CallLayout {
    size_t ready_at = 0;
    size_t slots_at = 0;
    size_t values_at = 0;  // Past the image; room only with unboxed registers.
    size_t size = 0;
    uint32_t block_class = 0;
  };
  const CallLayout& call_layout() const { return call_layout_; }
  struct UnboxedArgument {
    uint32_t index;  // In the call's arguments.
    uint32_t reg;
    AsyncValue::TypeId type;
  };
  absl::Span<const UnboxedArgument> unboxed_arguments() const {
    return unboxed_arguments_;
  }
  // The block's contents from kCallRegistersAt at the start of a call: null
  // registers, each kernel's starting ready count, empty result slots.
  absl::Span<const unsigned char> CallImage(bool arguments_available) const {
    return arguments_available ? call_image_with_arguments_ : call_image_;
  }

  void Execute(const ExecutionContext& exec_ctx,
               absl::Span<AsyncValue* const> arguments,
               absl::Span<RCReference<AsyncValue>> results) const override {
    // Callers are kernels reading an untrusted file: a call with the wrong
    // number of arguments or results is an error value, not a crash.
    if (ABSL_PREDICT_FALSE(arguments.size() != num_arguments() ||
                           results.size() != num_results())) {
      internal::SetCallArityError(*this, arguments.size(), results);
      return;
    }
    // The common case: every argument is available. Ready counts then start
    // without the argument operands, so arguments never count down (one
    // atomic operation less per use).
    bool arguments_available = true;
    for (AsyncValue* argument : arguments) {
      arguments_available &= argument->IsAvailable();
    }
    CallState* state = CallState::Create(*this, exec_ctx, arguments_available);
    // Before any argument is defined: a pending one may run kernels on the
    // thread that publishes it as soon as it is.
    if (!unboxed_arguments_.empty()) {
      state->UnboxArguments(arguments, arguments_available);
    }
    const std::vector<uint32_t>& initially_ready =
        arguments_available ? ready_with_arguments_ : initially_ready_;
    const std::vector<uint32_t>& initially_outline =
        arguments_available ? outline_with_arguments_ : initially_outline_;
    CallState::Worklist ready;
    ready.kernels.assign(initially_ready.begin(), initially_ready.end());
    if (ABSL_PREDICT_FALSE(!initially_outline.empty())) {
      ready.outline.assign(initially_outline.begin(), initially_outline.end());
    }
    const uint32_t* argument_registers = decoded_.argument_registers.data();
    for (size_t i = 0; i < arguments.size(); ++i) {
      // The call's own reference (not borrowed as the context is: a kernel
      // must never see an argument its caller still holds as unique).
      state->DefineRegister(argument_registers[i], arguments[i]->AddRef(),
                            ready,
                            /*count_down=*/!arguments_available,
                            /*before_kernels=*/arguments_available);
    }
    if (runs_in_order_ && arguments_available) {
      // No chains order a sync function's side effects: program order does.
      state->RunInOrder();
    } else if (visits_in_order_) {
      if (!ready.kernels.empty()) state->RunReady(ready);
      state->VisitInOrder(ready, arguments_available);
    } else {
      state->RunReady(ready);
    }
    const uint32_t* result_registers = decoded_.result_registers.data();
    for (size_t i = 0; i < results.size(); ++i) {
      results[i] = state->TakeResult(i, result_registers[i]);
    }
    state->DropRef();
  }

  const BefProgram& program() const { return program_; }
  const bef::Function& decoded() const { return decoded_; }
  bool is_sync() const { return decoded_.kind == bef::FunctionKind::kSync; }
  bool has_streams() const { return has_streams_; }
  uint32_t stream_of(uint32_t kernel) const { return kernels_[kernel].stream; }

  const KernelPlan& kernel(uint32_t index) const { return kernels_[index]; }
  const RegisterPlan& register_plan(uint32_t reg) const {
    return registers_[reg];
  }
  uint32_t num_registers() const { return decoded_.num_registers; }
  uint32_t num_kernels() const { return kernels_.size(); }

 private:
  void BuildRegisterPlans() {
    const uint32_t num_registers = decoded_.num_registers;
    std::vector<uint32_t> use_counts(num_registers, 0);
    std::vector<uint32_t> non_strict_counts(num_registers, 0);
    std::vector<uint32_t> result_counts(num_registers, 0);
    for (const KernelPlan& kernel : kernels_) {
      for (uint32_t reg : kernel.operands) {
        ++(kernel.non_strict ? non_strict_counts : use_counts)[reg];
      }
    }
    for (uint32_t reg : decoded_.result_registers) ++result_counts[reg];
    size_t total = 0;
    for (uint32_t reg = 0; reg < num_registers; ++reg) {
      total += use_counts[reg] + non_strict_counts[reg] + result_counts[reg];
    }
    pool_.resize(total);
    registers_.resize(num_registers);
    std::vector<size_t> user_fill(num_registers), slot_fill(num_registers);
    std::vector<size_t> non_strict_fill(num_registers);
    size_t offset = 0;
    for (uint32_t reg = 0; reg < num_registers; ++reg) {
      user_fill[reg] = offset;
      registers_[reg].users =
          absl::MakeConstSpan(pool_).subspan(offset, use_counts[reg]);
      offset += use_counts[reg];
      non_strict_fill[reg] = offset;
      registers_[reg].non_strict_users =
          absl::MakeConstSpan(pool_).subspan(offset, non_strict_counts[reg]);
      offset += non_strict_counts[reg];
      slot_fill[reg] = offset;
      registers_[reg].result_slots =
          absl::MakeConstSpan(pool_).subspan(offset, result_counts[reg]);
      offset += result_counts[reg];
    }
    for (uint32_t reg : decoded_.argument_registers) {
      registers_[reg].is_argument = true;
    }
    for (uint32_t reg = 0; reg < num_registers; ++reg) {
      RegisterPlan& plan = registers_[reg];
      const size_t uses = plan.users.size() + plan.non_strict_users.size();
      plan.references = (plan.is_argument ? 1 : uses) + plan.result_slots.size();
      plan.has_non_strict_users = !plan.non_strict_users.empty();
    }
    size_t num_operands = 0;
    for (const KernelPlan& kernel : kernels_) {
      num_operands += kernel.operands.size();
    }
    operand_is_argument_.reserve(num_operands);
    for (KernelPlan& kernel : kernels_) {
      kernel.descriptor.argument_is_shared =
          operand_is_argument_.data() + operand_is_argument_.size();
      for (uint32_t reg : kernel.operands) {
        operand_is_argument_.push_back(registers_[reg].is_argument);
      }
      // An operand passed twice is never unique at this kernel. Only strict
      // kernels qualify: their operands are concrete when they run, so
      // SetReturnedResultAt need not test the state.
      const size_t candidates =
          kernel.non_strict ? 0 : std::min<size_t>(kernel.operands.size(), 8);
      for (size_t i = 0; i < candidates; ++i) {
        const uint32_t reg = kernel.operands[i];
        if (!registers_[reg].is_argument &&
            std::count(kernel.operands.begin(), kernel.operands.end(), reg) ==
                1) {
          kernel.descriptor.maybe_spent_arguments |= 1u << i;
        }
      }
    }
    for (uint32_t k = 0; k < kernels_.size(); ++k) {
      KernelPlan& kernel = kernels_[k];
      int32_t non_argument_operands = 0;
      for (uint32_t reg : kernel.operands) {
        pool_[(kernel.non_strict ? non_strict_fill : user_fill)[reg]++] = k;
        non_argument_operands += !registers_[reg].is_argument;
      }
      const int32_t num_operands = kernel.operands.size();
      if (kernel.non_strict) {
        // The first operand defined starts it (see CountDownNonStrict).
        kernel.ready_count = num_operands > 0 ? 1 : 0;
        kernel.ready_count_with_arguments =
            non_argument_operands < num_operands ? 0 : kernel.ready_count;
      } else {
        kernel.ready_count = num_operands;
        kernel.ready_count_with_arguments = non_argument_operands;
      }
      if (kernel.ready_count == 0) initially_ready_.push_back(k);
      if (kernel.ready_count_with_arguments == 0) {
        ready_with_arguments_.push_back(k);
      }
    }
    for (uint32_t i = 0; i < decoded_.result_registers.size(); ++i) {
      uint32_t reg = decoded_.result_registers[i];
      pool_[slot_fill[reg]++] = i;
    }
    // Users are pushed on the LIFO worklist in list order: reversed, the
    // first user in program order runs first (and its own users right after
    // it, depth first), as a sequential reading of the program expects.
    for (uint32_t reg = 0; reg < num_registers; ++reg) {
      const size_t begin = registers_[reg].users.data() - pool_.data();
      std::reverse(pool_.begin() + begin,
                   pool_.begin() + begin + registers_[reg].users.size());
    }
    state_slots_ = std::make_unique<KernelStateSlot[]>(kernels_.size());
    for (uint32_t k = 0; k < kernels_.size(); ++k) {
      kernels_[k].descriptor.state_slot = &state_slots_[k];
    }
  }

  void BuildCallImages() {
    const size_t ready_at =
        kCallRegistersAt + sizeof(AsyncValue*) * num_registers();
    const size_t slots_at =
        AlignUp<uintptr_t>(ready_at + sizeof(int32_t) * num_kernels());
    const size_t end = slots_at + sizeof(uintptr_t) * num_results();
    // Whole 16-byte chunks, for CopyCallImage. Block classes are powers
    // of two from 64 bytes, so the padding never changes the class.
    const size_t image_size = (end - kCallRegistersAt + 15) / 16 * 16;
    call_layout_.ready_at = ready_at;
    call_layout_.slots_at = slots_at;
    call_layout_.values_at = kCallRegistersAt + image_size;
    call_layout_.size = call_layout_.values_at +
                        (has_unboxed_ ? sizeof(uint64_t) * num_registers() : 0);
    call_layout_.block_class = CallBlockCache::ClassOf(call_layout_.size);
    auto build = [&](std::vector<unsigned char>& image, bool with_arguments) {
      // Zero bytes are null registers and empty result slots.
      image.assign(image_size, 0);
      for (uint32_t k = 0; k < num_kernels(); ++k) {
        const int32_t count = with_arguments
                                  ? kernels_[k].ready_count_with_arguments
                                  : kernels_[k].ready_count;
        std::memcpy(
            image.data() + ready_at - kCallRegistersAt + sizeof(int32_t) * k,
            &count, sizeof(count));
      }
    };
    build(call_image_, /*with_arguments=*/false);
    build(call_image_with_arguments_, /*with_arguments=*/true);
  }

  // Registers that need no async value: defined by a kernel with an unboxed
  // entry (UnboxedKernel, made by ASYNCRT_KERNEL for functions of plain
  // values), read only by such kernels and as the type they take, and not
  // a function result; likewise arguments read only by such kernels, which
  // each call copies into their slots. Kernels that touch one run on their
  // unboxed entries; the others, and every other register, as before. An
  // error still travels as an async value, in the register itself.
  void PlanUnboxed() {
    const KernelRegistry& registry = program_.host()->registry();
    constexpr uint32_t kNone = ~uint32_t{0};
    std::vector<const UnboxedKernel*> entries(kernels_.size(), nullptr);
    std::vector<uint32_t> definer(num_registers(), kNone);
    std::vector<uint32_t> definitions(num_registers(), 0);
    for (uint32_t k = 0; k < kernels_.size(); ++k) {
      const KernelPlan& kernel = kernels_[k];
      for (uint32_t reg : kernel.results) {
        ++definitions[reg];
        definer[reg] = k;
      }
      const UnboxedKernel* entry =
          registry.GetUnboxedKernel(kernel.descriptor.name);
      // Exact counts only: a trailing chain goes through the frame.
      if (entry != nullptr && !kernel.non_strict &&
          kernel.results.size() == 1 &&
          kernel.operands.size() == entry->num_operands &&
          kernel.operands.size() <= kMaxUnboxedOperands) {
        entries[k] = entry;
      }
    }
    // Whether every user takes `reg` unboxed, as `type`.
    auto users_take = [&](uint32_t reg, AsyncValue::TypeId type) {
      const RegisterPlan& plan = registers_[reg];
      return std::all_of(
          plan.users.begin(), plan.users.end(), [&](uint32_t user) {
            const UnboxedKernel* entry = entries[user];
            if (entry == nullptr) return false;
            const absl::Span<const uint32_t> operands = kernels_[user].operands;
            for (size_t i = 0; i < operands.size(); ++i) {
              if (operands[i] == reg && entry->operand_types[i] != type) {
                return false;
              }
            }
            return true;
          });
    };
    for (uint32_t reg = 0; reg < num_registers(); ++reg) {
      RegisterPlan& plan = registers_[reg];
      if (!plan.result_slots.empty() || plan.has_non_strict_users) continue;
      if (plan.is_argument) {
        // Copied into its value slot when a call starts (UnboxArguments).
        if (definitions[reg] != 0 || plan.users.empty()) continue;
        const uint32_t user = plan.users[0];
        if (entries[user] == nullptr) continue;
        const absl::Span<const uint32_t> operands = kernels_[user].operands;
        const size_t i =
            std::find(operands.begin(), operands.end(), reg) - operands.begin();
        const AsyncValue::TypeId type = entries[user]->operand_types[i];
        if (users_take(reg, type)) {
          plan.is_unboxed_argument = true;
          has_unboxed_ = true;
          for (uint32_t a = 0; a < decoded_.argument_registers.size(); ++a) {
            if (decoded_.argument_registers[a] == reg) {
              unboxed_arguments_.push_back({a, reg, type});
            }
          }
        }
        continue;
      }
      if (definitions[reg] != 1 || entries[definer[reg]] == nullptr) continue;
      plan.is_unboxed = users_take(reg, entries[definer[reg]]->result_type);
      has_unboxed_ |= plan.is_unboxed;
    }
    for (uint32_t k = 0; k < kernels_.size(); ++k) {
      if (entries[k] == nullptr) continue;
      KernelPlan& kernel = kernels_[k];
      uint8_t unboxed_operands = 0;
      uint8_t checked_operands = 0;
      uint8_t owned_boxed_operands = 0;
      for (size_t i = 0; i < kernel.operands.size(); ++i) {
        const RegisterPlan& operand = registers_[kernel.operands[i]];
        if (operand.is_unboxed) checked_operands |= 1u << i;
        if (operand.is_unboxed || operand.is_unboxed_argument) {
          unboxed_operands |= 1u << i;
        } else if (!operand.is_argument) {
          owned_boxed_operands |= 1u << i;
        }
      }
      const bool unboxed_result = registers_[kernel.results[0]].is_unboxed;
      // Kernels touching only boxed values gain nothing (every operand and
      // the result are async values either way): they keep the frame path.
      if (unboxed_operands == 0 && !unboxed_result) continue;
      kernel.unboxed = entries[k];
      kernel.operand_types = entries[k]->operand_types;
      kernel.unboxed_operands = unboxed_operands;
      kernel.checked_operands = checked_operands;
      kernel.owned_boxed_operands = owned_boxed_operands;
      kernel.unboxed_result = unboxed_result;
    }
  }

  // The order TFRT's executor had for non-strict kernels: each kernel
  // counts one more event, its visit, and Execute visits the kernels in
  // program order, each visit followed by whatever it made ready. A kernel
  // thus runs once visited and its operands are there, or once they arrive
  // after its visit. A non-strict kernel runs at the second of its events
  // (visit or operand definition), as TFRT's did.
  void CountVisits() {
    visits_in_order_ = true;
    for (KernelPlan& kernel : kernels_) {
      const int32_t argument_uses = ArgumentOperands(kernel);
      const int32_t num_operands = kernel.operands.size();
      if (kernel.non_strict) {
        kernel.ready_count = num_operands > 0 ? 2 : 1;
        kernel.ready_count_with_arguments =
            std::max(0, kernel.ready_count - argument_uses);
        kernel.visit_is_only_event_with_arguments =
            argument_uses == num_operands &&
            kernel.ready_count_with_arguments == 1;
      } else {
        kernel.ready_count = num_operands + 1;
        kernel.ready_count_with_arguments = num_operands - argument_uses + 1;
      }
    }
    initially_ready_.clear();
    ready_with_arguments_.clear();
    for (uint32_t k = 0; k < kernels_.size(); ++k) {
      if (kernels_[k].ready_count_with_arguments == 0) {
        ready_with_arguments_.push_back(k);
      }
    }
  }

  // How many of the kernel's operands are function arguments.
  int32_t ArgumentOperands(const KernelPlan& kernel) const {
    int32_t count = 0;
    for (uint32_t reg : kernel.operands) count += registers_[reg].is_argument;
    return count;
  }

  // With streams (recorded by the converter for every function but
  // tfrt.sync ones), scheduling follows TFRT's executor, whose order TFRT
  // programs observe under the single-threaded work queue: a kernel that
  // becomes ready runs on this thread only if it is in the stream of the
  // kernel that readied it; the others start on the work queue, one task
  // per stream. Users are pushed in program order and run last first. The
  // entry's stream plays the definer for arguments and for the kernels
  // ready at the start.
  void SplitUsersByStream() {
    const absl::Span<const uint32_t> streams = decoded_.kernel_streams;
    const uint32_t entry_stream = streams[0];
    std::vector<uint32_t> definer(registers_.size(), entry_stream);
    for (uint32_t k = 0; k < kernels_.size(); ++k) {
      kernels_[k].stream = streams[k + 1];
      for (uint32_t reg : kernels_[k].results) definer[reg] = streams[k + 1];
    }
    for (uint32_t reg = 0; reg < registers_.size(); ++reg) {
      RegisterPlan& plan = registers_[reg];
      const size_t begin = plan.users.data() - pool_.data();
      auto first = pool_.begin() + begin;
      auto last = first + plan.users.size();
      std::reverse(first, last);  // Back to program order.
      auto split = std::stable_partition(first, last, [&](uint32_t user) {
        return kernels_[user].stream == definer[reg];
      });
      const size_t inline_count = split - first;
      plan.outline_users = plan.users.subspan(inline_count);
      plan.users = plan.users.subspan(0, inline_count);
    }
    // The entry is a kernel whose results are the arguments, plus one
    // result that every kernel without operands uses: kernels become ready
    // in that order, argument by argument. (No kernel is non-strict here:
    // those functions never get streams.)
    ready_with_arguments_.clear();
    std::vector<int32_t> argument_uses(kernels_.size());
    for (uint32_t k = 0; k < kernels_.size(); ++k) {
      argument_uses[k] = ArgumentOperands(kernels_[k]);
      if (kernels_[k].operands.empty()) ready_with_arguments_.push_back(k);
    }
    for (uint32_t reg : decoded_.argument_registers) {
      const RegisterPlan& plan = registers_[reg];
      for (auto users : {plan.users, plan.outline_users}) {
        for (uint32_t user : users) {
          // Ready once its last argument operand is counted, if it has no
          // others.
          if (--argument_uses[user] == 0 &&
              kernels_[user].ready_count_with_arguments == 0) {
            ready_with_arguments_.push_back(user);
          }
        }
      }
    }
    // Moves the kernels of other streams than the entry's to `outline`.
    auto split_off = [&](std::vector<uint32_t>& ready,
                         std::vector<uint32_t>& outline) {
      auto split = std::stable_partition(
          ready.begin(), ready.end(),
          [&](uint32_t k) { return kernels_[k].stream == entry_stream; });
      outline.assign(split, ready.end());
      ready.erase(split, ready.end());
    };
    split_off(initially_ready_, initially_outline_);
    split_off(ready_with_arguments_, outline_with_arguments_);
  }

  const BefProgram& program_;
  const bef::Function& decoded_;
  std::vector<KernelPlan> kernels_;
  std::vector<RegisterPlan> registers_;
  std::vector<uint32_t> pool_;
  std::vector<const Function*> function_pool_;
  std::vector<uint32_t> initially_ready_;
  // Ready at the start when every argument is available.
  std::vector<uint32_t> ready_with_arguments_;
  // With streams: the kernels of the two lists above that start on the
  // work queue.
  std::vector<uint32_t> initially_outline_;
  std::vector<uint32_t> outline_with_arguments_;
  std::vector<uint8_t> operand_is_argument_;
  CallLayout call_layout_;
  std::vector<unsigned char> call_image_;
  std::vector<unsigned char> call_image_with_arguments_;
  bool runs_in_order_ = false;  // See RunInOrder.
  bool has_streams_ = false;    // See SplitUsersByStream.
  bool visits_in_order_ = false;                    // See CountVisits.
  bool has_unboxed_ = false;                        // See PlanUnboxed.
  std::vector<UnboxedArgument> unboxed_arguments_;  // See PlanUnboxed.
  std::unique_ptr<KernelStateSlot[]> state_slots_;  // One per kernel.
};

//===--- CallState
//----------------------------------------------------------===//

thread_local CallBlockCache call_block_cache;

// Small functions' images (most calls) are copied inline: a memcpy call
// costs more than the copy.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CopyCallImage(
    char* destination, absl::Span<const unsigned char> image) {
  const unsigned char* source = image.data();
  switch (image.size()) {  // Whole 16-byte chunks (see BuildCallImages).
    case 64:
      std::memcpy(destination + 48, source + 48, 16);
      [[fallthrough]];
    case 48:
      std::memcpy(destination + 32, source + 32, 16);
      [[fallthrough]];
    case 32:
      std::memcpy(destination + 16, source + 16, 16);
      [[fallthrough]];
    case 16:
      std::memcpy(destination, source, 16);
      [[fallthrough]];
    case 0:
      return;
    default:
      std::memcpy(destination, source, image.size());
  }
}

CallState* CallState::Create(const BefFunction& function,
                             const ExecutionContext& exec_ctx,
                             bool arguments_available) {
  const BefFunction::CallLayout& layout = function.call_layout();
  void* memory = kBlockCacheEnabled
                     ? call_block_cache.Allocate(layout.block_class)
                     : ::operator new(layout.size);
  auto* state = new (memory) CallState(function, exec_ctx);
  state->block_class_ = layout.block_class;
  char* base = static_cast<char*>(memory);
  CopyCallImage(base + kCallRegistersAt,
                function.CallImage(arguments_available));
  state->registers_ = reinterpret_cast<AsyncValue**>(base + kCallRegistersAt);
  state->ready_counts_ = reinterpret_cast<int32_t*>(base + layout.ready_at);
  state->result_slots_ = reinterpret_cast<uintptr_t*>(base + layout.slots_at);
  state->unboxed_values_ = reinterpret_cast<uint64_t*>(base + layout.values_at);
  return state;
}

CallState::CallState(const BefFunction& function,
                     const ExecutionContext& exec_ctx)
    : function_(function),
      exec_ctx_(ExecutionContext::Borrow(exec_ctx, exec_ctx.location())) {
  is_sync_ = function.is_sync();
  if (ABSL_PREDICT_FALSE(trace_kernels_)) internal::BeginCallSpan(function, this);
}

void CallState::Pin() {
  exec_ctx_ = ExecutionContext(exec_ctx_);
  // Kernels may still run after the caller has its results and drops the
  // program: keep it alive until the call is over.
  function_.program().AddRef();
  pinned_ = true;
}

void CallState::Destroy() {
  if (ABSL_PREDICT_FALSE(trace_kernels_)) {
    internal::EndCallSpan(function_, this);
  }
  // Other registers hold no references by now: each use released its own.
  for (uint32_t reg : function_.decoded().argument_registers) {
    Register(reg).load(std::memory_order_relaxed)->DropRef();
  }
  for (size_t i = 0, n = function_.num_results(); i < n; ++i) {
    uintptr_t slot = ResultSlot(i).load(std::memory_order_acquire);
    if (slot != 0 && slot != kResultDefined) {
      // Only reachable if a value the graph waited on was dropped without
      // ever being published.
      auto* pending = reinterpret_cast<IndirectAsyncValue*>(slot);
      pending->ForwardTo(
          MakeErrorAsyncValueRef("function result was never computed"));
      pending->DropRef();
    }
  }
  const BefProgram& program = function_.program();
  const uint32_t block_class = block_class_;
  const bool pinned = pinned_;
  this->~CallState();
  if (kBlockCacheEnabled) {
    call_block_cache.Free(this, block_class);
  } else {
    ::operator delete(this);
  }
  if (pinned) program.DropRef();
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CallState::DefineRegister(
    uint32_t reg, AsyncValue* value, Worklist& ready, bool count_down,
    bool before_kernels) {
  const RegisterPlan& plan = function_.register_plan(reg);
  if (ABSL_PREDICT_TRUE(plan.has_sole_user)) {
    const uint32_t user = DefineForSoleUser(plan, reg, value, count_down);
    if (user != kNoKernel) ready.kernels.push_back(user);
    return;
  }
  DefineForManyUses(plan, reg, value, ready, count_down, before_kernels);
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::DefineForSoleUser(
    const RegisterPlan& plan, uint32_t reg, AsyncValue* value,
    bool count_down) {
  // Its one reference is the user's (an argument's is the call's, kept to
  // the end). `available` is read before the store, as in
  // DefineForManyUses.
  const bool available = value->IsAvailable();
  Register(reg).store(value, std::memory_order_release);
  if (!count_down) return kNoKernel;
  if (ABSL_PREDICT_FALSE(!available)) {
    AddRef();  // Released by the continuation.
    value->AndThen([this, reg] { ResumeAfter(reg); });
    return kNoKernel;
  }
  return CountDownOne(plan.sole_user) ? plan.sole_user : kNoKernel;
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CallState::DefineForManyUses(
    const RegisterPlan& plan, uint32_t reg, AsyncValue* value, Worklist& ready,
    bool count_down, bool before_kernels) {
  if (ABSL_PREDICT_FALSE(plan.has_non_strict_users)) {
    return DefineForNonStrictUsers(reg, value, ready, count_down,
                                   before_kernels);
  }
  // One reference per use: each user kernel drops its own after running,
  // and each function result takes one. Values die as soon as their last
  // user is done, so their memory is reused while the call goes on.
  const uint32_t uses = plan.references;
  if (uses == 0) {
    value->DropRef();
    return;
  }
  if (uses > 1) value->AddRef(uses - 1);
  // Read `available` before publishing the register: once users can run,
  // they may drop the last references to `value`.
  const bool available = value->IsAvailable();
  Register(reg).store(value, std::memory_order_release);
  PublishResultSlots(plan, value);
  if (count_down) CountDownStrictUsers(plan, reg, value, available, ready);
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline uint32_t CallState::DefineLastResult(
    uint32_t reg, AsyncValue* value, Worklist& ready) {
  const RegisterPlan& plan = function_.register_plan(reg);
  if (ABSL_PREDICT_TRUE(plan.has_sole_user)) {
    return DefineForSoleUser(plan, reg, value, /*count_down=*/true);
  }
  DefineForManyUses(plan, reg, value, ready, /*count_down=*/true,
                    /*before_kernels=*/false);
  return kNoKernel;
}

// DefineRegister for a register that non-strict kernels use: they count down
// when it is defined, and one may have left a placeholder in it.
void CallState::DefineForNonStrictUsers(uint32_t reg, AsyncValue* value,
                                        Worklist& ready, bool count_down,
                                        bool before_kernels) {
  const RegisterPlan& plan = function_.register_plan(reg);
  const uint32_t uses = plan.references;  // At least the non-strict uses.
  if (uses > 1) value->AddRef(uses - 1);
  const bool available = value->IsAvailable();
  // Held until this function returns: the reference a placeholder keeps for
  // its definer, so it outlives users that are already done with it.
  RCReference<AsyncValue> definer_reference;
  AsyncValue* placeholder = nullptr;
  if (before_kernels) {
    // No user can have left a placeholder.
    Register(reg).store(value, std::memory_order_release);
  } else if (!Register(reg).compare_exchange_strong(
                 placeholder, value, std::memory_order_acq_rel)) {
    // A non-strict user got here first. Its placeholder already holds the
    // register's references; `value` keeps one, owned by the placeholder.
    definer_reference = TakeRef(placeholder);
    if (uses > 1) value->DropRef(uses - 1);
    static_cast<IndirectAsyncValue*>(placeholder)->ForwardTo(TakeRef(value));
    value = placeholder;
  }
  PublishResultSlots(plan, value);
  if (!count_down) return;
  // Reversed onto the LIFO worklist: the first in program order runs
  // first. (Functions with non-strict kernels have no streams.)
  for (auto it = plan.non_strict_users.rbegin();
       it != plan.non_strict_users.rend(); ++it) {
    // Counts may go below zero: only the event that reaches zero starts
    // the kernel (the first operand, or the second event with visits).
    if (ReadyCount(*it).fetch_sub(1, std::memory_order_acq_rel) == 1) {
      ready.kernels.push_back(*it);
    }
  }
  CountDownStrictUsers(plan, reg, value, available, ready);
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CallState::PublishResultSlots(
    const RegisterPlan& plan, AsyncValue* value) {
  for (uint32_t slot : plan.result_slots) {
    uintptr_t waiting =
        ResultSlot(slot).exchange(kResultDefined, std::memory_order_acq_rel);
    if (waiting != 0 && waiting != kResultDefined) {
      // A caller already holds an indirect value for this result: hand it
      // this slot's reference.
      auto* pending = reinterpret_cast<IndirectAsyncValue*>(waiting);
      pending->ForwardTo(TakeRef(value));
      pending->DropRef();
    }
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CallState::CountDownStrictUsers(
    const RegisterPlan& plan, uint32_t reg, AsyncValue* value, bool available,
    Worklist& ready) {
  if (plan.users.empty() && plan.outline_users.empty()) return;
  if (available) {
    CountDown(plan, ready);
    return;
  }
  AddRef();  // Released by the continuation.
  value->AndThen([this, reg] { ResumeAfter(reg); });
}

// Continuations nest when publishing a value runs a kernel that publishes
// another. Past this depth they go to the work queue instead of the stack.
constexpr int kMaxInlineDepth = 32;
thread_local int inline_depth = 0;

void CallState::ResumeAfter(uint32_t reg) {
  if (inline_depth >= kMaxInlineDepth) {
    exec_ctx_.host()->work_queue().AddTask([this, reg] {
      Worklist ready;
      CountDownUsers(reg, ready);
      RunReady(ready);
      DropRef();
    });
    return;
  }
  ++inline_depth;
  Worklist ready;
  CountDownUsers(reg, ready);
  RunReady(ready);
  --inline_depth;
  DropRef();
}

void CallState::CountDownUsers(uint32_t reg, Worklist& ready) {
  CountDown(function_.register_plan(reg), ready);
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CallState::CountDown(
    const RegisterPlan& plan, Worklist& ready) {
  const uint32_t* users = plan.users.data();
  for (size_t u = 0, n = plan.users.size(); u < n; ++u) {
    if (CountDownOne(users[u])) ready.kernels.push_back(users[u]);
  }
  if (ABSL_PREDICT_FALSE(!plan.outline_users.empty())) {
    CountDownOutline(plan, ready);
  }
}

ABSL_ATTRIBUTE_ALWAYS_INLINE inline bool CallState::CountDownOne(
    uint32_t kernel) {
  std::atomic_ref<int32_t> count = ReadyCount(kernel);
  // Reading 1 means every other operand has counted down already, so no
  // other thread touches this count: skip the read-modify-write.
  return count.load(std::memory_order_acquire) == 1 ||
         count.fetch_sub(1, std::memory_order_acq_rel) == 1;
}

[[gnu::noinline]] void CallState::CountDownOutline(const RegisterPlan& plan,
                                                   Worklist& ready) {
  for (uint32_t user : plan.outline_users) {
    if (CountDownOne(user)) ready.outline.push_back(user);
  }
}

void CallState::RunStreams(Worklist& ready) {
  // As TFRT's BEFExecutor::ProcessReadyKernels.
  if (ready.kernels.empty()) SwitchStream(ready);
  if (!ready.outline.empty()) OffloadStreams(ready);
  KernelSite site(exec_ctx_);
  while (!ready.kernels.empty()) {
    uint32_t next = ready.kernels.pop_back();
    // A kernel handed back by the one before runs next, as it would have
    // after a push and a pop: the worklist is not empty meanwhile, so only
    // the offload check falls between the two.
    while ((next = RunKernelInline(next, site, ready)) != kNoKernel) {
      if (!ready.outline.empty()) OffloadStreams(ready);
    }
    if (ready.kernels.empty()) SwitchStream(ready);
    if (!ready.outline.empty()) OffloadStreams(ready);
  }
}

void CallState::SwitchStream(Worklist& ready) {
  if (ready.outline.empty()) return;
  const uint32_t stream = function_.stream_of(ready.outline.front());
  // std::partition, not a stable one: TFRT's order.
  auto split = std::partition(
      ready.outline.begin(), ready.outline.end(),
      [&](uint32_t k) { return function_.stream_of(k) != stream; });
  ready.kernels.assign(split, ready.outline.end());
  ready.outline.erase(split, ready.outline.end());
}

[[gnu::noinline]] void CallState::OffloadStreams(Worklist& ready) {
  auto& outline = ready.outline;
  std::sort(outline.begin(), outline.end(), [&](uint32_t a, uint32_t b) {
    return function_.stream_of(a) < function_.stream_of(b);
  });
  ConcurrentWorkQueue& queue = exec_ctx_.host()->work_queue();
  for (auto begin = outline.begin(); begin != outline.end();) {
    const uint32_t stream = function_.stream_of(*begin);
    auto end = std::find_if(begin, outline.end(), [&](uint32_t k) {
      return function_.stream_of(k) != stream;
    });
    Worklist task_ready;
    task_ready.kernels.assign(begin, end);
    AddRef();  // Released by the task.
    queue.AddTask([this, task_ready = std::move(task_ready)]() mutable {
      RunReady(task_ready);
      DropRef();
    });
    begin = end;
  }
  outline.clear();
}

// A thread with more ready kernels than this hands the older half to the
// work queue as one task, so wide graphs use more than one core without
// paying a task per kernel. Below it, running inline is cheaper.
constexpr size_t kOffloadThreshold = 16;

void CallState::RunInOrder() {
  // Kernels still count their users down; nobody needs the ready list.
  Worklist unused;
  KernelSite site(exec_ctx_);
  for (uint32_t k = 0, n = function_.num_kernels(); k < n; ++k) {
    RunKernel(k, site, unused);
    unused.kernels.clear();
  }
}

void CallState::VisitInOrder(Worklist& ready, bool arguments_available) {
  for (uint32_t k = 0, n = function_.num_kernels(); k < n; ++k) {
    // A strict kernel whose count is 1 waits only for this visit (see
    // CountDownOne); a non-strict one may be counted below zero by others,
    // unless no other event can reach it.
    const KernelPlan& kernel = function_.kernel(k);
    const bool ready_now =
        kernel.non_strict
            ? (arguments_available &&
               kernel.visit_is_only_event_with_arguments) ||
                  ReadyCount(k).fetch_sub(1, std::memory_order_acq_rel) == 1
            : CountDownOne(k);
    if (ready_now) {
      ready.kernels.push_back(k);
      RunReady(ready);
    }
  }
}

void CallState::RunReady(Worklist& ready) {
  if (ABSL_PREDICT_FALSE(trace_kernels_)) return RunReadyTraced(ready);
  RunReadyUntraced</*kInlineKernels=*/true>(ready);
}

void CallState::RunReadyTraced(Worklist& ready) {
  tracing::ScopedTrace trace(tracing::Level::kDebug,
                             "BEFExecutor::ProcessReadyKernels");
  RunReadyUntraced</*kInlineKernels=*/false>(ready);
}

template <bool kInlineKernels>
ABSL_ATTRIBUTE_ALWAYS_INLINE inline void CallState::RunReadyUntraced(
    Worklist& ready) {
  if (function_.has_streams()) return RunStreams(ready);
  auto& kernels = ready.kernels;
  bool may_offload = true;
  KernelSite site(exec_ctx_);
  while (!kernels.empty()) {
    if (ABSL_PREDICT_FALSE(kernels.size() > kOffloadThreshold) && may_offload) {
      may_offload = OffloadOlderHalf(kernels);
    }
    if constexpr (kInlineKernels) {
      uint32_t next = kernels.pop_back();
      do {
        next = RunKernelInline(next, site, ready);
      } while (next != kNoKernel);
    } else {
      RunKernel(kernels.pop_back(), site, ready);
    }
  }
}

bool CallState::OffloadOlderHalf(KernelStack& kernels) {
  if (exec_ctx_.host()->work_queue().GetParallelismLevel() <= 1) return false;
  // The front holds the oldest (least cache-warm) kernels.
  const size_t half = kernels.size() / 2;
  Worklist batch;
  batch.kernels.assign(kernels.begin(), kernels.begin() + half);
  kernels.erase_bottom(half);
  AddRef();  // Released by the task.
  exec_ctx_.host()->work_queue().AddTask(
      [this, batch = std::move(batch)]() mutable {
        RunReady(batch);
        DropRef();
      });
  return true;
}

// Small kernels (nearly all) keep their frame on the stack.
constexpr size_t kInlineOperands = 8;

void CallState::RunKernel(uint32_t index, KernelSite& site, Worklist& ready) {
  const uint32_t next = RunKernelInline(index, site, ready);
  if (next != kNoKernel) ready.kernels.push_back(next);
}

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

[[gnu::noinline]] uint32_t CallState::RunWideKernel(const KernelPlan& kernel,
                                                    KernelSite& site,
                                                    Worklist& ready) {
  std::vector<AsyncValue*> arguments(kernel.operands.size());
  std::vector<RCReference<AsyncValue>> results(kernel.results.size());
  return RunKernelWith(kernel, arguments.data(), results.data(), site, ready);
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

ABSL_ATTRIBUTE_ALWAYS_INLINE inline AsyncValue* CallState::ValueOrPlaceholder(
    uint32_t reg) {
  AsyncValue* value = Register(reg).load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(value != nullptr)) return value;
  return MakePlaceholder(reg);
}

AsyncValue* CallState::MakePlaceholder(uint32_t reg) {
  AsyncValue* value = nullptr;
  // The placeholder carries every reference the register would have had, so
  // that users treat it as the register's value, plus one for the definer.
  const uint32_t references = function_.register_plan(reg).references + 1;
  AsyncValue* placeholder = MakeIndirectAsyncValue().release();
  placeholder->AddRef(references - 1);
  if (Register(reg).compare_exchange_strong(value, placeholder,
                                            std::memory_order_acq_rel)) {
    return placeholder;
  }
  placeholder->DropRef(references);  // Defined in the meantime.
  return value;
}

RCReference<AsyncValue> CallState::TakeResult(size_t index, uint32_t reg) {
  // Either this takes the result slot's reference, or (when the register is
  // not defined yet) the definer hands it to the indirect value below.
  if (AsyncValue* value = Register(reg).load(std::memory_order_acquire)) {
    return TakeRef(value);
  }
  RCReference<IndirectAsyncValue> pending = MakeIndirectAsyncValue();
  // The slot holds its own reference until the definer forwards it (and
  // drops it, possibly before the exchange below even returns).
  pending->AddRef();
  uintptr_t expected = 0;
  if (ResultSlot(index).compare_exchange_strong(
          expected, reinterpret_cast<uintptr_t>(pending.get()),
          std::memory_order_acq_rel)) {
    return pending;
  }
  pending->DropRef();
  // Defined in the meantime.
  return TakeRef(Register(reg).load(std::memory_order_acquire));
}

}  // namespace

//===--- BefProgram
//---------------------------------------------------------===//

BefProgram::~BefProgram() = default;

absl::StatusOr<RCReference<BefProgram>> BefProgram::Load(
    std::unique_ptr<bef::BefFile> file, HostContext* host,
    const BefProgramOptions& options) {
  RCReference<BefProgram> program =
      TakeRef(new BefProgram(std::move(file), host));
  const bef::BefFile& bef = *program->file_;
  auto& natives = host->GetOrCreateSharedContext<NativeFunctionRegistry>();
  std::vector<BefFunction*> bef_functions;
  std::vector<ReferenceFunction*> reference_functions;
  int unknown = 0;
  for (const bef::Function& function : bef.functions()) {
    if (function.kind == bef::FunctionKind::kNative) {
      NativeFunctionImplementation impl = natives.Get(function.name);
      if (impl == nullptr) {
        ++unknown;
        host->EmitError(DecodedDiagnostic(absl::NotFoundError(
            absl::StrCat("unknown native function '", function.name, "'"))));
        program->owned_functions_.push_back(nullptr);
      } else {
        program->owned_functions_.push_back(
            std::make_unique<NativeFunction>(bef, function, impl));
      }
    } else if (options.mode == ExecutorMode::kReference) {
      auto reference = std::make_unique<ReferenceFunction>(*program, function);
      reference_functions.push_back(reference.get());
      program->owned_functions_.push_back(std::move(reference));
    } else {
      auto bef_function = std::make_unique<BefFunction>(*program, function);
      bef_functions.push_back(bef_function.get());
      program->owned_functions_.push_back(std::move(bef_function));
    }
    program->functions_.push_back(program->owned_functions_.back().get());
  }
  for (BefFunction* function : bef_functions) {
    unknown += function->Prepare(program->functions_);
  }
  for (ReferenceFunction* function : reference_functions) {
    unknown += function->Prepare(program->functions_);
  }
  // TFRT's stream scheduler never had non-strict kernels: functions with
  // them, and the bodies they run, keep the order TFRT programs using them
  // expect (tfrt.if printing its body before later kernels, for example).
  absl::flat_hash_set<const Function*> dataflow_order;
  for (BefFunction* function : bef_functions) {
    if (!function->has_non_strict_kernels()) continue;
    dataflow_order.insert(function);
    for (uint32_t k = 0; k < function->num_kernels(); ++k) {
      const KernelPlan& kernel = function->kernel(k);
      if (kernel.non_strict) {
        dataflow_order.insert(kernel.descriptor.functions.begin(),
                              kernel.descriptor.functions.end());
      }
    }
  }
  for (BefFunction* function : bef_functions) {
    function->ChooseSchedule(dataflow_order.contains(function));
  }
  if (unknown > 0) {
    return absl::NotFoundError(absl::StrCat(
        unknown, " unknown kernel", unknown == 1 ? "" : "s",
        " or native function", unknown == 1 ? "" : "s", " in the program"));
  }
  return program;
}

const Function* BefProgram::GetFunction(absl::string_view name) const {
  for (const Function* function : functions_) {
    if (!function->name().empty() && function->name() == name) return function;
  }
  return nullptr;
}

std::optional<DecodedLocation> BefProgram::DecodeLocation(Location loc) const {
  if (loc.data() < 0 ||
      static_cast<size_t>(loc.data()) >= file_->num_locations()) {
    return std::nullopt;
  }
  bef::Location location = file_->location(loc.data());
  return DecodedLocation{std::string(location.filename),
                         static_cast<int>(location.line),
                         static_cast<int>(location.column),
                         std::string(location.name)};
}

}  // namespace asyncrt
