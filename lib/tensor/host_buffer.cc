#include "asyncrt/tensor/host_buffer.h"

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"

namespace asyncrt {

RCReference<HostBuffer> HostBuffer::CreateUninitialized(
    size_t size, size_t alignment, HostAllocator& allocator) {
  void* data = allocator.AllocateBytes(size, alignment);
  if (data == nullptr) return nullptr;
  auto* buffer = new HostBuffer(data, size, Kind::kOwned);
  buffer->allocator_ = &allocator;
  return TakeRef(buffer);
}

RCReference<HostBuffer> HostBuffer::CreateFromExternal(
    void* ptr, size_t size,
    absl::AnyInvocable<void(void*, size_t)> deallocator) {
  auto* buffer = new HostBuffer(ptr, size, Kind::kExternal);
  buffer->deallocator_ = std::move(deallocator);
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
  buffer->parent_ = std::move(parent);
  return TakeRef(buffer);
}

HostBuffer::~HostBuffer() {
  switch (kind_) {
    case Kind::kOwned:
      allocator_->DeallocateBytes(data_, size_);
      break;
    case Kind::kExternal:
      if (deallocator_) deallocator_(data_, size_);
      break;
    case Kind::kSlice:
      break;  // parent_'s destructor drops the parent.
  }
}

std::string HostBuffer::DebugString() const {
  return absl::StrFormat("HostBuffer<pointer=%p, size=%d>", data_, size_);
}

}  // namespace asyncrt
