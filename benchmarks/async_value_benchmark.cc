// AsyncValue micro-benchmarks, single-threaded, each next to the closest
// standard-library baseline (std::promise / std::shared_future) where one
// exists. Names are BM_<Case>/<peer>; benchmarks/summarize.py pairs
// BM_<Case>/asyncrt with every other peer of the same case.
#include <cstdint>
#include <future>
#include <utility>

#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/chain.h"
#include "benchmark/benchmark.h"

namespace {

using asyncrt::AsyncValueRef;

//===--- Create, publish, destroy -----------------------------------------===//

void BM_AsyncValueCreateEmplaceDestroy_Asyncrt(benchmark::State& state) {
  for (auto _ : state) {
    AsyncValueRef<int> value = asyncrt::MakeUnconstructedAsyncValueRef<int>();
    value.emplace(42);
    benchmark::DoNotOptimize(value.GetAsyncValue());
  }
}
BENCHMARK(BM_AsyncValueCreateEmplaceDestroy_Asyncrt)
    ->Name("BM_AsyncValueCreateEmplaceDestroy/asyncrt");

// The standard way to make a one-shot value that a consumer can wait on:
// promise + future share one heap-allocated state, like an AsyncValue.
void BM_AsyncValueCreateEmplaceDestroy_Promise(benchmark::State& state) {
  for (auto _ : state) {
    std::promise<int> promise;
    std::future<int> future = promise.get_future();
    promise.set_value(42);
    benchmark::DoNotOptimize(future);
  }
}
BENCHMARK(BM_AsyncValueCreateEmplaceDestroy_Promise)
    ->Name("BM_AsyncValueCreateEmplaceDestroy/promise");

//===--- Continuation on an available value -------------------------------===//

void BM_AndThenAvailable_Asyncrt(benchmark::State& state) {
  AsyncValueRef<int> value = asyncrt::MakeAvailableAsyncValueRef<int>(42);
  int64_t counter = 0;
  for (auto _ : state) {
    value.AndThen([&counter] { ++counter; });
    benchmark::DoNotOptimize(counter);
  }
  if (counter != state.iterations()) state.SkipWithError("lost callbacks");
}
BENCHMARK(BM_AndThenAvailable_Asyncrt)->Name("BM_AndThenAvailable/asyncrt");

// std futures have no continuations; reading a ready shared_future (checking
// readiness, then the value) is the nearest thing to "run this now that the
// value is there".
void BM_AndThenAvailable_SharedFuture(benchmark::State& state) {
  std::promise<int> promise;
  std::shared_future<int> future = promise.get_future().share();
  promise.set_value(42);
  for (auto _ : state) {
    benchmark::DoNotOptimize(future.get());
  }
}
BENCHMARK(BM_AndThenAvailable_SharedFuture)
    ->Name("BM_AndThenAvailable/shared_future");

//===--- Continuation registered before the value is published ------------===//

// The waiter is queued (one allocation), then run by emplace.
void BM_AndThenThenEmplace_Asyncrt(benchmark::State& state) {
  int64_t counter = 0;
  for (auto _ : state) {
    AsyncValueRef<int> value = asyncrt::MakeUnconstructedAsyncValueRef<int>();
    value.AndThen([&counter] { ++counter; });
    value.emplace(42);
    benchmark::DoNotOptimize(counter);
  }
  if (counter != state.iterations()) state.SkipWithError("lost callbacks");
}
BENCHMARK(BM_AndThenThenEmplace_Asyncrt)->Name("BM_AndThenThenEmplace/asyncrt");

// The consumer takes a shared_future before the value exists, the producer
// sets it, and the consumer reads it.
void BM_AndThenThenEmplace_Promise(benchmark::State& state) {
  for (auto _ : state) {
    std::promise<int> promise;
    std::shared_future<int> future = promise.get_future().share();
    promise.set_value(42);
    benchmark::DoNotOptimize(future.get());
  }
}
BENCHMARK(BM_AndThenThenEmplace_Promise)->Name("BM_AndThenThenEmplace/promise");

//===--- AsyncRT only -----------------------------------------------------===//

void BM_MakeAvailable_Asyncrt(benchmark::State& state) {
  for (auto _ : state) {
    AsyncValueRef<int> value = asyncrt::MakeAvailableAsyncValueRef<int>(42);
    benchmark::DoNotOptimize(value.GetAsyncValue());
  }
}
BENCHMARK(BM_MakeAvailable_Asyncrt)->Name("BM_MakeAvailable/asyncrt");

// The ready chain is a shared, non-refcounted singleton: copying and dropping
// a reference to it should cost no atomic operation.
void BM_ReadyChain_Asyncrt(benchmark::State& state) {
  for (auto _ : state) {
    AsyncValueRef<asyncrt::Chain> chain = asyncrt::GetReadyChain();
    AsyncValueRef<asyncrt::Chain> copy = chain;
    benchmark::DoNotOptimize(copy.GetAsyncValue());
  }
}
BENCHMARK(BM_ReadyChain_Asyncrt)->Name("BM_ReadyChain/asyncrt");

}  // namespace

BENCHMARK_MAIN();
