// Typed handles to AsyncValues and the functions that make them.
//
//   AsyncValueRef<T>  owns one reference (+1). Copyable (a copy adds a
//                     reference) and movable (a move does not touch the count).
//   AsyncValuePtr<T>  borrows (+0); trivially copyable; must not outlive an
//                     owning reference.
//
// The payload type T of an AsyncValueRef<T> is the type its value will hold
// when concrete; the value may instead be an error, or an indirect value that
// is forwarded later.
#ifndef ASYNCRT_HOST_CONTEXT_ASYNC_VALUE_REF_H_
#define ASYNCRT_HOST_CONTEXT_ASYNC_VALUE_REF_H_

#include <cassert>
#include <type_traits>
#include <utility>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

template <typename T>
class AsyncValueRef;

namespace internal {
template <typename T>
struct IsStatusOr : std::false_type {};
template <typename T>
struct IsStatusOr<absl::StatusOr<T>> : std::true_type {};
}  // namespace internal

// A borrowed (+0) typed pointer to an AsyncValue.
template <typename T>
class AsyncValuePtr {
 public:
  AsyncValuePtr() = default;
  explicit AsyncValuePtr(AsyncValue* value) : value_(value) {}

  AsyncValue* value() const { return value_; }
  // Adds a reference and returns it owned.
  AsyncValueRef<T> CopyRef() const;

  T& get() const { return value_->get<T>(); }
  T* operator->() const { return &get(); }
  T& operator*() const { return get(); }
  explicit operator bool() const { return value_ != nullptr; }

  bool IsAvailable() const { return value_->IsAvailable(); }
  bool IsUnavailable() const { return value_->IsUnavailable(); }
  bool IsConcrete() const { return value_->IsConcrete(); }
  bool IsError() const { return value_->IsError(); }
  const absl::Status& GetError() const { return value_->GetError(); }

  template <typename F>
  void AndThen(F&& waiter) const {
    value_->AndThen(std::forward<F>(waiter));
  }

 private:
  AsyncValue* value_ = nullptr;
};

// An owning (+1) typed reference to an AsyncValue.
template <typename T>
class AsyncValueRef {
 public:
  AsyncValueRef() = default;
  AsyncValueRef(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)

  // Adopts `value`, which must hold a T, be an error, or be indirect.
  explicit AsyncValueRef(RCReference<AsyncValue> value)
      : value_(std::move(value)) {}

  // Typed handles convert to untyped references.
  operator RCReference<AsyncValue>() const& { return value_; }  // NOLINT
  operator RCReference<AsyncValue>() && {                       // NOLINT
    return std::move(value_);
  }

  AsyncValue* GetAsyncValue() const { return value_.get(); }
  AsyncValuePtr<T> AsPtr() const { return AsyncValuePtr<T>(value_.get()); }
  AsyncValueRef CopyRef() const { return *this; }
  // Gives up ownership: the caller now holds the +1.
  [[nodiscard]] AsyncValue* release() { return value_.release(); }
  void reset() { value_.reset(); }
  explicit operator bool() const { return static_cast<bool>(value_); }

  // The payload. Requires IsConcrete().
  T& get() const { return value_->template get<T>(); }
  T* operator->() const { return &get(); }
  T& operator*() const { return get(); }

  bool IsAvailable() const { return value_->IsAvailable(); }
  bool IsUnavailable() const { return value_->IsUnavailable(); }
  bool IsConcrete() const { return value_->IsConcrete(); }
  bool IsConstructed() const { return value_->IsConstructed(); }
  bool IsError() const { return value_->IsError(); }
  const absl::Status& GetError() const { return value_->GetError(); }
  const absl::Status* GetErrorIfPresent() const {
    return value_->GetErrorIfPresent();
  }

  // Constructs the payload and publishes it; runs waiters on this thread.
  // Requires an unconstructed ConcreteAsyncValue<T>.
  template <typename... Args>
  void emplace(Args&&... args) const {
    assert(!value_->IsIndirect());
    static_cast<ConcreteAsyncValue<T>*>(value_.get())
        ->emplace(std::forward<Args>(args)...);
  }

  // Publishes `value_or_error`: emplaces the value or sets the error.
  void emplace(absl::StatusOr<T> value_or_error) const {
    if (value_or_error.ok()) {
      emplace(*std::move(value_or_error));
    } else {
      SetError(std::move(value_or_error).status());
    }
  }

  void SetStateConcrete() const { value_->SetStateConcrete(); }
  void SetError(absl::Status status) const {
    value_->SetError(std::move(status));
  }
  void SetError(absl::string_view message) const {
    SetError(absl::InternalError(message));
  }

  template <typename F>
  void AndThen(F&& waiter) const {
    value_->AndThen(std::forward<F>(waiter));
  }

  friend bool operator==(const AsyncValueRef& a, const AsyncValueRef& b) {
    return a.value_ == b.value_;
  }

 private:
  RCReference<AsyncValue> value_;
};

template <typename T>
AsyncValueRef<T> AsyncValuePtr<T>::CopyRef() const {
  return AsyncValueRef<T>(FormRef(value_));
}

//===--- Factories -------------------------------------------------------===//
// Each returns a new value with one reference (+1) owned by the caller.

// An unconstructed value, to be published later with emplace or SetError.
template <typename T>
AsyncValueRef<T> MakeUnconstructedAsyncValueRef() {
  return AsyncValueRef<T>(TakeRef<AsyncValue>(new ConcreteAsyncValue<T>(
      typename ConcreteAsyncValue<T>::UnconstructedTag{})));
}

// A constructed but unpublished value; publish with SetStateConcrete.
template <typename T, typename... Args>
AsyncValueRef<T> MakeConstructedAsyncValueRef(Args&&... args) {
  return AsyncValueRef<T>(TakeRef<AsyncValue>(new ConcreteAsyncValue<T>(
      typename ConcreteAsyncValue<T>::ConstructedTag{},
      std::forward<Args>(args)...)));
}

// An available (concrete) value. Costs one allocation and no atomic
// read-modify-write.
template <typename T, typename... Args>
AsyncValueRef<T> MakeAvailableAsyncValueRef(Args&&... args) {
  return AsyncValueRef<T>(TakeRef<AsyncValue>(
      new ConcreteAsyncValue<T>(typename ConcreteAsyncValue<T>::ConcreteTag{},
                                std::forward<Args>(args)...)));
}

// Payload type of values that only ever hold an error.
struct ErrorOnlyPayload {};

// A value in the error state. `status` must not be OK.
RCReference<AsyncValue> MakeErrorAsyncValueRef(absl::Status status);
RCReference<AsyncValue> MakeErrorAsyncValueRef(absl::string_view message);

// A typed value in the error state.
template <typename T>
AsyncValueRef<T> MakeErrorAsyncValueRef(absl::Status status) {
  return AsyncValueRef<T>(TakeRef<AsyncValue>(new ConcreteAsyncValue<T>(
      typename ConcreteAsyncValue<T>::ErrorTag{}, std::move(status))));
}

// An indirect value, to be forwarded later with ForwardTo.
RCReference<IndirectAsyncValue> MakeIndirectAsyncValue();

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_ASYNC_VALUE_REF_H_
