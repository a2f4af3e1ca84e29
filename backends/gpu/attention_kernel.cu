// nn.attention's kernel on CUDA cores (see cuda_kernels.h): for grouped
// heads and the shapes cuBLASLt's strided products do not take.
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "backends/gpu/cuda_device_util.cuh"
#include "backends/gpu/cuda_kernels.h"

namespace asyncrt::gpu {
namespace {

//===--- Attention --------------------------------------------------------===//

// Attention rows on CUDA cores: a block of kAttentionWarps warps takes
// kAttentionRows query rows of one head, each warp kAttentionRowsPerWarp of
// them at once (independent chains of arithmetic: the GPU has few warps to
// switch between at batch 1). Keys and values pass through shared memory in
// chunks (32 or 64 keys, one or two per lane); each row keeps
// FlashAttention's running max, sum and weighted values in registers, so
// the scores never reach memory. kMaxHead bounds the head sizes (64 or
// 128).
constexpr int kAttentionWarps = 4;
constexpr int kAttentionRowsPerWarp = 4;
constexpr int kAttentionRows = kAttentionWarps * kAttentionRowsPerWarp;

// Rows [first, first + kRows) of head `head` (of `size` elements) of x
// [batch, length, heads x size], times `scale`, as f32 in `tile`; zeros
// past `length`. Every thread of the block takes part.
template <int kRows, int kWidth, typename T>
__device__ void LoadHeadRows(float (*tile)[kWidth], const T* __restrict__ x,
                             int64_t batch, int64_t length, int64_t row_stride,
                             int head, int size, int64_t first, float scale) {
  for (int index = threadIdx.x; index < kRows * size; index += blockDim.x) {
    const int r = index / size, d = index % size;
    const int64_t row = first + r;
    tile[r][d] =
        row < length
            ? ToFloat(
                  x[(batch * length + row) * row_stride + head * size + d]) *
                  scale
            : 0.f;
  }
}

template <typename T, int kMaxHead>
__global__ void __launch_bounds__(kAttentionWarps * 32)
    AttentionKernel(const T* __restrict__ q, const T* __restrict__ k,
                    const T* __restrict__ v, T* __restrict__ y,
                    AttentionShape shape, float scale) {
  constexpr int kChunk = kMaxHead == 64 ? 64 : 32;
  constexpr int kKeysPerLane = kChunk / 32;
  constexpr int kOut = kMaxHead / 32;  // Output elements per lane and row.
  constexpr int kR = kAttentionRowsPerWarp;
  // +1: the lanes' key rows start in different banks.
  __shared__ float keys[kChunk][kMaxHead + 1];
  __shared__ float values[kChunk][kMaxHead];
  __shared__ float queries[kAttentionRows][kMaxHead];
  const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
  const int head = blockIdx.y;
  const int kv_head = head / (shape.q_heads / shape.kv_heads);
  const int64_t batch = blockIdx.z;
  const int64_t first_row = int64_t{blockIdx.x} * kAttentionRows;
  const int d_q = shape.head_size, d_v = shape.value_head_size;
  const int64_t q_stride = int64_t{shape.q_heads} * d_q;
  const int64_t k_stride = int64_t{shape.kv_heads} * d_q;
  const int64_t v_stride = int64_t{shape.kv_heads} * d_v;
  LoadHeadRows<kAttentionRows>(queries, q, batch, shape.q_length, q_stride,
                               head, d_q, first_row, scale);
  float running_max[kR], running_sum[kR], out[kR][kOut];
  for (int r = 0; r < kR; ++r) {
    running_max[r] = -INFINITY;
    running_sum[r] = 0.f;
    for (int c = 0; c < kOut; ++c) out[r][c] = 0.f;
  }
  const int row0 = warp * kR;
  for (int64_t start = 0; start < shape.kv_length; start += kChunk) {
    __syncthreads();  // The previous chunk is read.
    LoadHeadRows<kChunk>(keys, k, batch, shape.kv_length, k_stride, kv_head,
                         d_q, start, 1.f);
    LoadHeadRows<kChunk>(values, v, batch, shape.kv_length, v_stride, kv_head,
                         d_v, start, 1.f);
    __syncthreads();
    // Scores of this lane's keys for the warp's rows.
    float score[kR][kKeysPerLane] = {};
#pragma unroll 4
    for (int d = 0; d < d_q; ++d) {
      float query[kR];
      for (int r = 0; r < kR; ++r) query[r] = queries[row0 + r][d];
      for (int kk = 0; kk < kKeysPerLane; ++kk) {
        const float key = keys[lane + 32 * kk][d];
        for (int r = 0; r < kR; ++r) score[r][kk] += query[r] * key;
      }
    }
    // The running softmax: weights of this chunk, rescaled history.
    float weight[kR][kKeysPerLane];
    for (int r = 0; r < kR; ++r) {
      float chunk_max = -INFINITY;
      for (int kk = 0; kk < kKeysPerLane; ++kk) {
        if (start + lane + 32 * kk >= shape.kv_length) score[r][kk] = -INFINITY;
        chunk_max = fmaxf(chunk_max, score[r][kk]);
      }
      // Every chunk has a valid key (lane 0's), so the max is finite.
      const float new_max = fmaxf(running_max[r], WarpMax(chunk_max));
      float sum = 0.f;
      for (int kk = 0; kk < kKeysPerLane; ++kk) {
        weight[r][kk] = __expf(score[r][kk] - new_max);
        sum += weight[r][kk];
      }
      const float rescale = __expf(running_max[r] - new_max);
      running_sum[r] = running_sum[r] * rescale + WarpSum(sum);
      running_max[r] = new_max;
      for (int c = 0; c < kOut; ++c) out[r][c] *= rescale;
    }
    // Weighted values: key j's weight from the lane that holds it.
    for (int kk = 0; kk < kKeysPerLane; ++kk) {
#pragma unroll 4
      for (int j = 0; j < 32; ++j) {
        float p[kR];
        for (int r = 0; r < kR; ++r) {
          p[r] = __shfl_sync(0xffffffff, weight[r][kk], j);
        }
        for (int c = 0; c < kOut; ++c) {
          const float value = values[32 * kk + j][c * 32 + lane];
          for (int r = 0; r < kR; ++r) out[r][c] += p[r] * value;
        }
      }
    }
  }
  for (int r = 0; r < kR; ++r) {
    const int64_t i = first_row + row0 + r;
    if (i >= shape.q_length) continue;
    T* row =
        y + (batch * shape.q_length + i) * shape.q_heads * d_v + head * d_v;
    for (int c = 0; c < kOut; ++c) {
      const int d = c * 32 + lane;
      if (d < d_v) row[d] = FromFloat<T>(out[r][c] / running_sum[r]);
    }
  }
}

}  // namespace

cudaError_t LaunchAttention(GpuDType dtype, const void* q, const void* k,
                            const void* v, void* y, const AttentionShape& shape,
                            float scale, cudaStream_t stream) {
  if (shape.batch == 0 || shape.q_length == 0) return cudaSuccess;
  if (shape.head_size > kMaxAttentionHeadSize ||
      shape.value_head_size > kMaxAttentionHeadSize || shape.kv_length == 0 ||
      shape.batch > 65535 || shape.q_heads > 65535) {
    return cudaErrorInvalidValue;
  }
  const dim3 grid(static_cast<unsigned>((shape.q_length + kAttentionRows - 1) /
                                        kAttentionRows),
                  static_cast<unsigned>(shape.q_heads),
                  static_cast<unsigned>(shape.batch));
  const bool small = std::max(shape.head_size, shape.value_head_size) <= 64;
  return WithFloatType(dtype, [&](auto type) {
    using T = decltype(type);
    auto kernel = small ? AttentionKernel<T, 64>
                        : AttentionKernel<T, kMaxAttentionHeadSize>;
    kernel<<<grid, kAttentionWarps * 32, 0, stream>>>(
        static_cast<const T*>(q), static_cast<const T*>(k),
        static_cast<const T*>(v), static_cast<T*>(y), shape, scale);
    return cudaGetLastError();
  });
}

}  // namespace asyncrt::gpu
