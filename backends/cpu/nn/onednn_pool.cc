// The pooling ops on oneDNN: nn.max_pool, nn.average_pool and
// nn.global_average_pool (see nn_ops.h). They read their input in the
// layout it comes in (plain or a OneDnnTensor's) and give their result in
// that layout family or plain, as `result_layout` asks.
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_tensor.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {
namespace {

using dnnl::memory;

enum class PoolKind { kMax, kAverage, kGlobalAverage };

absl::StatusOr<Window> PlanPool(absl::string_view op, PoolKind kind,
                                const TensorShape& x, const OpAttrs& attrs) {
  if (absl::Status status = CheckSpatialInput(op, x); !status.ok()) {
    return status;
  }
  const auto spatial = x.GetDimensions().subspan(2);
  if (kind == PoolKind::kGlobalAverage) {
    return MakeWindow(op, OpAttrs(), spatial,
                      Dims(spatial.begin(), spatial.end()));
  }
  auto kernel = attrs.GetIntegerArray("kernel_shape");
  if (!kernel || kernel->size() != spatial.size()) {
    return OpError(op,
                   "needs kernel_shape with one value per spatial dimension");
  }
  absl::StatusOr<Window> window =
      MakeWindow(op, attrs, spatial, Dims(kernel->begin(), kernel->end()));
  if (!window.ok() || attrs.GetInteger("ceil_mode").value_or(0) == 0) {
    return window;
  }
  // ceil_mode rounds the output size up: one more window where the last
  // stride leaves input uncovered, unless that window would start in the
  // end padding (ONNX's and PyTorch's rule). It becomes extra end padding,
  // which max pooling and averages that exclude padding ignore; an average
  // counting padding would count it too, where PyTorch counts only the
  // explicit pads, so that case is an error rather than a different result.
  const bool counts_padding =
      kind == PoolKind::kAverage &&
      attrs.GetInteger("count_include_pad").value_or(0) != 0;
  const size_t first = window->output.size() - spatial.size();  // 1-D as 2-D
  for (size_t i = first; i < window->output.size(); ++i) {
    const int64_t in = spatial[i - first], s = window->strides[i];
    const int64_t extent =
        (window->kernel[i] - 1) * (window->dilations[i] + 1) + 1;
    const int64_t span =
        in + window->pad_begin[i] + window->pad_end[i] - extent;
    int64_t out = (span + s - 1) / s + 1;
    if ((out - 1) * s >= in + window->pad_begin[i]) --out;
    const int64_t extra = (out - 1) * s + extent -
                          (in + window->pad_begin[i] + window->pad_end[i]);
    if (extra <= 0) continue;
    if (counts_padding) {
      return OpError(op,
                     "ceil_mode = 1 with count_include_pad = 1 is not "
                     "supported where the last window passes the padding");
    }
    window->pad_end[i] += extra;
    window->output[i] = out;
  }
  return window;
}

absl::string_view PoolName(PoolKind kind) {
  switch (kind) {
    case PoolKind::kMax:
      return "nn.max_pool";
    case PoolKind::kAverage:
      return "nn.average_pool";
    case PoolKind::kGlobalAverage:
      return "nn.global_average_pool";
  }
  return "";
}

template <PoolKind kKind>
absl::Status PoolMetadataChannelsFirst(ArgumentMetadata args,
                                       const OpAttrs& attrs,
                                       absl::Span<TensorMetadata> results) {
  const absl::string_view op = PoolName(kKind);
  if (args.size() != 1 || results.size() != 1) {
    return OpError(op, "takes 1 argument and has 1 result");
  }
  if (absl::Status status = RequireFloat(op, args); !status.ok()) {
    return status;
  }
  absl::StatusOr<Window> window = PlanPool(op, kKind, args[0].shape, attrs);
  if (!window.ok()) return window.status();
  if (auto layout = WantsOneDnnResult(op, attrs); !layout.ok()) {
    return layout.status();
  }
  Dims dims = {args[0].shape.GetDimensionSize(0),
               args[0].shape.GetDimensionSize(1)};
  const size_t skip = args[0].shape.GetRank() == 3 ? 1 : 0;
  for (size_t i = skip; i < window->output.size(); ++i) {
    dims.push_back(window->output[i]);
  }
  results[0] = TensorMetadata(args[0].dtype, dims);
  return absl::OkStatus();
}

template <PoolKind kKind>
absl::Status PoolMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                          absl::Span<TensorMetadata> results) {
  return ChannelsLastOrFirstMetadata(PoolName(kKind), args, attrs, results,
                                     PoolMetadataChannelsFirst<kKind>);
}

// A pooling's primitives for one configuration.
struct PoolPrimitives {
  dnnl::pooling_v2_forward::primitive_desc pd;
  dnnl::pooling_v2_forward primitive;
  memory::desc dst_md;  // pd's, queried once.
  // From dst_md to the plain layout, when they differ.
  std::optional<dnnl::reorder> to_plain;
};

ConfigCache<PoolPrimitives>& PoolCache() {
  static auto* cache = new ConfigCache<PoolPrimitives>(1024);
  return *cache;
}

// What a program's pooling site keeps (OpSiteCache): the primitives made
// for the input layout and dimensions of its first call, which later calls
// with that input take without the plan, the key and its lookup.
struct PreparedPool {
  memory::desc x_desc;
  bool onednn_result = false;
  std::shared_ptr<const PoolPrimitives> pool;
};

// The tag of PreparedPool entries in an OpSiteCache.
constexpr char kPoolSiteTag = 0;

// The primitives of a pooling of `src` in `kKind`'s algorithm, made once per
// configuration; null after FailAll.
template <PoolKind kKind>
std::shared_ptr<const PoolPrimitives> MakePool(OpInvocation& invocation,
                                               const OneDnnOperand& src,
                                               const memory::dims& out_dims) {
  const absl::string_view op = PoolName(kKind);
  const Tensor& x = invocation.argument(0);
  Window window = *PlanPool(op, kKind, x.shape(), invocation.attrs);
  const memory::dims x_dims = Spatial2d(x.shape().GetDimensions());
  // ONNX AveragePool excludes padding from the average unless
  // count_include_pad = 1.
  const dnnl::algorithm algorithm =
      kKind == PoolKind::kMax ? dnnl::algorithm::pooling_max
      : invocation.attrs.GetInteger("count_include_pad").value_or(0) != 0
          ? dnnl::algorithm::pooling_avg_include_padding
          : dnnl::algorithm::pooling_avg_exclude_padding;
  // The result in the input's layout family (oneDNN picks it from the
  // source), then reordered if a plain one was asked for. Made once per
  // configuration (the source's layout included).
  const std::string layout = OneDnnLayoutName(src.desc);
  const std::string key = absl::StrCat(
      static_cast<int>(algorithm), "|", DimsKey(x_dims), "|", layout, "|",
      DimsKey(out_dims), "|", DimsKey(window.strides), "|",
      DimsKey(window.kernel), "|", DimsKey(window.dilations), "|",
      DimsKey(window.pad_begin), "|", DimsKey(window.pad_end));
  auto make = [&] {
    PoolPrimitives made;
    made.pd = dnnl::pooling_v2_forward::primitive_desc(
        dnnl::pooling_v2_forward::desc(
            dnnl::prop_kind::forward_inference, algorithm, src.desc,
            memory::desc(out_dims, memory::data_type::f32,
                         memory::format_tag::any),
            window.strides, window.kernel, window.dilations, window.pad_begin,
            window.pad_end),
        PrimitiveAttr(), CpuEngine());
    made.primitive = dnnl::pooling_v2_forward(made.pd);
    made.dst_md = made.pd.dst_desc();
    made.to_plain = ReorderIfNeeded(made.dst_md, PlainF32(out_dims));
    return made;
  };
  // An opaque source layout, which the key does not tell apart, is made
  // afresh.
  return layout == "opaque" ? std::make_shared<const PoolPrimitives>(make())
                            : PoolCache().GetOrCreate(key, make);
}

template <PoolKind kKind>
void Pool(OpInvocation& invocation) {
  if (RefuseHalf(invocation, PoolName(kKind)) ||
      CpuRefusesChannelsLast(invocation, PoolName(kKind))) {
    return;
  }
  const absl::string_view op = PoolName(kKind);
  const Tensor& x = invocation.argument(0);
  const memory::dims x_dims = Spatial2d(x.shape().GetDimensions());
  const memory::dims out_dims =
      Spatial2d(invocation.result_metadata[0].shape.GetDimensions());
  absl::StatusOr<OneDnnOperand> src = GetOneDnnOperand(op, x, x_dims);
  if (!src.ok()) return FailAll(invocation, op, src.status().message());
  try {
    const PreparedPool* site =
        invocation.site_cache != nullptr
            ? invocation.site_cache->Find<PreparedPool>(&kPoolSiteTag)
            : nullptr;
    if (site != nullptr && !(site->x_desc == src->desc)) site = nullptr;
    std::shared_ptr<const PoolPrimitives> pool;
    bool onednn_result;
    if (site != nullptr) {
      pool = site->pool;
      onednn_result = site->onednn_result;
    } else {
      absl::StatusOr<bool> wants_onednn =
          WantsOneDnnResult(op, invocation.attrs);
      if (!wants_onednn.ok()) {
        return FailAll(invocation, op, wants_onednn.status().message());
      }
      onednn_result = *wants_onednn;
      pool = MakePool<kKind>(invocation, *src, out_dims);
      if (invocation.site_cache != nullptr && invocation.site_cache->empty() &&
          OneDnnLayoutName(src->desc) != "opaque") {
        invocation.site_cache->Set<PreparedPool>(
            &kPoolSiteTag, std::make_shared<const PreparedPool>(
                               PreparedPool{src->desc, onednn_result, pool}));
      }
    }
    AsyncValueRef<DenseHostTensor> plain_result;
    if (!onednn_result ||
        invocation.result_metadata[0].shape.GetNumElements() == 0) {
      plain_result = PrimitiveResult(invocation, op);
      if (!plain_result) return;
    }
    std::vector<PrimitiveStep> steps;
    RCReference<HostBuffer> onednn_buffer;
    if (plain_result) {
      memory out = Wrap(PlainF32(out_dims), plain_result->data());
      memory dst = pool->to_plain ? memory(pool->dst_md, CpuEngine()) : out;
      steps.push_back(
          {pool->primitive,
           {{DNNL_ARG_SRC, Wrap(src->desc, src->data)}, {DNNL_ARG_DST, dst}}});
      if (pool->to_plain) {
        steps.push_back(
            {*pool->to_plain, {{DNNL_ARG_FROM, dst}, {DNNL_ARG_TO, out}}});
      }
    } else {
      onednn_buffer = OneDnnResultBuffer(invocation, op, pool->dst_md, -1);
      if (!onednn_buffer) return;
      steps.push_back(
          {pool->primitive,
           {{DNNL_ARG_SRC, Wrap(src->desc, src->data)},
            {DNNL_ARG_DST, Wrap(pool->dst_md, onednn_buffer->data())}}});
    }
    ExecutePrimitives(steps);
    SetResult(invocation, std::move(plain_result), pool->dst_md,
              std::move(onednn_buffer));
  } catch (const dnnl::error& error) {
    FailAll(invocation, op, absl::StrCat("oneDNN: ", error.what()));
  }
}

}  // namespace

void RegisterPoolOps(OpRegistry& registry) {
  registry.AddOp("nn.max_pool", PoolMetadata<PoolKind::kMax>);
  registry.AddDispatch("nn.max_pool", "cpu", Pool<PoolKind::kMax>,
                       kOpAcceptsRegisteredHost);
  registry.AddOp("nn.average_pool", PoolMetadata<PoolKind::kAverage>);
  registry.AddDispatch("nn.average_pool", "cpu", Pool<PoolKind::kAverage>,
                       kOpAcceptsRegisteredHost);
  registry.AddOp("nn.global_average_pool",
                 PoolMetadata<PoolKind::kGlobalAverage>);
  registry.AddDispatch("nn.global_average_pool", "cpu",
                       Pool<PoolKind::kGlobalAverage>,
                       kOpAcceptsRegisteredHost);
}

}  // namespace asyncrt::nn
