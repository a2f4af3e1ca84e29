// The buffer plan at run time: an op with `_buffer_offset` that runs with a
// BufferArena computes its result in the arena's slot; results that do not
// fit their slot, and ops without an arena, allocate as before; planned
// buffers are never reused in place; a convolution over its fused sum adds
// into it where the layouts allow. Each call's arena is its own, however
// many calls run at once.
#include <cstdint>
#include <string>
#include <thread>
#include <vector>

#include "asyncrt/core_runtime/buffer_arena.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "backends/cpu/nn/onednn_tensor.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

std::vector<float> Ramp(size_t count, float start, float step) {
  std::vector<float> values(count);
  for (size_t i = 0; i < count; ++i) values[i] = start + step * i;
  return values;
}

// The attributes of a slot of `size` bytes at `offset`, added to `attrs`.
OpAttrs Offset(int64_t offset, OpAttrs attrs = OpAttrs(), int64_t size = 4096) {
  attrs.Set("_buffer_offset", offset);
  attrs.Set("_buffer_size", size);
  return attrs;
}

class PlannedBuffersTest : public EagerOpTest {
 protected:
  RCReference<BufferArena> NewArena(size_t size) {
    return BufferArena::Create(size, *runtime_->host().allocator());
  }

  // Issues `op` on `args` with `arena` (may be null), as corert.executeop
  // does for an arena op handler; bit i of `consumed`: the caller gives
  // handle i up.
  TensorHandle ExecuteIn(const BufferArena* arena, const std::string& op,
                         std::vector<TensorHandle> args,
                         const OpAttrs& attrs = OpAttrs(),
                         uint64_t consumed = 0) {
    absl::StatusOr<CoreRuntimeOp> prepared = core_->MakeOp(op, cpu_);
    EXPECT_TRUE(prepared.ok()) << prepared.status();
    std::vector<const TensorHandle*> pointers;
    for (const TensorHandle& arg : args) pointers.push_back(&arg);
    TensorHandle result;
    (*prepared)(*exec_ctx_, pointers, consumed, attrs.Freeze(),
                absl::MakeSpan(&result, 1), nullptr, arena);
    return result;
  }

  // The dense tensor of `handle` once computed (null for another type).
  const DenseHostTensor* Dense(const TensorHandle& handle) {
    const Tensor* tensor = core_->Await(handle);
    EXPECT_NE(tensor, nullptr) << handle.GetErrorIfPresent()->message();
    if (tensor == nullptr || tensor->tensor_type() != DenseHostTensorType()) {
      return nullptr;
    }
    return static_cast<const DenseHostTensor*>(tensor);
  }
};

TEST_F(PlannedBuffersTest, AResultGoesToItsSlot) {
  RCReference<BufferArena> arena = NewArena(256);
  ASSERT_TRUE(arena);
  const std::vector<float> x = Ramp(16, -8, 1);
  TensorHandle relu =
      ExecuteIn(arena.get(), "nn.relu", Args(*Handle({{2, 8}, x})), Offset(64));
  const DenseHostTensor* result = Dense(relu);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->data(), static_cast<const char*>(arena->data()) + 64);
  EXPECT_TRUE(result->buffer()->IsPlanned());
  EXPECT_EQ(arena->num_slots(), 1);
  absl::StatusOr<Tensor32> values = Read(relu);
  ASSERT_TRUE(values.ok());
  for (size_t i = 0; i < x.size(); ++i) {
    EXPECT_EQ(values->values[i], x[i] > 0 ? x[i] : 0) << i;
  }
}

TEST_F(PlannedBuffersTest, ResultsOutsideTheirSlotAreAllocatedAsBefore) {
  RCReference<BufferArena> arena = NewArena(256);
  const Tensor32 x{{4, 4}, Ramp(16, -1, 0.5f)};  // 64 bytes.
  // A slot past the arena's end, a negative offset, a slot smaller than
  // the result (a model called with larger inputs than it was compiled
  // for), and no arena at all.
  const struct {
    const BufferArena* arena;
    int64_t offset, size;
  } cases[] = {{arena.get(), 224, 64},
               {arena.get(), -1, 64},
               {arena.get(), 0, 32},
               {nullptr, 0, 64}};
  for (const auto& c : cases) {
    SCOPED_TRACE(testing::Message() << "offset " << c.offset);
    TensorHandle neg = ExecuteIn(c.arena, "nn.neg", Args(*Handle(x)),
                                 Offset(c.offset, OpAttrs(), c.size));
    const DenseHostTensor* result = Dense(neg);
    ASSERT_NE(result, nullptr);
    EXPECT_FALSE(result->buffer()->IsPlanned());
    EXPECT_EQ(result->elements<float>()[0], 1.0f);
  }
  EXPECT_EQ(arena->num_slots(), 0);
}

// An op may compute its result in the buffer of an argument its caller
// gave up, but never in a planned one: the plan may have given those bytes
// to a value that is still to be computed.
TEST_F(PlannedBuffersTest, PlannedArgumentsAreNotReusedInPlace) {
  RCReference<BufferArena> arena = NewArena(64);
  const Tensor32 x{{16}, Ramp(16, -4, 0.5f)};
  for (bool planned : {false, true}) {
    SCOPED_TRACE(planned ? "planned" : "allocated");
    TensorHandle relu = ExecuteIn(planned ? arena.get() : nullptr, "nn.relu",
                                  Args(*Handle(x)), Offset(0));
    const void* relu_data = Dense(relu)->data();
    TensorHandle neg =
        ExecuteIn(nullptr, "nn.neg", Args(std::move(relu)), OpAttrs(), 0b1);
    const DenseHostTensor* result = Dense(neg);
    ASSERT_NE(result, nullptr);
    EXPECT_EQ(result->data() == relu_data, !planned);
    EXPECT_EQ(result->elements<float>()[15], -3.5f);
  }
}

// A convolution whose plan puts it over its fused sum adds into it in
// place when the sum is in the result's layout, and computes elsewhere
// when it is not: either way its values are those of the unplanned op.
TEST_F(PlannedBuffersTest, AConvolutionOverItsSumAddsInPlace) {
  const Tensor32 x{{1, 16, 6, 6}, Ramp(576, -2, 0.007f)};
  const Tensor32 w{{16, 16, 1, 1}, Ramp(256, -0.5f, 0.004f)};
  const Tensor32 bias{{16}, Ramp(16, 0.1f, 0.01f)};
  for (bool onednn_result : {false, true}) {
    SCOPED_TRACE(onednn_result ? "oneDNN layout" : "plain");
    OpAttrs attrs;
    if (onednn_result) attrs.SetString("result_layout", "onednn");
    auto expected_sum = Execute("nn.conv", Args(*Handle(x), *Handle(w, true)),
                                attrs);
    absl::StatusOr<Tensor32> expected =
        Read(Execute("nn.conv", Args(*Handle(x), *Handle(w, true), *Handle(bias),
                                 std::move(expected_sum)),
                     attrs));
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (bool sum_in_layout : {false, true}) {
      SCOPED_TRACE(sum_in_layout ? "sum in the result's layout" : "plain sum");
      RCReference<BufferArena> arena = NewArena(16 * 36 * 4);
      // The sum in slot 0: computed in the result's layout, or plain.
      OpAttrs sum_attrs = sum_in_layout ? attrs : OpAttrs();
      TensorHandle sum =
          ExecuteIn(arena.get(), "nn.conv", Args(*Handle(x), *Handle(w, true)),
                    Offset(0, sum_attrs));
      ASSERT_NE(core_->Await(sum), nullptr);
      TensorHandle y = ExecuteIn(
          arena.get(), "nn.conv",
          Args(*Handle(x), *Handle(w, true), *Handle(bias), std::move(sum)),
          Offset(0, attrs), 0b1000);
      absl::StatusOr<Tensor32> values = Read(y);
      ASSERT_TRUE(values.ok()) << values.status();
      ASSERT_EQ(values->values.size(), expected->values.size());
      for (size_t i = 0; i < values->values.size(); ++i) {
        ASSERT_NEAR(values->values[i], expected->values[i], 1e-5f) << i;
      }
      // In place (in the sum's slot) exactly when the layouts agree.
      const Tensor* result = core_->Await(y);
      const void* data =
          result->tensor_type() == OneDnnTensor::Type()
              ? static_cast<const OneDnnTensor*>(result)->buffer()->data()
              : static_cast<const DenseHostTensor*>(result)->data();
      EXPECT_EQ(data == arena->data(), sum_in_layout || !onednn_result);
    }
  }
}

// An op issued before its argument is computed runs later, from whichever
// thread completes the argument: it keeps the arena alive until then.
TEST_F(PlannedBuffersTest, ADeferredOpKeepsItsArena) {
  RCReference<BufferArena> arena = NewArena(64);
  const void* arena_data = arena->data();
  TensorHandle x = *Handle({{16}, Ramp(16, -8, 1)});
  RCReference<IndirectAsyncValue> later = MakeIndirectAsyncValue();
  TensorHandle relu = ExecuteIn(arena.get(), "nn.relu",
                                Args(TensorHandle(x.device(), later)), Offset(0));
  arena.reset();  // The caller's hold goes; the pending op has its own.
  later->ForwardTo(x.CopyTensorRef());
  const DenseHostTensor* result = Dense(relu);
  ASSERT_NE(result, nullptr);
  EXPECT_EQ(result->data(), arena_data);
  EXPECT_EQ(result->elements<float>()[15], 7.0f);
}

// Calls from several threads at once, each with its own arena and a plan
// that reuses bytes along a chain (a -> b -> c, c over a): every call
// gets its own values.
TEST_F(PlannedBuffersTest, ConcurrentCallsKeepToTheirOwnArenas) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([this, t] {
      for (int i = 0; i < 25; ++i) {
        const float base = static_cast<float>(t * 100 + i);
        RCReference<BufferArena> arena = NewArena(2 * 64 * 4);
        TensorHandle x = *Handle({{64}, Ramp(64, base, 1)});
        TensorHandle a = ExecuteIn(arena.get(), "nn.relu", Args(std::move(x)),
                                   Offset(0), 0b1);
        TensorHandle b = ExecuteIn(arena.get(), "nn.neg", Args(std::move(a)),
                                   Offset(256), 0b1);
        TensorHandle c = ExecuteIn(arena.get(), "nn.abs", Args(std::move(b)),
                                   Offset(0), 0b1);
        arena.reset();
        absl::StatusOr<Tensor32> values = Read(c);
        ASSERT_TRUE(values.ok()) << values.status();
        for (int k = 0; k < 64; ++k) {
          ASSERT_EQ(values->values[k], base + k) << t << " " << i;
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace asyncrt::nn
