// nn.attention in one kernel on tensor cores, FlashAttention-2's forward
// pass (Dao, 2023): a block of 1, 2 or 4 warps, each taking 16 query rows,
// computes their scores
// against a tile of 64 keys with mma.sync (f16 or bf16 in, f32 out), keeps
// each row's running max and sum in registers, turns its scores into
// weights in place (the scores' accumulator layout is the next product's
// operand layout) and adds weights times values to its output
// accumulators, rescaled when a row's max grows. The scores never leave
// registers; keys and values pass through shared memory once per block.
//
// Operands are read where they lie: rows of *_row elements, head h's
// columns h * head_size onwards (heads side by side, as nn.attention has
// them, or Q, K and V packed in one row).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cstdint>

#include "backends/gpu/cuda_kernels.h"

namespace asyncrt::gpu {
namespace {

constexpr int kFlashKeys = 64;  // Keys per tile.
constexpr int kPad = 8;  // Halves after each shared row: no bank conflicts.

// Two halves (or bfloat16s) of a register, as mma.sync takes them.
template <typename T>
__device__ __forceinline__ uint32_t Pack(float lo, float hi);
template <>
__device__ __forceinline__ uint32_t Pack<__half>(float lo, float hi) {
  __half2 h = __floats2half2_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}
template <>
__device__ __forceinline__ uint32_t Pack<__nv_bfloat16>(float lo, float hi) {
  __nv_bfloat162 h = __floats2bfloat162_rn(lo, hi);
  return *reinterpret_cast<uint32_t*>(&h);
}

// d += a b for one 16 x 8 tile: a 16 x 16 (row), b 16 x 8 (column).
template <typename T>
__device__ __forceinline__ void Mma(float (&d)[4], const uint32_t (&a)[4],
                                    uint32_t b0, uint32_t b1);
template <>
__device__ __forceinline__ void Mma<__half>(float (&d)[4],
                                            const uint32_t (&a)[4],
                                            uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}
template <>
__device__ __forceinline__ void Mma<__nv_bfloat16>(float (&d)[4],
                                                   const uint32_t (&a)[4],
                                                   uint32_t b0, uint32_t b1) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 "
      "{%0,%1,%2,%3}, {%4,%5,%6,%7}, {%8,%9}, {%0,%1,%2,%3};\n"
      : "+f"(d[0]), "+f"(d[1]), "+f"(d[2]), "+f"(d[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b0), "r"(b1));
#endif
}

// Four 8 x 8 matrices of 16-bit elements from shared memory: lane l gives
// the address of row l % 8 of matrix l / 8; `transpose` loads each
// transposed.
template <bool kTranspose>
__device__ __forceinline__ void LoadMatrices(uint32_t (&r)[4],
                                             const void* address) {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  const uint32_t shared =
      static_cast<uint32_t>(__cvta_generic_to_shared(address));
  if constexpr (kTranspose) {
    asm volatile(
        "ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0,%1,%2,%3}, "
        "[%4];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
        : "r"(shared));
  } else {
    asm volatile(
        "ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0,%1,%2,%3}, [%4];\n"
        : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
        : "r"(shared));
  }
#endif
}

// Rows [first, first + kRows) of one head (kHead elements from `x`, rows
// `row` elements apart) into `tile`, 16 bytes per access; zeros past
// `length`. Every thread of the block takes part.
template <int kRows, int kHead, typename T>
__device__ __forceinline__ void LoadTile(T (*tile)[kHead + kPad],
                                         const T* __restrict__ x, int64_t row,
                                         int64_t first, int64_t length) {
  constexpr int kChunks = kHead / 8;  // 16-byte pieces per row.
  for (int index = threadIdx.x; index < kRows * kChunks;
       index += blockDim.x) {
    const int r = index / kChunks, c = index % kChunks;
    uint4 value = make_uint4(0, 0, 0, 0);
    if (first + r < length) {
      value = *reinterpret_cast<const uint4*>(x + (first + r) * row + c * 8);
    }
    *reinterpret_cast<uint4*>(&tile[r][c * 8]) = value;
  }
}

// kWarps warps per block, 16 query rows each.
template <typename T, int kHead, int kWarps>
__global__ void __launch_bounds__(kWarps * 32)
    FlashAttentionKernel(const T* __restrict__ q, const T* __restrict__ k,
                         const T* __restrict__ v, T* __restrict__ y,
                         StridedAttentionShape shape, float scale_log2) {
  constexpr int kFlashRows = 16 * kWarps;
  __shared__ __align__(16) T queries[kFlashRows][kHead + kPad];
  __shared__ __align__(16) T keys[kFlashKeys][kHead + kPad];
  __shared__ __align__(16) T values[kFlashKeys][kHead + kPad];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int group = lane / 4, quad = lane % 4;  // mma's row and column parts.
  const int head = blockIdx.y;
  const int kv_head =
      head / static_cast<int>(shape.q_heads / shape.kv_heads);
  const int64_t batch = blockIdx.z;
  const int64_t first_row = int64_t{blockIdx.x} * kFlashRows;
  const T* q_head = q + batch * shape.q_length * shape.q_row + head * kHead;
  const T* k_head =
      k + batch * shape.kv_length * shape.k_row + kv_head * kHead;
  const T* v_head =
      v + batch * shape.kv_length * shape.v_row + kv_head * kHead;

  LoadTile<kFlashRows, kHead>(queries, q_head, shape.q_row, first_row,
                              shape.q_length);
  __syncthreads();
  // This warp's 16 query rows as mma's A operand, 16 columns per step.
  uint32_t query[kHead / 16][4];
  #pragma unroll
  for (int s = 0; s < kHead / 16; ++s) {
    LoadMatrices<false>(query[s], &queries[warp * 16 + lane % 8 +
                                           (lane / 8) % 2 * 8][s * 16 +
                                                               lane / 16 * 8]);
  }
  // Rows group and group + 8 of the warp's: running max (scaled, log2)
  // and sum of weights, and the output's columns 8j + 2 quad, + 1.
  float row_max[2] = {-INFINITY, -INFINITY};
  float row_sum[2] = {0.f, 0.f};
  float out[kHead / 8][4] = {};

  for (int64_t start = 0; start < shape.kv_length; start += kFlashKeys) {
    __syncthreads();  // The last tile is read.
    LoadTile<kFlashKeys, kHead>(keys, k_head, shape.k_row, start,
                                shape.kv_length);
    LoadTile<kFlashKeys, kHead>(values, v_head, shape.v_row, start,
                                shape.kv_length);
    __syncthreads();
    // scores[j]: keys 8j.. of the tile; K's rows are B's columns.
    float scores[kFlashKeys / 8][4] = {};
    #pragma unroll
    for (int s = 0; s < kHead / 16; ++s) {
      #pragma unroll
      for (int j = 0; j < kFlashKeys / 8; j += 2) {
        uint32_t b[4];  // b0, b1 of key tiles j and j + 1.
        LoadMatrices<false>(
            b, &keys[(j + lane / 16) * 8 + lane % 8][s * 16 + (lane / 8) % 2 * 8]);
        Mma<T>(scores[j], query[s], b[0], b[1]);
        Mma<T>(scores[j + 1], query[s], b[2], b[3]);
      }
    }
    // Scale, mask the keys past the end, and the rows' new maxima.
    float tile_max[2] = {-INFINITY, -INFINITY};
    #pragma unroll
    for (int j = 0; j < kFlashKeys / 8; ++j) {
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        const int64_t key = start + j * 8 + quad * 2 + e % 2;
        scores[j][e] =
            key < shape.kv_length ? scores[j][e] * scale_log2 : -INFINITY;
        tile_max[e / 2] = fmaxf(tile_max[e / 2], scores[j][e]);
      }
    }
    float rescale[2];
    #pragma unroll
    for (int r = 0; r < 2; ++r) {
      // The four lanes of a group hold the row's columns.
      tile_max[r] = fmaxf(tile_max[r],
                          __shfl_xor_sync(0xffffffff, tile_max[r], 1));
      tile_max[r] = fmaxf(tile_max[r],
                          __shfl_xor_sync(0xffffffff, tile_max[r], 2));
      const float new_max = fmaxf(row_max[r], tile_max[r]);
      // The first tile has key 0: every max is finite from then on.
      rescale[r] = exp2f(row_max[r] - new_max);
      row_max[r] = new_max;
      row_sum[r] *= rescale[r];
    }
    #pragma unroll
    for (int j = 0; j < kHead / 8; ++j) {
      #pragma unroll
      for (int e = 0; e < 4; ++e) out[j][e] *= rescale[e / 2];
    }
    #pragma unroll
    for (int j = 0; j < kFlashKeys / 8; ++j) {
      #pragma unroll
      for (int e = 0; e < 4; ++e) {
        scores[j][e] = exp2f(scores[j][e] - row_max[e / 2]);
        row_sum[e / 2] += scores[j][e];
      }
    }
    // out += weights values: the weights of keys 16s.. as A (the scores'
    // layout), V's rows read transposed as B.
    #pragma unroll
    for (int s = 0; s < kFlashKeys / 16; ++s) {
      const uint32_t weight[4] = {
          Pack<T>(scores[2 * s][0], scores[2 * s][1]),
          Pack<T>(scores[2 * s][2], scores[2 * s][3]),
          Pack<T>(scores[2 * s + 1][0], scores[2 * s + 1][1]),
          Pack<T>(scores[2 * s + 1][2], scores[2 * s + 1][3])};
      #pragma unroll
      for (int j = 0; j < kHead / 8; j += 2) {
        uint32_t b[4];  // b0, b1 of value columns 8j.. and 8(j + 1)...
        LoadMatrices<true>(
            b, &values[s * 16 + (lane / 8) % 2 * 8 + lane % 8]
                      [(j + lane / 16) * 8]);
        Mma<T>(out[j], weight, b[0], b[1]);
        Mma<T>(out[j + 1], weight, b[2], b[3]);
      }
    }
  }
  // Each row's sum over its four lanes, then the rows out.
  #pragma unroll
  for (int r = 0; r < 2; ++r) {
    row_sum[r] += __shfl_xor_sync(0xffffffff, row_sum[r], 1);
    row_sum[r] += __shfl_xor_sync(0xffffffff, row_sum[r], 2);
  }
  #pragma unroll
  for (int r = 0; r < 2; ++r) {
    const int64_t row = first_row + warp * 16 + group + r * 8;
    if (row >= shape.q_length) continue;
    const float inverse = 1.f / row_sum[r];
    T* y_row = y + (batch * shape.q_length + row) * shape.y_row + head * kHead;
    #pragma unroll
    for (int j = 0; j < kHead / 8; ++j) {
      const uint32_t pair = Pack<T>(out[j][2 * r] * inverse,
                                    out[j][2 * r + 1] * inverse);
      *reinterpret_cast<uint32_t*>(y_row + j * 8 + quad * 2) = pair;
    }
  }
}

template <typename T, int kHead, int kWarps>
cudaError_t Launch(const void* q, const void* k, const void* v, void* y,
                   const StridedAttentionShape& shape, float scale,
                   cudaStream_t stream) {
  constexpr int kRows = 16 * kWarps;
  const dim3 grid(
      static_cast<unsigned>((shape.q_length + kRows - 1) / kRows),
      static_cast<unsigned>(shape.q_heads),
      static_cast<unsigned>(shape.batch));
  // Scores in log2 units: exp2 is the unit's instruction.
  const float scale_log2 = scale * 1.4426950408889634f;
  FlashAttentionKernel<T, kHead, kWarps><<<grid, kWarps * 32, 0, stream>>>(
      static_cast<const T*>(q), static_cast<const T*>(k),
      static_cast<const T*>(v), static_cast<T*>(y), shape, scale_log2);
  return cudaGetLastError();
}

template <typename T, int kHead>
cudaError_t LaunchForWarps(const void* q, const void* k, const void* v,
                           void* y, const StridedAttentionShape& shape,
                           float scale, int warps, cudaStream_t stream) {
  // Heads of 128 with 4 warps would pass 48 KB of static shared memory.
  if constexpr (kHead <= 64) {
    if (warps >= 4) return Launch<T, kHead, 4>(q, k, v, y, shape, scale, stream);
  }
  if (warps >= 2) return Launch<T, kHead, 2>(q, k, v, y, shape, scale, stream);
  return Launch<T, kHead, 1>(q, k, v, y, shape, scale, stream);
}

template <typename T>
cudaError_t LaunchForHead(const void* q, const void* k, const void* v,
                          void* y, const StridedAttentionShape& shape,
                          float scale, int warps, cudaStream_t stream) {
  switch (shape.head_size) {
    case 32:
      return LaunchForWarps<T, 32>(q, k, v, y, shape, scale, warps, stream);
    case 64:
      return LaunchForWarps<T, 64>(q, k, v, y, shape, scale, warps, stream);
    case 128:
      return LaunchForWarps<T, 128>(q, k, v, y, shape, scale, warps, stream);
    default:
      return cudaErrorNotSupported;
  }
}

bool Aligned16(const void* pointer) {
  return reinterpret_cast<uintptr_t>(pointer) % 16 == 0;
}

}  // namespace

bool FlashAttentionTakes(GpuDType dtype, const void* q, const void* k,
                         const void* v, const void* y,
                         const StridedAttentionShape& shape) {
  const int64_t h = shape.head_size;
  return (dtype == GpuDType::kF16 || dtype == GpuDType::kBF16) &&
         (h == 32 || h == 64 || h == 128) && shape.value_head_size == h &&
         shape.batch > 0 &&
         shape.q_length > 0 && shape.kv_length > 0 && shape.kv_heads > 0 &&
         shape.q_heads % shape.kv_heads == 0 && shape.batch <= 65535 &&
         shape.q_heads <= 65535 && Aligned16(q) && Aligned16(k) &&
         Aligned16(v) && Aligned16(y) && shape.q_row % 8 == 0 &&
         shape.k_row % 8 == 0 && shape.v_row % 8 == 0 &&
         shape.y_row % 8 == 0;
}

cudaError_t LaunchFlashAttention(GpuDType dtype, const void* q, const void* k,
                                 const void* v, void* y,
                                 const StridedAttentionShape& shape, float scale,
                                 int warps, cudaStream_t stream) {
  if (!FlashAttentionTakes(dtype, q, k, v, y, shape)) {
    return cudaErrorNotSupported;
  }
  return dtype == GpuDType::kF16
             ? LaunchForHead<__half>(q, k, v, y, shape, scale, warps, stream)
             : LaunchForHead<__nv_bfloat16>(q, k, v, y, shape, scale, warps,
                                            stream);
}

}  // namespace asyncrt::gpu
