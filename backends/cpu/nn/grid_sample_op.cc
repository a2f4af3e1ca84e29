// nn.grid_sample (ONNX GridSample, 2-D): the output's pixel (n, c, h, w) is
// x[n, c] sampled at the normalized position grid[n, h, w] = (x, y) in
// [-1, 1], with PyTorch's grid_sample semantics (which ONNX specifies):
//   mode          bilinear (ONNX 20's "linear"), nearest (ties to even),
//                 bicubic ("cubic"; A = -0.75)
//   padding_mode  zeros (outside reads 0), border (clamped), reflection
//   align_corners 1: -1 and 1 are the corner pixels' centers; 0: their
//                 outer edges.
#include <array>
#include <cmath>
#include <cstdint>
#include <string>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kGridSample = "nn.grid_sample";

enum class Mode { kBilinear, kNearest, kBicubic };
enum class Padding { kZeros, kBorder, kReflection };

struct Options {
  Mode mode = Mode::kBilinear;
  Padding padding = Padding::kZeros;
  bool align_corners = false;
};

absl::StatusOr<Options> OptionsOf(const OpAttrs& attrs) {
  Options options;
  const std::string mode(attrs.GetString("mode").value_or("bilinear"));
  if (mode == "bilinear" || mode == "linear") {
    options.mode = Mode::kBilinear;
  } else if (mode == "nearest") {
    options.mode = Mode::kNearest;
  } else if (mode == "bicubic" || mode == "cubic") {
    options.mode = Mode::kBicubic;
  } else {
    return OpError(kGridSample, absl::StrCat("mode '", mode, "' is unknown"));
  }
  const std::string padding(attrs.GetString("padding_mode").value_or("zeros"));
  if (padding == "zeros") {
    options.padding = Padding::kZeros;
  } else if (padding == "border") {
    options.padding = Padding::kBorder;
  } else if (padding == "reflection") {
    options.padding = Padding::kReflection;
  } else {
    return OpError(kGridSample,
                   absl::StrCat("padding_mode '", padding, "' is unknown"));
  }
  options.align_corners = attrs.GetInteger("align_corners").value_or(0) != 0;
  return options;
}

absl::Status GridSampleMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                                absl::Span<TensorMetadata> results) {
  if (args.size() != 2 || results.size() != 1) {
    return OpError(kGridSample, "takes x and grid, and has 1 result");
  }
  if (absl::Status status = RequireF32(kGridSample, args); !status.ok()) {
    return status;
  }
  if (absl::StatusOr<Options> options = OptionsOf(attrs); !options.ok()) {
    return options.status();
  }
  const auto x = args[0].shape.GetDimensions();
  const auto grid = args[1].shape.GetDimensions();
  if (x.size() != 4 || grid.size() != 4 || grid[3] != 2 || grid[0] != x[0]) {
    return OpError(kGridSample,
                   absl::StrCat("x ", args[0].shape.DebugString(), " and grid ",
                                args[1].shape.DebugString(),
                                " are not N x C x H x W and N x H' x W' x 2 "
                                "(2-D only)"));
  }
  results[0] = TensorMetadata(DType::kF32, TensorShape({x[0], x[1], grid[1],
                                                        grid[2]}));
  return absl::OkStatus();
}

// A normalized coordinate in pixels.
float Unnormalize(float coord, int64_t size, bool align_corners) {
  return align_corners ? (coord + 1) / 2 * (size - 1)
                       : ((coord + 1) * size - 1) / 2;
}

// `coord` reflected into [twice_low / 2, twice_high / 2].
float Reflect(float coord, int64_t twice_low, int64_t twice_high) {
  if (twice_low == twice_high) return 0;
  const float low = twice_low / 2.f;
  const float span = (twice_high - twice_low) / 2.f;
  coord = std::fabs(coord - low);
  const float extra = std::fmod(coord, span);
  const int flips = static_cast<int>(std::floor(coord / span));
  return flips % 2 == 0 ? extra + low : span - extra + low;
}

// The padding mode applied to a pixel coordinate.
float Pad(float coord, int64_t size, const Options& options) {
  auto clip = [&](float value) {
    return std::fmin(static_cast<float>(size - 1), std::fmax(value, 0.f));
  };
  switch (options.padding) {
    case Padding::kBorder:
      return clip(coord);
    case Padding::kReflection:
      return clip(options.align_corners ? Reflect(coord, 0, 2 * (size - 1))
                                        : Reflect(coord, -1, 2 * size - 1));
    case Padding::kZeros:
      return coord;
  }
  return coord;
}

// Cubic convolution weights (A = -0.75) of the 4 pixels around t in [0, 1).
std::array<float, 4> CubicWeights(float t) {
  constexpr float kA = -0.75f;
  auto near = [](float d) { return ((kA + 2) * d - (kA + 3)) * d * d + 1; };
  auto far = [](float d) {
    return ((kA * d - 5 * kA) * d + 8 * kA) * d - 4 * kA;
  };
  return {far(t + 1), near(t), near(1 - t), far(2 - t)};
}

void GridSample(OpInvocation& invocation) {
  if (RefuseHalf(invocation, kGridSample)) return;
  absl::StatusOr<Options> options = OptionsOf(invocation.attrs);
  if (!options.ok()) {
    return FailAll(invocation, kGridSample, options.status().message());
  }
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const auto& grid =
      static_cast<const DenseHostTensor&>(invocation.argument(1));
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kGridSample, invocation.result_metadata[0]);
  if (!result) return;
  const auto dims = x.shape().GetDimensions();
  const int64_t n = dims[0], channels = dims[1], height = dims[2],
                width = dims[3];
  const int64_t out_h = grid.shape().GetDimensionSize(1);
  const int64_t out_w = grid.shape().GetDimensionSize(2);
  const float* in = x.elements<float>().data();
  const float* positions = grid.elements<float>().data();
  float* out = static_cast<float*>(result->data());
  // The pixel (row, column) of `plane`, 0 outside (zeros padding; the
  // other modes have clamped the coordinates already).
  auto pixel = [&](const float* plane, int64_t row, int64_t column) {
    if (row < 0 || row >= height || column < 0 || column >= width) return 0.f;
    return plane[row * width + column];
  };
  for (int64_t b = 0; b < n; ++b) {
    for (int64_t h = 0; h < out_h; ++h) {
      for (int64_t w = 0; w < out_w; ++w) {
        const float* at = positions + ((b * out_h + h) * out_w + w) * 2;
        float ix = Unnormalize(at[0], width, options->align_corners);
        float iy = Unnormalize(at[1], height, options->align_corners);
        if (options->mode != Mode::kBicubic) {
          ix = Pad(ix, width, *options);
          iy = Pad(iy, height, *options);
        }
        for (int64_t c = 0; c < channels; ++c) {
          const float* plane = in + (b * channels + c) * height * width;
          float value = 0;
          switch (options->mode) {
            case Mode::kNearest:
              value = pixel(plane, static_cast<int64_t>(std::nearbyint(iy)),
                            static_cast<int64_t>(std::nearbyint(ix)));
              break;
            case Mode::kBilinear: {
              const float x0 = std::floor(ix), y0 = std::floor(iy);
              const float tx = ix - x0, ty = iy - y0;
              const auto col = static_cast<int64_t>(x0);
              const auto row = static_cast<int64_t>(y0);
              value = pixel(plane, row, col) * (1 - tx) * (1 - ty) +
                      pixel(plane, row, col + 1) * tx * (1 - ty) +
                      pixel(plane, row + 1, col) * (1 - tx) * ty +
                      pixel(plane, row + 1, col + 1) * tx * ty;
              break;
            }
            case Mode::kBicubic: {
              // Padding applies to each of the 16 pixels read.
              const float x0 = std::floor(ix), y0 = std::floor(iy);
              const std::array<float, 4> wx = CubicWeights(ix - x0);
              const std::array<float, 4> wy = CubicWeights(iy - y0);
              for (int j = 0; j < 4; ++j) {
                float row_value = 0;
                for (int i = 0; i < 4; ++i) {
                  const float px = Pad(x0 - 1 + i, width, *options);
                  const float py = Pad(y0 - 1 + j, height, *options);
                  row_value += wx[i] * pixel(plane, static_cast<int64_t>(py),
                                             static_cast<int64_t>(px));
                }
                value += wy[j] * row_value;
              }
              break;
            }
          }
          out[((b * channels + c) * out_h + h) * out_w + w] = value;
        }
      }
    }
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterGridSampleOps(OpRegistry& registry) {
  registry.AddOp("nn.grid_sample", GridSampleMetadata);
  registry.AddDispatch("nn.grid_sample", "cpu", GridSample);
}

}  // namespace asyncrt::nn
