// nn.mul on OneDnnTensors. A squeeze-and-excite block (EfficientNet,
// MobileNetV3) scales the channels of a depthwise convolution's result by
// a gate computed from it, x [N, C, H, W] * s [N or 1, C, 1, 1], and hands
// the product to a 1x1 convolution. Done on plain tensors, that splits the
// block's channel-blocked chain in three with reorders between; here it is
// oneDNN's binary primitive over x's layout (s broadcast over the spatial
// dimensions), so x, s and the product keep the layouts -nn-assign-layouts
// chose. Any other nn.mul that receives a OneDnnTensor (the compiler plans
// none) gets plain copies of it and runs the elementwise kernel.
#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_tensor.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {
namespace {

using dnnl::memory;

constexpr absl::string_view kMul = "nn.mul";

// Whether `scale` scales the channels of `x`: both 4-D, scale [N or 1, C,
// 1, 1] for x [N, C, H, W].
bool IsChannelScale(const TensorShape& x, const TensorShape& scale) {
  if (x.GetRank() != 4 || scale.GetRank() != 4) return false;
  return (scale.GetDimensionSize(0) == x.GetDimensionSize(0) ||
          scale.GetDimensionSize(0) == 1) &&
         scale.GetDimensionSize(1) == x.GetDimensionSize(1) &&
         scale.GetDimensionSize(2) == 1 && scale.GetDimensionSize(3) == 1;
}

memory::dims DimsOf(const Tensor& tensor) {
  auto dims = tensor.shape().GetDimensions();
  return memory::dims(dims.begin(), dims.end());
}

// oneDNN's description of a channel scale `scale_dims` in the layout
// family of `x` (oneDNN's binary primitive has JIT kernels only where src1
// is laid out like src0: a plain scale against a blocked x ran its
// reference code, 20-50x slower), or nullopt for layouts not named here.
std::optional<memory::desc> ScaleDescLike(const memory::desc& x,
                                          const memory::dims& scale_dims) {
  static constexpr std::pair<const char*, memory::format_tag> kTags[] = {
      {"abcd", memory::format_tag::abcd},
      {"acdb", memory::format_tag::acdb},
      {"aBcd16b", memory::format_tag::aBcd16b},
      {"aBcd8b", memory::format_tag::aBcd8b},
      {"aBcd4b", memory::format_tag::aBcd4b}};
  const std::string layout = OneDnnLayoutName(x);
  for (const auto& [name, tag] : kTags) {
    if (layout == name) {
      return memory::desc(scale_dims, memory::data_type::f32, tag);
    }
  }
  return std::nullopt;
}

// The scale's elements in `wanted` (one of ScaleDescLike's layouts) from
// its plain values: the same bytes unless channel blocks pad it, then the
// padding is zeros. `storage` holds them when they are copied.
const void* ScaleInLayout(const memory::desc& wanted,
                          const memory::dims& scale_dims, const float* plain,
                          std::vector<float>& storage) {
  const size_t count = wanted.get_size() / sizeof(float);
  const int64_t batch = scale_dims[0], channels = scale_dims[1];
  if (count == static_cast<size_t>(batch * channels)) return plain;
  // [N, C, 1, 1] channel-blocked: each image's C values, padded to a whole
  // number of blocks.
  const int64_t padded = static_cast<int64_t>(count) / batch;
  storage.assign(count, 0.0f);
  for (int64_t n = 0; n < batch; ++n) {
    std::copy_n(plain + n * channels, channels, storage.data() + n * padded);
  }
  return storage.data();
}

// A channel scaling's primitives for one configuration.
struct ScalePrimitive {
  dnnl::primitive primitive;
  // Whether oneDNN has only its reference code for it (channel blocks of 8
  // under AVX-512, from grouped convolutions): many times slower than
  // reordering to plain and back.
  bool reference = false;
  // From the product's layout (x's) to the plain one, when they differ.
  std::optional<dnnl::reorder> to_plain;
};

// x * scale with oneDNN's binary primitive: the result in x's layout when
// `result_layout` asks for oneDNN's, else plain. False, with nothing done,
// where oneDNN has only its reference code for the layouts.
bool ScaleChannels(OpInvocation& invocation, int x_index) {
  const Tensor& x = invocation.argument(x_index);
  const Tensor& scale = invocation.argument(1 - x_index);
  const memory::dims x_dims = DimsOf(x), scale_dims = DimsOf(scale);
  absl::StatusOr<OneDnnOperand> src = GetOneDnnOperand(kMul, x, x_dims);
  absl::StatusOr<OneDnnOperand> factor =
      GetOneDnnOperand(kMul, scale, scale_dims);
  absl::StatusOr<bool> onednn_result =
      WantsOneDnnResult(kMul, invocation.attrs);
  for (const absl::Status* status :
       {&src.status(), &factor.status(), &onednn_result.status()}) {
    if (!status->ok()) {
      FailAll(invocation, kMul, status->message());
      return true;
    }
  }
  try {
    // The scale in x's layout family.
    std::vector<float> scale_storage;
    std::vector<RCReference<AsyncValue>> converted;
    if (std::optional<memory::desc> wanted =
            ScaleDescLike(src->desc, scale_dims);
        wanted && !(*wanted == factor->desc)) {
      const DenseHostTensor* plain_scale =
          PlainArgument(invocation, kMul, 1 - x_index, converted);
      if (plain_scale == nullptr) return true;
      const float* plain = plain_scale->elements<float>().data();
      factor = OneDnnOperand{
          *wanted, ScaleInLayout(*wanted, scale_dims, plain, scale_storage)};
    }
    // The product in x's layout (oneDNN's JIT kernels write no other), then
    // reordered if a plain result was asked for.
    const memory::desc& dst_md = src->desc;
    const std::string src_layout = OneDnnLayoutName(src->desc);
    const std::string factor_layout = OneDnnLayoutName(factor->desc);
    auto make = [&] {
      dnnl::binary::primitive_desc pd(
          dnnl::binary::desc(dnnl::algorithm::binary_mul, src->desc,
                             factor->desc, dst_md),
          PrimitiveAttr(), CpuEngine());
      return ScalePrimitive{dnnl::binary(pd),
                            absl::StartsWith(pd.impl_info_str(), "ref"),
                            ReorderIfNeeded(dst_md, PlainF32(x_dims))};
    };
    // Opaque layouts, which their names do not tell apart, are made afresh.
    static auto* cache = new ConfigCache<ScalePrimitive>(1024);
    std::shared_ptr<const ScalePrimitive> binary =
        src_layout == "opaque" || factor_layout == "opaque"
            ? std::make_shared<const ScalePrimitive>(make())
            : cache->GetOrCreate(
                  absl::StrCat(DimsKey(x_dims), "|", src_layout, "|",
                               DimsKey(scale_dims), "|", factor_layout),
                  make);
    if (binary->reference) return false;
    AsyncValueRef<DenseHostTensor> plain_result;
    RCReference<HostBuffer> onednn_buffer;
    std::vector<PrimitiveStep> steps;
    memory dst;
    if (*onednn_result && x.NumElements() > 0) {
      onednn_buffer = OneDnnResultBuffer(invocation, kMul, dst_md, -1);
      if (!onednn_buffer) return true;
      dst = Wrap(dst_md, onednn_buffer->data());
    } else {
      plain_result = PrimitiveResult(invocation, kMul);
      if (!plain_result) return true;
      memory out = Wrap(PlainF32(x_dims), plain_result->data());
      if (binary->to_plain) {
        dst = memory(dst_md, CpuEngine());
        steps.push_back(
            {*binary->to_plain, {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, out}}});
      } else {
        dst = out;
      }
    }
    steps.insert(
        steps.begin(),
        PrimitiveStep{binary->primitive,
                      {{DNNL_ARG_SRC_0, Wrap(src->desc, src->data)},
                       {DNNL_ARG_SRC_1, Wrap(factor->desc, factor->data)},
                       {DNNL_ARG_DST, dst}}});
    ExecutePrimitives(steps);
    SetResult(invocation, std::move(plain_result), dst_md,
              std::move(onednn_buffer));
  } catch (const dnnl::error& error) {
    FailAll(invocation, kMul, absl::StrCat("oneDNN: ", error.what()));
  }
  return true;
}

void MulOnOneDnnLayouts(OpInvocation& invocation) {
  const auto& wrapped = *static_cast<const WrappedImplementation*>(
      invocation.implementation_data);
  const Tensor& a = invocation.argument(0);
  const Tensor& b = invocation.argument(1);
  const bool onednn = a.tensor_type() == OneDnnTensor::Type() ||
                      b.tensor_type() == OneDnnTensor::Type();
  if (onednn && a.dtype() == DType::kF32 && b.dtype() == DType::kF32) {
    if (IsChannelScale(a.shape(), b.shape()) && ScaleChannels(invocation, 0)) {
      return;
    }
    if (IsChannelScale(b.shape(), a.shape()) && ScaleChannels(invocation, 1)) {
      return;
    }
  }
  RunWrapped(invocation, kMul, wrapped);
}

}  // namespace

void RegisterOneDnnMul(OpRegistry& registry) {
  WrapCpuImplementation(registry, kMul, MulOnOneDnnLayouts);
}

}  // namespace asyncrt::nn
