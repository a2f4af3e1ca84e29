// Lazy tensors: eager-style calls recorded into traces, compiled once and
// replayed from the cache on every step (docs/lazy.md).
//
//   build/bin/lazy_example
#include <cstdio>
#include <string>

#include "asyncrt/lazy/lazy_tensor.h"
#include "asyncrt/runtime/runtime.h"

namespace {

asyncrt::DenseHostTensor Filled(asyncrt::Runtime& runtime, float value) {
  auto tensor = asyncrt::DenseHostTensor::CreateUninitialized(
      asyncrt::TensorMetadata(asyncrt::DType::kF32, {2, 4}),
      *runtime.host().allocator());
  for (float& element : tensor->elements<float>()) element = value;
  return *std::move(tensor);
}

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "%s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main() {
  asyncrt::RuntimeOptions options;
  options.work_queue = "mstd:2";
  auto runtime = asyncrt::Runtime::Create(options);
  if (!runtime.ok()) return Fail(runtime.status());
  auto lazy = asyncrt::lazy::LazyContext::Create(**runtime);
  if (!lazy.ok()) return Fail(lazy.status());

  auto x = (*lazy)->FromHost(Filled(**runtime, 0.5f));
  auto h = (*lazy)->FromHost(Filled(**runtime, 0.0f));
  if (!x.ok() || !h.ok()) return 1;
  // A shape error is the call's error, before anything runs.
  auto wrong = (*lazy)->Call("nn.matmul", {*x, *x});
  std::printf("nn.matmul of 2x4 by 2x4: %s\n",
              std::string(wrong.status().message()).c_str());

  // h = tanh(h * x + x), ten steps, one trace per step: the first step
  // compiles it (the three elementwise ops fuse into one), the others find
  // it in the cache.
  asyncrt::lazy::LazyTensor state = *h;
  for (int step = 0; step < 10; ++step) {
    auto product = (*lazy)->Call("nn.mul", {state, *x});
    if (!product.ok()) return Fail(product.status());
    auto sum = (*lazy)->Call("nn.add", {*product, *x});
    if (!sum.ok()) return Fail(sum.status());
    auto next = (*lazy)->Call("nn.tanh", {*sum});
    if (!next.ok()) return Fail(next.status());
    state = *next;
    if (absl::Status status = (*lazy)->Barrier(); !status.ok()) {
      return Fail(status);
    }
  }
  auto result = state.ToHost();
  if (!result.ok()) return Fail(result.status());
  std::printf("h[0] after 10 steps: %.6f\n", result->elements<float>()[0]);
  asyncrt::lazy::LazyCacheStats stats = (*lazy)->cache_stats();
  std::printf("traces compiled: %lld, cache hits: %lld\n",
              static_cast<long long>(stats.misses),
              static_cast<long long>(stats.hits));
  return 0;
}
