#include "asyncrt/tensor/host_buffer.h"

#include <algorithm>

#include "absl/strings/str_format.h"

namespace asyncrt {

size_t HostBuffer::HeaderSize(size_t alignment) {
  // Rounded up so that the bytes after the header keep the alignment.
  return (sizeof(HostBuffer) + alignment - 1) & ~(alignment - 1);
}

RCReference<HostBuffer> HostBuffer::CreateUninitialized(
    size_t size, size_t alignment, HostAllocator& allocator) {
  alignment = std::max(alignment, alignof(HostBuffer));
  size_t header = HeaderSize(alignment);
  if (size > SIZE_MAX - header) return nullptr;
  void* block = allocator.AllocateBytes(header + size, alignment);
  if (block == nullptr) return nullptr;
  auto* buffer = new (block)
      HostBuffer(static_cast<char*>(block) + header, size, Kind::kOwned);
  buffer->alignment_ = static_cast<uint32_t>(alignment);
  buffer->allocator_ = &allocator;
  return TakeRef(buffer);
}

RCReference<HostBuffer> HostBuffer::CreateFromExternal(
    void* ptr, size_t size, Deallocator deallocator) {
  auto* buffer = new HostBuffer(ptr, size, Kind::kExternal);
  buffer->deallocator_ =
      deallocator ? new Deallocator(std::move(deallocator)) : nullptr;
  return TakeRef(buffer);
}

RCReference<HostBuffer> HostBuffer::CreateSlice(RCReference<HostBuffer> parent,
                                                size_t offset, size_t size) {
  // Written to avoid overflow in offset + size.
  if (!parent || offset > parent->size() || size > parent->size() - offset) {
    return nullptr;
  }
  auto* buffer = new HostBuffer(static_cast<char*>(parent->data()) + offset,
                                size, Kind::kSlice);
  buffer->read_only_ = parent->IsReadOnly();
  buffer->planned_ = parent->IsPlanned();
  buffer->parent_ = parent.release();
  return TakeRef(buffer);
}

HostBuffer::~HostBuffer() {
  switch (kind_) {
    case Kind::kOwned:
      break;  // operator delete returns the whole block.
    case Kind::kExternal:
      if (deallocator_) {
        (*deallocator_)(data_, size_);
        delete deallocator_;
      }
      break;
    case Kind::kSlice:
      parent_->DropRef();
      break;
  }
}

void HostBuffer::operator delete(HostBuffer* buffer, std::destroying_delete_t) {
  if (buffer->kind_ != Kind::kOwned) {
    buffer->~HostBuffer();
    ::operator delete(buffer);
    return;
  }
  HostAllocator* allocator = buffer->allocator_;
  size_t bytes = HeaderSize(buffer->alignment_) + buffer->size_;
  buffer->~HostBuffer();
  allocator->DeallocateBytes(buffer, bytes);
}

std::string HostBuffer::DebugString() const {
  return absl::StrFormat("HostBuffer<pointer=%p, size=%d>", data_, size_);
}

}  // namespace asyncrt
