// BufferArena: one function call's memory for the intermediate tensors that
// the compiler's buffer plan (-nn-plan-buffers) placed.
//
// The plan gives each planned op result a byte offset into one block whose
// size the plan computes; two results share bytes only where the plan
// proved, from the dataflow alone, that every reader of the first finished
// before the second's producer ran. A call makes its arena once
// (`corert.arena_op_handler`), and each op with a slot (`_buffer_offset`,
// `_buffer_size`) that runs through that handler writes its result there
// instead of in a new allocation (OpInvocation::PlannedResultBuffer).
//
// Ownership: reference-counted. Each slot is a HostBuffer slice that holds
// the arena, so the block lives until the last planned tensor is gone,
// whether or not the call has returned. Thread-safety: Slot may be called
// from any thread; the bytes are the plan's to coordinate. Never blocks.
#ifndef ASYNCRT_CORE_RUNTIME_BUFFER_ARENA_H_
#define ASYNCRT_CORE_RUNTIME_BUFFER_ARENA_H_

#include <atomic>
#include <cstddef>
#include <cstdint>

#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/support/ref_count.h"
#include "asyncrt/tensor/host_buffer.h"

namespace asyncrt {

class BufferArena : public ReferenceCounted<BufferArena> {
 public:
  // An arena of `size` bytes (tensor-aligned) from `allocator`, which must
  // outlive it; null if the allocation fails.
  static RCReference<BufferArena> Create(size_t size, HostAllocator& allocator);

  size_t size() const { return memory_->size(); }
  const void* data() const { return memory_->data(); }

  // Bytes [offset, offset + size) as a planned buffer (HostBuffer::
  // IsPlanned: no op computes another value in it in place); null if the
  // range is not inside the arena.
  RCReference<HostBuffer> Slot(size_t offset, size_t size) const;

  // Slots handed out so far (for tests and traces).
  int64_t num_slots() const {
    return num_slots_.load(std::memory_order_relaxed);
  }

 private:
  explicit BufferArena(RCReference<HostBuffer> memory)
      : memory_(std::move(memory)) {}

  const RCReference<HostBuffer> memory_;
  mutable std::atomic<int64_t> num_slots_{0};
};

}  // namespace asyncrt

#endif  // ASYNCRT_CORE_RUNTIME_BUFFER_ARENA_H_
