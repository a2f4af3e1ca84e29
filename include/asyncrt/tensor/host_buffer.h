// HostBuffer: a refcounted block of host memory that tensors share.
//
// A buffer is one of:
//   - owned: allocated from a HostAllocator, returned to it when the last
//     reference goes. The header and the bytes share one allocation of
//     RoundUp(sizeof(HostBuffer), alignment) + size bytes (as in TFRT, whose
//     allocator tests count those bytes), so a tensor costs one allocation
//     for its data, not two;
//   - external: memory owned elsewhere, released by a caller-supplied
//     deallocator when the last reference goes;
//   - a slice: a byte range of a parent buffer, holding a reference to the
//     parent so the bytes stay valid.
//
// Thread-safety: the reference count is atomic, so references may be taken
// and dropped from any thread. The bytes themselves are not synchronized:
// writers must own the buffer exclusively (IsUnique()) or coordinate
// externally.
#ifndef ASYNCRT_TENSOR_HOST_BUFFER_H_
#define ASYNCRT_TENSOR_HOST_BUFFER_H_

#include <cstddef>
#include <new>
#include <string>

#include "absl/functional/any_invocable.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

// Alignment of tensor data allocated by this library: enough for any element
// type and for 512-bit vector loads.
inline constexpr size_t kTensorAlignment = 64;

class HostBuffer : public ReferenceCounted<HostBuffer> {
 public:
  // `size` uninitialized bytes aligned to `alignment` (a power of two) from
  // `allocator`, which must outlive the buffer. Null on allocation failure.
  static RCReference<HostBuffer> CreateUninitialized(size_t size,
                                                     size_t alignment,
                                                     HostAllocator& allocator);

  // Wraps `size` bytes at `ptr` owned elsewhere. `deallocator(ptr, size)`
  // runs (on whichever thread drops the last reference) when the buffer is
  // destroyed; pass an empty-bodied function for memory that outlives the
  // buffer.
  static RCReference<HostBuffer> CreateFromExternal(
      void* ptr, size_t size,
      absl::AnyInvocable<void(void*, size_t)> deallocator);

  // Bytes [offset, offset + size) of `parent`, keeping `parent` alive. Null
  // if `parent` is null or the range does not fit.
  static RCReference<HostBuffer> CreateSlice(RCReference<HostBuffer> parent,
                                             size_t offset, size_t size);

  HostBuffer(const HostBuffer&) = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  void* data() { return data_; }
  const void* data() const { return data_; }
  size_t size() const { return size_; }

  // A read-only buffer's bytes never change: ops must not write into it in
  // place even when they hold its only reference (a constant viewing a
  // model's weights in its BEF file). Slices of it are read-only too. Mark
  // a buffer before sharing it.
  void MarkReadOnly() { read_only_ = true; }
  bool IsReadOnly() const { return read_only_; }

  // A planned buffer is a slot of a function call's BufferArena: the
  // compiler's buffer plan gives its bytes to other values once this one's
  // readers are done, so ops must not compute another value in it in place
  // even when they hold its only reference (that value would be where the
  // plan did not put it). Slices of it are planned too. Mark before sharing.
  void MarkPlanned() { planned_ = true; }
  bool IsPlanned() const { return planned_; }

  // "HostBuffer<pointer=0x55d..., size=24>".
  std::string DebugString() const;

 private:
  friend class ReferenceCounted<HostBuffer>;
  enum class Kind : uint8_t { kOwned, kExternal, kSlice };
  using Deallocator = absl::AnyInvocable<void(void*, size_t)>;

  HostBuffer(void* data, size_t size, Kind kind)
      : data_(data), size_(size), kind_(kind) {}
  ~HostBuffer();

  // Runs the destructor, then frees the header the way it was allocated
  // (with the bytes, for an owned buffer).
  static void operator delete(HostBuffer* buffer, std::destroying_delete_t);

  // Bytes before the data of an owned buffer.
  static size_t HeaderSize(size_t alignment);

  void* const data_;
  const size_t size_;
  const Kind kind_;
  bool read_only_ = false;
  bool planned_ = false;
  // Set only for an owned buffer: the alignment it was allocated with.
  uint32_t alignment_ = 0;
  union {
    HostAllocator* allocator_;  // kOwned: where the block returns.
    Deallocator* deallocator_;  // kExternal: owned, releases the bytes.
    HostBuffer* parent_;        // kSlice: one reference to the parent.
  };
};

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_HOST_BUFFER_H_
