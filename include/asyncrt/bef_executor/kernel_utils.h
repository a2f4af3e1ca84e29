// ASYNCRT_KERNEL: turns a plain C++ function into a kernel.
//
//   int32_t AddI32(int32_t a, int32_t b) { return a + b; }
//   registry.AddKernel("tfrt.add.i32", ASYNCRT_KERNEL(AddI32));
//
// Parameters, read left to right, may be:
//   T (by value or const T&)   the next argument's payload (checked to be a T)
//   Argument<T>                the next argument as an async value (+0)
//   RemainingArguments         all arguments not yet consumed
//   Attribute<T>               the next attribute, a scalar of C++ type T
//   StringAttribute            the next attribute, a string
//   ArrayAttribute<T>          the next attribute, an array of T
//   AggregateAttribute         the next attribute, an aggregate
//   RawAttribute               the next attribute, any kind
//   const Function*            the next function operand
//   RemainingFunctions         all function operands not yet consumed
//   Result<T>                  the next result slot
//   RemainingResults           all result slots not yet consumed
//   const ExecutionContext&, HostContext*, AsyncKernelFrame*
// The return value fills the first results: T (one available result),
// AsyncValueRef<T> or RCReference<AsyncValue> (one result, maybe not yet
// available), std::tuple/std::pair (one result each), absl::Status (none),
// absl::StatusOr of any of these (an error is reported at the kernel's
// location and becomes every result). Result<T> parameters follow.
//
// A kernel may be given one more argument than it declares, a trailing
// chain, which it ignores (`tfrt.print.i32 %x, %ch`). Any other mismatch of
// argument count, argument type, attribute or result count is reported as
// an error at the kernel's location instead of running the kernel.
//
// A function of up to four plain values returning one (each trivially
// copyable, at most 8 bytes: integers, floats, bool, Chain) also gets an
// unboxed entry (UnboxedKernel), which the executor may call instead, with
// the values kept in its registers rather than in async values.
#ifndef ASYNCRT_BEF_EXECUTOR_KERNEL_UTILS_H_
#define ASYNCRT_BEF_EXECUTOR_KERNEL_UTILS_H_

#include <array>
#include <bit>
#include <cstddef>
#include <cstring>
#include <tuple>
#include <type_traits>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef_executor/function.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/host_context/chain.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/kernel_registry.h"

namespace asyncrt {

//===--- Parameter wrappers -----------------------------------------------===//

template <typename T>
class Argument {
 public:
  explicit Argument(AsyncValue* value) : value_(value) {}
  AsyncValue* value() const { return value_; }
  T& get() const { return value_->get<T>(); }
  T& operator*() const { return get(); }
  T* operator->() const { return &get(); }
  // An owning reference, for kernels that finish later.
  AsyncValueRef<T> ValueRef() const {
    return AsyncValueRef<T>(FormRef(value_));
  }

 private:
  AsyncValue* value_;
};

class RemainingArguments {
 public:
  explicit RemainingArguments(absl::Span<AsyncValue* const> values)
      : values_(values) {}
  size_t size() const { return values_.size(); }
  AsyncValue* operator[](size_t i) const { return values_[i]; }
  absl::Span<AsyncValue* const> values() const { return values_; }

 private:
  absl::Span<AsyncValue* const> values_;
};

template <typename T>
class Attribute {
 public:
  explicit Attribute(const bef::Attribute& attribute)
      : value_(attribute.scalar<T>()) {}
  const T& get() const { return value_; }
  const T& operator*() const { return value_; }

 private:
  T value_;
};

class StringAttribute {
 public:
  explicit StringAttribute(const bef::Attribute& attribute)
      : value_(attribute.bytes) {}
  absl::string_view get() const { return value_; }
  std::string str() const { return std::string(value_); }

 private:
  absl::string_view value_;
};

template <typename T>
class ArrayAttribute {
 public:
  explicit ArrayAttribute(const bef::Attribute& attribute)
      : data_(attribute.array<T>()) {}
  absl::Span<const T> data() const { return data_; }
  size_t size() const { return data_.size(); }
  const T& operator[](size_t i) const { return data_[i]; }

 private:
  absl::Span<const T> data_;
};

class RawAttribute {
 public:
  RawAttribute(const bef::Attribute& attribute, const bef::BefFile& file)
      : attribute_(attribute), file_(file) {}
  const bef::Attribute& get() const { return attribute_; }
  const bef::BefFile& file() const { return file_; }

 private:
  const bef::Attribute& attribute_;
  const bef::BefFile& file_;
};

class AggregateAttribute : public RawAttribute {
 public:
  using RawAttribute::RawAttribute;
  size_t size() const { return get().elements.size(); }
  const bef::Attribute& element(size_t i) const {
    return file().attribute(get().elements[i]);
  }
};

class RemainingFunctions {
 public:
  explicit RemainingFunctions(absl::Span<const Function* const> functions)
      : functions_(functions) {}
  size_t size() const { return functions_.size(); }
  const Function* operator[](size_t i) const { return functions_[i]; }

 private:
  absl::Span<const Function* const> functions_;
};

template <typename T>
class Result {
 public:
  Result(AsyncKernelFrame* frame, size_t index)
      : frame_(frame), index_(index) {}
  template <typename... Args>
  void Emplace(Args&&... args) const {
    frame_->EmplaceResultAt<T>(index_, std::forward<Args>(args)...);
  }
  AsyncValueRef<T> Allocate() const {
    return frame_->AllocateResultAt<T>(index_);
  }
  void Set(RCReference<AsyncValue> value) const {
    frame_->SetResultAt(index_, std::move(value));
  }

 private:
  AsyncKernelFrame* frame_;
  size_t index_;
};

class RemainingResults {
 public:
  RemainingResults(AsyncKernelFrame* frame, size_t begin, size_t size)
      : frame_(frame), begin_(begin), size_(size) {}
  size_t size() const { return size_; }
  template <typename T, typename... Args>
  void Emplace(size_t i, Args&&... args) const {
    frame_->EmplaceResultAt<T>(begin_ + i, std::forward<Args>(args)...);
  }
  template <typename T>
  AsyncValueRef<T> Allocate(size_t i) const {
    return frame_->AllocateResultAt<T>(begin_ + i);
  }
  void Set(size_t i, RCReference<AsyncValue> value) const {
    frame_->SetResultAt(begin_ + i, std::move(value));
  }

 private:
  AsyncKernelFrame* frame_;
  size_t begin_;
  size_t size_;
};

namespace internal {

//===--- Parameter extraction
//-----------------------------------------------===//

struct KernelCursor {
  size_t arg = 0;
  size_t attr = 0;
  size_t result = 0;
  size_t function = 0;
};

template <typename T>
struct IsTemplateOf : std::false_type {};

// Scalar attribute kinds a C++ type may be read from.
template <typename T>
bool AttributeKindMatches(bef::AttributeKind kind) {
  using K = bef::AttributeKind;
  if constexpr (std::is_same_v<T, bool>) {
    return kind == K::kBool;
  } else if constexpr (std::is_same_v<T, float>) {
    return kind == K::kF32;
  } else if constexpr (std::is_same_v<T, double>) {
    return kind == K::kF64;
  } else if constexpr (std::is_integral_v<T>) {
    // Integers of the right width, either signedness (MLIR integer
    // attributes are signless).
    return bef::ScalarSize(kind) == sizeof(T) && kind != K::kF32 &&
           kind != K::kF64 && kind != K::kF16 && kind != K::kBF16 &&
           kind != K::kBool && !bef::IsComplex(kind);
  } else {
    return bef::ScalarSize(kind) == sizeof(T) && !bef::IsComplex(kind);
  }
}

// Per-parameter traits: Check validates the frame (and advances the cursor
// the same way Get will); Get extracts the parameter.
// Error messages are built out of line so the checks stay small enough to
// inline into every kernel.
// A failed check reports its error on the frame (every result becomes it)
// and returns false; the kernel then does not run.
[[gnu::noinline, gnu::cold]] inline bool FailCheck(AsyncKernelFrame* frame,
                                                   absl::Status status) {
  frame->ReportError(std::move(status));
  return false;
}
[[gnu::noinline, gnu::cold]] inline bool MissingArgument(
    AsyncKernelFrame* frame, size_t index) {
  return FailCheck(frame,
                   absl::InvalidArgumentError(absl::StrCat(
                       "kernel '", frame->kernel_name(), "' expects at least ",
                       index + 1, " arguments, got ", frame->GetNumArgs())));
}
[[gnu::noinline, gnu::cold]] inline bool WrongArgumentType(
    AsyncKernelFrame* frame, size_t index) {
  return FailCheck(frame, absl::InvalidArgumentError(absl::StrCat(
                              "kernel '", frame->kernel_name(), "' argument ",
                              index, " has the wrong type")));
}

template <typename P, typename = void>
struct ParamTraits {
  // A plain value: the payload of the next argument.
  using T = std::decay_t<P>;
  static constexpr bool kPlainValue = true;
  [[gnu::always_inline]] static bool Check(AsyncKernelFrame* frame,
                                           KernelCursor& cursor) {
    if (ABSL_PREDICT_FALSE(cursor.arg >= frame->GetNumArgs())) {
      return MissingArgument(frame, cursor.arg);
    }
    if (ABSL_PREDICT_FALSE(!frame->GetArgAt(cursor.arg)->IsType<T>())) {
      return WrongArgumentType(frame, cursor.arg);
    }
    ++cursor.arg;
    return true;
  }
  static T& Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return frame->GetArgAt(cursor.arg++)->get<T>();
  }
};

template <typename T>
struct ParamTraits<Argument<T>> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return ParamTraits<T>::Check(frame, cursor);
  }
  static Argument<T> Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return Argument<T>(frame->GetArgAt(cursor.arg++));
  }
};

template <>
struct ParamTraits<RemainingArguments> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    cursor.arg = frame->GetNumArgs();
    return true;
  }
  static RemainingArguments Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    auto rest = frame->GetArguments().subspan(cursor.arg);
    cursor.arg = frame->GetNumArgs();
    return RemainingArguments(rest);
  }
};

inline bool CheckAttribute(AsyncKernelFrame* frame, KernelCursor& cursor,
                           bool (*matches)(const bef::Attribute&),
                           absl::string_view expected) {
  if (cursor.attr >= frame->GetNumAttributes() ||
      !matches(frame->GetAttributeAt(cursor.attr))) {
    return FailCheck(
        frame, absl::InvalidArgumentError(absl::StrCat(
                   "kernel '", frame->kernel_name(), "' expects attribute ",
                   cursor.attr, " to be ", expected)));
  }
  ++cursor.attr;
  return true;
}

template <typename T>
struct ParamTraits<Attribute<T>> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return CheckAttribute(
        frame, cursor,
        [](const bef::Attribute& a) { return AttributeKindMatches<T>(a.kind); },
        "a scalar of the kernel's type");
  }
  static Attribute<T> Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return Attribute<T>(frame->GetAttributeAt(cursor.attr++));
  }
};

template <>
struct ParamTraits<StringAttribute> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return CheckAttribute(
        frame, cursor,
        [](const bef::Attribute& a) {
          return a.kind == bef::AttributeKind::kString;
        },
        "a string");
  }
  static StringAttribute Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return StringAttribute(frame->GetAttributeAt(cursor.attr++));
  }
};

template <typename T>
struct ParamTraits<ArrayAttribute<T>> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return CheckAttribute(
        frame, cursor,
        [](const bef::Attribute& a) {
          return a.kind == bef::AttributeKind::kArray &&
                 AttributeKindMatches<T>(a.element_kind);
        },
        "an array of the kernel's element type");
  }
  static ArrayAttribute<T> Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return ArrayAttribute<T>(frame->GetAttributeAt(cursor.attr++));
  }
};

template <>
struct ParamTraits<AggregateAttribute> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return CheckAttribute(
        frame, cursor,
        [](const bef::Attribute& a) {
          return a.kind == bef::AttributeKind::kAggregate;
        },
        "an aggregate");
  }
  static AggregateAttribute Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return AggregateAttribute(frame->GetAttributeAt(cursor.attr++),
                              frame->bef_file());
  }
};

template <>
struct ParamTraits<RawAttribute> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return CheckAttribute(
        frame, cursor, [](const bef::Attribute&) { return true; }, "present");
  }
  static RawAttribute Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return RawAttribute(frame->GetAttributeAt(cursor.attr++),
                        frame->bef_file());
  }
};

template <>
struct ParamTraits<const Function*> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    if (cursor.function >= frame->GetNumFunctions()) {
      return FailCheck(frame, absl::InvalidArgumentError(absl::StrCat(
                                  "kernel '", frame->kernel_name(),
                                  "' expects a function operand")));
    }
    ++cursor.function;
    return true;
  }
  static const Function* Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return frame->GetFunctionAt(cursor.function++);
  }
};

template <>
struct ParamTraits<RemainingFunctions> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    cursor.function = frame->GetNumFunctions();
    return true;
  }
  static RemainingFunctions Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    RemainingFunctions rest(frame->GetFunctions().subspan(cursor.function));
    cursor.function = frame->GetNumFunctions();
    return rest;
  }
};

template <typename T>
struct ParamTraits<Result<T>> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    ++cursor.result;
    return true;
  }
  static Result<T> Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    return Result<T>(frame, cursor.result++);
  }
};

template <>
struct ParamTraits<RemainingResults> {
  static bool Check(AsyncKernelFrame* frame, KernelCursor& cursor) {
    cursor.result = std::max(cursor.result, frame->GetNumResults());
    return true;
  }
  static RemainingResults Get(AsyncKernelFrame* frame, KernelCursor& cursor) {
    RemainingResults rest(frame, cursor.result,
                          frame->GetNumResults() - cursor.result);
    cursor.result = frame->GetNumResults();
    return rest;
  }
};

template <>
struct ParamTraits<ExecutionContext> {
  static bool Check(AsyncKernelFrame*, KernelCursor&) { return true; }
  static const ExecutionContext& Get(AsyncKernelFrame* frame, KernelCursor&) {
    return frame->GetExecutionContext();
  }
};

template <>
struct ParamTraits<HostContext*> {
  static bool Check(AsyncKernelFrame*, KernelCursor&) { return true; }
  static HostContext* Get(AsyncKernelFrame* frame, KernelCursor&) {
    return frame->GetHostContext();
  }
};

template <>
struct ParamTraits<AsyncKernelFrame*> {
  static bool Check(AsyncKernelFrame*, KernelCursor&) { return true; }
  static AsyncKernelFrame* Get(AsyncKernelFrame* frame, KernelCursor&) {
    return frame;
  }
};

// What the extracted parameter is stored as until the call: plain values
// stay references into their async values.
template <typename P>
using StoredParam = decltype(ParamTraits<P>::Get(
    std::declval<AsyncKernelFrame*>(), std::declval<KernelCursor&>()));

//===--- Return values
//------------------------------------------------------===//

template <typename R>
struct ReturnTraits {
  static constexpr size_t kArity = 1;
  ABSL_ATTRIBUTE_ALWAYS_INLINE static void Set(AsyncKernelFrame* frame,
                                               size_t index, R&& value) {
    frame->SetReturnedResultAt(index, std::move(value));
  }
};

template <>
struct ReturnTraits<void> {
  static constexpr size_t kArity = 0;
};

template <typename T>
struct ReturnTraits<AsyncValueRef<T>> {
  static constexpr size_t kArity = 1;
  static void Set(AsyncKernelFrame* frame, size_t index,
                  AsyncValueRef<T>&& value) {
    frame->SetResultAt(index, std::move(value));
  }
};

template <>
struct ReturnTraits<RCReference<AsyncValue>> {
  static constexpr size_t kArity = 1;
  static void Set(AsyncKernelFrame* frame, size_t index,
                  RCReference<AsyncValue>&& value) {
    frame->SetResultAt(index, std::move(value));
  }
};

template <typename... Ts>
struct ReturnTraits<std::tuple<Ts...>> {
  static constexpr size_t kArity = sizeof...(Ts);
  static void Set(AsyncKernelFrame* frame, size_t index,
                  std::tuple<Ts...>&& values) {
    SetAll(frame, index, std::move(values), std::index_sequence_for<Ts...>());
  }
  template <size_t... I>
  static void SetAll(AsyncKernelFrame* frame, size_t index,
                     std::tuple<Ts...>&& values, std::index_sequence<I...>) {
    (ReturnTraits<Ts>::Set(frame, index + I, std::move(std::get<I>(values))),
     ...);
  }
};

template <typename A, typename B>
struct ReturnTraits<std::pair<A, B>> {
  static constexpr size_t kArity = 2;
  static void Set(AsyncKernelFrame* frame, size_t index,
                  std::pair<A, B>&& values) {
    ReturnTraits<A>::Set(frame, index, std::move(values.first));
    ReturnTraits<B>::Set(frame, index + 1, std::move(values.second));
  }
};

template <>
struct ReturnTraits<absl::Status> {
  static constexpr size_t kArity = 0;
};

template <typename T>
struct ReturnTraits<absl::StatusOr<T>> {
  static constexpr size_t kArity = ReturnTraits<T>::kArity;
  static void Set(AsyncKernelFrame* frame, size_t index,
                  absl::StatusOr<T>&& value) {
    if (!value.ok()) {
      frame->ReportError(std::move(value).status());
      return;
    }
    ReturnTraits<T>::Set(frame, index, *std::move(value));
  }
};

template <typename R, typename Call>
void InvokeAndSetResults(AsyncKernelFrame* frame, Call&& call) {
  if constexpr (std::is_void_v<R>) {
    call();
  } else if constexpr (std::is_same_v<R, absl::Status>) {
    absl::Status status = call();
    if (!status.ok()) frame->ReportError(std::move(status));
  } else {
    ReturnTraits<R>::Set(frame, 0, call());
  }
}

// Whether P is read by the primary ParamTraits (a plain value).
template <typename P, typename = void>
struct IsPlainValueParam : std::false_type {};
template <typename P>
struct IsPlainValueParam<P, std::void_t<decltype(ParamTraits<P>::kPlainValue)>>
    : std::true_type {};

// Types the executor may keep unboxed, in a register's 8 bytes.
template <typename T, typename = void>
struct IsUnboxableType : std::false_type {};
template <typename T>
struct IsUnboxableType<T, std::enable_if_t<!std::is_void_v<T>>>
    : std::bool_constant<std::is_trivially_copyable_v<T> &&
                         std::is_trivially_destructible_v<T> &&
                         sizeof(T) <= 8 &&
                         alignof(T) <= AsyncValue::kSmallPayloadAlignment> {};
template <typename T>
inline constexpr bool kUnboxableType = IsUnboxableType<T>::value;

// A parameter the unboxed entry can pass: a plain value, by value or by
// const reference.
template <typename P>
inline constexpr bool kUnboxableParam =
    (IsPlainValueParam<std::decay_t<P>>::value) &&
    kUnboxableType<std::decay_t<P>> &&
    (std::is_same_v<P, std::decay_t<P>> ||
     std::is_same_v<P, const std::decay_t<P>&>);

// The unboxed entry of f (see UnboxedKernel).
template <typename T>
[[gnu::always_inline]] inline T FromBits(uint64_t bits) {
  // Through bytes: T need not be default-constructible.
  std::array<unsigned char, sizeof(T)> bytes;
  std::memcpy(bytes.data(), &bits, sizeof(T));
  return std::bit_cast<T>(bytes);
}
template <typename T>
[[gnu::always_inline]] inline uint64_t ToBits(const T& value) {
  uint64_t bits = 0;
  std::memcpy(&bits, &value, sizeof(T));
  return bits;
}
template <typename R, typename... Params>
struct UnboxedEntry {
  template <R (*f)(Params...), size_t... I>
  static uint64_t Invoke(const uint64_t (&bits)[UnboxedKernel::kMaxOperands],
                         std::index_sequence<I...>) {
    return ToBits<R>(f(FromBits<std::decay_t<Params>>(bits[I])...));
  }
  static AsyncValue* Box(uint64_t bits) {
    return MakeAvailableAsyncValueRef<R>(FromBits<R>(bits)).release();
  }
  static constexpr AsyncValue::TypeId kOperandTypes[sizeof...(Params) + 1] = {
      AsyncValue::TypeIdOf<std::decay_t<Params>>()..., nullptr};
  template <R (*f)(Params...)>
  static constexpr UnboxedKernel kKernel = {
      [](uint64_t a, uint64_t b, uint64_t c, uint64_t d) {
        const uint64_t bits[UnboxedKernel::kMaxOperands] = {a, b, c, d};
        return Invoke<f>(bits, std::index_sequence_for<Params...>());
      },
      kOperandTypes,
      sizeof...(Params),
      AsyncValue::TypeIdOf<R>(),
      sizeof(R),
      &Box};
};

template <typename F, F f>
struct KernelImpl;

template <typename R, typename... Params, R (*f)(Params...)>
struct KernelImpl<R (*)(Params...), f> {
  static constexpr const UnboxedKernel* Unboxed() {
    if constexpr (sizeof...(Params) <= UnboxedKernel::kMaxOperands &&
                  kUnboxableType<R> && (kUnboxableParam<Params> && ...)) {
      return &UnboxedEntry<R, Params...>::template kKernel<f>;
    } else {
      return nullptr;
    }
  }
  static constexpr KernelDefinition Definition() {
    return KernelDefinition(&Invoke, Unboxed());
  }

  static void Invoke(AsyncKernelFrame* frame) {
    constexpr size_t kReturnArity = ReturnTraits<R>::kArity;
    if constexpr ((IsPlainValueParam<std::decay_t<Params>>::value && ...)) {
      if (ABSL_PREDICT_TRUE(InvokeOnPlainValues(
              frame, std::index_sequence_for<Params...>()))) {
        return;
      }
    }
    KernelCursor check;
    check.result = kReturnArity;
    // Left to right, stopping at the first problem (which reports itself).
    if (!(ParamTraits<std::decay_t<Params>>::Check(frame, check) && ...) ||
        !CheckCounts(frame, check)) {
      return;
    }
    KernelCursor cursor;
    cursor.result = kReturnArity;
    // Braced initialization evaluates left to right.
    std::tuple<StoredParam<std::decay_t<Params>>...> params{
        ParamTraits<std::decay_t<Params>>::Get(frame, cursor)...};
    InvokeAndSetResults<R>(frame, [&]() -> R {
      return std::apply(
          [](auto&&... p) -> R { return f(std::forward<decltype(p)>(p)...); },
          std::move(params));
    });
  }

  // A kernel of plain values only (most scalar kernels): when the counts
  // match and every argument holds its type, one test and one read per
  // argument. False, with nothing done, otherwise: the general path then
  // accepts a trailing chain or reports the mismatch.
  template <size_t... I>
  [[gnu::always_inline]] static bool InvokeOnPlainValues(
      AsyncKernelFrame* frame, std::index_sequence<I...>) {
    if (frame->GetNumArgs() != sizeof...(Params) ||
        frame->GetNumResults() != ReturnTraits<R>::kArity) {
      return false;
    }
    AsyncValue* const* args = frame->GetArguments().data();
    std::tuple<std::decay_t<Params>*...> payloads{
        args[I]->template GetIfType<std::decay_t<Params>>()...};
    if (((std::get<I>(payloads) == nullptr) || ...)) return false;
    InvokeAndSetResults<R>(frame,
                           [&]() -> R { return f(*std::get<I>(payloads)...); });
    return true;
  }

  [[gnu::always_inline]] static bool CheckCounts(AsyncKernelFrame* frame,
                                                 const KernelCursor& cursor) {
    if (ABSL_PREDICT_TRUE(cursor.arg == frame->GetNumArgs() &&
                          cursor.result == frame->GetNumResults())) {
      return true;
    }
    // By value: a reference would keep the cursor in memory on the hot path.
    return CountMismatch(frame, cursor.arg, cursor.result);
  }

  // False (after reporting) unless the only extra argument is a trailing
  // chain, which kernels may ignore.
  [[gnu::noinline, gnu::cold]] static bool CountMismatch(
      AsyncKernelFrame* frame, size_t expected_args, size_t expected_results) {
    size_t args = frame->GetNumArgs();
    bool ignorable_chain =
        args == expected_args + 1 && frame->GetArgAt(args - 1)->IsType<Chain>();
    if (expected_args != args && !ignorable_chain) {
      return FailCheck(frame, absl::InvalidArgumentError(absl::StrCat(
                                  "kernel '", frame->kernel_name(), "' takes ",
                                  expected_args, " arguments, got ", args)));
    }
    if (expected_results != frame->GetNumResults()) {
      return FailCheck(
          frame,
          absl::InvalidArgumentError(absl::StrCat(
              "kernel '", frame->kernel_name(), "' has ", expected_results,
              " results, the program expects ", frame->GetNumResults())));
    }
    return true;
  }
};

}  // namespace internal
}  // namespace asyncrt

// The kernel definition (KernelDefinition, which converts to an
// AsyncKernelImplementation) for function `fn`.
#define ASYNCRT_KERNEL(fn) \
  (::asyncrt::internal::KernelImpl<decltype(&fn), &fn>::Definition())

#endif  // ASYNCRT_BEF_EXECUTOR_KERNEL_UTILS_H_
