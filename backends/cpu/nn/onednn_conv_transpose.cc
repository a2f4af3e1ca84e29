// nn.conv_transpose on oneDNN's deconvolution (see nn_ops.h). Operands
// and result in plain layouts; oneDNN's primitive cache makes a repeated
// configuration cheap.
#include <algorithm>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {
namespace {

using dnnl::memory;

// nn.conv_transpose(x, w[, bias]): ONNX ConvTranspose (1-D, 2-D, 3-D). w is
// C x M/group x kernel...; attributes strides, dilations, pads,
// output_padding, output_shape, auto_pad, group, kernel_shape.
struct ConvTransposePlan {
  int64_t group;
  Dims result;
  // oneDNN's window, 1-D raised to 2-D: dilations as oneDNN counts them
  // (ONNX's - 1); padding_r already less the output padding.
  memory::dims strides, dilations, pad_l, pad_r;
};

absl::StatusOr<ConvTransposePlan> PlanConvTranspose(ArgumentMetadata args,
                                                    const OpAttrs& attrs) {
  constexpr absl::string_view kOp = "nn.conv_transpose";
  if (args.size() < 2 || args.size() > 3) {
    return OpError(kOp, "takes x, w and an optional bias");
  }
  if (absl::Status status = CheckConvOperands(kOp, args); !status.ok()) {
    return status;
  }
  const TensorShape& x = args[0].shape;
  const TensorShape& w = args[1].shape;
  const int64_t group = attrs.GetInteger("group").value_or(1);
  const int64_t channels = x.GetDimensionSize(1);
  if (group < 1 || channels % group != 0 ||
      w.GetDimensionSize(0) != channels) {
    return OpError(kOp, absl::StrCat("input channels ", channels, ", weights ",
                                     w.DebugString(), " and group ", group,
                                     " do not agree"));
  }
  const int64_t filters = w.GetDimensionSize(1) * group;
  if (args.size() == 3 && (args[2].shape.GetRank() != 1 ||
                           args[2].shape.GetDimensionSize(0) != filters)) {
    return OpError(kOp, absl::StrCat("bias ", args[2].shape.DebugString(),
                                     " is not [", filters, "]"));
  }
  const size_t rank = x.GetRank() - 2;
  Dims kernel(w.GetDimensions().begin() + 2, w.GetDimensions().end());
  if (auto shape = attrs.GetIntegerArray("kernel_shape");
      shape && Dims(shape->begin(), shape->end()) != kernel) {
    return OpError(kOp, "kernel_shape does not match the weights");
  }
  absl::StatusOr<Dims> strides = IntArray(kOp, attrs, "strides", rank, 1);
  absl::StatusOr<Dims> dilations = IntArray(kOp, attrs, "dilations", rank, 1);
  absl::StatusOr<Dims> pads = IntArray(kOp, attrs, "pads", 2 * rank, 0);
  absl::StatusOr<Dims> output_padding =
      IntArray(kOp, attrs, "output_padding", rank, 0);
  for (const auto* status : {&strides.status(), &dilations.status(),
                             &pads.status(), &output_padding.status()}) {
    if (!status->ok()) return *status;
  }
  std::optional<Dims> output_shape;
  if (auto shape = attrs.GetIntegerArray("output_shape")) {
    // Spatial dimensions only, or (older exporters) N, C and spatial.
    Dims given(shape->begin(), shape->end());
    if (given.size() == rank + 2) given.erase(given.begin(), given.begin() + 2);
    if (given.size() != rank) {
      return OpError(kOp, "'output_shape' needs one value per spatial "
                          "dimension");
    }
    output_shape = given;
  }
  const std::string auto_pad(attrs.GetString("auto_pad").value_or("NOTSET"));
  if (auto_pad != "NOTSET" && auto_pad != "VALID" && auto_pad != "SAME_UPPER" &&
      auto_pad != "SAME_LOWER") {
    return OpError(kOp, absl::StrCat("unknown auto_pad '", auto_pad, "'"));
  }
  ConvTransposePlan plan;
  plan.group = group;
  plan.result = {x.GetDimensionSize(0), filters};
  for (size_t i = 0; i < rank; ++i) {
    const int64_t in = x.GetDimensionSize(2 + i), k = kernel[i];
    const int64_t s = (*strides)[i], d = (*dilations)[i];
    const int64_t extra = (*output_padding)[i];
    if (k < 1 || s < 1 || d < 1) {
      return OpError(kOp, "kernel, strides and dilations must be positive");
    }
    if (extra < 0 || extra >= std::max(s, d)) {
      return OpError(kOp, "output_padding must be below the stride or the "
                          "dilation");
    }
    const int64_t full = s * (in - 1) + extra + (k - 1) * d + 1;
    int64_t begin = (*pads)[i], end = (*pads)[i + rank];
    if (begin < 0 || end < 0) return OpError(kOp, "pads must be >= 0");
    if (output_shape || auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
      const int64_t out = output_shape ? (*output_shape)[i] : in * s;
      // ONNX: SAME_UPPER puts the odd unit at the end, otherwise at the
      // beginning (halves rounded down: a negative total, an output larger
      // than the window covers, pads the end).
      const int64_t total = full - out;
      const int64_t half = total >= 0 ? total / 2 : -((1 - total) / 2);
      begin = auto_pad == "SAME_UPPER" ? half : total - half;
      end = total - begin;
      if (begin < 0) {
        return OpError(kOp, absl::StrCat("output size ", out,
                                         " is too large for the window (",
                                         full, ")"));
      }
    } else if (auto_pad == "VALID") {
      begin = end = 0;
    }
    const int64_t out = full - begin - end;
    if (out < 1) return OpError(kOp, "the padding leaves no output");
    plan.result.push_back(out);
    plan.strides.push_back(s);
    plan.dilations.push_back(d - 1);
    plan.pad_l.push_back(begin);
    plan.pad_r.push_back(end - extra);
  }
  if (rank == 1) {
    plan.strides.insert(plan.strides.begin(), 1);
    for (memory::dims* dims : {&plan.dilations, &plan.pad_l, &plan.pad_r}) {
      dims->insert(dims->begin(), 0);
    }
  }
  return plan;
}

// oneDNN's view of ONNX's weights, C x M/group x kernel... (plain): its
// (grouped) deconvolution weights with the input channels outermost, as
// oneDNN's iohw / giohw (and iodhw / giodhw) tags, for any spatial rank.
memory::desc ConvTransposeWeights(const memory::dims& onnx_dims,
                                  int64_t group) {
  memory::dims strides = RowMajorStrides(onnx_dims);
  // Output channels (M/group) before input channels (C), as oneDNN orders
  // them, keeping each one's stride.
  memory::dims dims = onnx_dims;
  std::swap(dims[0], dims[1]);
  std::swap(strides[0], strides[1]);
  if (group > 1) {
    // C = group x C/group: the group's stride is C/group input channels'.
    dims[1] /= group;
    strides.insert(strides.begin(), dims[1] * strides[1]);
    dims.insert(dims.begin(), group);
  }
  return memory::desc(dims, memory::data_type::f32, strides);
}

absl::Status ConvTransposeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                                   absl::Span<TensorMetadata> results) {
  if (results.size() != 1) return OpError("nn.conv_transpose", "has 1 result");
  absl::StatusOr<ConvTransposePlan> plan = PlanConvTranspose(args, attrs);
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(args[0].dtype, plan->result);
  return absl::OkStatus();
}

void ConvTranspose(OpInvocation& invocation) {
  if (RefuseHalf(invocation, "nn.conv_transpose")) return;
  constexpr absl::string_view kOp = "nn.conv_transpose";
  const size_t num_args = invocation.arguments.size();
  const TensorMetadata* arg_metadata[3] = {};
  for (size_t i = 0; i < num_args; ++i) {
    arg_metadata[i] = &invocation.argument(i).metadata();
  }
  ConvTransposePlan plan = *PlanConvTranspose(
      ArgumentMetadata(absl::MakeConstSpan(arg_metadata, num_args)),
      invocation.attrs);
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const auto& w = static_cast<const DenseHostTensor&>(invocation.argument(1));
  AsyncValueRef<DenseHostTensor> result = PrimitiveResult(invocation, kOp);
  if (!result) return;
  RunPrimitive(invocation, kOp, result.CopyRef(), [&] {
    const memory::dims x_dims = Spatial2d(x.shape().GetDimensions());
    const memory::dims out_dims = Spatial2d(plan.result);
    const memory::desc w_md =
        ConvTransposeWeights(Spatial2d(w.shape().GetDimensions()), plan.group);
    const memory::desc x_md = PlainF32(x_dims), out_md = PlainF32(out_dims);
    const bool has_bias = invocation.arguments.size() == 3;
    const memory::desc bias_md =
        has_bias ? PlainF32({plan.result[1]}) : memory::desc();
    dnnl::deconvolution_forward::primitive_desc pd(
        dnnl::deconvolution_forward::desc(
            dnnl::prop_kind::forward_inference,
            dnnl::algorithm::deconvolution_direct, x_md, w_md, bias_md, out_md,
            plan.strides, plan.dilations, plan.pad_l, plan.pad_r),
        PrimitiveAttr(), CpuEngine());
    PrimitiveArgs args = {{DNNL_ARG_SRC, Wrap(x_md, x.data())},
                          {DNNL_ARG_WEIGHTS, Wrap(w_md, w.data())},
                          {DNNL_ARG_DST, Wrap(out_md, result->data())}};
    if (has_bias) {
      args.emplace_back(DNNL_ARG_BIAS,
                        Wrap(bias_md, static_cast<const DenseHostTensor&>(
                                          invocation.argument(2))
                                          .data()));
    }
    return PrimitiveStep{dnnl::deconvolution_forward(pd), std::move(args)};
  });
}

}  // namespace

void RegisterConvTransposeOp(OpRegistry& registry) {
  registry.AddOp("nn.conv_transpose", ConvTransposeMetadata);
  registry.AddDispatch("nn.conv_transpose", "cpu", ConvTranspose);
}

}  // namespace asyncrt::nn
