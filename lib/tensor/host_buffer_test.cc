// Tests of HostBuffer: ownership, slices, alignment and allocation failure.
#include "asyncrt/tensor/host_buffer.h"

#include <cstdint>
#include <cstring>
#include <memory>

#include "asyncrt/tensor/dense_host_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using ::testing::MatchesRegex;

TEST(HostBufferTest, UninitializedIsAlignedAndSized) {
  auto allocator = CreateMallocAllocator();
  for (size_t size : {1u, 24u, 1000u}) {
    RCReference<HostBuffer> buffer =
        HostBuffer::CreateUninitialized(size, kTensorAlignment, *allocator);
    ASSERT_TRUE(buffer);
    EXPECT_EQ(buffer->size(), size);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(buffer->data()) % kTensorAlignment,
              0u);
    std::memset(buffer->data(), 0xAB, size);  // writable end to end
  }
}

TEST(HostBufferTest, HeaderAndBytesShareOneAllocation) {
  // TFRT's allocator tests count these bytes: a 64-byte header, then the data.
  auto allocator = CreateProfiledAllocator(CreateMallocAllocator());
  RCReference<HostBuffer> buffer =
      HostBuffer::CreateUninitialized(128, kTensorAlignment, *allocator);
  ASSERT_TRUE(buffer);
  EXPECT_EQ(allocator->GetStats()->total_allocations, 1);
  EXPECT_EQ(allocator->GetStats()->live_bytes, 64 + 128);
  buffer.reset();
  EXPECT_EQ(allocator->GetStats()->live_bytes, 0);
  testing::internal::CaptureStderr();  // The profile printed on destruction.
  allocator.reset();
  testing::internal::GetCapturedStderr();
}

TEST(HostBufferTest, OversizedRequestGivesNullNotOverflow) {
  auto allocator = CreateMallocAllocator();
  EXPECT_FALSE(HostBuffer::CreateUninitialized(SIZE_MAX - 8, kTensorAlignment,
                                               *allocator));
}

TEST(HostBufferTest, ReturnsMemoryToTheAllocator) {
  auto allocator = CreateLeakCheckAllocator(CreateMallocAllocator());
  {
    RCReference<HostBuffer> buffer =
        HostBuffer::CreateUninitialized(100, kTensorAlignment, *allocator);
    ASSERT_TRUE(buffer);
    EXPECT_EQ(allocator->GetStats()->live_allocations, 1);
    RCReference<HostBuffer> second = buffer;
    buffer.reset();
    EXPECT_EQ(allocator->GetStats()->live_allocations, 1);
  }
  EXPECT_EQ(allocator->GetStats()->live_allocations, 0);
}

TEST(HostBufferTest, AllocationFailureGivesNull) {
  auto allocator = CreateFixedSizeAllocator(1024);
  RCReference<HostBuffer> small =
      HostBuffer::CreateUninitialized(512, kTensorAlignment, *allocator);
  EXPECT_TRUE(small);
  RCReference<HostBuffer> too_big =
      HostBuffer::CreateUninitialized(4096, kTensorAlignment, *allocator);
  EXPECT_FALSE(too_big);
}

TEST(HostBufferTest, SliceKeepsParentAlive) {
  auto allocator = CreateLeakCheckAllocator(CreateMallocAllocator());
  RCReference<HostBuffer> slice;
  {
    RCReference<HostBuffer> parent =
        HostBuffer::CreateUninitialized(64, kTensorAlignment, *allocator);
    ASSERT_TRUE(parent);
    for (int i = 0; i < 64; ++i) static_cast<uint8_t*>(parent->data())[i] = i;
    slice = HostBuffer::CreateSlice(parent, 16, 8);
    ASSERT_TRUE(slice);
    EXPECT_EQ(slice->data(), static_cast<char*>(parent->data()) + 16);
    EXPECT_FALSE(parent->IsUnique());
  }
  // The parent's only other reference is gone; the slice still reads it.
  EXPECT_EQ(allocator->GetStats()->live_allocations, 1);
  EXPECT_EQ(slice->size(), 8u);
  EXPECT_EQ(static_cast<const uint8_t*>(slice->data())[0], 16);
  EXPECT_EQ(static_cast<const uint8_t*>(slice->data())[7], 23);
  // A slice of a slice.
  RCReference<HostBuffer> inner = HostBuffer::CreateSlice(slice, 4, 4);
  ASSERT_TRUE(inner);
  EXPECT_EQ(static_cast<const uint8_t*>(inner->data())[0], 20);
  slice.reset();
  EXPECT_EQ(allocator->GetStats()->live_allocations, 1);
  inner.reset();
  EXPECT_EQ(allocator->GetStats()->live_allocations, 0);
}

TEST(HostBufferTest, SliceOutOfBoundsGivesNull) {
  auto allocator = CreateMallocAllocator();
  RCReference<HostBuffer> parent =
      HostBuffer::CreateUninitialized(32, kTensorAlignment, *allocator);
  EXPECT_TRUE(HostBuffer::CreateSlice(parent, 0, 32));
  EXPECT_TRUE(HostBuffer::CreateSlice(parent, 32, 0));
  EXPECT_FALSE(HostBuffer::CreateSlice(parent, 30, 3));
  EXPECT_FALSE(HostBuffer::CreateSlice(parent, 33, 0));
  EXPECT_FALSE(HostBuffer::CreateSlice(parent, 8, SIZE_MAX));
  EXPECT_FALSE(HostBuffer::CreateSlice(nullptr, 0, 0));
  EXPECT_TRUE(parent->IsUnique());  // failed slices left no reference
}

TEST(HostBufferTest, ExternalBufferRunsDeallocatorOnce) {
  auto storage = std::make_unique<char[]>(16);
  int calls = 0;
  void* seen_ptr = nullptr;
  size_t seen_size = 0;
  {
    RCReference<HostBuffer> buffer = HostBuffer::CreateFromExternal(
        storage.get(), 16, [&](void* ptr, size_t size) {
          ++calls;
          seen_ptr = ptr;
          seen_size = size;
        });
    RCReference<HostBuffer> copy = buffer;
    EXPECT_EQ(buffer->data(), storage.get());
    EXPECT_EQ(buffer->size(), 16u);
  }
  EXPECT_EQ(calls, 1);
  EXPECT_EQ(seen_ptr, storage.get());
  EXPECT_EQ(seen_size, 16u);
}

TEST(HostBufferTest, ReadOnlyBuffersAndTheirSlicesAreNeverWrittenInPlace) {
  float bytes[4] = {1, 2, 3, 4};
  DenseHostTensor tensor(TensorMetadata(DType::kF32, {4}),
                         HostBuffer::CreateFromExternal(bytes, sizeof(bytes),
                                                        [](void*, size_t) {}));
  EXPECT_TRUE(tensor.IsBufferUnique());
  tensor.buffer()->MarkReadOnly();
  EXPECT_TRUE(tensor.buffer()->IsReadOnly());
  // The only holder still may not write: the bytes are a model's weights.
  EXPECT_FALSE(tensor.IsBufferUnique());
  RCReference<HostBuffer> slice =
      HostBuffer::CreateSlice(tensor.buffer(), 4, 8);
  ASSERT_TRUE(slice);
  EXPECT_TRUE(slice->IsReadOnly());
  DenseHostTensor view(TensorMetadata(DType::kF32, {2}), std::move(slice));
  EXPECT_FALSE(view.IsBufferUnique());
}

TEST(HostBufferTest, DebugString) {
  auto allocator = CreateMallocAllocator();
  RCReference<HostBuffer> buffer =
      HostBuffer::CreateUninitialized(24, kTensorAlignment, *allocator);
  EXPECT_THAT(buffer->DebugString(),
              MatchesRegex("HostBuffer<pointer=0x[0-9a-f]+, size=24>"));
}

}  // namespace
}  // namespace asyncrt
