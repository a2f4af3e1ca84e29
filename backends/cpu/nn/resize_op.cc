// nn.resize: ONNX Resize (and Upsample) in "nearest" and "linear" modes,
// over any number of axes. Both modes are separable: the op resizes one
// axis at a time, each pass reading the previous one's output; a pass moves
// whole rows of the dimensions after its axis, so the inner loop is a
// vectorisable blend (linear) or copy (nearest) of contiguous elements.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/host_context/host_context.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kOp = "nn.resize";

enum class Mode { kNearest, kLinear };

// Where output index x of an axis reads in the input (ONNX's
// coordinate_transformation_mode), for an axis of `in` -> `out` elements
// at `scale` (out / in unless given).
enum class Transform {
  kHalfPixel,
  kPytorchHalfPixel,
  kAlignCorners,
  kAsymmetric,
  kTfHalfPixelForNn,
};

enum class Rounding { kRoundPreferFloor, kRoundPreferCeil, kFloor, kCeil };

struct ResizePlan {
  Mode mode;
  Transform transform;
  Rounding rounding;
  std::vector<float> scales;  // Per axis.
  // Per axis: in * scale, unrounded, when scales are given (ONNX's
  // align_corners and pytorch_half_pixel divide by it), else the size.
  std::vector<double> resized_lengths;
  Dims result;
};

absl::StatusOr<ResizePlan> PlanResize(ArgumentMetadata args,
                                      const OpAttrs& attrs) {
  if (args.size() != 1) return OpError(kOp, "takes 1 argument");
  const TensorShape& x = args[0].shape;
  const int rank = x.GetRank();
  ResizePlan plan;
  const std::string mode(attrs.GetString("mode").value_or("nearest"));
  if (mode == "nearest") {
    plan.mode = Mode::kNearest;
  } else if (mode == "linear" || mode == "bilinear") {
    plan.mode = Mode::kLinear;
    if (args[0].dtype != DType::kF32) {
      return OpError(kOp, absl::StrCat("linear mode needs f32, got ",
                                       DTypeName(args[0].dtype)));
    }
  } else {
    return OpError(kOp, absl::StrCat("mode '", mode, "' is not supported"));
  }
  const std::string transform(attrs.GetString("coordinate_transformation_mode")
                                  .value_or("half_pixel"));
  if (transform == "half_pixel") {
    plan.transform = Transform::kHalfPixel;
  } else if (transform == "pytorch_half_pixel") {
    plan.transform = Transform::kPytorchHalfPixel;
  } else if (transform == "align_corners") {
    plan.transform = Transform::kAlignCorners;
  } else if (transform == "asymmetric") {
    plan.transform = Transform::kAsymmetric;
  } else if (transform == "tf_half_pixel_for_nn") {
    plan.transform = Transform::kTfHalfPixelForNn;
  } else {
    return OpError(kOp, absl::StrCat("coordinate_transformation_mode '",
                                     transform, "' is not supported"));
  }
  const std::string rounding(
      attrs.GetString("nearest_mode").value_or("round_prefer_floor"));
  if (rounding == "round_prefer_floor") {
    plan.rounding = Rounding::kRoundPreferFloor;
  } else if (rounding == "round_prefer_ceil") {
    plan.rounding = Rounding::kRoundPreferCeil;
  } else if (rounding == "floor") {
    plan.rounding = Rounding::kFloor;
  } else if (rounding == "ceil") {
    plan.rounding = Rounding::kCeil;
  } else {
    return OpError(kOp, absl::StrCat("unknown nearest_mode '", rounding, "'"));
  }
  if (attrs.GetInteger("exclude_outside").value_or(0) != 0) {
    return OpError(kOp, "exclude_outside = 1 is not supported");
  }
  auto scales = attrs.GetArray<float>("scales");
  auto sizes = attrs.GetArray<int64_t>("sizes");
  if (scales && scales->empty()) scales.reset();
  if (sizes && sizes->empty()) sizes.reset();
  if (scales.has_value() == sizes.has_value()) {
    return OpError(kOp, "needs either 'scales' or 'sizes'");
  }
  if ((scales ? scales->size() : sizes->size()) != static_cast<size_t>(rank)) {
    return OpError(kOp, absl::StrCat("needs one scale or size per dimension "
                                     "of ",
                                     x.DebugString()));
  }
  for (int i = 0; i < rank; ++i) {
    const int64_t in = x.GetDimensionSize(i);
    if (scales) {
      const float scale = (*scales)[i];
      if (!(scale > 0)) return OpError(kOp, "scales must be positive");
      plan.scales.push_back(scale);
      plan.resized_lengths.push_back(static_cast<double>(in) * scale);
      plan.result.push_back(
          static_cast<int64_t>(std::floor(plan.resized_lengths.back())));
    } else {
      const int64_t out = (*sizes)[i];
      if (out < 0) return OpError(kOp, "sizes must be >= 0");
      plan.scales.push_back(in > 0 ? static_cast<float>(out) / in : 1.0f);
      plan.resized_lengths.push_back(static_cast<double>(out));
      plan.result.push_back(out);
    }
    if (plan.result.back() > 0 && in == 0) {
      return OpError(kOp, "cannot resize an empty dimension to a non-empty "
                          "one");
    }
  }
  return plan;
}

absl::Status ResizeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  if (results.size() != 1) return OpError(kOp, "has 1 result");
  absl::StatusOr<ResizePlan> plan = PlanResize(args, attrs);
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(args[0].dtype, plan->result);
  return absl::OkStatus();
}

// The input coordinate of output index `x` along an axis of `in` elements
// resized to `out` (unrounded: see ResizePlan::resized_lengths).
double SourceCoordinate(Transform transform, int64_t x, int64_t in, double out,
                        double scale) {
  switch (transform) {
    case Transform::kHalfPixel:
      return (x + 0.5) / scale - 0.5;
    case Transform::kPytorchHalfPixel:
      return out > 1 ? (x + 0.5) / scale - 0.5 : 0.0;
    case Transform::kAlignCorners:
      return out == 1 ? 0.0
                      : static_cast<double>(x) * (in - 1) / (out - 1);
    case Transform::kAsymmetric:
      return x / scale;
    case Transform::kTfHalfPixelForNn:
      return (x + 0.5) / scale;
  }
  return 0.0;
}

int64_t Round(Rounding rounding, double value) {
  switch (rounding) {
    case Rounding::kRoundPreferFloor:
      return value == std::floor(value) + 0.5
                 ? static_cast<int64_t>(std::floor(value))
                 : static_cast<int64_t>(std::round(value));
    case Rounding::kRoundPreferCeil:
      return value == std::floor(value) + 0.5
                 ? static_cast<int64_t>(std::ceil(value))
                 : static_cast<int64_t>(std::round(value));
    case Rounding::kFloor:
      return static_cast<int64_t>(std::floor(value));
    case Rounding::kCeil:
      return static_cast<int64_t>(std::ceil(value));
  }
  return 0;
}

// One axis: out[o][j][k] from in[o][i0(j)][k] and in[o][i1(j)][k] with
// weight w(j) on the second (nearest: w = 0).
void ResizeAxis(const ResizePlan& plan, const char* in, char* out,
                int64_t outer, int64_t in_size, int64_t out_size,
                int64_t inner_bytes, size_t element_size, double scale,
                double resized_length) {
  std::vector<int64_t> first(out_size), second(out_size);
  std::vector<float> weight(out_size, 0.0f);
  for (int64_t j = 0; j < out_size; ++j) {
    const double x =
        SourceCoordinate(plan.transform, j, in_size, resized_length, scale);
    if (plan.mode == Mode::kNearest) {
      first[j] = second[j] = std::clamp<int64_t>(Round(plan.rounding, x), 0,
                                                 in_size - 1);
    } else {
      const double base = std::floor(x);
      weight[j] = static_cast<float>(x - base);
      first[j] = std::clamp<int64_t>(static_cast<int64_t>(base), 0,
                                     in_size - 1);
      second[j] = std::clamp<int64_t>(static_cast<int64_t>(base) + 1, 0,
                                      in_size - 1);
    }
  }
  for (int64_t o = 0; o < outer; ++o) {
    const char* in_block = in + o * in_size * inner_bytes;
    char* out_block = out + o * out_size * inner_bytes;
    for (int64_t j = 0; j < out_size; ++j) {
      char* row = out_block + j * inner_bytes;
      const char* a = in_block + first[j] * inner_bytes;
      if (plan.mode == Mode::kNearest || weight[j] == 0.0f ||
          first[j] == second[j]) {
        std::memcpy(row, a, inner_bytes);
        continue;
      }
      const auto* fa = reinterpret_cast<const float*>(a);
      const auto* fb =
          reinterpret_cast<const float*>(in_block + second[j] * inner_bytes);
      auto* fo = reinterpret_cast<float*>(row);
      const float w = weight[j];
      const int64_t count = inner_bytes / static_cast<int64_t>(element_size);
      for (int64_t k = 0; k < count; ++k) fo[k] = fa[k] + w * (fb[k] - fa[k]);
    }
  }
}

void Resize(OpInvocation& invocation) {
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const TensorMetadata* metadata = &x.metadata();
  ResizePlan plan = *PlanResize(
      ArgumentMetadata(absl::MakeConstSpan(&metadata, 1)), invocation.attrs);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kOp, invocation.result_metadata[0]);
  if (!result) return;
  const size_t element_size = DTypeSize(x.dtype());
  const int rank = x.shape().GetRank();
  if (result->shape().GetNumElements() == 0) {
    invocation.results[0] = std::move(result);
    return;
  }
  // Each resized axis in turn, through scratch tensors; the last pass
  // writes the result. Axes that keep their size and scale 1 map every
  // index to itself in every mode and are skipped.
  std::vector<int> axes;
  for (int i = 0; i < rank; ++i) {
    if (plan.result[i] != x.shape().GetDimensionSize(i) ||
        plan.scales[i] != 1.0f) {
      axes.push_back(i);
    }
  }
  Dims current(x.shape().GetDimensions().begin(),
               x.shape().GetDimensions().end());
  std::vector<char> scratch[2];
  const char* source = static_cast<const char*>(x.data());
  if (axes.empty()) {
    std::memcpy(result->data(), source, x.DataSizeInBytes());
  }
  for (size_t step = 0; step < axes.size(); ++step) {
    const int axis = axes[step];
    int64_t outer = 1, inner = 1;
    for (int i = 0; i < axis; ++i) outer *= current[i];
    for (int i = axis + 1; i < rank; ++i) inner *= current[i];
    const int64_t in_size = current[axis], out_size = plan.result[axis];
    char* target;
    if (step + 1 == axes.size()) {
      target = static_cast<char*>(result->data());
    } else {
      std::vector<char>& buffer = scratch[step % 2];
      buffer.resize(outer * out_size * inner * element_size);
      target = buffer.data();
    }
    ResizeAxis(plan, source, target, outer, in_size, out_size,
               inner * static_cast<int64_t>(element_size), element_size,
               plan.scales[axis], plan.resized_lengths[axis]);
    current[axis] = out_size;
    source = target;
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterResizeOps(OpRegistry& registry) {
  registry.AddOp("nn.resize", ResizeMetadata);
  registry.AddDispatch("nn.resize", "cpu", Resize);
}

}  // namespace asyncrt::nn
