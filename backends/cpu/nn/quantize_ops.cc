// Linear quantization (ONNX QuantizeLinear, DequantizeLinear and
// DynamicQuantizeLinear): 8-bit integers that stand for real numbers as
// scale * (q - zero_point).
//
//   nn.quantize_linear %x, %scale[, %zero_point] {axis}
//       q = saturate(round_half_even(x / scale) + zero_point), of the zero
//       point's dtype (u8 or i8; u8 without one).
//   nn.dequantize_linear %q, %scale[, %zero_point] {axis}
//       x = (q - zero_point) * scale, f32; q is u8, i8 or i32.
//   nn.dynamic_quantize_linear %x -> %q, %scale, %zero_point
//       u8 over [min(x, 0), max(x, 0)].
// A scale (and zero point) of one value applies to the whole tensor; one of
// n values, to each index of dimension `axis` (default 1), of size n.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kQuantize = "nn.quantize_linear";
constexpr absl::string_view kDequantize = "nn.dequantize_linear";
constexpr absl::string_view kDynamic = "nn.dynamic_quantize_linear";

const DenseHostTensor& Input(const OpInvocation& invocation, size_t i) {
  return static_cast<const DenseHostTensor&>(invocation.argument(i));
}

// How the scale and zero point apply: element i uses entry
// (i / inner) % channels.
struct Channels {
  int64_t channels = 1;
  int64_t inner = 1;
};

absl::StatusOr<Channels> PlanChannels(absl::string_view op,
                                      const TensorMetadata& x,
                                      const TensorMetadata& scale,
                                      const TensorMetadata* zero_point,
                                      const OpAttrs& attrs) {
  if (scale.dtype != DType::kF32) {
    return OpError(op, absl::StrCat("the scale is ", DTypeName(scale.dtype),
                                    "; it must be f32"));
  }
  if (zero_point != nullptr && zero_point->shape != scale.shape) {
    return OpError(op, absl::StrCat("the zero point's shape ",
                                    zero_point->shape.DebugString(),
                                    " is not the scale's, ",
                                    scale.shape.DebugString()));
  }
  Channels plan;
  const int64_t count = scale.shape.GetNumElements();
  if (scale.shape.GetRank() == 0 || (scale.shape.GetRank() == 1 && count == 1)) {
    return plan;  // Per tensor.
  }
  if (scale.shape.GetRank() != 1) {
    return OpError(op, absl::StrCat("the scale must have one value or one per "
                                    "channel, not shape ",
                                    scale.shape.DebugString()));
  }
  const int rank = x.shape.GetRank();
  absl::StatusOr<int> axis =
      NormalizeAxis(op, attrs.GetInteger("axis").value_or(1), rank);
  if (!axis.ok()) return axis.status();
  if (x.shape.GetDimensionSize(*axis) != count) {
    return OpError(op, absl::StrCat(count, " scales for dimension ", *axis,
                                    " of ", x.shape.DebugString()));
  }
  plan.channels = count;
  for (int d = *axis + 1; d < rank; ++d) plan.inner *= x.shape.GetDimensionSize(d);
  return plan;
}

// The quantized range of `dtype`.
template <typename Q>
float Saturate(float value) {
  return std::clamp(value, static_cast<float>(std::numeric_limits<Q>::min()),
                    static_cast<float>(std::numeric_limits<Q>::max()));
}

// x / scale rounded half to even (the default rounding mode's nearbyint).
float RoundHalfEven(float value) {
  return std::nearbyint(value);
}

//===--- nn.quantize_linear ------------------------------------------------===//

absl::Status QuantizeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                              absl::Span<TensorMetadata> results) {
  if ((args.size() != 2 && args.size() != 3) || results.size() != 1) {
    return OpError(kQuantize, "takes x, scale and an optional zero point");
  }
  if (args[0].dtype != DType::kF32 && args[0].dtype != DType::kI32) {
    return OpError(kQuantize, absl::StrCat("x is ", DTypeName(args[0].dtype),
                                           "; it must be f32 or i32"));
  }
  const DType to = args.size() == 3 ? args[2].dtype : DType::kUI8;
  if (to != DType::kUI8 && to != DType::kI8) {
    return OpError(kQuantize, absl::StrCat("the zero point is ", DTypeName(to),
                                           "; it must be u8 or i8"));
  }
  absl::StatusOr<Channels> plan = PlanChannels(
      kQuantize, args[0], args[1], args.size() == 3 ? &args[2] : nullptr,
      attrs);
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(to, args[0].shape);
  return absl::OkStatus();
}

template <typename X, typename Q>
void QuantizeAs(const DenseHostTensor& x, const Channels& plan,
                const float* scale, const Q* zero_point, Q* out) {
  const X* in = x.elements<X>().data();
  const int64_t n = x.NumElements();
  for (int64_t i = 0; i < n; ++i) {
    const int64_t c = (i / plan.inner) % plan.channels;
    const float zp = zero_point ? static_cast<float>(zero_point[c]) : 0.f;
    out[i] = static_cast<Q>(Saturate<Q>(
        RoundHalfEven(static_cast<float>(in[i]) / scale[c]) + zp));
  }
}

// What both ops read: x, the scale, the optional zero point, and how the
// scale applies; false after FailAll.
struct ScaledArguments {
  const DenseHostTensor* x;
  const DenseHostTensor* scale;
  const DenseHostTensor* zero_point;  // Null without one.
  Channels plan;
};

bool ReadScaledArguments(OpInvocation& invocation, absl::string_view op,
                         ScaledArguments* args) {
  args->x = &Input(invocation, 0);
  args->scale = &Input(invocation, 1);
  args->zero_point =
      invocation.arguments.size() == 3 ? &Input(invocation, 2) : nullptr;
  absl::StatusOr<Channels> plan = PlanChannels(
      op, args->x->metadata(), args->scale->metadata(),
      args->zero_point ? &args->zero_point->metadata() : nullptr,
      invocation.attrs);
  if (!plan.ok()) {
    FailAll(invocation, op, plan.status().message());
    return false;
  }
  args->plan = *plan;
  return true;
}

void Quantize(OpInvocation& invocation) {
  ScaledArguments args;
  if (!ReadScaledArguments(invocation, kQuantize, &args)) return;
  const DenseHostTensor& x = *args.x;
  const DenseHostTensor& scale = *args.scale;
  const DenseHostTensor* zero_point = args.zero_point;
  const Channels* plan = &args.plan;
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kQuantize, invocation.result_metadata[0]);
  if (!result) return;
  const float* scales = scale.elements<float>().data();
  auto run = [&](auto x_tag, auto q_tag) {
    using X = typename decltype(x_tag)::type;
    using Q = typename decltype(q_tag)::type;
    QuantizeAs<X, Q>(x, *plan, scales,
                     zero_point ? zero_point->elements<Q>().data() : nullptr,
                     static_cast<Q*>(result->data()));
  };
  auto with_x = [&](auto q_tag) {
    if (x.dtype() == DType::kI32) {
      run(TypeTag<int32_t>{}, q_tag);
    } else {
      run(TypeTag<float>{}, q_tag);
    }
  };
  if (result->dtype() == DType::kI8) {
    with_x(TypeTag<int8_t>{});
  } else {
    with_x(TypeTag<uint8_t>{});
  }
  invocation.results[0] = std::move(result);
}

//===--- nn.dequantize_linear ----------------------------------------------===//

absl::Status DequantizeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                                absl::Span<TensorMetadata> results) {
  if ((args.size() != 2 && args.size() != 3) || results.size() != 1) {
    return OpError(kDequantize, "takes x, scale and an optional zero point");
  }
  const DType dtype = args[0].dtype;
  if (dtype != DType::kUI8 && dtype != DType::kI8 && dtype != DType::kI32) {
    return OpError(kDequantize, absl::StrCat("x is ", DTypeName(dtype),
                                             "; it must be u8, i8 or i32"));
  }
  if (args.size() == 3 && args[2].dtype != dtype) {
    return OpError(kDequantize,
                   absl::StrCat("the zero point is ", DTypeName(args[2].dtype),
                                "; it must be x's dtype, ", DTypeName(dtype)));
  }
  absl::StatusOr<Channels> plan = PlanChannels(
      kDequantize, args[0], args[1], args.size() == 3 ? &args[2] : nullptr,
      attrs);
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(DType::kF32, args[0].shape);
  return absl::OkStatus();
}

void Dequantize(OpInvocation& invocation) {
  ScaledArguments args;
  if (!ReadScaledArguments(invocation, kDequantize, &args)) return;
  const DenseHostTensor& x = *args.x;
  const DenseHostTensor& scale = *args.scale;
  const DenseHostTensor* zero_point = args.zero_point;
  const Channels* plan = &args.plan;
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kDequantize, invocation.result_metadata[0]);
  if (!result) return;
  const float* scales = scale.elements<float>().data();
  float* out = static_cast<float*>(result->data());
  auto run = [&](auto tag) {
    using Q = typename decltype(tag)::type;
    const Q* in = x.elements<Q>().data();
    const Q* zp = zero_point ? zero_point->elements<Q>().data() : nullptr;
    for (int64_t i = 0, n = x.NumElements(); i < n; ++i) {
      const int64_t c = (i / plan->inner) % plan->channels;
      // In f32 as ONNX's reference does; i32 differences are exact in
      // int64 first.
      const int64_t q = static_cast<int64_t>(in[i]) - (zp ? zp[c] : 0);
      out[i] = static_cast<float>(q) * scales[c];
    }
  };
  switch (x.dtype()) {
    case DType::kI8:
      run(TypeTag<int8_t>{});
      break;
    case DType::kI32:
      run(TypeTag<int32_t>{});
      break;
    default:
      run(TypeTag<uint8_t>{});
  }
  invocation.results[0] = std::move(result);
}

//===--- nn.dynamic_quantize_linear ----------------------------------------===//

absl::Status DynamicMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  if (args.size() != 1 || results.size() != 3) {
    return OpError(kDynamic, "takes x and has 3 results");
  }
  if (args[0].dtype != DType::kF32) {
    return OpError(kDynamic, absl::StrCat("x is ", DTypeName(args[0].dtype),
                                          "; it must be f32"));
  }
  results[0] = TensorMetadata(DType::kUI8, args[0].shape);
  results[1] = TensorMetadata(DType::kF32, TensorShape(absl::Span<const int64_t>()));
  results[2] = TensorMetadata(DType::kUI8, TensorShape(absl::Span<const int64_t>()));
  return absl::OkStatus();
}

void DynamicQuantize(OpInvocation& invocation) {
  const DenseHostTensor& x = Input(invocation, 0);
  AsyncValueRef<DenseHostTensor> q =
      AllocateResult(invocation, kDynamic, invocation.result_metadata[0]);
  AsyncValueRef<DenseHostTensor> scale =
      q ? AllocateResult(invocation, kDynamic, invocation.result_metadata[1])
        : AsyncValueRef<DenseHostTensor>();
  AsyncValueRef<DenseHostTensor> zero_point =
      scale ? AllocateResult(invocation, kDynamic, invocation.result_metadata[2])
            : AsyncValueRef<DenseHostTensor>();
  if (!zero_point) return;
  auto in = x.elements<float>();
  // The range always holds 0, so that 0 is exact. As ONNX's reference
  // computes it, in f32: an empty range (all zeros) has scale 1/255.
  float low = 0.f, high = 0.f;
  for (float value : in) {
    low = std::min(low, value);
    high = std::max(high, value);
  }
  const float step = (high == low ? 1.f : high - low) / 255.f;
  const float zp = RoundHalfEven(Saturate<uint8_t>(0.f - low / step));
  uint8_t* out = static_cast<uint8_t*>(q->data());
  for (size_t i = 0; i < in.size(); ++i) {
    out[i] = static_cast<uint8_t>(
        Saturate<uint8_t>(RoundHalfEven(in[i] / step) + zp));
  }
  *static_cast<float*>(scale->data()) = step;
  *static_cast<uint8_t*>(zero_point->data()) = static_cast<uint8_t>(zp);
  invocation.results[0] = std::move(q);
  invocation.results[1] = std::move(scale);
  invocation.results[2] = std::move(zero_point);
}

}  // namespace

void RegisterQuantizeOps(OpRegistry& registry) {
  registry.AddOp("nn.quantize_linear", QuantizeMetadata);
  registry.AddDispatch("nn.quantize_linear", "cpu", Quantize);
  registry.AddOp("nn.dequantize_linear", DequantizeMetadata);
  registry.AddDispatch("nn.dequantize_linear", "cpu", Dequantize);
  registry.AddOp("nn.dynamic_quantize_linear", DynamicMetadata);
  registry.AddDispatch("nn.dynamic_quantize_linear", "cpu", DynamicQuantize);
}

}  // namespace asyncrt::nn
