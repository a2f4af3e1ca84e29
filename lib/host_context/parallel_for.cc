#include "asyncrt/host_context/parallel_for.h"

#include <algorithm>
#include <atomic>
#include <memory>

#include "asyncrt/host_context/host_context.h"

namespace asyncrt {

size_t BlockSizes::BlockSize(size_t total, int parallelism) const {
  if (fixed_) return size_;
  // About four blocks per worker balances uneven blocks against per-task
  // overhead.
  size_t target_blocks = static_cast<size_t>(std::max(1, parallelism)) * 4;
  size_t balanced = (total + target_blocks - 1) / target_blocks;
  return std::max(size_, balanced);
}

void ParallelFor(HostContext* host, size_t total, BlockSizes block_sizes,
                 std::function<void(size_t, size_t)> compute,
                 absl::AnyInvocable<void()> on_done) {
  ConcurrentWorkQueue& queue = host->work_queue();
  const size_t block =
      block_sizes.BlockSize(total, queue.GetParallelismLevel());
  const size_t num_blocks = total == 0 ? 0 : (total + block - 1) / block;
  if (num_blocks <= 1) {
    if (total > 0) compute(0, total);
    on_done();
    return;
  }
  struct State {
    State(size_t blocks, std::function<void(size_t, size_t)> compute,
          absl::AnyInvocable<void()> on_done)
        : remaining(blocks),
          compute(std::move(compute)),
          on_done(std::move(on_done)) {}
    std::atomic<size_t> remaining;
    std::function<void(size_t, size_t)> compute;
    absl::AnyInvocable<void()> on_done;
  };
  auto state = std::make_shared<State>(num_blocks, std::move(compute),
                                       std::move(on_done));
  auto run_block = [state](size_t begin, size_t end) {
    state->compute(begin, end);
    if (state->remaining.fetch_sub(1, std::memory_order_acq_rel) == 1) {
      state->on_done();
    }
  };
  for (size_t b = 1; b < num_blocks; ++b) {
    size_t begin = b * block;
    size_t end = std::min(total, begin + block);
    queue.AddTask([run_block, begin, end] { run_block(begin, end); });
  }
  run_block(0, std::min(total, block));
}

AsyncValueRef<Chain> ParallelFor(HostContext* host, size_t total,
                                 BlockSizes block_sizes,
                                 std::function<void(size_t, size_t)> compute) {
  auto done = MakeUnconstructedAsyncValueRef<Chain>();
  ParallelFor(host, total, block_sizes, std::move(compute),
              [done] { done.emplace(); });
  return done;
}

}  // namespace asyncrt
