#include "backends/cpu/nn/copy_util.h"

#include <algorithm>
#include <cstring>

#include "asyncrt/tensor/dtype.h"

namespace asyncrt::nn {
// The product of `dims`, or nullopt if a dimension is negative or the
// product overflows (shapes from attributes are user input).
std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> dims) {
  int64_t product = 1;
  for (int64_t d : dims) {
    if (d < 0 || __builtin_mul_overflow(product, d, &product)) {
      return std::nullopt;
    }
  }
  return product;
}

int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end) {
  int64_t product = 1;
  for (size_t i = begin; i < end; ++i) product *= dims[i];
  return product;
}

Dims DenseStrides(absl::Span<const int64_t> dims) {
  Dims strides(dims.size(), 1);
  for (int i = static_cast<int>(dims.size()) - 2; i >= 0; --i) {
    strides[i] = strides[i + 1] * dims[i + 1];
  }
  return strides;
}

// Copies `n` elements, `src_step` and `dst_step` elements apart.
void CopyRun(const char* src, int64_t src_step, char* dst, int64_t dst_step,
             int64_t n, size_t element_size) {
  if (src_step == 1 && dst_step == 1) {
    std::memcpy(dst, src, n * element_size);
    return;
  }
  WithBlock(element_size, [&](auto tag) {
    constexpr int64_t kSize = sizeof(typename decltype(tag)::type);
    for (int64_t j = 0; j < n; ++j) {  // Signed: steps may be negative.
      std::memcpy(dst + j * dst_step * kSize, src + j * src_step * kSize,
                  kSize);
    }
  });
}

// Writes `n` copies of the element at `value`, doubling: each memcpy
// copies the run already written.
void FillRun(char* dst, int64_t n, const char* value, size_t element_size) {
  if (n > 0) std::memcpy(dst, value, element_size);
  for (int64_t done = 1; done < n; done *= 2) {
    std::memcpy(dst + done * element_size, dst,
                std::min(done, n - done) * element_size);
  }
}

// Copies the view `shape` of `src` (element strides `src_strides`, any
// sign, 0 to broadcast) to `dst` (strides `dst_strides`). Dimensions
// contiguous in both are merged first, so a dense view is one memcpy.
void CopyView(const char* src, const Dims& src_strides, char* dst,
              const Dims& dst_strides, absl::Span<const int64_t> shape,
              size_t element_size) {
  if (CheckedProduct(shape).value_or(0) == 0) return;
  Dims dims, ss, ds;  // Merged, outermost first.
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] == 1) continue;
    if (!dims.empty() && ss.back() == src_strides[i] * shape[i] &&
        ds.back() == dst_strides[i] * shape[i]) {
      dims.back() *= shape[i];
      ss.back() = src_strides[i];
      ds.back() = dst_strides[i];
    } else {
      dims.push_back(shape[i]);
      ss.push_back(src_strides[i]);
      ds.push_back(dst_strides[i]);
    }
  }
  if (dims.empty()) return (void)std::memcpy(dst, src, element_size);
  const int64_t size = static_cast<int64_t>(element_size);
  ForEachRow<2>(dims, {ss, ds}, [&](const std::array<int64_t, 2>& offset) {
    CopyRun(src + offset[0] * size, ss.back(), dst + offset[1] * size,
            ds.back(), dims.back(), element_size);
  });
}

}  // namespace asyncrt::nn
