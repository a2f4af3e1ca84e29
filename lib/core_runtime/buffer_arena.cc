#include "asyncrt/core_runtime/buffer_arena.h"

#include <utility>

namespace asyncrt {

RCReference<BufferArena> BufferArena::Create(size_t size,
                                             HostAllocator& allocator) {
  RCReference<HostBuffer> memory =
      HostBuffer::CreateUninitialized(size, kTensorAlignment, allocator);
  if (!memory) return nullptr;
  return TakeRef(new BufferArena(std::move(memory)));
}

RCReference<HostBuffer> BufferArena::Slot(size_t offset, size_t size) const {
  RCReference<HostBuffer> slot = HostBuffer::CreateSlice(memory_, offset, size);
  if (!slot) return nullptr;
  slot->MarkPlanned();
  num_slots_.fetch_add(1, std::memory_order_relaxed);
  return slot;
}

}  // namespace asyncrt
