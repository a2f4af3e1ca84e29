#include "asyncrt/tensor/dense_host_tensor.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "absl/strings/str_cat.h"

namespace asyncrt {

namespace internal {

void AppendElementList(DType dtype, const void* data, int64_t count,
                       std::string* out) {
  // TFRT prints at most this many values so huge tensors stay readable.
  constexpr int64_t kMaxPrinted = 16;
  out->push_back('[');
  const size_t element_size = DTypeSize(dtype);
  const char* bytes = static_cast<const char*>(data);
  const int64_t printed = std::min(count, kMaxPrinted);
  for (int64_t i = 0; i < printed; ++i) {
    if (i > 0) out->append(", ");
    AppendElement(dtype, bytes + i * element_size, out);
  }
  if (count > printed) out->append(", ...");
  out->push_back(']');
}

std::optional<size_t> DenseByteSize(const TensorMetadata& metadata) {
  // One pass does TensorMetadata::IsValid()'s checks and the size: this runs
  // for every tensor an eager op allocates.
  if (metadata.dtype == DType::kInvalid || metadata.dtype == DType::kString) {
    return std::nullopt;
  }
  size_t size = DTypeSize(metadata.dtype);
  for (int64_t d : metadata.shape.GetDimensions()) {
    if (d < 0 || __builtin_mul_overflow(size, static_cast<size_t>(d), &size)) {
      return std::nullopt;
    }
  }
  // NumElements() is an int64_t product; keep it representable.
  if (size > static_cast<size_t>(INT64_MAX)) return std::nullopt;
  return size;
}

}  // namespace internal

DenseHostTensor::DenseHostTensor(const TensorMetadata& metadata,
                                 RCReference<HostBuffer> buffer)
    : Tensor(metadata), buffer_(std::move(buffer)) {
  assert(metadata.dtype != DType::kString &&
         "DenseHostTensor cannot hold strings; use StringHostTensor");
  assert((buffer_ ? buffer_->size() : 0) >= DataSizeInBytes() &&
         "DenseHostTensor buffer too small for its metadata");
}

namespace {

// A buffer for `metadata`'s elements; null if `metadata` is invalid or the
// allocation fails.
RCReference<HostBuffer> AllocateElements(const TensorMetadata& metadata,
                                         HostAllocator& allocator) {
  std::optional<size_t> size = internal::DenseByteSize(metadata);
  if (!size) return nullptr;
  return HostBuffer::CreateUninitialized(*size, kTensorAlignment, allocator);
}

}  // namespace

std::optional<DenseHostTensor> DenseHostTensor::CreateUninitialized(
    const TensorMetadata& metadata, HostAllocator& allocator) {
  RCReference<HostBuffer> buffer = AllocateElements(metadata, allocator);
  if (!buffer) return std::nullopt;
  return std::optional<DenseHostTensor>(std::in_place, metadata,
                                        std::move(buffer));
}

AsyncValueRef<DenseHostTensor> DenseHostTensor::MakeUninitializedAsyncValue(
    const TensorMetadata& metadata, HostAllocator& allocator) {
  RCReference<HostBuffer> buffer = AllocateElements(metadata, allocator);
  if (!buffer) return {};
  return MakeAvailableAsyncValueRef<DenseHostTensor>(metadata,
                                                     std::move(buffer));
}

void DenseHostTensor::Print(std::string* out) const {
  absl::StrAppend(out, "DenseHostTensor ", metadata().DebugString(),
                  ", values = ");
  if (data() == nullptr && NumElements() > 0) {
    out->append("<no buffer>");
    return;
  }
  internal::AppendElementList(dtype(), data(), NumElements(), out);
}

bool DenseTensorEqual(const DenseHostTensor& a, const DenseHostTensor& b) {
  if (a.metadata() != b.metadata()) return false;
  size_t size = a.DataSizeInBytes();
  if (size == 0) return true;
  if (a.data() == nullptr || b.data() == nullptr) return a.data() == b.data();
  return std::memcmp(a.data(), b.data(), size) == 0;
}

bool DenseTensorAllClose(const DenseHostTensor& a, const DenseHostTensor& b,
                         double rtol, double atol) {
  if (a.metadata() != b.metadata()) return false;
  auto close = [&](double x, double y) {
    // Equal infinities are close; a NaN on either side fails the comparison.
    if (x == y) return true;
    return std::fabs(x - y) <= atol + rtol * std::fabs(y);
  };
  auto all_close = [&](auto tag) {
    using T = typename decltype(tag)::type;
    auto xs = a.elements<T>();
    auto ys = b.elements<T>();
    for (size_t i = 0; i < xs.size(); ++i) {
      double x, y;
      if constexpr (std::is_floating_point_v<T>) {
        x = xs[i];
        y = ys[i];
      } else {
        x = xs[i].ToFloat();
        y = ys[i].ToFloat();
      }
      if (!close(x, y)) return false;
    }
    return true;
  };
  switch (a.dtype()) {
    case DType::kF16:
      return all_close(TypeTag<Half>{});
    case DType::kBF16:
      return all_close(TypeTag<BFloat16>{});
    case DType::kF32:
      return all_close(TypeTag<float>{});
    case DType::kF64:
      return all_close(TypeTag<double>{});
    default:
      return false;
  }
}

}  // namespace asyncrt
