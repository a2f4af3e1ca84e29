// Dtype-generic data movement for the nn.* ops: copies of strided views
// (transpose, expand, slice, concat, split, pad, gather) that merge
// dimensions contiguous in source and destination and move whole runs with
// memcpy, and shape arithmetic checked against overflow.
//
// Internal to backends/cpu/nn; not installed. Pure functions.
#ifndef ASYNCRT_BACKENDS_CPU_NN_COPY_UTIL_H_
#define ASYNCRT_BACKENDS_CPU_NN_COPY_UTIL_H_

#include <algorithm>
#include <array>
#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/types/span.h"
#include "asyncrt/tensor/dtype.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {

// Element storage of each size, moved with memcpy of a constant size (a
// plain load and store, clear of strict aliasing).
struct Block16 {
  char bytes[16];
};

// Calls f(TypeTag<T>{}) with T a trivially copyable type of
// `element_size` bytes (16 for anything larger than 8).
template <typename F>
void WithBlock(size_t element_size, F f) {
  switch (element_size) {
    case 1:
      return f(TypeTag<uint8_t>{});
    case 2:
      return f(TypeTag<uint16_t>{});
    case 4:
      return f(TypeTag<uint32_t>{});
    case 8:
      return f(TypeTag<uint64_t>{});
    default:
      return f(TypeTag<Block16>{});
  }
}

// The product of `dims`, or nullopt if a dimension is negative or the
// product overflows (shapes from attributes are user input).
std::optional<int64_t> CheckedProduct(absl::Span<const int64_t> dims);

// The product of dims[begin, end).
int64_t Product(absl::Span<const int64_t> dims, size_t begin, size_t end);

// Row-major element strides of `dims`.
Dims DenseStrides(absl::Span<const int64_t> dims);

// Copies `n` elements of `element_size` bytes, `src_step` and `dst_step`
// elements apart (any sign).
void CopyRun(const char* src, int64_t src_step, char* dst, int64_t dst_step,
             int64_t n, size_t element_size);

// Writes `n` copies of the element at `value`.
void FillRun(char* dst, int64_t n, const char* value, size_t element_size);

// Copies the view `shape` of `src` (element strides `src_strides`, any
// sign, 0 to broadcast) to `dst` (strides `dst_strides`). Dimensions
// contiguous in both are merged first, so a dense view is one memcpy.
void CopyView(const char* src, const Dims& src_strides, char* dst,
              const Dims& dst_strides, absl::Span<const int64_t> shape,
              size_t element_size);

// Calls `row(offsets)` for rows [begin, end) (row: an index of all but the
// last dimension, row-major) of `dims`, offsets[k] being the row's first
// element under strides[k]. The first row's index comes by division, the
// next ones by an odometer.
template <size_t N, typename F>
void ForEachRowIn(const Dims& dims, const std::array<Dims, N>& strides,
                  int64_t begin, int64_t end, F row) {
  const int rank = static_cast<int>(dims.size());
  Dims index(rank, 0);
  std::array<int64_t, N> offsets = {};
  for (int64_t position = begin, d = rank - 2; d >= 0; --d) {
    index[d] = position % dims[d];
    position /= dims[d];
    for (size_t k = 0; k < N; ++k) offsets[k] += index[d] * strides[k][d];
  }
  for (int64_t r = begin; r < end; ++r) {
    row(offsets);
    // An odometer over the outer dimensions.
    for (int d = rank - 2; d >= 0; --d) {
      for (size_t k = 0; k < N; ++k) offsets[k] += strides[k][d];
      if (++index[d] < dims[d]) break;
      for (size_t k = 0; k < N; ++k) offsets[k] -= strides[k][d] * index[d];
      index[d] = 0;
    }
  }
}

// ForEachRowIn over every row of `dims`.
template <size_t N, typename F>
void ForEachRow(const Dims& dims, const std::array<Dims, N>& strides, F row) {
  ForEachRowIn(dims, strides, 0,
               Product(dims, 0, std::max<size_t>(dims.size(), 1) - 1), row);
}

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_CPU_NN_COPY_UTIL_H_
