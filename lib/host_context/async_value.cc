#include "asyncrt/host_context/async_value.h"

#include <atomic>
#include <cassert>
#include <cstddef>

#include "asyncrt/support/block_cache.h"

namespace asyncrt {

#ifdef ASYNCRT_ASYNC_VALUE_ACCOUNTING
namespace {
std::atomic<int64_t> live_async_values{0};
std::atomic<int64_t> created_async_values{0};
}  // namespace

void AsyncValue::AdjustLiveValues(int64_t delta) {
  live_async_values.fetch_add(delta, std::memory_order_relaxed);
  if (delta > 0)
    created_async_values.fetch_add(delta, std::memory_order_relaxed);
}

std::optional<int64_t> AsyncValue::NumLiveValues() {
  return live_async_values.load(std::memory_order_relaxed);
}
std::optional<int64_t> AsyncValue::NumCreatedValues() {
  return created_async_values.load(std::memory_order_relaxed);
}
#else
std::optional<int64_t> AsyncValue::NumLiveValues() { return std::nullopt; }
std::optional<int64_t> AsyncValue::NumCreatedValues() { return std::nullopt; }
#endif

namespace {
// 32 to 256 bytes: an AsyncValue header is 24, payloads are a few words
// (scalars, chains, tensors with their metadata).
using ValueBlockCache = BlockCache</*kMinBytes=*/32, /*kClasses=*/4,
                                   /*kPerClass=*/32>;
thread_local ValueBlockCache value_block_cache;
}  // namespace

void* AsyncValue::operator new(size_t size) {
  const uint32_t block_class = ValueBlockCache::ClassOf(size);
  if (kBlockCacheEnabled && ValueBlockCache::IsCached(block_class)) {
    return value_block_cache.Allocate(block_class);
  }
  return ::operator new(size);
}

void AsyncValue::operator delete(void* block, size_t size) {
  const uint32_t block_class = ValueBlockCache::ClassOf(size);
  if (kBlockCacheEnabled && ValueBlockCache::IsCached(block_class)) {
    value_block_cache.Free(block, block_class);
    return;
  }
  ::operator delete(block);
}

AsyncValue::~AsyncValue() {
  uintptr_t word = waiters_and_state_.load(std::memory_order_acquire);
  if (IsAvailableState(StateOf(word))) {
    if (StateOf(word) == State::kError) {
      delete reinterpret_cast<absl::Status*>(word & ~kStateMask);
    }
  } else {
    // Nobody holds a reference, so nobody can publish this value any more:
    // its waiters would never run. Free them (and what they captured).
    DeleteWaiters(reinterpret_cast<internal::WaiterNode*>(word & ~kStateMask));
  }
#ifdef ASYNCRT_ASYNC_VALUE_ACCOUNTING
  if (is_refcounted_) AdjustLiveValues(-1);
#endif
}

void AsyncValue::Destroy() {
  if (kind_ == Kind::kIndirect) {
    delete static_cast<IndirectAsyncValue*>(this);
  } else {
    type_info_->delete_value(this);
  }
}

void AsyncValue::EnqueueWaiter(internal::WaiterNode* node) {
  uintptr_t old = waiters_and_state_.load(std::memory_order_acquire);
  while (true) {
    if (IsAvailableState(StateOf(old))) {
      // Published while we were allocating the node.
      node->run_and_delete(node, /*run=*/true);
      return;
    }
    node->next = reinterpret_cast<internal::WaiterNode*>(old & ~kStateMask);
    uintptr_t desired = reinterpret_cast<uintptr_t>(node) | (old & kStateMask);
    // Release publishes the node's contents to the thread that takes the
    // list; acquire on failure re-reads the state we may have to act on.
    if (waiters_and_state_.compare_exchange_weak(old, desired,
                                                 std::memory_order_acq_rel,
                                                 std::memory_order_acquire)) {
      return;
    }
  }
}

void AsyncValue::Publish(State state, uintptr_t payload_bits) {
  assert(IsAvailableState(state));
  uintptr_t old = waiters_and_state_.exchange(
      payload_bits | static_cast<uintptr_t>(state), std::memory_order_acq_rel);
  assert(!IsAvailableState(StateOf(old)) &&
         "an AsyncValue was published twice");
  RunWaiters(reinterpret_cast<internal::WaiterNode*>(old & ~kStateMask));
}

void AsyncValue::RunWaiters(internal::WaiterNode* list) {
  // The list is most-recent-first; reverse it so waiters run in the order
  // they were added.
  internal::WaiterNode* in_order = nullptr;
  while (list) {
    internal::WaiterNode* next = list->next;
    list->next = in_order;
    in_order = list;
    list = next;
  }
  while (in_order) {
    internal::WaiterNode* next = in_order->next;
    in_order->run_and_delete(in_order, /*run=*/true);
    in_order = next;
  }
}

void AsyncValue::DeleteWaiters(internal::WaiterNode* list) {
  while (list) {
    internal::WaiterNode* next = list->next;
    list->run_and_delete(list, /*run=*/false);
    list = next;
  }
}

void AsyncValue::SetError(absl::Status status) {
  assert(!status.ok() && "AsyncValue::SetError with an OK status");
  if (status.ok()) {
    status = absl::InternalError("SetError called with an OK status");
  }
  uintptr_t word = LoadWord();
  assert(!IsAvailableState(StateOf(word)));
  if (StateOf(word) == State::kConstructed) {
    assert(kind_ == Kind::kConcrete);
    type_info_->destroy_payload(this);
  }
  Publish(State::kError,
          reinterpret_cast<uintptr_t>(new absl::Status(std::move(status))));
}

void AsyncValue::SetStateConcrete() {
  assert(StateOf(LoadWord()) == State::kConstructed);
  Publish(State::kConcrete, 0);
}

//===--- IndirectAsyncValue -----------------------------------------------===//

IndirectAsyncValue::~IndirectAsyncValue() {
  if (AsyncValue* target = target_.load(std::memory_order_acquire)) {
    target->DropRef();
  }
}

void IndirectAsyncValue::ForwardTo(RCReference<AsyncValue> target) {
  assert(target.get() != this && "an IndirectAsyncValue forwarded to itself");
  assert(IsUnavailable());
  AsyncValue* raw = target.get();
  if (raw->IsUnavailable()) {
    // Finish forwarding once the target is available. The continuation
    // borrows the target: it runs inside the target's publication, whose
    // publisher holds a reference. It owns `this`, so if the target dies
    // unpublished the continuation is deleted and releases us.
    raw->AndThen(
        [self = FormRef(this), raw] { self->ForwardTo(FormRef(raw)); });
    return;
  }
  // Collapse chains: point at the value at the end of the chain.
  if (raw->IsIndirect()) {
    AsyncValue* end = static_cast<IndirectAsyncValue*>(raw)->target();
    assert(end && "an available indirect value always has a target");
    target = FormRef(end);
    raw = end;
  }
  target_.store(target.release(), std::memory_order_release);
  Publish(raw->state(), 0);
}

}  // namespace asyncrt
