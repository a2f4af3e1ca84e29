// nn.batch_normalization and nn.relu on OneDnnTensors. A DenseNet's dense
// layer normalizes and rectifies the concatenation of every earlier
// layer's features (pre-activation) before its 1x1 convolution. Done on
// plain tensors, each concatenation reordered each of its channel-blocked
// parts to plain (DenseNet-121: ~570 reorders a call) and each 1x1
// convolution reordered its input back; here both compute over the layout
// their input comes in, so a dense block keeps the layout
// -nn-assign-layouts chose (and a relu that -nn-fuse-elementwise folded
// into the normalization, `activation = "relu"`, in the same pass). They are
// our loops, not oneDNN's primitives: oneDNN 2.6's inference batch
// normalization and eltwise relu on nChw16c took 1.9x and 2.6x the time of the
// plain kernels on DenseNet-121's tensors (one AVX-512 core). Inputs that are
// not OneDnnTensors, results asked for plain, and layouts not named here run
// the plain kernel.
#include <algorithm>
#include <optional>
#include <string>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_tensor.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kBatchNorm = "nn.batch_normalization";
constexpr absl::string_view kRelu = "nn.relu";

// Elements per part of the work split over the team.
constexpr int64_t kGrainElements = 16384;

float Relu(float x) { return x > 0 ? x : 0.0f; }  // The plain kernel's.

// How a 4-D layout orders the channels of x [N, C, H, W].
enum class ChannelOrder {
  kPlanes,   // abcd: each channel's H x W plane in turn.
  kLast,     // acdb (NHWC): the channels of each pixel in turn.
  kBlocked,  // aBcd16b / aBcd8b: planes of blocks of channels, the block's
             // channels of each pixel in turn; C padded to whole blocks.
};

struct ChannelLayout {
  ChannelOrder order;
  int64_t block = 1;
};

std::optional<ChannelLayout> ChannelLayoutOf(const dnnl::memory::desc& desc) {
  const std::string name = OneDnnLayoutName(desc);
  if (name == "abcd") return ChannelLayout{ChannelOrder::kPlanes};
  if (name == "acdb") return ChannelLayout{ChannelOrder::kLast};
  if (name == "aBcd16b") return ChannelLayout{ChannelOrder::kBlocked, 16};
  if (name == "aBcd8b") return ChannelLayout{ChannelOrder::kBlocked, 8};
  return std::nullopt;
}

// Rows of `row` elements in each part of the work split over the team.
int64_t RowsPerPart(int64_t row) {
  return std::max<int64_t>(1, kGrainElements / std::max<int64_t>(row, 1));
}

// x * s + t, rectified where `kRectify`.
template <bool kRectify>
float ScaleShift(float x, float s, float t) {
  const float y = x * s + t;
  return kRectify ? Relu(y) : y;
}

// y = x * s[c] + t[c] (rectified where `kRectify`) over runs of `Block`
// channels repeated `pixels` times (a blocked plane).
template <int Block, bool kRectify>
void ScaleShiftBlock(const float* x, float* y, int64_t pixels, const float* s,
                     const float* t) {
  for (int64_t p = 0; p < pixels; ++p) {
    for (int l = 0; l < Block; ++l) {
      y[p * Block + l] = ScaleShift<kRectify>(x[p * Block + l], s[l], t[l]);
    }
  }
}

// y = x * s[c] + t[c] (rectified where `kRectify`) over x [N, C, H, W] in
// `layout`; `s` and `t` hold the channels padded to whole blocks (zeros
// past C, so the padding stays zero). x may be y.
template <bool kRectify>
void ScaleShiftInLayout(const float* x, float* y,
                        absl::Span<const int64_t> dims,
                        const ChannelLayout& layout,
                        const std::vector<float>& s,
                        const std::vector<float>& t) {
  const int64_t n = dims[0], c = dims[1], hw = dims[2] * dims[3];
  switch (layout.order) {
    case ChannelOrder::kPlanes:
      ParallelRanges(n * c, RowsPerPart(hw), [&](int64_t begin, int64_t end) {
        for (int64_t plane = begin; plane < end; ++plane) {
          const float sc = s[plane % c], sh = t[plane % c];
          const float* in = x + plane * hw;
          float* out = y + plane * hw;
          for (int64_t i = 0; i < hw; ++i)
            out[i] = ScaleShift<kRectify>(in[i], sc, sh);
        }
      });
      return;
    case ChannelOrder::kLast:
      ParallelRanges(n * hw, RowsPerPart(c), [&](int64_t begin, int64_t end) {
        for (int64_t pixel = begin; pixel < end; ++pixel) {
          const float* in = x + pixel * c;
          float* out = y + pixel * c;
          for (int64_t k = 0; k < c; ++k)
            out[k] = ScaleShift<kRectify>(in[k], s[k], t[k]);
        }
      });
      return;
    case ChannelOrder::kBlocked: {
      const int64_t block = layout.block;
      const int64_t blocks = (c + block - 1) / block;
      const int64_t plane = hw * block;
      ParallelRanges(
          n * blocks, RowsPerPart(plane), [&](int64_t begin, int64_t end) {
            for (int64_t r = begin; r < end; ++r) {
              const int64_t first = (r % blocks) * block;
              if (block == 16) {
                ScaleShiftBlock<16, kRectify>(x + r * plane, y + r * plane, hw,
                                              &s[first], &t[first]);
              } else {
                ScaleShiftBlock<8, kRectify>(x + r * plane, y + r * plane, hw,
                                             &s[first], &t[first]);
              }
            }
          });
      return;
    }
  }
}

// The op's result in x's layout: its buffer (x's own, computed in place,
// when the op holds x's only reference), computed by `compute(x, y)`.
template <typename Compute>
void ComputeInLayout(OpInvocation& invocation, absl::string_view op,
                     const OneDnnTensor& x, Compute compute) {
  const OneDnnOperand src{x.desc(), x.buffer()->data()};
  RCReference<HostBuffer> buffer =
      OneDnnResultBuffer(invocation, op, x.desc(), /*sum_index=*/0, &src);
  if (!buffer) return;
  compute(static_cast<const float*>(src.data),
          static_cast<float*>(buffer->data()));
  SetResult(invocation, AsyncValueRef<DenseHostTensor>(), x.desc(),
            std::move(buffer));
}

// Whether argument 0 is a OneDnnTensor of f32 the op computes in its
// layout: one result, asked for in oneDNN's layout (a plain one would need
// a reorder either way: the plain kernel's).
const OneDnnTensor* InLayoutArgument(OpInvocation& invocation,
                                     absl::string_view op) {
  const Tensor& x = invocation.argument(0);
  if (x.tensor_type() != OneDnnTensor::Type() || x.dtype() != DType::kF32 ||
      invocation.result_metadata.size() != 1 || x.NumElements() == 0) {
    return nullptr;
  }
  absl::StatusOr<bool> onednn_result = WantsOneDnnResult(op, invocation.attrs);
  if (!onednn_result.ok() || !*onednn_result) return nullptr;
  return &static_cast<const OneDnnTensor&>(x);
}

void BatchNormOnOneDnnLayouts(OpInvocation& invocation) {
  const auto& wrapped = *static_cast<const WrappedImplementation*>(
      invocation.implementation_data);
  const OneDnnTensor* x = InLayoutArgument(invocation, kBatchNorm);
  std::optional<ChannelLayout> layout;
  if (x != nullptr && x->shape().GetRank() == 4 &&
      invocation.arguments.size() == 5) {
    layout = ChannelLayoutOf(x->desc());
  }
  for (size_t i = 1; layout && i < invocation.arguments.size(); ++i) {
    if (invocation.argument(i).tensor_type() != DenseHostTensorType() ||
        invocation.argument(i).dtype() != DType::kF32) {
      layout.reset();
    }
  }
  if (!layout) return RunWrapped(invocation, kBatchNorm, wrapped);
  // Per channel, once, as the plain kernel: y = x * s + t; zeros for a
  // block's padding.
  const auto dims = x->shape().GetDimensions();
  const int64_t padded =
      (dims[1] + layout->block - 1) / layout->block * layout->block;
  std::vector<float> s(padded, 0.0f), t(padded, 0.0f);
  BatchNormCoefficients(invocation, s, t);
  ComputeInLayout(invocation, kBatchNorm, *x, [&](const float* in, float* out) {
    if (invocation.attrs.GetString("activation").has_value()) {
      ScaleShiftInLayout<true>(in, out, dims, *layout, s, t);
    } else {
      ScaleShiftInLayout<false>(in, out, dims, *layout, s, t);
    }
  });
}

void ReluOnOneDnnLayouts(OpInvocation& invocation) {
  const auto& wrapped = *static_cast<const WrappedImplementation*>(
      invocation.implementation_data);
  const OneDnnTensor* x = InLayoutArgument(invocation, kRelu);
  if (x == nullptr) return RunWrapped(invocation, kRelu, wrapped);
  // Elementwise: the layout does not matter, and relu keeps a block's
  // zero padding zero.
  const int64_t count =
      static_cast<int64_t>(x->desc().get_size() / sizeof(float));
  ComputeInLayout(invocation, kRelu, *x, [&](const float* in, float* out) {
    ParallelRanges(count, kGrainElements, [&](int64_t begin, int64_t end) {
      for (int64_t i = begin; i < end; ++i) out[i] = Relu(in[i]);
    });
  });
}

}  // namespace

void RegisterOneDnnChannelwiseOps(OpRegistry& registry) {
  WrapCpuImplementation(registry, kBatchNorm, BatchNormOnOneDnnLayouts);
  WrapCpuImplementation(registry, kRelu, ReluOnOneDnnLayouts);
}

}  // namespace asyncrt::nn
