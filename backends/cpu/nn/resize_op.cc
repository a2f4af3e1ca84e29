// nn.resize: ONNX Resize (and Upsample) in "nearest", "linear" and "cubic"
// modes, over any number of axes. Every mode is separable: the op resizes
// one axis at a time, each pass reading the previous one's output; a pass
// moves whole rows of the dimensions after its axis, so the inner loop is
// a vectorisable blend (linear: 2 rows, cubic: 4) or copy (nearest) of
// contiguous elements.
#include <algorithm>
#include <array>
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

enum class Mode { kNearest, kLinear, kCubic };

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
  float cubic_coeff_a = -0.75f;  // Cubic: the kernel's A.
  bool exclude_outside = false;  // Cubic: taps outside the input weigh 0.
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
  } else if (mode == "linear" || mode == "bilinear" || mode == "cubic" ||
             mode == "bicubic") {
    const bool cubic = mode == "cubic" || mode == "bicubic";
    plan.mode = cubic ? Mode::kCubic : Mode::kLinear;
    // f16 and bf16 for devices that compute in them (the CPU widens them
    // to f32: half_precision.cc).
    if (args[0].dtype != DType::kF32 && args[0].dtype != DType::kF16 &&
        args[0].dtype != DType::kBF16) {
      return OpError(kOp, absl::StrCat(cubic ? "cubic" : "linear",
                                       " mode needs f32, f16 or bf16, got ",
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
  plan.exclude_outside = attrs.GetInteger("exclude_outside").value_or(0) != 0;
  if (plan.exclude_outside && plan.mode != Mode::kCubic) {
    return OpError(kOp, "exclude_outside = 1 is supported in cubic mode only");
  }
  plan.cubic_coeff_a = FloatAttr(attrs, "cubic_coeff_a", -0.75f);
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

// The cubic convolution kernel's weights (Keys, coefficient `a`) of the
// four taps floor(x) - 1 .. floor(x) + 2 at fraction `t` = x - floor(x),
// as ONNX's reference computes them.
std::array<double, 4> CubicWeights(double t, double a) {
  auto near = [a](double d) {  // |d| <= 1.
    return ((a + 2) * d - (a + 3)) * d * d + 1;
  };
  auto far = [a](double d) {  // 1 < |d| < 2.
    return ((a * d - 5 * a) * d + 8 * a) * d - 4 * a;
  };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

// One axis: out[o][j][k] = the sum over taps t of weight[j][t] *
// in[o][index[j][t]][k] (nearest: one tap; linear: two, as a blend;
// cubic: four). Taps past the input's edge read the edge, or weigh
// nothing with exclude_outside (the others renormalized).
void ResizeAxis(const ResizePlan& plan, const char* in, char* out,
                int64_t outer, int64_t in_size, int64_t out_size,
                int64_t inner_bytes, size_t element_size, double scale,
                double resized_length) {
  constexpr int kMaxTaps = 4;
  std::vector<std::array<int64_t, kMaxTaps>> index(out_size);
  std::vector<std::array<float, kMaxTaps>> weight(out_size);
  for (int64_t j = 0; j < out_size; ++j) {
    const double x =
        SourceCoordinate(plan.transform, j, in_size, resized_length, scale);
    if (plan.mode == Mode::kNearest) {
      index[j][0] =
          std::clamp<int64_t>(Round(plan.rounding, x), 0, in_size - 1);
      weight[j][0] = 1.0f;
      continue;
    }
    const double base = std::floor(x);
    const int64_t first = static_cast<int64_t>(base);
    if (plan.mode == Mode::kLinear) {
      index[j] = {std::clamp<int64_t>(first, 0, in_size - 1),
                  std::clamp<int64_t>(first + 1, 0, in_size - 1)};
      weight[j][1] = static_cast<float>(x - base);
      continue;
    }
    const std::array<double, 4> w = CubicWeights(x - base, plan.cubic_coeff_a);
    double total = 0;
    for (int t = 0; t < kMaxTaps; ++t) {
      const int64_t at = first - 1 + t;
      const bool outside = at < 0 || at >= in_size;
      index[j][t] = std::clamp<int64_t>(at, 0, in_size - 1);
      const double kept = plan.exclude_outside && outside ? 0.0 : w[t];
      weight[j][t] = static_cast<float>(kept);
      total += kept;
    }
    if (plan.exclude_outside && total != 0) {
      for (int t = 0; t < kMaxTaps; ++t) {
        weight[j][t] = static_cast<float>(weight[j][t] / total);
      }
    }
  }
  const int64_t count = inner_bytes / static_cast<int64_t>(element_size);
  for (int64_t o = 0; o < outer; ++o) {
    const char* in_block = in + o * in_size * inner_bytes;
    char* out_block = out + o * out_size * inner_bytes;
    for (int64_t j = 0; j < out_size; ++j) {
      char* row = out_block + j * inner_bytes;
      auto input_row = [&](int t) {
        return reinterpret_cast<const float*>(in_block +
                                              index[j][t] * inner_bytes);
      };
      auto* fo = reinterpret_cast<float*>(row);
      if (plan.mode == Mode::kCubic) {
        const float *f0 = input_row(0), *f1 = input_row(1), *f2 = input_row(2),
                    *f3 = input_row(3);
        const float w0 = weight[j][0], w1 = weight[j][1], w2 = weight[j][2],
                    w3 = weight[j][3];
        for (int64_t k = 0; k < count; ++k) {
          fo[k] = w0 * f0[k] + w1 * f1[k] + w2 * f2[k] + w3 * f3[k];
        }
        continue;
      }
      const char* a = in_block + index[j][0] * inner_bytes;
      if (plan.mode == Mode::kNearest || weight[j][1] == 0.0f ||
          index[j][0] == index[j][1]) {
        std::memcpy(row, a, inner_bytes);
        continue;
      }
      const float* fa = input_row(0);
      const float* fb = input_row(1);
      const float w = weight[j][1];
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
