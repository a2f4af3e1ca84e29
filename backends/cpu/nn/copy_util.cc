#include "backends/cpu/nn/copy_util.h"

#include <immintrin.h>

#include <algorithm>
#include <array>
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

namespace {

// Copies of this many bytes or more are split over the OpenMP team
// (ParallelRanges): below it, waking the team costs more than it saves.
constexpr int64_t kParallelBytes = 64 * 1024;

// The element offsets under `strides` of flat position `position` of the
// row-major index space `dims`.
template <size_t N>
std::array<int64_t, N> OffsetsOf(int64_t position, const Dims& dims,
                                 const std::array<const Dims*, N>& strides) {
  std::array<int64_t, N> offsets = {};
  for (int d = static_cast<int>(dims.size()) - 1; d >= 0; --d) {
    const int64_t index = position % dims[d];
    position /= dims[d];
    for (size_t k = 0; k < N; ++k) offsets[k] += index * (*strides[k])[d];
  }
  return offsets;
}

// Transposes the 8x8 block of floats whose rows start at `src` (`src_row`
// floats apart) into the rows at `dst` (`dst_row` apart): eight loads, 24
// shuffles, eight stores.
__attribute__((target("avx2"))) void Transpose8x8(const float* src,
                                                  int64_t src_row, float* dst,
                                                  int64_t dst_row) {
  __m256 r[8], t[8];
  for (int k = 0; k < 8; ++k) r[k] = _mm256_loadu_ps(src + k * src_row);
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  for (int k = 0; k < 8; k += 4) {
    r[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    r[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    r[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(dst + k * dst_row,
                     _mm256_permute2f128_ps(r[k], r[k + 4], 0x20));
    _mm256_storeu_ps(dst + (k + 4) * dst_row,
                     _mm256_permute2f128_ps(r[k], r[k + 4], 0x31));
  }
}

// Whether Transpose8x8 may run here.
bool HasAvx2() {
  static const bool avx2 = __builtin_cpu_supports("avx2");
  return avx2;
}

// A transposition of 4-byte elements: src rows contiguous along dimension
// `along_src` and dst rows along `along_dst` (the two dimensions swap).
// Copied in 8x8 blocks transposed in registers (the strided copy it
// replaces moved one element per load and store); bands of 8 rows of src
// (times the other dimensions) are split over the team.
void CopyTransposed32(const char* src, const Dims& ss, char* dst,
                      const Dims& ds, const Dims& dims, int along_src,
                      int along_dst) {
  Dims outer, outer_ss, outer_ds;
  for (int d = 0; d < static_cast<int>(dims.size()); ++d) {
    if (d == along_src || d == along_dst) continue;
    outer.push_back(dims[d]);
    outer_ss.push_back(ss[d]);
    outer_ds.push_back(ds[d]);
  }
  // src[b][a] -> dst[a][b]: a runs along src rows, b along dst rows.
  const int64_t n_a = dims[along_src], n_b = dims[along_dst];
  const int64_t src_row = ss[along_dst], dst_row = ds[along_src];
  const int64_t bands = (n_b + 7) / 8;
  const int64_t units = Product(outer, 0, outer.size()) * bands;
  ParallelRanges(units, std::max<int64_t>(1, kParallelBytes / (8 * n_a * 4)),
                 [&](int64_t begin, int64_t end) {
                   const float* from = reinterpret_cast<const float*>(src);
                   float* to = reinterpret_cast<float*>(dst);
                   for (int64_t unit = begin; unit < end; ++unit) {
                     const auto [so, dof] = OffsetsOf<2>(
                         unit / bands, outer, {&outer_ss, &outer_ds});
                     const int64_t b0 = unit % bands * 8;
                     const int64_t b1 = std::min(b0 + 8, n_b);
                     int64_t a0 = 0;
                     if (b1 - b0 == 8) {
                       for (; a0 + 8 <= n_a; a0 += 8) {
                         Transpose8x8(from + so + b0 * src_row + a0, src_row,
                                      to + dof + a0 * dst_row + b0, dst_row);
                       }
                     }
                     for (int64_t a = a0; a < n_a; ++a) {  // What blocks leave.
                       for (int64_t b = b0; b < b1; ++b) {
                         to[dof + a * dst_row + b] = from[so + b * src_row + a];
                       }
                     }
                   }
                 });
}

}  // namespace

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
  const int inner = static_cast<int>(dims.size()) - 1;
  // Floats contiguous along the inner dimension on one side and along
  // another one on the other: a transposition, copied in 8x8 blocks.
  if (element_size == 4 && (ss[inner] == 1) != (ds[inner] == 1) &&
      dims[inner] >= 8 && HasAvx2()) {
    const Dims& other = ss[inner] == 1 ? ds : ss;
    for (int d = 0; d < inner; ++d) {
      if (other[d] == 1 && dims[d] >= 8) {
        return ss[inner] == 1
                   ? CopyTransposed32(src, ss, dst, ds, dims, inner, d)
                   : CopyTransposed32(src, ss, dst, ds, dims, d, inner);
      }
    }
  }
  // Rows along the inner dimension, split over the team.
  const int64_t size = static_cast<int64_t>(element_size);
  const int64_t row_bytes = dims.back() * size;
  ParallelRanges(Product(dims, 0, dims.size() - 1),
                 std::max<int64_t>(1, kParallelBytes / row_bytes),
                 [&](int64_t begin, int64_t end) {
                   ForEachRowIn<2>(dims, {ss, ds}, begin, end,
                                   [&](const std::array<int64_t, 2>& offset) {
                                     CopyRun(src + offset[0] * size, ss.back(),
                                             dst + offset[1] * size, ds.back(),
                                             dims.back(), element_size);
                                   });
                 });
}

}  // namespace asyncrt::nn
