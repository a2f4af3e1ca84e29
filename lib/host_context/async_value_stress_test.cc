// Concurrency stress tests for AsyncValue: many threads creating,
// publishing, forwarding and awaiting values at once. Meant to run under
// ThreadSanitizer (the tsan build of `make test`), where any missing
// happens-before edge is reported.
#include <array>
#include <atomic>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

constexpr int kThreads = 4;

// Runs `body(thread_index)` on kThreads threads released together.
template <typename F>
void RunConcurrently(int threads, F body) {
  std::atomic<bool> go{false};
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      while (!go.load(std::memory_order_acquire)) std::this_thread::yield();
      body(t);
    });
  }
  go.store(true, std::memory_order_release);
  for (auto& thread : pool) thread.join();
}

TEST(AsyncValueStressTest, AndThenRacesWithEmplace) {
  constexpr int kRounds = 2000;
  for (int round = 0; round < kRounds; ++round) {
    auto value = MakeUnconstructedAsyncValueRef<int>();
    std::atomic<int> sum{0};
    RunConcurrently(kThreads, [&](int t) {
      if (t == 0) {
        value.emplace(round);
      } else {
        // Reading the payload in the waiter checks that publication
        // happens-before the continuation.
        value.AndThen([&sum, value] {
          sum.fetch_add(value.get() + 1, std::memory_order_relaxed);
        });
      }
    });
    EXPECT_EQ(sum.load(), (kThreads - 1) * (round + 1));
  }
}

TEST(AsyncValueStressTest, ConcurrentRefCountingDestroysOnce) {
  std::optional<int64_t> before = AsyncValue::NumLiveValues();
  constexpr int kValues = 2000;
  std::vector<AsyncValueRef<std::vector<int>>> values;
  for (int i = 0; i < kValues; ++i) {
    values.push_back(MakeAvailableAsyncValueRef<std::vector<int>>(16, i));
  }
  RunConcurrently(kThreads, [&](int) {
    for (auto& value : values) {
      AsyncValueRef<std::vector<int>> copy = value;
      EXPECT_EQ(copy->size(), 16u);
    }
  });
  values.clear();
  if (before) {
    EXPECT_EQ(*AsyncValue::NumLiveValues(), *before);
  }
}

TEST(AsyncValueStressTest, ForwardingChainsAcrossThreads) {
  constexpr int kChains = 500;
  constexpr int kLength = 8;
  std::optional<int64_t> before = AsyncValue::NumLiveValues();
  {
    // For each chain: kLength indirect values forwarded in a row to a
    // concrete value; threads forward links and publish the end in any
    // order.
    std::vector<std::vector<RCReference<IndirectAsyncValue>>> chains(kChains);
    std::vector<AsyncValueRef<int>> ends;
    for (int c = 0; c < kChains; ++c) {
      for (int i = 0; i < kLength; ++i) {
        chains[c].push_back(MakeIndirectAsyncValue());
      }
      ends.push_back(MakeUnconstructedAsyncValueRef<int>());
    }
    std::atomic<int> observed{0};
    for (int c = 0; c < kChains; ++c) {
      AsyncValueRef<int> head(chains[c][0]);
      head.AndThen([&observed, head, c] {
        if (head.get() == c) observed.fetch_add(1);
      });
    }
    RunConcurrently(kThreads, [&](int t) {
      for (int c = 0; c < kChains; ++c) {
        for (int i = t; i < kLength; i += kThreads) {
          RCReference<AsyncValue> next =
              i + 1 < kLength ? RCReference<AsyncValue>(chains[c][i + 1])
                              : RCReference<AsyncValue>(ends[c]);
          chains[c][i]->ForwardTo(std::move(next));
        }
        if (t == c % kThreads) ends[c].emplace(c);
      }
    });
    EXPECT_EQ(observed.load(), kChains);
    for (int c = 0; c < kChains; ++c) {
      EXPECT_EQ(chains[c][0]->get<int>(), c);
    }
  }
  if (before) {
    EXPECT_EQ(*AsyncValue::NumLiveValues(), *before);
  }
}

TEST(AsyncValueStressTest, RunWhenReadyAcrossThreads) {
  constexpr int kRounds = 300;
  constexpr int kInputs = 16;
  for (int round = 0; round < kRounds; ++round) {
    std::vector<AsyncValueRef<int>> inputs;
    std::vector<AsyncValue*> raw;
    for (int i = 0; i < kInputs; ++i) {
      inputs.push_back(MakeUnconstructedAsyncValueRef<int>());
      raw.push_back(inputs.back().GetAsyncValue());
    }
    auto result = MakeUnconstructedAsyncValueRef<int>();
    RunWhenReady(absl::MakeConstSpan(raw), [inputs, result] {
      int sum = 0;
      for (const auto& input : inputs) sum += input.get();
      result.emplace(sum);
    });
    RunConcurrently(kThreads, [&](int t) {
      for (int i = t; i < kInputs; i += kThreads) inputs[i].emplace(i);
    });
    BlockUntilReady(result.GetAsyncValue());
    EXPECT_EQ(result.get(), kInputs * (kInputs - 1) / 2);
  }
}

// Values made on one thread and freed on another: their blocks move
// between the threads' caches of freed blocks and must come back intact.
TEST(AsyncValueStressTest, ValuesFreedOnOtherThreadsKeepTheirPayloads) {
  using Payload = std::array<int64_t, 6>;  // 72-byte values: one class.
  constexpr int kRounds = 2000;
  std::mutex mutex;
  std::vector<AsyncValueRef<Payload>> mailbox[kThreads];
  std::atomic<int> mismatches{0};
  RunConcurrently(kThreads, [&](int t) {
    for (int round = 0; round < kRounds; ++round) {
      std::vector<AsyncValueRef<Payload>> made;
      for (int i = 0; i < 8; ++i) {
        Payload payload;
        payload.fill(t * kRounds + round);
        made.push_back(MakeAvailableAsyncValueRef<Payload>(payload));
      }
      std::vector<AsyncValueRef<Payload>> received;
      {
        std::lock_guard<std::mutex> lock(mutex);
        auto& next = mailbox[(t + 1) % kThreads];
        for (auto& value : made) next.push_back(std::move(value));
        received.swap(mailbox[t]);
      }
      for (auto& value : received) {
        const Payload& payload = value.get();
        const int sender = (t + kThreads - 1) % kThreads;
        if (payload[0] / kRounds != sender) mismatches.fetch_add(1);
        for (int64_t word : payload) {
          if (word != payload[0]) mismatches.fetch_add(1);
        }
      }
    }
  });
  EXPECT_EQ(mismatches.load(), 0);
  for (auto& values : mailbox) values.clear();
}

TEST(AsyncValueStressTest, BlockUntilReadyWakesOnPublishFromAnotherThread) {
  for (int round = 0; round < 200; ++round) {
    auto value = MakeUnconstructedAsyncValueRef<int>();
    std::thread producer([value, round] { value.emplace(round); });
    BlockUntilReady(value.GetAsyncValue());
    EXPECT_EQ(value.get(), round);
    producer.join();
  }
}

}  // namespace
}  // namespace asyncrt
