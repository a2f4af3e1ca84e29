// Intrusive reference counting: ReferenceCounted<T> and RCReference<T>.
//
// Conventions (see docs/host_context.md, "Reference counts"):
//   - A raw `T*` argument is borrowed (+0): the callee must not drop it.
//   - An `RCReference<T>` returned from a function is owned (+1).
//   - `RCReference<T>` passed by value is a sink (+1 moves into the callee).
//
// RCReference is copyable (a copy adds a reference, like std::shared_ptr) and
// movable (a move transfers the reference without touching the count). Hot
// paths move.
#ifndef ASYNCRT_SUPPORT_REF_COUNT_H_
#define ASYNCRT_SUPPORT_REF_COUNT_H_

#include <atomic>
#include <cassert>
#include <cstdint>
#include <utility>

namespace asyncrt {

// Base class of intrusively refcounted objects. Thread-safe: AddRef and
// DropRef may race freely. Derived classes must be heap-allocated with `new`;
// the object deletes itself when its count reaches zero.
template <typename Derived>
class ReferenceCounted {
 public:
  ReferenceCounted() = default;
  explicit ReferenceCounted(uint32_t initial_count)
      : ref_count_(initial_count) {}
  ReferenceCounted(const ReferenceCounted&) = delete;
  ReferenceCounted& operator=(const ReferenceCounted&) = delete;

  void AddRef() const {
    // Relaxed: taking a new reference requires already holding one, so no
    // ownership decision depends on this increment.
    ref_count_.fetch_add(1, std::memory_order_relaxed);
  }

  void DropRef() const {
    // Skip the atomic read-modify-write when we hold the only reference: no
    // other thread can add one concurrently.
    if (ref_count_.load(std::memory_order_acquire) == 1 ||
        ref_count_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      delete static_cast<const Derived*>(this);
    }
  }

  bool IsUnique() const {
    return ref_count_.load(std::memory_order_acquire) == 1;
  }
  uint32_t NumRef() const { return ref_count_.load(std::memory_order_acquire); }

 protected:
  ~ReferenceCounted() { assert(ref_count_.load() <= 1); }

 private:
  mutable std::atomic<uint32_t> ref_count_{1};
};

// An owning pointer to a refcounted object (anything with AddRef/DropRef).
template <typename T>
class RCReference {
 public:
  RCReference() = default;
  RCReference(std::nullptr_t) {}  // NOLINT(google-explicit-constructor)
  RCReference(const RCReference& other) : pointer_(other.pointer_) {
    if (pointer_) pointer_->AddRef();
  }
  RCReference(RCReference&& other) noexcept : pointer_(other.release()) {}
  template <typename U>
  RCReference(RCReference<U>&& other) noexcept  // NOLINT
      : pointer_(other.release()) {}
  template <typename U>
  RCReference(const RCReference<U>& other) : pointer_(other.get()) {  // NOLINT
    if (pointer_) pointer_->AddRef();
  }
  // Without a temporary (whose destructor the compiler tends to call out
  // of line): assigning a result slot is a store and a null check.
  RCReference& operator=(const RCReference& other) {
    if (other.pointer_) other.pointer_->AddRef();
    reset(other.pointer_);
    return *this;
  }
  RCReference& operator=(RCReference&& other) noexcept {
    reset(other.release());
    return *this;
  }
  ~RCReference() {
    if (pointer_) pointer_->DropRef();
  }

  // Takes `pointer` (+1) and drops the old reference, after the store: a
  // destructor that the drop runs sees this object already updated.
  void reset(T* pointer = nullptr) {
    if (T* old = std::exchange(pointer_, pointer)) old->DropRef();
  }
  // Gives up ownership without dropping the reference: the caller now holds
  // the +1 that this object held.
  [[nodiscard]] T* release() { return std::exchange(pointer_, nullptr); }

  T* get() const { return pointer_; }
  T* operator->() const { return pointer_; }
  T& operator*() const { return *pointer_; }
  explicit operator bool() const { return pointer_ != nullptr; }
  RCReference CopyRef() const { return *this; }

  friend bool operator==(const RCReference& a, const RCReference& b) {
    return a.pointer_ == b.pointer_;
  }
  friend bool operator==(const RCReference& a, std::nullptr_t) {
    return a.pointer_ == nullptr;
  }

 private:
  template <typename U>
  friend RCReference<U> TakeRef(U* pointer);
  T* pointer_ = nullptr;
};

// Adopts a +1 reference that the caller already holds.
template <typename T>
RCReference<T> TakeRef(T* pointer) {
  RCReference<T> ref;
  ref.pointer_ = pointer;
  return ref;
}

// Adds a reference to a borrowed (+0) pointer and returns it owned.
template <typename T>
RCReference<T> FormRef(T* pointer) {
  if (pointer) pointer->AddRef();
  return TakeRef(pointer);
}

template <typename T, typename... Args>
RCReference<T> MakeRef(Args&&... args) {
  return TakeRef(new T(std::forward<Args>(args)...));
}

}  // namespace asyncrt

#endif  // ASYNCRT_SUPPORT_REF_COUNT_H_
