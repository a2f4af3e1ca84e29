// Inline hot paths of CallState: copying the call image, defining registers
// and counting their users down. Include only from lib/bef_executor .cc
// files that call them.
#ifndef ASYNCRT_LIB_BEF_EXECUTOR_CALL_STATE_INL_H_
#define ASYNCRT_LIB_BEF_EXECUTOR_CALL_STATE_INL_H_

#include <cstring>

#include "absl/base/attributes.h"
#include "absl/base/optimization.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "lib/bef_executor/call_state.h"

namespace asyncrt::internal {

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

ABSL_ATTRIBUTE_ALWAYS_INLINE inline AsyncValue* CallState::ValueOrPlaceholder(
    uint32_t reg) {
  AsyncValue* value = Register(reg).load(std::memory_order_acquire);
  if (ABSL_PREDICT_TRUE(value != nullptr)) return value;
  return MakePlaceholder(reg);
}

}  // namespace asyncrt::internal

#endif  // ASYNCRT_LIB_BEF_EXECUTOR_CALL_STATE_INL_H_
