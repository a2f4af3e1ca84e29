// The CUDA plug-in's own device kernels (cuda_kernels.cu) and their host
// launchers: elementwise (unary, binary with numpy broadcasting, casts),
// strided copies (transpose, expand, slice), softmax, layer normalization
// and reductions. Matrix products are cuBLASLt's (cuda_ops.cc).
//
// Every launcher enqueues on `stream` and returns at once with the launch's
// error (cudaSuccess if the kernel was queued). Thread-safe.
#ifndef ASYNCRT_BACKENDS_GPU_CUDA_KERNELS_H_
#define ASYNCRT_BACKENDS_GPU_CUDA_KERNELS_H_

#include <cuda_runtime.h>

#include <cstdint>

namespace asyncrt::gpu {

// The element types the kernels take (the C API's AsyncRT_DType values).
enum class GpuDType : int {
  kBool = 1,
  kI8 = 2,
  kI32 = 4,
  kI64 = 5,
  kU8 = 6,
  kF16 = 7,
  kBF16 = 8,
  kF32 = 9,
  kF64 = 10,
};

constexpr int kMaxRank = 8;

enum class UnaryOp : int {
  kRelu,
  kSigmoid,
  kTanh,
  kGelu,  // Exact (erf) form.
  kExp,
  kLog,
  kSqrt,
  kNeg,
  kAbs,
  kErf,
  kIdentity,
  kLeakyRelu,  // alpha
  kClip,       // [alpha, beta]
  kHardSwish,
  kHardSigmoid,  // alpha, beta
  kElu,          // alpha
  kSoftplus,
  kReciprocal,
  kFloor,
  kCeil,
  kSin,
  kCos,
  kLinear,  // alpha * x + beta
  kSilu,    // x * sigmoid(x), the fused "swish" activation
};

enum class BinaryOp : int {
  kAdd,
  kSub,
  kMul,
  kDiv,
  kPow,
  kMax,
  kMin,
  // Integers only (i8, u8, i32, i64); kBitwiseNot reads a alone.
  kBitwiseAnd,
  kBitwiseOr,
  kBitwiseXor,
  kBitwiseNot,
};

enum class ReduceOp : int { kSum, kMean, kMax, kMin, kSumSquare, kL2 };

// An output of `rank` dimensions read from an input through strides (in
// elements; 0 broadcasts, negative steps back): element (i0, i1, ...) of
// the output is input[offset + sum(ik * strides[k])].
struct StridedView {
  int rank = 0;
  int64_t dims[kMaxRank] = {};
  int64_t strides[kMaxRank] = {};
  int64_t offset = 0;
};

// What a kernel that checks its operands on the device found wrong: a bad
// value it met (racing threads: one of theirs). Lives in pinned host
// memory mapped into the
// device (one per GPU, cuda_device.h); the host reads it once work after
// the kernel is done, and every completion of the device fails from then
// on (what a fault does, without breaking the CUDA context).
struct DeviceFault {
  int code = 0;  // kNoFault, kGatherIndexFault.
  int64_t value = 0;
  int64_t bound = 0;
};
constexpr int kNoFault = 0;
constexpr int kGatherIndexFault = 1;

// y [outer, count, inner] = data [outer, axis, inner] gathered along its
// middle dimension at `count` indices (`index_bytes` 4 or 8; negative ones
// count from the end); elements of 1, 2, 4 or 8 bytes. An index outside
// [-axis, axis) gives zeros and is recorded in `fault` (a device address).
cudaError_t LaunchGather(int element_bytes, const void* data, int index_bytes,
                         const void* indices, void* y, int64_t outer,
                         int64_t axis, int64_t count, int64_t inner,
                         DeviceFault* fault, cudaStream_t stream);

// For tests of how a device fault is reported: a kernel that writes to an
// address no allocation has (an illegal-address fault, sticky for the
// process's CUDA context).
cudaError_t LaunchFault(cudaStream_t stream);

// Floating dtypes (f32, f16, bf16) only.
cudaError_t LaunchUnary(UnaryOp op, GpuDType dtype, const void* x, void* y,
                        int64_t n, float alpha, float beta,
                        cudaStream_t stream);

// y = a op b over `a_view` and `b_view`, both with the output's dims;
// f32, f16, bf16, i32 and i64 (pow: floating only); the bitwise ops on i8,
// u8, i32 and i64.
cudaError_t LaunchBinary(BinaryOp op, GpuDType dtype, const void* a,
                         const StridedView& a_view, const void* b,
                         const StridedView& b_view, void* y, int64_t n,
                         cudaStream_t stream);

// Any of GpuDType to any other (through double; bool is x != 0).
cudaError_t LaunchCast(GpuDType from, GpuDType to, const void* x, void* y,
                       int64_t n, cudaStream_t stream);

// y (dense, view.dims) = x read through `view`; elements of 1, 2, 4 or 8
// bytes.
cudaError_t LaunchStridedCopy(int element_bytes, const void* x,
                              const StridedView& view, void* y, int64_t n,
                              cudaStream_t stream);

// Softmax (or log-softmax) of x viewed as [outer, axis, inner] along axis.
cudaError_t LaunchSoftmax(GpuDType dtype, const void* x, void* y, int64_t outer,
                          int64_t axis, int64_t inner, bool log,
                          cudaStream_t stream);

// Pooling of x [N, C, d0, d1, d2] (or, `channels_last`, [N, d0, d1, d2,
// C]) into y by windows with strides, dilations and padding before and
// after (1-D and 2-D: leading dimensions of 1); y's sizes may round up (a
// last window in the end padding). Averages count the window's inputs
// (kAverageExcludingPadding) or its positions within the padded input
// (kAverageIncludingPadding). f32, f16, bf16.
enum class PoolMode : int {
  kMax,
  kAverageExcludingPadding,
  kAverageIncludingPadding
};
struct PoolShape {
  int64_t n = 1, c = 1;
  int64_t in[3] = {1, 1, 1};
  int64_t out[3] = {1, 1, 1};
  int kernel[3] = {1, 1, 1};
  int stride[3] = {1, 1, 1};
  int dilation[3] = {1, 1, 1};
  int pad_begin[3] = {0, 0, 0};
  int pad_end[3] = {0, 0, 0};
  bool channels_last = false;
};
cudaError_t LaunchPool(PoolMode mode, GpuDType dtype, const void* x, void* y,
                       const PoolShape& shape, cudaStream_t stream);

// One axis of nn.resize (ONNX Resize), as the CPU op computes it: y
// [outer, out, inner] from x [outer, in, inner], each output index reading
// its taps (nearest: 1, linear: 2, cubic: 4, clamped to the edge; cubic
// with exclude_outside: taps outside weigh 0, the rest renormalized) at
// the source coordinate of the axis's transformation (scale: out / in
// unless given; resized_length: in * scale unrounded, or the size).
// Nearest copies elements of `element_bytes` (any dtype); linear and cubic
// read `from` and write `to` (f32, f16, bf16), blending in f32.
enum class ResizeMode : int { kNearest, kLinear, kCubic };
enum class ResizeTransform : int {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn
};
enum class ResizeRounding : int {
  kRoundPreferFloor,
  kRoundPreferCeil,
  kFloor,
  kCeil
};
struct ResizeAxis {
  ResizeMode mode = ResizeMode::kNearest;
  ResizeTransform transform = ResizeTransform::kHalfPixel;
  ResizeRounding rounding = ResizeRounding::kRoundPreferFloor;
  int64_t outer = 1, in = 1, out = 1, inner = 1;
  double scale = 1, resized_length = 1;
  float cubic_coeff_a = -0.75f;
  bool exclude_outside = false;
};
cudaError_t LaunchResizeAxis(const ResizeAxis& axis, GpuDType from,
                             const void* x, GpuDType to, void* y,
                             int element_bytes, cudaStream_t stream);

// A depthwise 2-D convolution (one filter per channel) in NHWC: x [N, H,
// W, C], w [C, kH, kW] (channels last's M x kH x kW x 1), y [N, outH,
// outW, C] = activation(conv + bias[c] + sum), bias and sum optional.
// x and y under 2^31 elements (cudaErrorInvalidValue otherwise).
struct DepthwiseShape {
  int64_t n, h, w, c, out_h, out_w;
  int kernel_h, kernel_w, stride_h, stride_w, dilation_h, dilation_w, pad_h,
      pad_w;
};
cudaError_t LaunchDepthwiseConvNhwc(GpuDType dtype, const void* x,
                                    const void* w, const void* bias,
                                    const void* sum, void* y,
                                    const DepthwiseShape& shape,
                                    UnaryOp activation, float alpha, float beta,
                                    cudaStream_t stream);

// y = activation(y + bias[c]) over y viewed as [outer, channels, inner]
// (bias: `channels` values, or null), in place.
cudaError_t LaunchBiasActivation(GpuDType dtype, void* y, const void* bias,
                                 int64_t channels, int64_t inner, int64_t n,
                                 UnaryOp activation, float alpha, float beta,
                                 cudaStream_t stream);

// Inference batch normalization of x viewed as [outer, channels, inner]:
// y = (x - mean[c]) * scale[c] / sqrt(var[c] + epsilon) + bias[c].
cudaError_t LaunchBatchNorm(GpuDType dtype, const void* x, const void* scale,
                            const void* bias, const void* mean, const void* var,
                            void* y, int64_t channels, int64_t inner, int64_t n,
                            float epsilon, cudaStream_t stream);

// Each of `rows` rows of `cols` normalized to mean 0 and variance 1, then
// y = normalized * scale + bias (scale and bias: `cols` values; bias may be
// null). mean and inv_std (f32, `rows` each) may be null.
cudaError_t LaunchLayerNorm(GpuDType dtype, const void* x, const void* scale,
                            const void* bias, void* y, void* mean,
                            void* inv_std, int64_t rows, int64_t cols,
                            float epsilon, cudaStream_t stream);

// Output element k (of `kept.rank` dims, dense) reduces the elements of x
// at kept offset + reduced offsets (`reduced` dims and strides).
cudaError_t LaunchReduce(ReduceOp op, GpuDType dtype, const void* x,
                         const StridedView& kept, const StridedView& reduced,
                         void* y, int64_t outputs, cudaStream_t stream);

// The shapes of nn.attention: Q [batch, q_length, q_heads x head_size],
// K [batch, kv_length, kv_heads x head_size], V [batch, kv_length,
// kv_heads x value_head_size]; query head h reads key and value head
// h / (q_heads / kv_heads).
struct AttentionShape {
  int64_t batch, q_length, kv_length;
  int q_heads, kv_heads, head_size, value_head_size;
};
// The largest head_size and value_head_size LaunchAttention takes.
inline constexpr int kMaxAttentionHeadSize = 128;

// y [batch, q_length, q_heads x value_head_size] = per head
// softmax(q k^T * scale) v, f32 inside, without the scores in memory.
cudaError_t LaunchAttention(GpuDType dtype, const void* q, const void* k,
                            const void* v, void* y, const AttentionShape& shape,
                            float scale, cudaStream_t stream);

// nn.attention's operands where they lie, as the paths that read them in
// place take them (our flash kernel, cuDNN's fused attention): rows of
// *_row elements, each sequence's rows consecutive, head h's head_size
// columns at h * head_size (value heads: value_head_size at h *
// value_head_size); the output's rows the same way.
struct StridedAttentionShape {
  int64_t batch = 0, q_length = 0, kv_length = 0;
  int64_t q_heads = 0, kv_heads = 0, head_size = 0, value_head_size = 0;
  int64_t q_row = 0, k_row = 0, v_row = 0, y_row = 0;
};

// Whether LaunchFlashAttention takes these operands: f16 or bf16, key and
// value heads of 32, 64 or 128 alike, query heads a multiple of key heads,
// 16-byte aligned pointers and rows.
bool FlashAttentionTakes(GpuDType dtype, const void* q, const void* k,
                         const void* v, const void* y,
                         const StridedAttentionShape& shape);

// y = per head softmax(q k^T * scale) v in one kernel on tensor cores (f32
// accumulation; FlashAttention-2's forward pass: the scores stay in
// registers), `warps` (1, 2 or 4; 2 at most for heads of 128) warps of 16
// query rows per block. cudaErrorNotSupported where FlashAttentionTakes
// says no.
cudaError_t LaunchFlashAttention(GpuDType dtype, const void* q, const void* k,
                                 const void* v, void* y,
                                 const StridedAttentionShape& shape,
                                 float scale, int warps, cudaStream_t stream);

}  // namespace asyncrt::gpu

#endif  // ASYNCRT_BACKENDS_GPU_CUDA_KERNELS_H_
