// ParallelFor: splits [0, n) into blocks and runs them on the work queue.
#ifndef ASYNCRT_HOST_CONTEXT_PARALLEL_FOR_H_
#define ASYNCRT_HOST_CONTEXT_PARALLEL_FOR_H_

#include <cstddef>
#include <functional>

#include "absl/functional/any_invocable.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/chain.h"

namespace asyncrt {

class HostContext;

// How to cut the range into blocks.
class BlockSizes {
 public:
  // Blocks of exactly `size` elements (the last may be shorter).
  static BlockSizes Fixed(size_t size) { return BlockSizes(size, true); }
  // Blocks of at least `size` elements, otherwise sized so that each worker
  // gets about four blocks (balance against per-task overhead).
  static BlockSizes Min(size_t size) { return BlockSizes(size, false); }

  // The block size for `total` elements and `parallelism` workers.
  size_t BlockSize(size_t total, int parallelism) const;

 private:
  BlockSizes(size_t size, bool fixed)
      : size_(size == 0 ? 1 : size), fixed_(fixed) {}
  size_t size_;
  bool fixed_;
};

// Calls compute(begin, end) for every block of [0, total), concurrently on
// `host`'s work queue (the first block on the calling thread), then calls
// on_done() once on the thread that finished the last block. `compute` must
// be thread-safe. Returns without waiting.
void ParallelFor(HostContext* host, size_t total, BlockSizes block_sizes,
                 std::function<void(size_t begin, size_t end)> compute,
                 absl::AnyInvocable<void()> on_done);

// As above; the returned chain becomes available when every block is done.
AsyncValueRef<Chain> ParallelFor(
    HostContext* host, size_t total, BlockSizes block_sizes,
    std::function<void(size_t begin, size_t end)> compute);

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_PARALLEL_FOR_H_
