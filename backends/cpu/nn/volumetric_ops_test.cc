// Tests of the windowed ops on 3-D (volumetric, video) inputs, N x C x D x
// H x W: nn.conv, nn.conv_transpose, nn.max_pool, nn.average_pool and
// nn.global_average_pool against naive definitions, in plain and oneDNN
// layouts, with constant and writable weights.
#include <algorithm>
#include <array>
#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::HasSubstr;

using Triple = std::array<int64_t, 3>;  // Depth, height, width.

// A window over the three spatial axes, as ONNX's attributes give it.
struct Window3d {
  Triple kernel;
  Triple strides = {1, 1, 1};
  Triple dilations = {1, 1, 1};
  Triple pads_begin = {0, 0, 0};
  Triple pads_end = {0, 0, 0};

  Triple Output(const Triple& in) const {
    Triple out;
    for (int i = 0; i < 3; ++i) {
      const int64_t extent = (kernel[i] - 1) * dilations[i] + 1;
      out[i] = (in[i] + pads_begin[i] + pads_end[i] - extent) / strides[i] + 1;
    }
    return out;
  }
  // Along `axis`, the input position that kernel tap `k` of output
  // position `out` reads (a convolution's, a pooling's); for a transposed
  // convolution, the output position input `out` writes with tap `k`.
  int64_t Tap(int axis, int64_t out, int64_t k) const {
    return out * strides[axis] - pads_begin[axis] + k * dilations[axis];
  }
  void SetOn(OpAttrs& attrs, bool with_dilations = true) const {
    attrs.SetArray<int64_t>("strides", {strides[0], strides[1], strides[2]});
    if (with_dilations) {
      attrs.SetArray<int64_t>("dilations",
                              {dilations[0], dilations[1], dilations[2]});
    }
    attrs.SetArray<int64_t>(
        "pads", {pads_begin[0], pads_begin[1], pads_begin[2], pads_end[0],
                 pads_end[1], pads_end[2]});
  }
};

// Row-major offset of (a, b, d, h, w) in a 5-D tensor of `dims`.
int64_t At(const std::vector<int64_t>& dims, int64_t a, int64_t b, int64_t d,
           int64_t h, int64_t w) {
  return (((a * dims[1] + b) * dims[2] + d) * dims[3] + h) * dims[4] + w;
}

int64_t Count(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return count;
}

// ONNX Conv by its definition: x [N, C, D, H, W], w [M, C/group, kD, kH,
// kW], bias [M] or empty.
Tensor32 NaiveConv3d(const Tensor32& x, const Tensor32& w,
                     const std::vector<float>& bias, int64_t group,
                     const Window3d& window) {
  const int64_t n = x.shape[0], c = x.shape[1], m = w.shape[0];
  const int64_t c_per_group = c / group, m_per_group = m / group;
  const Triple out = window.Output({x.shape[2], x.shape[3], x.shape[4]});
  Tensor32 y{{n, m, out[0], out[1], out[2]}, {}};
  y.values.assign(Count(y.shape), 0.0f);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t f = 0; f < m; ++f)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            double sum = bias.empty() ? 0.0 : bias[f];
            const int64_t g = f / m_per_group;
            for (int64_t k = 0; k < c_per_group; ++k)
              for (int64_t kd = 0; kd < w.shape[2]; ++kd)
                for (int64_t kh = 0; kh < w.shape[3]; ++kh)
                  for (int64_t kw = 0; kw < w.shape[4]; ++kw) {
                    const int64_t id = window.Tap(0, od, kd);
                    const int64_t ih = window.Tap(1, oh, kh);
                    const int64_t iw = window.Tap(2, ow, kw);
                    if (id < 0 || ih < 0 || iw < 0 || id >= x.shape[2] ||
                        ih >= x.shape[3] || iw >= x.shape[4]) {
                      continue;
                    }
                    sum += x.values[At(x.shape, b, g * c_per_group + k, id, ih,
                                       iw)] *
                           w.values[At(w.shape, f, k, kd, kh, kw)];
                  }
            y.values[At(y.shape, b, f, od, oh, ow)] = static_cast<float>(sum);
          }
  return y;
}

// ONNX ConvTranspose by its definition (each input element spreads its
// kernel over the output): x [N, C, D, H, W], w [C, M/group, kD, kH, kW];
// `output_padding` extends each axis' end.
Tensor32 NaiveConvTranspose3d(const Tensor32& x, const Tensor32& w,
                              const std::vector<float>& bias, int64_t group,
                              const Window3d& window,
                              const Triple& output_padding) {
  const int64_t n = x.shape[0], c = x.shape[1];
  const int64_t c_per_group = c / group, m_per_group = w.shape[1];
  const int64_t m = m_per_group * group;
  Triple out;
  for (int i = 0; i < 3; ++i) {
    out[i] = window.strides[i] * (x.shape[2 + i] - 1) + output_padding[i] +
             (w.shape[2 + i] - 1) * window.dilations[i] + 1 -
             window.pads_begin[i] - window.pads_end[i];
  }
  Tensor32 y{{n, m, out[0], out[1], out[2]}, {}};
  std::vector<double> sums(Count(y.shape), 0.0);
  for (int64_t b = 0; b < n; ++b)
    for (int64_t f = 0; f < m; ++f) {
      for (int64_t i = 0; i < out[0] * out[1] * out[2]; ++i) {
        sums[At(y.shape, b, f, 0, 0, 0) + i] = bias.empty() ? 0.0 : bias[f];
      }
    }
  for (int64_t b = 0; b < n; ++b)
    for (int64_t ch = 0; ch < c; ++ch)
      for (int64_t id = 0; id < x.shape[2]; ++id)
        for (int64_t ih = 0; ih < x.shape[3]; ++ih)
          for (int64_t iw = 0; iw < x.shape[4]; ++iw) {
            const float v = x.values[At(x.shape, b, ch, id, ih, iw)];
            const int64_t g = ch / c_per_group;
            for (int64_t k = 0; k < m_per_group; ++k)
              for (int64_t kd = 0; kd < w.shape[2]; ++kd)
                for (int64_t kh = 0; kh < w.shape[3]; ++kh)
                  for (int64_t kw = 0; kw < w.shape[4]; ++kw) {
                    const int64_t od = window.Tap(0, id, kd);
                    const int64_t oh = window.Tap(1, ih, kh);
                    const int64_t ow = window.Tap(2, iw, kw);
                    if (od < 0 || oh < 0 || ow < 0 || od >= out[0] ||
                        oh >= out[1] || ow >= out[2]) {
                      continue;
                    }
                    sums[At(y.shape, b, g * m_per_group + k, od, oh, ow)] +=
                        v * w.values[At(w.shape, ch, k, kd, kh, kw)];
                  }
          }
  y.values.assign(sums.begin(), sums.end());
  return y;
}

// ONNX MaxPool, or AveragePool counting the padding or not.
enum class Pool { kMax, kAverage, kAverageWithPadding };
Tensor32 NaivePool3d(const Tensor32& x, Pool pool, const Window3d& window) {
  const Triple out = window.Output({x.shape[2], x.shape[3], x.shape[4]});
  Tensor32 y{{x.shape[0], x.shape[1], out[0], out[1], out[2]}, {}};
  y.values.assign(Count(y.shape), 0.0f);
  for (int64_t b = 0; b < x.shape[0]; ++b)
    for (int64_t ch = 0; ch < x.shape[1]; ++ch)
      for (int64_t od = 0; od < out[0]; ++od)
        for (int64_t oh = 0; oh < out[1]; ++oh)
          for (int64_t ow = 0; ow < out[2]; ++ow) {
            double sum = 0;
            float max = -std::numeric_limits<float>::infinity();
            int64_t inside = 0, covered = 0;
            for (int64_t kd = 0; kd < window.kernel[0]; ++kd)
              for (int64_t kh = 0; kh < window.kernel[1]; ++kh)
                for (int64_t kw = 0; kw < window.kernel[2]; ++kw) {
                  const int64_t id = window.Tap(0, od, kd);
                  const int64_t ih = window.Tap(1, oh, kh);
                  const int64_t iw = window.Tap(2, ow, kw);
                  // The padded extent (for averages counting padding).
                  if (id < x.shape[2] + window.pads_end[0] &&
                      ih < x.shape[3] + window.pads_end[1] &&
                      iw < x.shape[4] + window.pads_end[2]) {
                    ++covered;
                  }
                  if (id < 0 || ih < 0 || iw < 0 || id >= x.shape[2] ||
                      ih >= x.shape[3] || iw >= x.shape[4]) {
                    continue;
                  }
                  const float v = x.values[At(x.shape, b, ch, id, ih, iw)];
                  sum += v;
                  max = std::max(max, v);
                  ++inside;
                }
            float& result = y.values[At(y.shape, b, ch, od, oh, ow)];
            switch (pool) {
              case Pool::kMax:
                result = max;
                break;
              case Pool::kAverage:
                result = static_cast<float>(sum / inside);
                break;
              case Pool::kAverageWithPadding:
                result = static_cast<float>(sum / covered);
                break;
            }
          }
  return y;
}

void ExpectNear(const Tensor32& actual, const Tensor32& expected,
                float tolerance) {
  ASSERT_EQ(actual.shape, expected.shape);
  ASSERT_EQ(actual.values.size(), expected.values.size());
  for (size_t i = 0; i < actual.values.size(); ++i) {
    ASSERT_NEAR(actual.values[i], expected.values[i], tolerance)
        << "element " << i;
  }
}

class VolumetricOpsTest : public EagerOpTest {};

struct ConvCase3d {
  const char* name;
  std::vector<int64_t> x_shape;
  int64_t filters, group;
  Window3d window;  // Its kernel is the weights'.
};

// Convolutions over volumes and clips: the kernels of video models (3x7x7
// stems, 3x3x3, R(2+1)D's 1x3x3 and 3x1x1, strides in time and space),
// padding on one side, dilations, groups, batches; with writable weights
// (converted per call) and read-only ones (reordered once, kept), with and
// without a bias.
TEST_F(VolumetricOpsTest, ConvMatchesTheDefinition) {
  // name, x, filters, group, window (kernel, strides, dilations, pads).
  // clang-format off
  const ConvCase3d cases[] = {
      {"3x3x3, padded", {1, 3, 5, 6, 7}, 4, 1,
       {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}},
      {"3x7x7 stem, strided in space", {1, 3, 4, 12, 12}, 8, 1,
       {{3, 7, 7}, {1, 2, 2}, {1, 1, 1}, {1, 3, 3}, {1, 3, 3}}},
      {"1x3x3 then 3x1x1 (R(2+1)D)", {1, 8, 4, 6, 6}, 6, 1,
       {{1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}}},
      {"3x1x1, strided in time", {1, 6, 7, 4, 4}, 8, 1,
       {{3, 1, 1}, {2, 1, 1}, {1, 1, 1}, {1, 0, 0}, {1, 0, 0}}},
      {"dilated, uneven padding, two groups, batch 2", {2, 4, 6, 7, 5}, 6, 2,
       {{2, 3, 2}, {2, 1, 2}, {2, 2, 1}, {0, 2, 1}, {1, 0, 0}}},
      {"16 channels (blocked layouts)", {1, 16, 4, 6, 6}, 16, 1,
       {{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}},
      {"depthwise", {1, 16, 4, 5, 5}, 16, 16,
       {{3, 3, 3}, {1, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}},
  };
  // clang-format on

  unsigned seed = 300;
  for (const ConvCase3d& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor32 x{c.x_shape, RandomFloats(Count(c.x_shape), seed++)};
    const Triple& kernel = c.window.kernel;
    const std::vector<int64_t> w_shape = {c.filters, c.x_shape[1] / c.group,
                                          kernel[0], kernel[1], kernel[2]};
    const Tensor32 w{w_shape, RandomFloats(Count(w_shape), seed++)};
    const Tensor32 bias{{c.filters}, RandomFloats(c.filters, seed++)};
    OpAttrs attrs;
    c.window.SetOn(attrs);
    attrs.Set("group", c.group);
    attrs.SetArray<int64_t>("kernel_shape", {kernel[0], kernel[1], kernel[2]});
    for (const uint64_t read_only : {uint64_t{0}, uint64_t{0b110}}) {
      SCOPED_TRACE(read_only ? "read-only weights" : "writable weights");
      auto with_bias = Run("nn.conv", {x, w, bias}, attrs, read_only);
      ASSERT_TRUE(with_bias.ok()) << with_bias.status();
      ExpectNear(*with_bias, NaiveConv3d(x, w, bias.values, c.group, c.window),
                 1e-4f);
      auto without = Run("nn.conv", {x, w}, attrs, read_only & 0b10);
      ASSERT_TRUE(without.ok()) << without.status();
      ExpectNear(*without, NaiveConv3d(x, w, {}, c.group, c.window), 1e-4f);
    }
  }
}

// The model compiler's fusions on a 3-D convolution: the residual sum and
// the activation as oneDNN post-ops (a video ResNet's block ends).
TEST_F(VolumetricOpsTest, ConvFusesSumAndRelu) {
  const Tensor32 x{{1, 16, 4, 6, 6}, RandomFloats(16 * 144, 320)};
  const Tensor32 w{{16, 16, 3, 3, 3}, RandomFloats(16 * 16 * 27, 321)};
  const Tensor32 bias{{16}, RandomFloats(16, 322)};
  const Tensor32 sum{{1, 16, 4, 6, 6}, RandomFloats(16 * 144, 323)};
  const Window3d window{{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
  OpAttrs attrs;
  window.SetOn(attrs);
  attrs.SetString("activation", "relu");
  auto fused = Run("nn.conv", {x, w, bias, sum}, attrs, 0b110);
  ASSERT_TRUE(fused.ok()) << fused.status();
  Tensor32 expected = NaiveConv3d(x, w, bias.values, 1, window);
  for (size_t i = 0; i < expected.values.size(); ++i) {
    expected.values[i] = std::max(0.0f, expected.values[i] + sum.values[i]);
  }
  ExpectNear(*fused, expected, 1e-4f);
}

// A chain kept in oneDNN's layouts (the model compiler's result_layout =
// "onednn": convolution -> convolution with the first as its residual ->
// max pooling -> global average) gives what the plain ops give.
TEST_F(VolumetricOpsTest, OneDnnLayoutsBetweenOpsGiveThePlainResults) {
  const Tensor32 x{{1, 16, 4, 8, 8}, RandomFloats(16 * 256, 330)};
  const Tensor32 w1{{16, 16, 3, 3, 3}, RandomFloats(16 * 16 * 27, 331)};
  const Tensor32 w2{{16, 16, 1, 3, 3}, RandomFloats(16 * 16 * 9, 332)};
  const Tensor32 bias{{16}, RandomFloats(16, 333)};
  auto attrs_for = [](bool onednn, Triple pads) {
    OpAttrs attrs;
    attrs.SetArray<int64_t>(
        "pads", {pads[0], pads[1], pads[2], pads[0], pads[1], pads[2]});
    if (onednn) attrs.SetString("result_layout", "onednn");
    return attrs;
  };
  std::vector<Tensor32> results;
  for (bool onednn : {false, true}) {
    SCOPED_TRACE(onednn ? "onednn" : "plain");
    OpAttrs conv1 = attrs_for(onednn, {1, 1, 1});
    conv1.SetString("activation", "relu");
    OpAttrs conv2 = attrs_for(onednn, {0, 1, 1});
    OpAttrs pool = attrs_for(onednn, {0, 0, 0});
    pool.SetArray<int64_t>("kernel_shape", {2, 2, 2});
    pool.SetArray<int64_t>("strides", {2, 2, 2});
    auto handle = [&](const Tensor32& t, bool read_only) {
      absl::StatusOr<TensorHandle> made = Handle(t, read_only);
      EXPECT_TRUE(made.ok());
      return *std::move(made);
    };
    TensorHandle y1 = Execute(
        "nn.conv", Args(handle(x, false), handle(w1, true), handle(bias, true)),
        conv1);
    const Tensor* first = core_->Await(y1);
    ASSERT_NE(first, nullptr) << *y1.GetErrorIfPresent();
    EXPECT_EQ(first->tensor_type().name(), onednn ? "OneDnnHost" : "DenseHost");
    TensorHandle y2 = Execute(
        "nn.conv",
        Args(y1.CopyRef(), handle(w2, true), handle(bias, true), y1.CopyRef()),
        conv2);
    TensorHandle pooled = Execute("nn.max_pool", Args(y2.CopyRef()), pool);
    TensorHandle global =
        Execute("nn.global_average_pool", Args(pooled.CopyRef()));
    absl::StatusOr<Tensor32> values = Read(global);
    ASSERT_TRUE(values.ok()) << values.status();
    EXPECT_EQ(values->shape, (std::vector<int64_t>{1, 16, 1, 1, 1}));
    results.push_back(*std::move(values));
  }
  ExpectNear(results[1], results[0], 1e-5f);
  // And the plain chain against the definitions.
  const Window3d same3{{3, 3, 3}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}};
  Tensor32 e1 = NaiveConv3d(x, w1, bias.values, 1, same3);
  for (float& v : e1.values) v = std::max(v, 0.0f);
  const Window3d same133{{1, 3, 3}, {1, 1, 1}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}};
  Tensor32 e2 = NaiveConv3d(e1, w2, bias.values, 1, same133);
  for (size_t i = 0; i < e2.values.size(); ++i) e2.values[i] += e1.values[i];
  Tensor32 e_pool = NaivePool3d(
      e2, Pool::kMax, Window3d{{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {}, {}});
  for (int64_t ch = 0; ch < 16; ++ch) {
    double sum = 0;
    for (int64_t i = 0; i < 2 * 4 * 4; ++i) sum += e_pool.values[ch * 32 + i];
    EXPECT_NEAR(results[0].values[ch], sum / 32, 1e-4) << "channel " << ch;
  }
}

// Transposed 3-D convolutions (a 3-D U-Net's upsampling): strides,
// padding, output padding, dilations, groups, with and without a bias.
TEST_F(VolumetricOpsTest, ConvTransposeMatchesTheDefinition) {
  struct Case {
    const char* name;
    std::vector<int64_t> x_shape;
    int64_t per_group, group;
    Window3d window;  // Its kernel is the weights'.
    Triple output_padding;
  };
  // name, x, filters per group, group, window, output padding.
  // clang-format off
  const Case cases[] = {
      {"2x2x2, stride 2 (U-Net)", {1, 4, 3, 4, 5}, 3, 1,
       {{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}}, {0, 0, 0}},
      {"padded, output padding, dilated", {1, 2, 3, 3, 4}, 2, 1,
       {{3, 2, 3}, {2, 3, 1}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1}}, {1, 2, 0}},
      {"two groups, batch 2", {2, 4, 2, 3, 3}, 3, 2,
       {{2, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}}, {0, 1, 1}},
  };
  // clang-format on
  unsigned seed = 340;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const Tensor32 x{c.x_shape, RandomFloats(Count(c.x_shape), seed++)};
    const Triple& kernel = c.window.kernel;
    const std::vector<int64_t> w_shape = {c.x_shape[1], c.per_group, kernel[0],
                                          kernel[1], kernel[2]};
    const Tensor32 w{w_shape, RandomFloats(Count(w_shape), seed++)};
    const int64_t filters = c.per_group * c.group;
    const Tensor32 bias{{filters}, RandomFloats(filters, seed++)};
    OpAttrs attrs;
    c.window.SetOn(attrs);
    attrs.Set("group", c.group);
    attrs.SetArray<int64_t>(
        "output_padding",
        {c.output_padding[0], c.output_padding[1], c.output_padding[2]});
    auto with_bias = Run("nn.conv_transpose", {x, w, bias}, attrs);
    ASSERT_TRUE(with_bias.ok()) << with_bias.status();
    ExpectNear(*with_bias,
               NaiveConvTranspose3d(x, w, bias.values, c.group, c.window,
                                    c.output_padding),
               1e-4f);
    auto without = Run("nn.conv_transpose", {x, w}, attrs);
    ASSERT_TRUE(without.ok()) << without.status();
    ExpectNear(
        *without,
        NaiveConvTranspose3d(x, w, {}, c.group, c.window, c.output_padding),
        1e-4f);
  }
}

// Grouped 2-D transposed convolutions keep their meaning (their weights'
// layout is now described by strides for every rank).
TEST_F(VolumetricOpsTest, GroupedConvTransposeIn2dIsThe3dOneOfDepth1) {
  const Tensor32 x{{1, 4, 3, 4}, RandomFloats(48, 350)};
  const Tensor32 w{{4, 3, 3, 2}, RandomFloats(72, 351)};
  OpAttrs attrs;
  attrs.Set("group", int64_t{2});
  attrs.SetArray<int64_t>("strides", {2, 1});
  auto y = Run("nn.conv_transpose", {x, w}, attrs);
  ASSERT_TRUE(y.ok()) << y.status();
  const Tensor32 x3{{1, 4, 1, 3, 4}, x.values};
  const Tensor32 w3{{4, 3, 1, 3, 2}, w.values};
  Tensor32 expected = NaiveConvTranspose3d(
      x3, w3, {}, 2, Window3d{{1, 3, 2}, {1, 2, 1}, {1, 1, 1}, {}, {}},
      {0, 0, 0});
  expected.shape.erase(expected.shape.begin() + 2);
  ExpectNear(*y, expected, 1e-4f);
}

// MaxPool3d and AvgPool3d as PyTorch's video and volumetric models use
// them: windows over time and space, strides, padding (counted or not in
// averages), dilated max windows, ceil mode; and the global average.
TEST_F(VolumetricOpsTest, PoolingMatchesTheDefinition) {
  const Tensor32 x{{2, 3, 5, 6, 7}, RandomFloats(2 * 3 * 210, 360)};
  struct Case {
    const char* name;
    Pool pool;
    Window3d window;
  };
  const Case cases[] = {
      {"max 2x2x2 stride 2",
       Pool::kMax,
       {{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {0, 0, 0}}},
      {"max 1x3x3 stride 1x2x2 padded (r3d's stem pool)",
       Pool::kMax,
       {{1, 3, 3}, {1, 2, 2}, {1, 1, 1}, {0, 1, 1}, {0, 1, 1}}},
      {"max dilated",
       Pool::kMax,
       {{2, 2, 3}, {1, 2, 1}, {2, 1, 2}, {1, 0, 1}, {0, 1, 1}}},
      {"average 3x3x3 padded, padding excluded",
       Pool::kAverage,
       {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}},
      {"average 3x3x3 padded, padding counted",
       Pool::kAverageWithPadding,
       {{3, 3, 3}, {2, 2, 2}, {1, 1, 1}, {1, 1, 1}, {1, 1, 1}}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    OpAttrs attrs;
    c.window.SetOn(attrs, /*with_dilations=*/c.pool == Pool::kMax);
    attrs.SetArray<int64_t>(
        "kernel_shape",
        {c.window.kernel[0], c.window.kernel[1], c.window.kernel[2]});
    if (c.pool == Pool::kAverageWithPadding) {
      attrs.Set("count_include_pad", int64_t{1});
    }
    auto y = Run(c.pool == Pool::kMax ? "nn.max_pool" : "nn.average_pool", {x},
                 attrs);
    ASSERT_TRUE(y.ok()) << y.status();
    ExpectNear(*y, NaivePool3d(x, c.pool, c.window), 1e-5f);
  }
  // ceil_mode: 5 deep, kernel 2, stride 2 -> 3 windows (floor: 2); the
  // last covers the final plane alone.
  OpAttrs ceil;
  ceil.SetArray<int64_t>("kernel_shape", {2, 1, 1});
  ceil.SetArray<int64_t>("strides", {2, 1, 1});
  ceil.Set("ceil_mode", int64_t{1});
  auto ceiled = Run("nn.max_pool", {x}, ceil);
  ASSERT_TRUE(ceiled.ok()) << ceiled.status();
  EXPECT_EQ(ceiled->shape, (std::vector<int64_t>{2, 3, 3, 6, 7}));
  EXPECT_EQ(ceiled->values[At(ceiled->shape, 1, 2, 2, 5, 6)],
            x.values[At(x.shape, 1, 2, 4, 5, 6)]);

  auto global = Run("nn.global_average_pool", {x});
  ASSERT_TRUE(global.ok()) << global.status();
  EXPECT_EQ(global->shape, (std::vector<int64_t>{2, 3, 1, 1, 1}));
  for (int64_t i = 0; i < 6; ++i) {
    double sum = 0;
    for (int64_t j = 0; j < 210; ++j) sum += x.values[i * 210 + j];
    EXPECT_NEAR(global->values[i], sum / 210, 1e-5) << "channel " << i;
  }
}

// Shapes the windowed ops do not take fail naming the op and what it
// takes, never crash.
TEST_F(VolumetricOpsTest, OtherRanksAndMismatchesAreErrors) {
  const Tensor32 six{{1, 1, 2, 2, 2, 2}, std::vector<float>(16, 1)};
  const Tensor32 w6{{1, 1, 1, 1, 1, 1}, {1}};
  auto conv = Run("nn.conv", {six, w6});
  ASSERT_FALSE(conv.ok());
  EXPECT_THAT(conv.status().message(),
              HasSubstr("nn.conv: input must be N x C x W, N x C x H x W or "
                        "N x C x D x H x W"));
  OpAttrs kernel;
  kernel.SetArray<int64_t>("kernel_shape", {1, 1, 1, 1});
  auto pool = Run("nn.max_pool", {six}, kernel);
  ASSERT_FALSE(pool.ok());
  EXPECT_THAT(pool.status().message(), HasSubstr("N x C x D x H x W"));
  // 3-D input, 2-D kernel.
  const Tensor32 x{{1, 2, 3, 3, 3}, RandomFloats(54, 370)};
  auto mismatched = Run("nn.conv", {x, {{1, 2, 3, 3}, RandomFloats(18, 371)}});
  ASSERT_FALSE(mismatched.ok());
  EXPECT_THAT(mismatched.status().message(), HasSubstr("do not match input"));
  OpAttrs two_d;
  two_d.SetArray<int64_t>("kernel_shape", {2, 2});
  auto short_kernel = Run("nn.average_pool", {x}, two_d);
  ASSERT_FALSE(short_kernel.ok());
  EXPECT_THAT(short_kernel.status().message(),
              HasSubstr("one value per spatial dimension"));
  OpAttrs big;
  big.SetArray<int64_t>("kernel_shape", {4, 1, 1});
  auto too_big = Run("nn.max_pool", {x}, big);
  ASSERT_FALSE(too_big.ok());
  EXPECT_THAT(too_big.status().message(), HasSubstr("larger than the padded"));
}

}  // namespace
}  // namespace asyncrt::nn
