// A tour of the host runtime: async values flowing through the work-stealing
// pool, a fan-out/fan-in join, ParallelFor, blocking work, and an error
// reported at its source. `make run` runs it.
#include <cstdio>
#include <numeric>
#include <vector>

#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/parallel_for.h"

namespace {

using asyncrt::AsyncValue;
using asyncrt::AsyncValueRef;
using asyncrt::RCReference;

// Stands in for the location section of a compiled program.
class DemoLocations : public asyncrt::LocationHandler {
 public:
  std::optional<asyncrt::DecodedLocation> DecodeLocation(
      asyncrt::Location loc) const override {
    return asyncrt::DecodedLocation{
        "demo.mlir", static_cast<int>(loc.data()), 3, /*name=*/""};
  }
};

int Run() {
  auto host_or = asyncrt::CreateHostContext("mstd:2,2", "leak_check_allocator");
  if (!host_or.ok()) {
    std::fprintf(stderr, "%s\n", host_or.status().ToString().c_str());
    return 1;
  }
  asyncrt::HostContext* host = host_or->get();
  std::printf("work queue: %s, parallelism %d\n",
              std::string(host->work_queue().name()).c_str(),
              host->work_queue().GetParallelismLevel());

  // Fan-out: 8 squares computed as tasks; fan-in: their sum once all are
  // ready.
  std::vector<AsyncValueRef<int>> squares;
  std::vector<AsyncValue*> pending;
  for (int i = 1; i <= 8; ++i) {
    squares.push_back(
        asyncrt::EnqueueWorkWithResult(host, [i] { return i * i; }));
    pending.push_back(squares.back().GetAsyncValue());
  }
  auto sum = asyncrt::MakeUnconstructedAsyncValueRef<int>();
  asyncrt::RunWhenReady(absl::MakeConstSpan(pending), [squares, sum] {
    int total = 0;
    for (const auto& square : squares) total += square.get();
    sum.emplace(total);
  });

  // ParallelFor over a buffer from the host allocator.
  constexpr size_t kSize = 1 << 16;
  int64_t* data = host->allocator()->Allocate<int64_t>(kSize);
  AsyncValueRef<asyncrt::Chain> filled =
      asyncrt::ParallelFor(host, kSize, asyncrt::BlockSizes::Min(1024),
                           [data](size_t begin, size_t end) {
                             for (size_t i = begin; i < end; ++i)
                               data[i] = static_cast<int64_t>(i);
                           });

  // Blocking work runs on its own pool.
  auto slept = asyncrt::MakeUnconstructedAsyncValueRef<int>();
  if (!asyncrt::EnqueueBlockingWork(host, [slept] { slept.emplace(7); })) {
    slept.SetError(absl::ResourceExhaustedError("blocking pool full"));
  }

  // An error reported at its source location, then propagated as a value.
  DemoLocations locations;
  auto request =
      asyncrt::RequestContextBuilder(host, nullptr, /*id=*/1).Build();
  asyncrt::ExecutionContext exec_ctx(*request,
                                     asyncrt::Location(&locations, 12));
  RCReference<AsyncValue> failure = asyncrt::EmitErrorAsync(
      exec_ctx, absl::InvalidArgumentError("demo kernel failed on purpose"));

  std::vector<RCReference<AsyncValue>> all = {sum, filled, slept, failure};
  host->Await(all);

  int64_t checksum = std::accumulate(data, data + kSize, int64_t{0});
  host->allocator()->Deallocate(data, kSize);
  std::printf("sum of squares 1..8 = %d\n", sum.get());
  std::printf("parallel_for checksum = %lld\n",
              static_cast<long long>(checksum));
  std::printf("blocking task result = %d\n", slept.get());
  std::printf("propagated error: %s\n",
              std::string(failure->GetError().message()).c_str());
  return sum.get() == 204 && checksum == int64_t{kSize} * (kSize - 1) / 2 ? 0
                                                                          : 1;
}

}  // namespace

int main() { return Run(); }
