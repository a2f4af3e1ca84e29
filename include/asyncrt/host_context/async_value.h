// AsyncValue: a refcounted, type-erased future with an inline payload.
//
// An AsyncValue starts unavailable (unconstructed, or constructed but not yet
// published) and becomes available exactly once: concrete (holding a value)
// or error (holding an absl::Status). Code that needs the value registers a
// continuation with AndThen; publishing the value runs the continuations.
//
// Layout: a 24-byte header followed by the payload (ConcreteAsyncValue<T>).
// The state and the waiter list share one atomic word, so publishing a value
// and taking the list of waiters is a single atomic exchange. Once the value
// is available, the pointer bits of that word hold the error (if any).
//
// Thread-safety: every member function is thread-safe unless it says
// otherwise. Publishing (emplace, SetError, SetStateConcrete, ForwardTo) must
// happen at most once per value; get<T>() requires the value to be concrete
// and is then a plain read.
//
// Ownership: see docs/host_context.md. AddRef/DropRef manage the count;
// AsyncValueRef<T> (async_value_ref.h) owns one reference (+1), AsyncValuePtr
// and raw AsyncValue* borrow (+0).
#ifndef ASYNCRT_HOST_CONTEXT_ASYNC_VALUE_H_
#define ASYNCRT_HOST_CONTEXT_ASYNC_VALUE_H_

#include <atomic>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <new>
#include <optional>
#include <type_traits>
#include <utility>

#include "absl/base/attributes.h"
#include "absl/status/status.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

class AsyncValue;
class IndirectAsyncValue;
template <typename T>
class ConcreteAsyncValue;

namespace internal {

// A node of an AsyncValue's waiter list. One allocation per waiter that has
// to wait; waiters on available values run inline without allocating.
struct WaiterNode {
  WaiterNode* next = nullptr;
  // Runs the continuation (if `run`) and deletes the node. A function
  // pointer rather than a virtual call keeps nodes free of vtables.
  void (*run_and_delete)(WaiterNode* node, bool run) = nullptr;
};

template <typename F>
struct WaiterNodeImpl final : WaiterNode {
  explicit WaiterNodeImpl(F&& f) : callback(std::move(f)) {
    run_and_delete = [](WaiterNode* node, bool run) {
      auto* self = static_cast<WaiterNodeImpl*>(node);
      if (run) self->callback();
      delete self;
    };
  }
  F callback;
};

// Per-payload-type operations, one static table per T.
struct AsyncValueTypeInfo {
  void (*destroy_payload)(AsyncValue* value);
  void (*delete_value)(AsyncValue* value);
};

}  // namespace internal

class AsyncValue {
 public:
  enum class State : uint8_t {
    kUnconstructed = 0,  // No payload yet.
    kConstructed = 1,    // Payload constructed but not yet published.
    kConcrete = 2,       // Available with a value.
    kError = 3,          // Available with an error.
  };

  AsyncValue(const AsyncValue&) = delete;
  AsyncValue& operator=(const AsyncValue&) = delete;

  // Values are small and short-lived, and most die on a thread that soon
  // makes more: blocks up to 256 bytes come from a per-thread cache of freed
  // ones (support/block_cache.h) rather than malloc. Thread-safe; a value
  // may be freed on any thread.
  static void* operator new(size_t size);
  static void operator delete(void* block, size_t size);
  // Over-aligned payloads bypass the cache.
  static void* operator new(size_t size, std::align_val_t alignment) {
    return ::operator new(size, alignment);
  }
  static void operator delete(void* block, size_t size,
                              std::align_val_t alignment) {
    ::operator delete(block, size, alignment);
  }

  //===--- Reference counting -----------------------------------------===//

  // Adds `count` references; returns `this` so that `f(v->AddRef())` passes a
  // +1 reference.
  AsyncValue* AddRef(uint32_t count = 1) {
    if (is_refcounted_) {
      // Relaxed: a new reference can only be formed from an existing one.
      refcount_.fetch_add(count, std::memory_order_relaxed);
    }
    return this;
  }

  // Drops `count` references, destroying the value when none remain.
  void DropRef(uint32_t count = 1) {
    if (!is_refcounted_) return;
    // When we own every remaining reference no other thread can race with
    // us, so the atomic read-modify-write can be skipped.
    if (refcount_.load(std::memory_order_acquire) == count ||
        refcount_.fetch_sub(count, std::memory_order_acq_rel) == count) {
      Destroy();
    }
  }

  // True if this is the only reference. Always false for values that are not
  // refcounted (shared singletons such as the ready chain).
  bool IsUnique() const {
    return is_refcounted_ && refcount_.load(std::memory_order_acquire) == 1;
  }
  uint32_t NumRef() const { return refcount_.load(std::memory_order_acquire); }

  //===--- State ------------------------------------------------------===//

  State state() const { return StateOf(LoadWord()); }
  bool IsAvailable() const { return IsAvailableState(StateOf(LoadWord())); }
  bool IsUnavailable() const { return !IsAvailable(); }
  bool IsConcrete() const { return state() == State::kConcrete; }
  bool IsError() const { return state() == State::kError; }
  bool IsConstructed() const { return state() == State::kConstructed; }
  bool IsUnconstructed() const { return state() == State::kUnconstructed; }
  // Not "== kIndirect": with two kinds, the compiler then knows a value
  // that is not indirect is concrete and drops Resolved()'s own test.
  bool IsIndirect() const { return kind_ != Kind::kConcrete; }

  // True if the payload type is T. An indirect value answers for the value
  // it was forwarded to (false while it is unresolved).
  template <typename T>
  bool IsType() const;

  // The payload. Requires IsConcrete() and IsType<T>().
  template <typename T>
  T& get();
  template <typename T>
  const T& get() const {
    return const_cast<AsyncValue*>(this)->get<T>();
  }

  // The payload if the value is concrete and holds a T, else nullptr: the
  // test and the read with one resolution of an indirect value.
  template <typename T>
  ABSL_ATTRIBUTE_ALWAYS_INLINE T* GetIfPresent();
  // The payload if the value holds a T, else nullptr; like IsType<T>() and
  // get<T>() with one resolution. Requires an available value that is not
  // an error (as a strict kernel's operands are).
  template <typename T>
  T* GetIfType();

  // A payload type as data, for code that handles payloads it does not know
  // at compile time (the executor's unboxed kernels): TypeIdOf<T>()
  // identifies T.
  using TypeId = const internal::AsyncValueTypeInfo*;
  template <typename T>
  static constexpr TypeId TypeIdOf();
  // Payloads of at most this alignment start right after the header.
  static constexpr size_t kSmallPayloadAlignment = 8;
  // GetIfType<T>() for the T whose TypeIdOf<T>() is `type`; T must be at
  // most kSmallPayloadAlignment-aligned.
  void* GetIfTypeId(TypeId type);
  // Likewise, but nullptr for an indirect value or an error as well: one
  // comparison of the type and one of the state.
  void* GetIfConcreteTypeId(TypeId type);

  // The error. Requires IsError().
  const absl::Status& GetError() const;
  // The error if the value is in the error state, else nullptr.
  const absl::Status* GetErrorIfPresent() const;

  //===--- Publishing -------------------------------------------------===//

  // Makes this value available as an error. `status` must not be OK. If the
  // payload was constructed it is destroyed first. Runs the waiters on the
  // calling thread. Requires the value to be unavailable.
  void SetError(absl::Status status);

  // Publishes a constructed payload (kConstructed -> kConcrete). Runs the
  // waiters on the calling thread.
  void SetStateConcrete();

  //===--- Continuations ----------------------------------------------===//

  // Runs `waiter` once the value is available: immediately on the calling
  // thread if it already is, otherwise on the thread that publishes the
  // value (inside emplace/SetError/SetStateConcrete/ForwardTo). Waiters run
  // in the order they were added. `waiter` must be callable as `void()`.
  // The waiter does not keep the value alive: capture a reference if it
  // reads the value. If the value is destroyed while still unavailable, its
  // pending waiters are destroyed without running.
  template <typename F>
  void AndThen(F&& waiter);

  //===--- Leak accounting --------------------------------------------===//

  // Number of live refcounted async values in the process, when built with
  // ASYNCRT_ASYNC_VALUE_ACCOUNTING (debug and sanitizer builds); nullopt
  // otherwise.
  static std::optional<int64_t> NumLiveValues();
  // Number of refcounted async values created so far, likewise.
  static std::optional<int64_t> NumCreatedValues();

 protected:
  enum class Kind : uint8_t { kConcrete, kIndirect };

  AsyncValue(Kind kind, State state, bool is_refcounted,
             const internal::AsyncValueTypeInfo* type_info)
      : refcount_(1),
        kind_(kind),
        is_refcounted_(is_refcounted),
        type_info_(type_info),
        waiters_and_state_(static_cast<uintptr_t>(state)) {
#ifdef ASYNCRT_ASYNC_VALUE_ACCOUNTING
    if (is_refcounted_) AdjustLiveValues(1);
#endif
  }

  ~AsyncValue();

  static constexpr uintptr_t kStateMask = 3;

  static State StateOf(uintptr_t word) {
    return static_cast<State>(word & kStateMask);
  }
  static bool IsAvailableState(State state) {
    return static_cast<uint8_t>(state) >= 2;
  }
  uintptr_t LoadWord() const {
    return waiters_and_state_.load(std::memory_order_acquire);
  }

  // Transitions to an available state, storing `payload_bits` (an error
  // pointer or zero) with it, and runs the waiters that were waiting.
  void Publish(State state, uintptr_t payload_bits);

  // Marks the payload constructed (kUnconstructed -> kConstructed), keeping
  // the waiter list.
  void MarkConstructed() {
    [[maybe_unused]] uintptr_t old =
        waiters_and_state_.fetch_or(1, std::memory_order_release);
    assert(StateOf(old) == State::kUnconstructed);
  }

  // The value to read the payload or error from: `this`, or the target of a
  // resolved indirect value.
  const AsyncValue* Resolved() const;

  void EnqueueWaiter(internal::WaiterNode* node);
  static void RunWaiters(internal::WaiterNode* list);
  static void DeleteWaiters(internal::WaiterNode* list);

 private:
  friend class IndirectAsyncValue;
  template <typename T>
  friend class ConcreteAsyncValue;

  void Destroy();
#ifdef ASYNCRT_ASYNC_VALUE_ACCOUNTING
  static void AdjustLiveValues(int64_t delta);
#endif

  std::atomic<uint32_t> refcount_;
  const Kind kind_;
  // False for process-lifetime singletons: their AddRef/DropRef are no-ops,
  // so threads sharing them do not contend on the count.
  const bool is_refcounted_;
  // Null for indirect values.
  const internal::AsyncValueTypeInfo* const type_info_;
  // Low 2 bits: State. Other bits: while unavailable, the head of the waiter
  // list (most recent first); in kError, an owned absl::Status*; else zero.
  std::atomic<uintptr_t> waiters_and_state_;
};

// An AsyncValue whose payload is a T stored inline after the header.
template <typename T>
class ConcreteAsyncValue final : public AsyncValue {
 public:
  struct UnconstructedTag {};
  struct ConstructedTag {};
  struct ConcreteTag {};
  struct ErrorTag {};

  explicit ConcreteAsyncValue(UnconstructedTag)
      : AsyncValue(Kind::kConcrete, State::kUnconstructed, true, &kTypeInfo) {}

  template <typename... Args>
  explicit ConcreteAsyncValue(ConstructedTag, Args&&... args)
      : AsyncValue(Kind::kConcrete, State::kConstructed, true, &kTypeInfo) {
    new (&storage_) T(std::forward<Args>(args)...);
  }

  template <typename... Args>
  explicit ConcreteAsyncValue(ConcreteTag, Args&&... args)
      : AsyncValue(Kind::kConcrete, State::kConcrete, true, &kTypeInfo) {
    new (&storage_) T(std::forward<Args>(args)...);
  }

  ConcreteAsyncValue(ErrorTag, absl::Status status)
      : AsyncValue(Kind::kConcrete, State::kError, true, &kTypeInfo) {
    assert(!status.ok());
    waiters_and_state_.store(
        reinterpret_cast<uintptr_t>(new absl::Status(std::move(status))) |
            static_cast<uintptr_t>(State::kError),
        std::memory_order_relaxed);
  }

  // A never-destroyed, non-refcounted concrete value (shared singletons).
  template <typename... Args>
  static ConcreteAsyncValue* MakeSingleton(Args&&... args) {
    return new ConcreteAsyncValue(SingletonTag{}, std::forward<Args>(args)...);
  }

  ~ConcreteAsyncValue() {
    State s = StateOf(LoadWord());
    if (s == State::kConstructed || s == State::kConcrete) payload().~T();
  }

  T& payload() { return *std::launder(reinterpret_cast<T*>(&storage_)); }

  // Constructs the payload and publishes it. Requires kUnconstructed.
  template <typename... Args>
  void emplace(Args&&... args) {
    assert(StateOf(LoadWord()) == State::kUnconstructed);
    new (&storage_) T(std::forward<Args>(args)...);
    Publish(State::kConcrete, 0);
  }

  // Constructs the payload without publishing it. Requires kUnconstructed.
  template <typename... Args>
  void construct(Args&&... args) {
    new (&storage_) T(std::forward<Args>(args)...);
    MarkConstructed();
  }

  static const internal::AsyncValueTypeInfo kTypeInfo;

 private:
  struct SingletonTag {};
  template <typename... Args>
  explicit ConcreteAsyncValue(SingletonTag, Args&&... args)
      : AsyncValue(Kind::kConcrete, State::kConcrete, false, &kTypeInfo) {
    new (&storage_) T(std::forward<Args>(args)...);
  }

  alignas(T) unsigned char storage_[sizeof(T)];
};

template <typename T>
const internal::AsyncValueTypeInfo ConcreteAsyncValue<T>::kTypeInfo = {
    /*destroy_payload=*/
    [](AsyncValue* value) {
      static_cast<ConcreteAsyncValue*>(value)->payload().~T();
    },
    /*delete_value=*/
    [](AsyncValue* value) { delete static_cast<ConcreteAsyncValue*>(value); },
};

// An AsyncValue that is later forwarded to another value, possibly of a type
// unknown when the indirect value was created. Once forwarded and the target
// is available, the indirect value takes the target's state and reads its
// payload or error through it.
class IndirectAsyncValue final : public AsyncValue {
 public:
  IndirectAsyncValue()
      : AsyncValue(Kind::kIndirect, State::kUnconstructed, true, nullptr) {}
  ~IndirectAsyncValue();

  // Forwards this value to `target` (+1, consumed). If `target` is
  // unavailable, this value becomes available when it does (on the thread
  // that publishes it). Chains of indirect values collapse: this value ends
  // up pointing at the concrete or error value at the end of the chain.
  // Must be called at most once. Forwarding a value to itself is an error
  // that leaves it unavailable forever, so it is rejected with an assert.
  void ForwardTo(RCReference<AsyncValue> target);

  // The resolved target, or nullptr while unresolved. Borrowed (+0).
  AsyncValue* target() const { return target_.load(std::memory_order_acquire); }

 private:
  friend class AsyncValue;
  // +1 once set; always a non-indirect value.
  std::atomic<AsyncValue*> target_{nullptr};
};

//===--- Inline definitions ---------------------------------------------===//

inline const AsyncValue* AsyncValue::Resolved() const {
  if (kind_ == Kind::kConcrete) return this;
  const AsyncValue* target =
      static_cast<const IndirectAsyncValue*>(this)->target();
  return target ? target : this;
}

template <typename T>
bool AsyncValue::IsType() const {
  return Resolved()->type_info_ == &ConcreteAsyncValue<T>::kTypeInfo;
}

template <typename T>
T& AsyncValue::get() {
  AsyncValue* value = const_cast<AsyncValue*>(Resolved());
  assert(value->type_info_ == &ConcreteAsyncValue<T>::kTypeInfo &&
         "AsyncValue::get<T>() with the wrong type");
  assert(value->state() == State::kConcrete &&
         "AsyncValue::get<T>() on a value that is not concrete");
  return static_cast<ConcreteAsyncValue<T>*>(value)->payload();
}

template <typename T>
inline T* AsyncValue::GetIfPresent() {
  AsyncValue* value = const_cast<AsyncValue*>(Resolved());
  if (value->type_info_ != &ConcreteAsyncValue<T>::kTypeInfo ||
      StateOf(value->LoadWord()) != State::kConcrete) {
    return nullptr;
  }
  return &static_cast<ConcreteAsyncValue<T>*>(value)->payload();
}

template <typename T>
T* AsyncValue::GetIfType() {
  AsyncValue* value = const_cast<AsyncValue*>(Resolved());
  if (value->type_info_ != &ConcreteAsyncValue<T>::kTypeInfo) return nullptr;
  return &static_cast<ConcreteAsyncValue<T>*>(value)->payload();
}

template <typename T>
constexpr AsyncValue::TypeId AsyncValue::TypeIdOf() {
  return &ConcreteAsyncValue<T>::kTypeInfo;
}

namespace internal {
// ConcreteAsyncValue<T>'s storage follows the header, aligned for T.
inline constexpr size_t kSmallPayloadOffset = sizeof(AsyncValue);
static_assert(kSmallPayloadOffset % AsyncValue::kSmallPayloadAlignment == 0);
}  // namespace internal

inline void* AsyncValue::GetIfTypeId(TypeId type) {
  AsyncValue* value = const_cast<AsyncValue*>(Resolved());
  if (value->type_info_ != type) return nullptr;
  return reinterpret_cast<char*>(value) + internal::kSmallPayloadOffset;
}

inline void* AsyncValue::GetIfConcreteTypeId(TypeId type) {
  // Indirect values have no type of their own (type_info_ is null).
  if (type_info_ != type || StateOf(LoadWord()) != State::kConcrete) {
    return nullptr;
  }
  return reinterpret_cast<char*>(this) + internal::kSmallPayloadOffset;
}

inline const absl::Status* AsyncValue::GetErrorIfPresent() const {
  const AsyncValue* value = Resolved();
  uintptr_t word = value->LoadWord();
  if (StateOf(word) != State::kError) return nullptr;
  return reinterpret_cast<const absl::Status*>(word & ~kStateMask);
}

inline const absl::Status& AsyncValue::GetError() const {
  const absl::Status* error = GetErrorIfPresent();
  assert(error && "AsyncValue::GetError() on a value without an error");
  return *error;
}

template <typename F>
void AsyncValue::AndThen(F&& waiter) {
  // Fast path: available values run the waiter inline, without allocating.
  if (IsAvailableState(StateOf(LoadWord()))) {
    waiter();
    return;
  }
  EnqueueWaiter(new internal::WaiterNodeImpl<std::decay_t<F>>(
      std::decay_t<F>(std::forward<F>(waiter))));
}

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_ASYNC_VALUE_H_
