// Tests of DeviceAllocator's accounting, limits and errors, DeviceMemory's
// ownership, and FreeAfter with a stream's event; concurrent allocations
// run under ThreadSanitizer.
#include "asyncrt/device/device_allocator.h"

#include <cstdint>
#include <limits>
#include <thread>
#include <vector>

#include "absl/synchronization/notification.h"
#include "asyncrt/device/host_stream.h"
#include "asyncrt/host_context/concurrent_work_queue.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/host_context/host_context.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using ::testing::HasSubstr;

TEST(DeviceAllocatorTest, CountsLiveAndPeakBytes) {
  HostMemoryAllocator allocator("SIM:0", 0);
  {
    absl::StatusOr<DeviceMemory> a = allocator.Allocate(100);
    absl::StatusOr<DeviceMemory> b = allocator.Allocate(1000, 256);
    ASSERT_TRUE(a.ok() && b.ok());
    EXPECT_EQ(reinterpret_cast<uintptr_t>(b->data()) % 256, 0u);
    EXPECT_EQ(b->size(), 1000u);
    DeviceAllocator::Stats stats = allocator.GetStats();
    EXPECT_EQ(stats.live_bytes, 1100);
    EXPECT_EQ(stats.live_allocations, 2);
    a->Free();
    EXPECT_FALSE(*a);
    EXPECT_EQ(allocator.GetStats().live_bytes, 1000);
    // Moving transfers ownership: one free.
    DeviceMemory moved = *std::move(b);
    EXPECT_EQ(allocator.GetStats().live_allocations, 1);
  }
  DeviceAllocator::Stats stats = allocator.GetStats();
  EXPECT_EQ(stats.live_bytes, 0);
  EXPECT_EQ(stats.live_allocations, 0);
  EXPECT_EQ(stats.peak_bytes, 1100);
  EXPECT_EQ(stats.total_allocations, 2);
}

TEST(DeviceAllocatorTest, TheLimitIsAnErrorNamingTheDevice) {
  HostMemoryAllocator allocator("SIM:0", 1024);
  absl::StatusOr<DeviceMemory> first = allocator.Allocate(1000);
  ASSERT_TRUE(first.ok());
  absl::StatusOr<DeviceMemory> second = allocator.Allocate(100);
  ASSERT_FALSE(second.ok());
  EXPECT_EQ(second.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(second.status().message(),
              HasSubstr("SIM:0: out of memory allocating 100 bytes (1000 of "
                        "1024 bytes in use)"));
  // A failed request leaves nothing behind.
  EXPECT_EQ(allocator.GetStats().live_bytes, 1000);
  first->Free();
  EXPECT_TRUE(allocator.Allocate(1024).ok());
}

TEST(DeviceAllocatorTest, BadRequestsAreErrorsNotAborts) {
  HostMemoryAllocator allocator("SIM:0", 0);
  EXPECT_EQ(allocator.Allocate(64, 3).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(allocator.Allocate(64, 0).status().code(),
            absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(
      allocator.Allocate(std::numeric_limits<size_t>::max()).status().code(),
      absl::StatusCode::kResourceExhausted);
  absl::StatusOr<DeviceMemory> empty = allocator.Allocate(0);
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(empty->size(), 0u);
  empty->Free();
  EXPECT_EQ(allocator.GetStats().live_bytes, 0);
  EXPECT_EQ(allocator.GetStats().live_allocations, 0);
}

// A device whose memory is full whatever the limit says.
class RefusingAllocator final : public DeviceAllocator {
 public:
  RefusingAllocator() : DeviceAllocator("FULL:0", 0) {}
  bool IsHostAccessible() const override { return false; }

 protected:
  void* AllocateRaw(size_t, size_t) override { return nullptr; }
  void DeallocateRaw(void*, size_t) override {}
};

TEST(DeviceAllocatorTest, ABackendThatRefusesIsAnError) {
  RefusingAllocator allocator;
  absl::StatusOr<DeviceMemory> memory = allocator.Allocate(256);
  ASSERT_FALSE(memory.ok());
  EXPECT_EQ(memory.status().code(), absl::StatusCode::kResourceExhausted);
  EXPECT_THAT(memory.status().message(),
              HasSubstr("FULL:0: out of memory allocating 256 bytes (the "
                        "device refused"));
  EXPECT_EQ(allocator.GetStats().live_bytes, 0);
  EXPECT_EQ(allocator.GetStats().total_allocations, 0);
}

TEST(DeviceAllocatorTest, FreeAfterWaitsForTheStreamsWork) {
  HostContext host(nullptr, CreateMallocAllocator(),
                   *CreateWorkQueue("mstd:2"));
  HostMemoryAllocator allocator("SIM:0", 0);
  HostStream stream(host.host_device(), &host);
  absl::Notification release;
  stream.Enqueue([&] {
    release.WaitForNotification();
    return absl::OkStatus();
  });
  RCReference<DeviceEvent> event = stream.RecordEvent();
  FreeAfter(*allocator.Allocate(4096), event);
  EXPECT_EQ(allocator.GetStats().live_bytes, 4096);
  release.Notify();
  RCReference<AsyncValue> done[] = {event->done().CopyRef()};
  host.Await(done);
  host.Quiesce();
  EXPECT_EQ(allocator.GetStats().live_bytes, 0);
  // An event already done frees at once.
  FreeAfter(*allocator.Allocate(16), event);
  EXPECT_EQ(allocator.GetStats().live_bytes, 0);
}

TEST(DeviceAllocatorTest, ConcurrentAllocationsNeverPassTheLimitStress) {
  constexpr int64_t kLimit = 64 * 1024;
  HostMemoryAllocator allocator("SIM:0", kLimit);
  std::vector<std::thread> threads;
  std::atomic<int> refused{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      std::vector<DeviceMemory> held;
      for (int i = 0; i < 2000; ++i) {
        absl::StatusOr<DeviceMemory> memory = allocator.Allocate(1024);
        if (memory.ok()) {
          held.push_back(*std::move(memory));
        } else {
          ++refused;
        }
        EXPECT_LE(allocator.GetStats().live_bytes, kLimit);
        if (held.size() > 20) held.erase(held.begin(), held.begin() + 10);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  DeviceAllocator::Stats stats = allocator.GetStats();
  EXPECT_EQ(stats.live_bytes, 0);
  EXPECT_EQ(stats.live_allocations, 0);
  EXPECT_LE(stats.peak_bytes, kLimit);
  EXPECT_EQ(stats.total_allocations + refused.load(), 4 * 2000);
}

}  // namespace
}  // namespace asyncrt
