// Unit tests for AsyncValue, AsyncValueRef/Ptr, IndirectAsyncValue and
// the ready chain: every state transition, errors, AndThen on every state,
// and destruction with pending waiters. Concurrency is in
// async_value_stress_test.cc.
#include "asyncrt/host_context/async_value.h"

#include <array>
#include <cstdint>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/chain.h"
#include "asyncrt/support/block_cache.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using ::testing::ElementsAre;

// Counts its live instances so tests can check payload destruction.
struct Tracked {
  explicit Tracked(int value, int* live) : value(value), live(live) { ++*live; }
  Tracked(Tracked&& other) noexcept : value(other.value), live(other.live) {
    ++*live;
  }
  ~Tracked() { --*live; }
  int value;
  int* live;
};

TEST(AsyncValueTest, FreedBlocksServeTheNextValuesOfTheirThread) {
  // 40- and 64-byte values: one block class here, two sizes to malloc.
  auto first = MakeAvailableAsyncValueRef<std::array<int64_t, 2>>();
  const void* first_block = first.GetAsyncValue();
  first.reset();
  auto second = MakeAvailableAsyncValueRef<std::array<int64_t, 5>>(
      std::array<int64_t, 5>{1, 2, 3, 4, 5});
  // Sanitizer builds bypass the cache so that use-after-free stays visible.
  if (kBlockCacheEnabled) {
    EXPECT_EQ(second.GetAsyncValue(), first_block);
  }
  EXPECT_EQ((*second)[4], 5);

  // Large payloads are never cached; over-aligned ones keep their alignment.
  auto large = MakeAvailableAsyncValueRef<std::array<int64_t, 512>>();
  large->fill(3);
  EXPECT_EQ((*large)[511], 3);
  struct alignas(128) Aligned {
    int value = 5;
  };
  auto aligned = MakeAvailableAsyncValueRef<Aligned>();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(&aligned.get()) % 128, 0u);
  EXPECT_EQ(aligned->value, 5);
}

TEST(AsyncValueTest, GetIfPresentChecksTypeAndStateOnce) {
  auto number = MakeAvailableAsyncValueRef<int>(42);
  ASSERT_NE(number.GetAsyncValue()->GetIfPresent<int>(), nullptr);
  EXPECT_EQ(*number.GetAsyncValue()->GetIfPresent<int>(), 42);
  EXPECT_EQ(number.GetAsyncValue()->GetIfPresent<double>(), nullptr);

  auto pending = MakeUnconstructedAsyncValueRef<int>();
  EXPECT_EQ(pending.GetAsyncValue()->GetIfPresent<int>(), nullptr);
  auto failed = MakeErrorAsyncValueRef("boom");
  EXPECT_EQ(failed->GetIfPresent<int>(), nullptr);

  // Through an indirect value: nothing until forwarded, then the target's.
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  EXPECT_EQ(indirect->GetIfPresent<int>(), nullptr);
  indirect->ForwardTo(FormRef(number.GetAsyncValue()));
  ASSERT_NE(indirect->GetIfPresent<int>(), nullptr);
  EXPECT_EQ(*indirect->GetIfPresent<int>(), 42);
}

TEST(AsyncValueTest, GetIfTypeChecksTheResolvedType) {
  auto number = MakeAvailableAsyncValueRef<int>(42);
  AsyncValue* value = number.GetAsyncValue();
  ASSERT_EQ(value->GetIfType<int>(), &*number);
  EXPECT_EQ(value->GetIfType<double>(), nullptr);

  // An indirect value answers for its target, with the target's payload.
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  EXPECT_TRUE(indirect->IsIndirect());
  EXPECT_FALSE(value->IsIndirect());
  indirect->ForwardTo(FormRef(value));
  EXPECT_EQ(indirect->GetIfType<int>(), &*number);
  EXPECT_EQ(indirect->GetIfType<float>(), nullptr);
}

// Small payloads sit where GetIfTypeId looks for them, whatever their type.
template <typename T>
void ExpectPayloadFoundByTypeId(T payload) {
  auto value = MakeAvailableAsyncValueRef<T>(payload);
  AsyncValue* av = value.GetAsyncValue();
  EXPECT_EQ(av->GetIfTypeId(AsyncValue::TypeIdOf<T>()), &av->get<T>());
  EXPECT_EQ(av->GetIfTypeId(AsyncValue::TypeIdOf<std::pair<T, T>>()), nullptr);
}

TEST(AsyncValueTest, GetIfTypeIdFindsSmallPayloads) {
  ExpectPayloadFoundByTypeId<bool>(true);
  ExpectPayloadFoundByTypeId<int8_t>(-3);
  ExpectPayloadFoundByTypeId<int32_t>(42);
  ExpectPayloadFoundByTypeId<int64_t>(int64_t{1} << 40);
  ExpectPayloadFoundByTypeId<float>(1.5f);
  ExpectPayloadFoundByTypeId<double>(2.5);
  ExpectPayloadFoundByTypeId<Chain>(Chain());
  EXPECT_NE(AsyncValue::TypeIdOf<int32_t>(), AsyncValue::TypeIdOf<uint32_t>());

  auto number = MakeAvailableAsyncValueRef<int32_t>(7);
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  indirect->ForwardTo(FormRef(number.GetAsyncValue()));
  EXPECT_EQ(indirect->GetIfTypeId(AsyncValue::TypeIdOf<int32_t>()), &*number);

  // The concrete-only form leaves indirect values and errors to its caller.
  const AsyncValue::TypeId i32 = AsyncValue::TypeIdOf<int32_t>();
  EXPECT_EQ(number.GetAsyncValue()->GetIfConcreteTypeId(i32), &*number);
  EXPECT_EQ(number.GetAsyncValue()->GetIfConcreteTypeId(
                AsyncValue::TypeIdOf<int64_t>()),
            nullptr);
  EXPECT_EQ(indirect->GetIfConcreteTypeId(i32), nullptr);
  auto failed = MakeUnconstructedAsyncValueRef<int32_t>();
  failed.SetError(absl::InternalError("no value"));
  EXPECT_EQ(failed.GetAsyncValue()->GetIfConcreteTypeId(i32), nullptr);
  auto pending = MakeUnconstructedAsyncValueRef<int32_t>();
  EXPECT_EQ(pending.GetAsyncValue()->GetIfConcreteTypeId(i32), nullptr);
}

TEST(AsyncValueTest, UnconstructedToConcrete) {
  auto value = MakeUnconstructedAsyncValueRef<int>();
  EXPECT_TRUE(value.GetAsyncValue()->IsUnconstructed());
  EXPECT_TRUE(value.IsUnavailable());
  value.emplace(42);
  EXPECT_TRUE(value.IsConcrete());
  EXPECT_TRUE(value.IsAvailable());
  EXPECT_FALSE(value.IsError());
  EXPECT_EQ(value.get(), 42);
  EXPECT_EQ(value.GetErrorIfPresent(), nullptr);
}

TEST(AsyncValueTest, UnconstructedToError) {
  auto value = MakeUnconstructedAsyncValueRef<int>();
  value.SetError(absl::InvalidArgumentError("bad input"));
  EXPECT_TRUE(value.IsError());
  EXPECT_TRUE(value.IsAvailable());
  EXPECT_EQ(value.GetError(), absl::InvalidArgumentError("bad input"));
  ASSERT_NE(value.GetErrorIfPresent(), nullptr);
}

TEST(AsyncValueTest, ConstructedToConcrete) {
  auto value = MakeConstructedAsyncValueRef<std::string>("hello");
  EXPECT_TRUE(value.IsConstructed());
  EXPECT_TRUE(value.IsUnavailable());
  value.SetStateConcrete();
  EXPECT_TRUE(value.IsConcrete());
  EXPECT_EQ(value.get(), "hello");
}

TEST(AsyncValueTest, ConstructedToErrorDestroysPayload) {
  int live = 0;
  auto value = MakeConstructedAsyncValueRef<Tracked>(1, &live);
  EXPECT_EQ(live, 1);
  value.SetError(absl::InternalError("failed"));
  EXPECT_EQ(live, 0);
  EXPECT_TRUE(value.IsError());
}

TEST(AsyncValueTest, ConstructInPlaceThenPublish) {
  auto value = MakeUnconstructedAsyncValueRef<int>();
  static_cast<ConcreteAsyncValue<int>*>(value.GetAsyncValue())->construct(7);
  EXPECT_TRUE(value.IsConstructed());
  value.SetStateConcrete();
  EXPECT_EQ(value.get(), 7);
}

TEST(AsyncValueTest, MakeAvailable) {
  auto value = MakeAvailableAsyncValueRef<std::vector<int>>(3, 5);
  EXPECT_TRUE(value.IsConcrete());
  EXPECT_THAT(value.get(), ElementsAre(5, 5, 5));
  EXPECT_EQ(value->size(), 3u);
}

TEST(AsyncValueTest, MakeErrorUntypedAndTyped) {
  RCReference<AsyncValue> untyped = MakeErrorAsyncValueRef("boom");
  EXPECT_TRUE(untyped->IsError());
  EXPECT_EQ(untyped->GetError().message(), "boom");
  EXPECT_EQ(untyped->GetError().code(), absl::StatusCode::kInternal);

  auto typed = MakeErrorAsyncValueRef<float>(absl::NotFoundError("gone"));
  EXPECT_TRUE(typed.IsError());
  EXPECT_EQ(typed.GetError().code(), absl::StatusCode::kNotFound);
}

TEST(AsyncValueTest, EmplaceFromStatusOr) {
  auto ok = MakeUnconstructedAsyncValueRef<int>();
  ok.emplace(absl::StatusOr<int>(5));
  EXPECT_EQ(ok.get(), 5);
  auto failed = MakeUnconstructedAsyncValueRef<int>();
  failed.emplace(absl::StatusOr<int>(absl::AbortedError("no")));
  EXPECT_EQ(failed.GetError(), absl::AbortedError("no"));
}

TEST(AsyncValueTest, PayloadDestroyedWithValue) {
  int live = 0;
  {
    auto value = MakeAvailableAsyncValueRef<Tracked>(1, &live);
    auto copy = value;  // Copies share the value.
    EXPECT_EQ(value.GetAsyncValue()->NumRef(), 2u);
    EXPECT_EQ(live, 1);
  }
  EXPECT_EQ(live, 0);
}

TEST(AsyncValueTest, UnconstructedValueDestroysNoPayload) {
  int live = 0;
  { auto value = MakeUnconstructedAsyncValueRef<Tracked>(); }
  EXPECT_EQ(live, 0);
}

TEST(AsyncValueTest, IsTypeChecksPayloadType) {
  auto value = MakeAvailableAsyncValueRef<int>(1);
  EXPECT_TRUE(value.GetAsyncValue()->IsType<int>());
  EXPECT_FALSE(value.GetAsyncValue()->IsType<float>());
}

TEST(AsyncValueTest, RefCounting) {
  auto value = MakeAvailableAsyncValueRef<int>(1);
  AsyncValue* raw = value.GetAsyncValue();
  EXPECT_TRUE(raw->IsUnique());
  raw->AddRef(2);
  EXPECT_EQ(raw->NumRef(), 3u);
  raw->DropRef(2);
  EXPECT_TRUE(raw->IsUnique());
  AsyncValue* released = value.release();
  EXPECT_EQ(released, raw);
  EXPECT_FALSE(value);
  released->DropRef();
}

TEST(AsyncValueTest, AsyncValuePtrBorrows) {
  auto value = MakeAvailableAsyncValueRef<int>(9);
  AsyncValuePtr<int> ptr = value.AsPtr();
  EXPECT_EQ(*ptr, 9);
  EXPECT_EQ(value.GetAsyncValue()->NumRef(), 1u);
  AsyncValueRef<int> owned = ptr.CopyRef();
  EXPECT_EQ(value.GetAsyncValue()->NumRef(), 2u);
}

//===--- AndThen on every state -----------------------------------------===//

TEST(AsyncValueTest, AndThenOnConcreteRunsInline) {
  auto value = MakeAvailableAsyncValueRef<int>(1);
  bool ran = false;
  value.AndThen([&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(AsyncValueTest, AndThenOnErrorRunsInline) {
  auto value = MakeErrorAsyncValueRef<int>(absl::InternalError("x"));
  bool ran = false;
  value.AndThen([&] { ran = true; });
  EXPECT_TRUE(ran);
}

TEST(AsyncValueTest, AndThenOnUnconstructedRunsOnEmplaceInOrder) {
  auto value = MakeUnconstructedAsyncValueRef<int>();
  std::vector<int> order;
  value.AndThen([&] { order.push_back(1); });
  value.AndThen([&] { order.push_back(2); });
  value.AndThen([&, value] { order.push_back(value.get()); });
  EXPECT_TRUE(order.empty());
  value.emplace(3);
  EXPECT_THAT(order, ElementsAre(1, 2, 3));
}

TEST(AsyncValueTest, AndThenOnConstructedRunsOnSetStateConcrete) {
  auto value = MakeConstructedAsyncValueRef<int>(4);
  int seen = 0;
  value.AndThen([&, value] { seen = value.get(); });
  EXPECT_EQ(seen, 0);
  value.SetStateConcrete();
  EXPECT_EQ(seen, 4);
}

TEST(AsyncValueTest, AndThenRunsOnSetError) {
  auto value = MakeUnconstructedAsyncValueRef<int>();
  std::string seen;
  value.AndThen([&, value] { seen = std::string(value.GetError().message()); });
  value.SetError(absl::InternalError("late failure"));
  EXPECT_EQ(seen, "late failure");
}

TEST(AsyncValueTest, AndThenInsideAndThen) {
  auto value = MakeUnconstructedAsyncValueRef<int>();
  std::vector<int> order;
  value.AndThen([&, value] {
    order.push_back(1);
    // The value is available now, so this runs inline.
    value.AndThen([&] { order.push_back(2); });
    order.push_back(3);
  });
  value.emplace(0);
  EXPECT_THAT(order, ElementsAre(1, 2, 3));
}

TEST(AsyncValueTest, DestroyWithPendingWaitersFreesThemWithoutRunning) {
  auto token = std::make_shared<int>(0);
  bool ran = false;
  {
    auto value = MakeUnconstructedAsyncValueRef<int>();
    value.AndThen([&ran, token] { ran = true; });
    value.AndThen([&ran, token] { ran = true; });
    EXPECT_EQ(token.use_count(), 3);
  }
  EXPECT_FALSE(ran);
  EXPECT_EQ(token.use_count(), 1);  // The captures were destroyed.
}

TEST(AsyncValueTest, DestroyErrorValueFreesStatus) {
  // Run under ASan in `make test`: a leaked status would be reported.
  auto value = MakeUnconstructedAsyncValueRef<int>();
  value.SetError(absl::InternalError(std::string(1000, 'x')));
  value.reset();
  EXPECT_FALSE(value);
}

//===--- IndirectAsyncValue ---------------------------------------------===//

TEST(IndirectAsyncValueTest, ForwardToAvailableConcrete) {
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  EXPECT_TRUE(indirect->IsUnavailable());
  EXPECT_TRUE(indirect->IsIndirect());
  EXPECT_FALSE(indirect->IsType<int>());
  indirect->ForwardTo(MakeAvailableAsyncValueRef<int>(5));
  EXPECT_TRUE(indirect->IsConcrete());
  EXPECT_TRUE(indirect->IsType<int>());
  EXPECT_EQ(indirect->get<int>(), 5);
}

TEST(IndirectAsyncValueTest, ForwardToUnavailableRunsWaitersWhenReady) {
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  AsyncValueRef<int> typed(indirect);
  int seen = 0;
  typed.AndThen([&, typed] { seen = typed.get(); });

  auto target = MakeUnconstructedAsyncValueRef<int>();
  indirect->ForwardTo(target);
  EXPECT_TRUE(indirect->IsUnavailable());
  EXPECT_EQ(seen, 0);
  target.emplace(8);
  EXPECT_TRUE(indirect->IsConcrete());
  EXPECT_EQ(seen, 8);
}

TEST(IndirectAsyncValueTest, ForwardToError) {
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  indirect->ForwardTo(MakeErrorAsyncValueRef("forwarded failure"));
  EXPECT_TRUE(indirect->IsError());
  EXPECT_EQ(indirect->GetError().message(), "forwarded failure");
}

TEST(IndirectAsyncValueTest, ForwardToLaterError) {
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  auto target = MakeUnconstructedAsyncValueRef<int>();
  indirect->ForwardTo(target);
  target.SetError(absl::DataLossError("lost"));
  EXPECT_TRUE(indirect->IsError());
  EXPECT_EQ(indirect->GetError(), absl::DataLossError("lost"));
}

TEST(IndirectAsyncValueTest, ChainsCollapseToTheConcreteValue) {
  RCReference<IndirectAsyncValue> first = MakeIndirectAsyncValue();
  RCReference<IndirectAsyncValue> second = MakeIndirectAsyncValue();
  RCReference<IndirectAsyncValue> third = MakeIndirectAsyncValue();
  first->ForwardTo(second);
  second->ForwardTo(third);
  auto concrete = MakeUnconstructedAsyncValueRef<std::string>();
  third->ForwardTo(concrete);
  EXPECT_TRUE(first->IsUnavailable());
  concrete.emplace("end");
  EXPECT_TRUE(first->IsConcrete());
  EXPECT_EQ(first->get<std::string>(), "end");
  // Each indirect value points straight at the concrete one.
  EXPECT_EQ(first->target(), concrete.GetAsyncValue());
  EXPECT_EQ(second->target(), concrete.GetAsyncValue());
}

TEST(IndirectAsyncValueTest, ForwardToAvailableIndirectCollapses) {
  RCReference<IndirectAsyncValue> inner = MakeIndirectAsyncValue();
  auto concrete = MakeAvailableAsyncValueRef<int>(1);
  inner->ForwardTo(concrete);
  RCReference<IndirectAsyncValue> outer = MakeIndirectAsyncValue();
  outer->ForwardTo(inner);
  EXPECT_EQ(outer->target(), concrete.GetAsyncValue());
}

TEST(IndirectAsyncValueTest, UnpublishedTargetDestroyedReleasesIndirect) {
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  {
    auto target = MakeUnconstructedAsyncValueRef<int>();
    indirect->ForwardTo(std::move(target));
    // The target's only reference was handed over and dropped: the target
    // and the continuation (which owned a reference to `indirect`) are gone.
  }
  EXPECT_TRUE(indirect->IsUnique());
  EXPECT_TRUE(indirect->IsUnavailable());
}

TEST(IndirectAsyncValueTest, TargetOfTypeUnknownAtCreation) {
  RCReference<IndirectAsyncValue> indirect = MakeIndirectAsyncValue();
  RCReference<AsyncValue> untyped = indirect;
  indirect->ForwardTo(MakeAvailableAsyncValueRef<double>(2.5));
  EXPECT_TRUE(untyped->IsType<double>());
  EXPECT_DOUBLE_EQ(untyped->get<double>(), 2.5);
}

//===--- Chain ------------------------------------------------------------===//

TEST(ChainTest, ReadyChainIsSharedAndNotRefcounted) {
  AsyncValueRef<Chain> a = GetReadyChain();
  AsyncValueRef<Chain> b = GetReadyChain();
  EXPECT_EQ(a.GetAsyncValue(), b.GetAsyncValue());
  EXPECT_TRUE(a.IsConcrete());
  uint32_t count = a.GetAsyncValue()->NumRef();
  { AsyncValueRef<Chain> c = a; }
  EXPECT_EQ(a.GetAsyncValue()->NumRef(), count);
  EXPECT_FALSE(a.GetAsyncValue()->IsUnique());
}

//===--- Leak accounting
//----------------------------------------------------===//

TEST(AsyncValueTest, LeakAccountingCountsLiveValues) {
  std::optional<int64_t> before = AsyncValue::NumLiveValues();
  if (!before) GTEST_SKIP() << "built without ASYNCRT_ASYNC_VALUE_ACCOUNTING";
  {
    auto a = MakeAvailableAsyncValueRef<int>(1);
    auto b = MakeIndirectAsyncValue();
    EXPECT_EQ(*AsyncValue::NumLiveValues(), *before + 2);
    // The shared ready chain is not counted.
    auto chain = GetReadyChain();
    EXPECT_EQ(*AsyncValue::NumLiveValues(), *before + 2);
  }
  EXPECT_EQ(*AsyncValue::NumLiveValues(), *before);
}

}  // namespace
}  // namespace asyncrt
