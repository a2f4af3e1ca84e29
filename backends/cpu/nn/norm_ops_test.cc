// Tests of nn.batch_normalization, nn.instance_normalization,
// nn.layer_normalization, nn.reduce_* and
// nn.gemm through the eager API: values and shapes against naive reference
// implementations (in double), and errors that name the op.
#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::HasSubstr;
using Shape = std::vector<int64_t>;

class NormOpsTest : public EagerOpTest {
 protected:
  // Expects `op` to fail with a message naming it and containing `what`.
  void ExpectError(const std::string& op, const std::vector<Tensor32>& args,
                   const OpAttrs& attrs, const std::string& what) {
    auto result = Run(op, args, attrs);
    ASSERT_FALSE(result.ok()) << op << " should fail with " << what;
    EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument)
        << result.status();
    const std::string message(result.status().message());
    EXPECT_THAT(message, HasSubstr(op + ": "));
    EXPECT_THAT(message, HasSubstr(what));
  }
};

int64_t Count(const Shape& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

std::vector<float> Random(size_t count, unsigned seed, float low = -1.0f,
                          float high = 1.0f) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(low, high);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

Tensor32 RandomTensor(const Shape& shape, unsigned seed) {
  return {shape, Random(Count(shape), seed)};
}

void ExpectNear(const std::vector<float>& actual,
                const std::vector<double>& expected, double tolerance = 1e-5) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i],
                tolerance * std::max(1.0, std::fabs(expected[i])))
        << "element " << i;
  }
}

// Row-major multi-index of flat index `i` in `shape`.
Shape Unravel(int64_t i, const Shape& shape) {
  Shape index(shape.size());
  for (int d = static_cast<int>(shape.size()) - 1; d >= 0; --d) {
    index[d] = i % shape[d];
    i /= shape[d];
  }
  return index;
}

// The flat index of `index` (right-aligned) in `shape`, numpy broadcasting
// along dimensions of size 1.
int64_t BroadcastFlat(const Shape& index, const Shape& shape) {
  int64_t flat = 0;
  const size_t skip = index.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d) {
    flat = flat * shape[d] + (shape[d] == 1 ? 0 : index[d + skip]);
  }
  return flat;
}

//===--- nn.batch_normalization -------------------------------------------===//

std::vector<double> NaiveBatchNorm(const Tensor32& x,
                                   const std::vector<float>& scale,
                                   const std::vector<float>& bias,
                                   const std::vector<float>& mean,
                                   const std::vector<float>& var,
                                   double epsilon) {
  std::vector<double> out(x.values.size());
  for (size_t i = 0; i < out.size(); ++i) {
    const int64_t c = Unravel(i, x.shape)[1];
    out[i] = (x.values[i] - mean[c]) / std::sqrt(var[c] + epsilon) * scale[c] +
             bias[c];
  }
  return out;
}

TEST_F(NormOpsTest, BatchNormalizationRank3And4) {
  unsigned seed = 100;
  for (const Shape& shape : {Shape{2, 3, 5}, Shape{2, 3, 4, 5}, Shape{3, 4}}) {
    for (std::optional<float> epsilon :
         {std::optional<float>(), std::optional<float>(0.1f)}) {
      SCOPED_TRACE(testing::Message() << "rank " << shape.size() << " epsilon "
                                      << epsilon.value_or(-1));
      const int64_t c = shape[1];
      Tensor32 x = RandomTensor(shape, seed++);
      std::vector<float> scale = Random(c, seed++), bias = Random(c, seed++),
                         mean = Random(c, seed++),
                         var = Random(c, seed++, 0.05f, 2.0f);
      OpAttrs attrs;
      if (epsilon) attrs.Set("epsilon", *epsilon);
      const std::vector<double> expected =
          NaiveBatchNorm(x, scale, bias, mean, var, epsilon.value_or(1e-5f));
      auto result =
          Run("nn.batch_normalization",
              {x, {{c}, scale}, {{c}, bias}, {{c}, mean}, {{c}, var}}, attrs);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->shape, shape);
      ExpectNear(result->values, expected);
      // With a relu folded in (-nn-fuse-elementwise): rectified.
      attrs.SetString("activation", "relu");
      auto rectified =
          Run("nn.batch_normalization",
              {x, {{c}, scale}, {{c}, bias}, {{c}, mean}, {{c}, var}}, attrs);
      ASSERT_TRUE(rectified.ok()) << rectified.status();
      std::vector<double> expected_rectified = expected;
      for (double& v : expected_rectified) v = std::max(v, 0.0);
      ExpectNear(rectified->values, expected_rectified);
    }
  }
}

TEST_F(NormOpsTest, BatchNormalizationRejectsBadOperands) {
  const std::string op = "nn.batch_normalization";
  Tensor32 x = RandomTensor({2, 3, 4}, 1);
  Tensor32 p3 = RandomTensor({3}, 2);
  ExpectError(op, {x, p3, p3, p3, RandomTensor({4}, 3)}, OpAttrs(),
              "var [4] is not [3]");
  ExpectError(op, {x, RandomTensor({1, 3}, 4), p3, p3, p3}, OpAttrs(),
              "scale [1, 3] is not [3]");
  ExpectError(op, {x, p3, p3, p3}, OpAttrs(), "takes 5 arguments");
  ExpectError(op, {RandomTensor({3}, 5), p3, p3, p3, p3}, OpAttrs(),
              "input must be N x C");
  OpAttrs training;
  training.Set("training_mode", int64_t{1});
  ExpectError(op, {x, p3, p3, p3, p3}, training, "training_mode");
  OpAttrs tanh;
  tanh.SetString("activation", "tanh");
  ExpectError(op, {x, p3, p3, p3, p3}, tanh,
              "activation \"tanh\" is not supported (only relu)");
}

//===--- nn.instance_normalization ----------------------------------------===//

TEST_F(NormOpsTest, InstanceNormalizationPerPlane) {
  unsigned seed = 150;
  for (const Shape& shape : {Shape{2, 3, 5}, Shape{2, 3, 4, 5}}) {
    const int64_t batch = shape[0], c = shape[1];
    const int64_t inner = Count(shape) / (batch * c);
    Tensor32 x = RandomTensor(shape, seed++);
    std::vector<float> scale = Random(c, seed++), bias = Random(c, seed++);
    OpAttrs attrs;
    attrs.Set("epsilon", 0.01f);
    auto result =
        Run("nn.instance_normalization", {x, {{c}, scale}, {{c}, bias}}, attrs);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->shape, shape);
    std::vector<double> expected(x.values.size());
    for (int64_t plane = 0; plane < batch * c; ++plane) {
      const float* in = &x.values[plane * inner];
      double mean = 0, variance = 0;
      for (int64_t j = 0; j < inner; ++j) mean += in[j];
      mean /= inner;
      for (int64_t j = 0; j < inner; ++j)
        variance += (in[j] - mean) * (in[j] - mean);
      variance /= inner;
      const int64_t channel = plane % c;
      for (int64_t j = 0; j < inner; ++j) {
        expected[plane * inner + j] =
            (in[j] - mean) / std::sqrt(variance + 0.01) * scale[channel] +
            bias[channel];
      }
    }
    ExpectNear(result->values, expected);
  }
  const std::string op = "nn.instance_normalization";
  Tensor32 p3 = RandomTensor({3}, 2);
  ExpectError(op, {RandomTensor({2, 3}, 1), p3, p3}, OpAttrs(),
              "input must be N x C x D1");
  ExpectError(op, {RandomTensor({2, 3, 4}, 1), p3, RandomTensor({4}, 3)},
              OpAttrs(), "B [4] is not [3]");
}

//===--- nn.layer_normalization -------------------------------------------===//

// Normalizes over dims [axis, rank); scale and bias broadcast to them.
std::vector<double> NaiveLayerNorm(const Tensor32& x, int axis,
                                   const Tensor32& scale, const Tensor32* bias,
                                   double epsilon) {
  const Shape normalized(x.shape.begin() + axis, x.shape.end());
  const int64_t size = Count(normalized);
  const int64_t rows = Count(x.shape) / size;
  std::vector<double> out(x.values.size());
  for (int64_t r = 0; r < rows; ++r) {
    double mean = 0, variance = 0;
    for (int64_t j = 0; j < size; ++j) mean += x.values[r * size + j];
    mean /= size;
    for (int64_t j = 0; j < size; ++j) {
      const double d = x.values[r * size + j] - mean;
      variance += d * d;
    }
    variance /= size;
    for (int64_t j = 0; j < size; ++j) {
      const Shape index = Unravel(j, normalized);
      double y =
          (x.values[r * size + j] - mean) / std::sqrt(variance + epsilon);
      y *= scale.values[BroadcastFlat(index, scale.shape)];
      if (bias) y += bias->values[BroadcastFlat(index, bias->shape)];
      out[r * size + j] = y;
    }
  }
  return out;
}

TEST_F(NormOpsTest, LayerNormalizationAxisMinus1And1WithAndWithoutBias) {
  const Tensor32 x = RandomTensor({2, 3, 4}, 200);
  struct Case {
    int64_t axis;
    int normalized_axis;
    Shape param_shape;
    bool bias;
  };
  const Case cases[] = {
      {-1, 2, {4}, true},    {-1, 2, {4}, false}, {1, 1, {3, 4}, true},
      {1, 1, {3, 4}, false}, {1, 1, {4}, true},  // Broadcast to [3, 4].
      {-2, 1, {3, 1}, true},
  };
  unsigned seed = 201;
  for (const Case& c : cases) {
    SCOPED_TRACE(testing::Message() << "axis " << c.axis << " bias " << c.bias
                                    << " params " << c.param_shape.size());
    const Tensor32 scale = RandomTensor(c.param_shape, seed++);
    const Tensor32 bias = RandomTensor(c.param_shape, seed++);
    OpAttrs attrs;
    attrs.Set("axis", c.axis);
    std::vector<Tensor32> args = {x, scale};
    if (c.bias) args.push_back(bias);
    auto result = Run("nn.layer_normalization", args, attrs);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->shape, x.shape);
    ExpectNear(result->values, NaiveLayerNorm(x, c.normalized_axis, scale,
                                              c.bias ? &bias : nullptr, 1e-5));
  }
}

TEST_F(NormOpsTest, LayerNormalizationDefaultAxisEpsilonAndLongRows) {
  // Default axis -1; long rows far from zero (a one-pass variance in float
  // would lose most digits); a large epsilon that visibly changes results.
  Tensor32 x{{3, 1000}, Random(3000, 300, 99.0f, 101.0f)};
  const Tensor32 scale = RandomTensor({1000}, 301);
  const Tensor32 bias = RandomTensor({1000}, 302);
  auto result = Run("nn.layer_normalization", {x, scale, bias});
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_EQ(result->shape, x.shape);
  ExpectNear(result->values, NaiveLayerNorm(x, 1, scale, &bias, 1e-5), 1e-4);

  OpAttrs attrs;
  attrs.Set("epsilon", 0.5f);
  auto wide = Run("nn.layer_normalization", {x, scale}, attrs);
  ASSERT_TRUE(wide.ok()) << wide.status();
  ExpectNear(wide->values, NaiveLayerNorm(x, 1, scale, nullptr, 0.5), 1e-4);
}

// ONNX's optional outputs: each row's mean and inverse standard deviation,
// x's shape with the normalized dimensions 1.
TEST_F(NormOpsTest, LayerNormalizationMeanAndInverseDeviation) {
  const Tensor32 x = RandomTensor({2, 3, 4}, 500);
  const Tensor32 scale = RandomTensor({3, 4}, 501);
  OpAttrs attrs;
  attrs.Set("axis", int64_t{1});
  for (size_t num_results : {3, 2}) {
    std::vector<TensorHandle> args;
    args.push_back(*Handle(x));
    args.push_back(*Handle(scale));
    std::vector<TensorHandle> results(num_results);
    core_->Execute(*exec_ctx_, "nn.layer_normalization", cpu_,
                   absl::MakeSpan(args), attrs.Freeze(),
                   absl::MakeSpan(results), nullptr);
    if (num_results == 2) {
      auto error = Read(results[0]);
      ASSERT_FALSE(error.ok());
      EXPECT_THAT(error.status().message(), HasSubstr("has 1 or 3 results"));
      continue;
    }
    auto y = Read(results[0]);
    auto mean = Read(results[1]);
    auto inverse = Read(results[2]);
    ASSERT_TRUE(y.ok() && mean.ok() && inverse.ok());
    ExpectNear(y->values, NaiveLayerNorm(x, 1, scale, nullptr, 1e-5));
    EXPECT_EQ(mean->shape, (Shape{2, 1, 1}));
    EXPECT_EQ(inverse->shape, (Shape{2, 1, 1}));
    for (int r = 0; r < 2; ++r) {
      double sum = 0, sum_sq = 0;
      for (int j = 0; j < 12; ++j) {
        sum += x.values[r * 12 + j];
        sum_sq += double{x.values[r * 12 + j]} * x.values[r * 12 + j];
      }
      const double m = sum / 12, variance = sum_sq / 12 - m * m;
      EXPECT_NEAR(mean->values[r], m, 1e-6);
      EXPECT_NEAR(inverse->values[r], 1 / std::sqrt(variance + 1e-5),
                  1e-5 / std::sqrt(variance + 1e-5));
    }
  }
}

TEST_F(NormOpsTest, LayerNormalizationRejectsBadOperands) {
  const std::string op = "nn.layer_normalization";
  const Tensor32 x = RandomTensor({2, 3, 4}, 400);
  OpAttrs axis3;
  axis3.Set("axis", int64_t{3});
  ExpectError(op, {x, RandomTensor({4}, 401)}, axis3,
              "axis 3 is out of range for rank 3");
  ExpectError(op, {x, RandomTensor({5}, 402)}, OpAttrs(),
              "scale [5] does not broadcast to the normalized dimensions [4]");
  OpAttrs axis1;
  axis1.Set("axis", int64_t{1});
  ExpectError(op, {x, RandomTensor({3, 4}, 403), RandomTensor({2, 3, 4}, 404)},
              axis1, "bias [2, 3, 4] does not broadcast");
  ExpectError(op, {x}, OpAttrs(), "takes 2 or 3 arguments");
}

//===--- Reductions -------------------------------------------------------===//

enum class Kind {
  kMean,
  kSum,
  kMax,
  kMin,
  kProd,
  kL1,
  kL2,
  kSumSquare,
  kLogSum,
  kLogSumExp
};

// The reduction of `x` over `reduced` dims (every dim if empty), keeping
// them as 1s if `keepdims`; in double, straight from each op's definition.
Tensor32 NaiveReduce(const Tensor32& x, Kind kind, std::vector<int> axes,
                     bool keepdims, std::vector<double>* values) {
  const int rank = x.shape.size();
  std::vector<bool> reduced(rank, axes.empty());
  for (int axis : axes) reduced[axis < 0 ? axis + rank : axis] = true;
  Shape kept_shape, result_shape;
  for (int d = 0; d < rank; ++d) {
    kept_shape.push_back(reduced[d] ? 1 : x.shape[d]);
    if (!reduced[d] || keepdims) result_shape.push_back(kept_shape.back());
  }
  const int64_t out_count = Count(kept_shape);
  const double inf = std::numeric_limits<double>::infinity();
  values->assign(out_count, kind == Kind::kMax    ? -inf
                            : kind == Kind::kMin  ? inf
                            : kind == Kind::kProd ? 1.0
                                                  : 0.0);
  for (size_t i = 0; i < x.values.size(); ++i) {
    Shape index = Unravel(i, x.shape);
    for (int d = 0; d < rank; ++d) {
      if (reduced[d]) index[d] = 0;
    }
    double& out = (*values)[BroadcastFlat(index, kept_shape)];
    const double v = x.values[i];
    switch (kind) {
      case Kind::kMax:
        out = std::max(out, v);
        break;
      case Kind::kMin:
        out = std::min(out, v);
        break;
      case Kind::kProd:
        out *= v;
        break;
      case Kind::kL1:
        out += std::fabs(v);
        break;
      case Kind::kL2:
      case Kind::kSumSquare:
        out += v * v;
        break;
      case Kind::kLogSumExp:
        out += std::exp(v);
        break;
      default:
        out += v;
    }
  }
  for (double& v : *values) {
    if (kind == Kind::kMean)
      v /= static_cast<double>(Count(x.shape)) / out_count;
    if (kind == Kind::kL2) v = std::sqrt(v);
    if (kind == Kind::kLogSum || kind == Kind::kLogSumExp) v = std::log(v);
  }
  return {result_shape, {}};
}

TEST_F(NormOpsTest, EveryReductionMatchesItsDefinition) {
  // Positive values (log_sum's sum must be), some negative for the others.
  Tensor32 positive = {{2, 3, 4}, Random(24, 550, 0.5f, 1.5f)};
  Tensor32 mixed = RandomTensor({2, 3, 4}, 551);
  const std::pair<std::string, Kind> ops[] = {
      {"nn.reduce_min", Kind::kMin},
      {"nn.reduce_prod", Kind::kProd},
      {"nn.reduce_l1", Kind::kL1},
      {"nn.reduce_l2", Kind::kL2},
      {"nn.reduce_sum_square", Kind::kSumSquare},
      {"nn.reduce_log_sum", Kind::kLogSum},
      {"nn.reduce_log_sum_exp", Kind::kLogSumExp}};
  for (const auto& [op, kind] : ops) {
    const Tensor32& x = kind == Kind::kLogSum ? positive : mixed;
    for (const std::vector<int>& axes :
         std::vector<std::vector<int>>{{}, {0}, {1}, {-1}, {0, 2}, {1, 2}}) {
      for (int keepdims : {0, 1}) {
        SCOPED_TRACE(testing::Message() << op << " axes " << axes.size()
                                        << (axes.empty() ? 0 : axes[0])
                                        << " keepdims " << keepdims);
        OpAttrs attrs;
        if (!axes.empty()) {
          std::vector<int64_t> wide(axes.begin(), axes.end());
          attrs.SetArray<int64_t>("axes", absl::MakeConstSpan(wide));
        }
        attrs.Set("keepdims", int64_t{keepdims});
        auto result = Run(op, {x}, attrs);
        ASSERT_TRUE(result.ok()) << result.status();
        std::vector<double> expected;
        EXPECT_EQ(result->shape,
                  NaiveReduce(x, kind, axes, keepdims != 0, &expected).shape);
        ExpectNear(result->values, expected);
      }
    }
  }
}

TEST_F(NormOpsTest, LogSumExpDoesNotOverflow) {
  // exp(100) overflows f32; the op subtracts each result's max first.
  const Tensor32 x{{1, 3}, {100, 99, 98}};
  OpAttrs last;
  last.SetArray<int64_t>("axes", {-1});
  auto result = Run("nn.reduce_log_sum_exp", {x}, last);
  ASSERT_TRUE(result.ok()) << result.status();
  ExpectNear(result->values,
             {100 + std::log(1 + std::exp(-1.0) + std::exp(-2.0))});
}

TEST_F(NormOpsTest, ReductionsOverAxesWithAndWithoutKeepdims) {
  const Tensor32 x = RandomTensor({2, 3, 4, 5}, 500);
  const std::vector<std::vector<int>> axes_cases = {
      {1},    {3},     {0},       {-1},         {-3}, {0, 2},
      {1, 3}, {-1, 1}, {0, 1, 2}, {3, 0, 1, 2}, {}};
  const std::pair<std::string, Kind> ops[] = {{"nn.reduce_mean", Kind::kMean},
                                              {"nn.reduce_sum", Kind::kSum},
                                              {"nn.reduce_max", Kind::kMax}};
  for (const auto& [op, kind] : ops) {
    for (const std::vector<int>& axes : axes_cases) {
      for (int keepdims : {0, 1, -1 /* attribute absent: default 1 */}) {
        SCOPED_TRACE(testing::Message() << op << " axes " << axes.size()
                                        << (axes.empty() ? 0 : axes[0])
                                        << " keepdims " << keepdims);
        OpAttrs attrs;
        if (!axes.empty()) {
          std::vector<int64_t> wide(axes.begin(), axes.end());
          attrs.SetArray<int64_t>("axes", absl::MakeConstSpan(wide));
        }
        if (keepdims >= 0) attrs.Set("keepdims", int64_t{keepdims});
        auto result = Run(op, {x}, attrs);
        ASSERT_TRUE(result.ok()) << result.status();
        std::vector<double> expected;
        const Tensor32 reference =
            NaiveReduce(x, kind, axes, keepdims != 0, &expected);
        EXPECT_EQ(result->shape, reference.shape);
        ExpectNear(result->values, expected);
      }
    }
  }
}

TEST_F(NormOpsTest, ReductionsEmptyAxesAndOddShapes) {
  const Tensor32 x = RandomTensor({3, 1, 4}, 600);
  // An empty axes list reduces everything, unless noop_with_empty_axes.
  OpAttrs empty;
  empty.SetArray<int64_t>("axes", absl::Span<const int64_t>());
  empty.Set("keepdims", int64_t{0});
  auto all = Run("nn.reduce_sum", {x}, empty);
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->shape, Shape{});
  std::vector<double> expected;
  NaiveReduce(x, Kind::kSum, {}, false, &expected);
  ExpectNear(all->values, expected);

  empty.Set("noop_with_empty_axes", int64_t{1});
  auto noop = Run("nn.reduce_max", {x}, empty);
  ASSERT_TRUE(noop.ok()) << noop.status();
  EXPECT_EQ(noop->shape, x.shape);
  EXPECT_EQ(noop->values, x.values);

  // Reducing over a size-1 dimension and a kept inner dimension.
  OpAttrs middle;
  middle.SetArray<int64_t>("axes", {1});
  auto one = Run("nn.reduce_mean", {x}, middle);
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->shape, (Shape{3, 1, 4}));
  ExpectNear(one->values,
             std::vector<double>(x.values.begin(), x.values.end()));

  // Kept inner dimensions longer than a vector block.
  const Tensor32 wide = RandomTensor({3, 4, 19}, 602);
  for (auto [op, kind] :
       {std::pair<std::string, Kind>{"nn.reduce_sum", Kind::kSum},
        {"nn.reduce_mean", Kind::kMean},
        {"nn.reduce_max", Kind::kMax}}) {
    for (int axis : {0, 1}) {
      OpAttrs attrs;
      attrs.SetArray<int64_t>("axes", {axis});
      auto result = Run(op, {wide}, attrs);
      ASSERT_TRUE(result.ok()) << result.status();
      EXPECT_EQ(result->shape,
                NaiveReduce(wide, kind, {axis}, true, &expected).shape);
      ExpectNear(result->values, expected);
    }
  }

  // A long row of large values: accumulated in double.
  Tensor32 big{{2, 4096}, Random(8192, 601, 999.0f, 1001.0f)};
  OpAttrs last;
  last.SetArray<int64_t>("axes", {-1});
  for (auto [op, kind] :
       {std::pair<std::string, Kind>{"nn.reduce_sum", Kind::kSum},
        {"nn.reduce_mean", Kind::kMean},
        {"nn.reduce_max", Kind::kMax}}) {
    auto result = Run(op, {big}, last);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->shape, (Shape{2, 1}));
    NaiveReduce(big, kind, {-1}, true, &expected);
    ExpectNear(result->values, expected, 1e-6);
  }
}

TEST_F(NormOpsTest, ReductionsRejectBadAxes) {
  const Tensor32 x = RandomTensor({2, 3}, 700);
  for (const std::string op :
       {"nn.reduce_mean", "nn.reduce_sum", "nn.reduce_max"}) {
    OpAttrs out_of_range;
    out_of_range.SetArray<int64_t>("axes", {0, 2});
    ExpectError(op, {x}, out_of_range, "axis 2 is out of range for rank 2");
    OpAttrs negative;
    negative.SetArray<int64_t>("axes", {-3});
    ExpectError(op, {x}, negative, "axis -3 is out of range");
    OpAttrs repeated;
    repeated.SetArray<int64_t>("axes", {1, -1});
    ExpectError(op, {x}, repeated, "axis -1 is repeated");
    ExpectError(op, {x, x}, OpAttrs(), "takes 1 arguments");
  }
}

//===--- nn.gemm ----------------------------------------------------------===//

// alpha * A' * B' + beta * C, A' [m, k], B' [k, n], C broadcast.
std::vector<double> NaiveGemm(const Tensor32& a, const Tensor32& b,
                              const Tensor32* c, bool trans_a, bool trans_b,
                              double alpha, double beta, int64_t m, int64_t k,
                              int64_t n) {
  std::vector<double> out(m * n);
  for (int64_t i = 0; i < m; ++i) {
    for (int64_t j = 0; j < n; ++j) {
      double sum = 0;
      for (int64_t l = 0; l < k; ++l) {
        const double av = trans_a ? a.values[l * m + i] : a.values[i * k + l];
        const double bv = trans_b ? b.values[j * k + l] : b.values[l * n + j];
        sum += av * bv;
      }
      out[i * n + j] = alpha * sum;
      if (c)
        out[i * n + j] += beta * c->values[BroadcastFlat({i, j}, c->shape)];
    }
  }
  return out;
}

TEST_F(NormOpsTest, GemmTransposesScalesAndBroadcastsC) {
  const int64_t m = 3, k = 5, n = 4;
  unsigned seed = 800;
  const std::optional<Shape> c_shapes[] = {
      std::nullopt, Shape{n}, Shape{m, 1}, Shape{}, Shape{m, n}, Shape{1, n}};
  for (int trans_a : {0, 1}) {
    for (int trans_b : {0, 1}) {
      for (const std::optional<Shape>& c_shape : c_shapes) {
        for (auto [alpha, beta] : {std::pair<float, float>{1.0f, 1.0f},
                                   {0.5f, -2.0f},
                                   {-1.5f, 0.0f}}) {
          SCOPED_TRACE(testing::Message()
                       << "transA " << trans_a << " transB " << trans_b
                       << " C rank " << (c_shape ? int(c_shape->size()) : -1)
                       << " alpha " << alpha << " beta " << beta);
          const Tensor32 a =
              RandomTensor(trans_a ? Shape{k, m} : Shape{m, k}, seed++);
          const Tensor32 b =
              RandomTensor(trans_b ? Shape{n, k} : Shape{k, n}, seed++);
          std::optional<Tensor32> c;
          if (c_shape) c = RandomTensor(*c_shape, seed++);
          OpAttrs attrs;
          // Defaults (1, 1, 0, 0) are exercised by leaving them out.
          if (alpha != 1.0f) attrs.Set("alpha", alpha);
          if (beta != 1.0f) attrs.Set("beta", beta);
          if (trans_a) attrs.Set("transA", int64_t{1});
          if (trans_b) attrs.Set("transB", int64_t{1});
          std::vector<Tensor32> args = {a, b};
          if (c) args.push_back(*c);
          // Read-only B (and C): a model's constant weights, computed from
          // B reordered once where C is a bias ([N], [1, N]; alpha and
          // beta 1), the general way otherwise.
          for (uint64_t read_only : {0b000, 0b010, 0b110}) {
            SCOPED_TRACE(testing::Message() << "read_only " << read_only);
            auto result = Run("nn.gemm", args, attrs, read_only);
            ASSERT_TRUE(result.ok()) << result.status();
            EXPECT_EQ(result->shape, (Shape{m, n}));
            ExpectNear(result->values,
                       NaiveGemm(a, b, c ? &*c : nullptr, trans_a, trans_b,
                                 alpha, beta, m, k, n));
          }
        }
      }
    }
  }
}

TEST_F(NormOpsTest, GemmVectorShapesAndEmptyInnerDimension) {
  // M = 1 and N = 1 with transposes (a dimension of 1 on either side).
  const Tensor32 a = RandomTensor({6, 1}, 900), b = RandomTensor({1, 6}, 901);
  OpAttrs both;
  both.Set("transA", int64_t{1});
  both.Set("transB", int64_t{1});
  auto dot = Run("nn.gemm", {a, b}, both);
  ASSERT_TRUE(dot.ok()) << dot.status();
  EXPECT_EQ(dot->shape, (Shape{1, 1}));
  ExpectNear(dot->values, NaiveGemm(a, b, nullptr, true, true, 1, 1, 1, 6, 1));

  // A fully connected layer at batch 1 (MobileNetV2's classifier, smaller):
  // constant weights [N, K] (transB), a bias [N].
  const Tensor32 x = RandomTensor({1, 40}, 905),
                 w = RandomTensor({24, 40}, 906);
  const Tensor32 bias = RandomTensor({24}, 907);
  OpAttrs trans_b;
  trans_b.Set("transB", int64_t{1});
  for (int call = 0; call < 2; ++call) {  // The second finds it cached.
    auto fc = Run("nn.gemm", {x, w, bias}, trans_b, /*read_only=*/0b110);
    ASSERT_TRUE(fc.ok()) << fc.status();
    EXPECT_EQ(fc->shape, (Shape{1, 24}));
    ExpectNear(fc->values,
               NaiveGemm(x, w, &bias, false, true, 1, 1, 1, 40, 24));
  }

  // Rows longer than a vector block, transposed operands, C as [N].
  const int64_t m = 7, k = 9, n = 19;
  const Tensor32 at = RandomTensor({k, m}, 902), bt = RandomTensor({n, k}, 903);
  const Tensor32 row = RandomTensor({n}, 904);
  both.Set("alpha", 0.75f);
  both.Set("beta", 0.5f);
  auto big = Run("nn.gemm", {at, bt, row}, both);
  ASSERT_TRUE(big.ok()) << big.status();
  EXPECT_EQ(big->shape, (Shape{m, n}));
  ExpectNear(big->values,
             NaiveGemm(at, bt, &row, true, true, 0.75, 0.5, m, k, n));

  // K = 0: alpha * (empty sum) + beta * C.
  const Tensor32 c{{2}, {1.5f, -3.0f}};
  OpAttrs beta;
  beta.Set("beta", 2.0f);
  auto empty = Run("nn.gemm", {{{3, 0}, {}}, {{0, 2}, {}}, c}, beta);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape, (Shape{3, 2}));
  ExpectNear(empty->values, {3, -6, 3, -6, 3, -6});
}

TEST_F(NormOpsTest, GemmRejectsBadOperands) {
  const std::string op = "nn.gemm";
  const Tensor32 a = RandomTensor({3, 5}, 1000), b = RandomTensor({5, 4}, 1001);
  ExpectError(op, {a, RandomTensor({4, 5}, 1002)}, OpAttrs(),
              "inner dimensions differ");
  OpAttrs trans_a;
  trans_a.Set("transA", int64_t{1});
  ExpectError(op, {a, b}, trans_a, "inner dimensions differ");
  ExpectError(op, {a, b, RandomTensor({2, 4}, 1003)}, OpAttrs(),
              "C [2, 4] does not broadcast to [3, 4]");
  ExpectError(op, {a, b, RandomTensor({3}, 1004)}, OpAttrs(),
              "C [3] does not broadcast");
  ExpectError(op, {a, b, RandomTensor({1, 3, 4}, 1005)}, OpAttrs(),
              "C [1, 3, 4] does not broadcast");
  ExpectError(op, {RandomTensor({1, 3, 5}, 1006), b}, OpAttrs(),
              "A and B must have rank 2");
  ExpectError(op, {a}, OpAttrs(), "takes 2 or 3 arguments");
  OpAttrs bad_flag;
  bad_flag.Set("transB", int64_t{2});
  ExpectError(op, {a, b}, bad_flag, "transA and transB must be 0 or 1");
}

TEST_F(NormOpsTest, OtherDtypesFailNamingTheOp) {
  auto ints = core_->MakeDenseTensorHandle<int32_t>({2, 2}, {{1, 2, 3, 4}});
  ASSERT_TRUE(ints.ok());
  for (const char* op :
       {"nn.gemm", "nn.reduce_sum", "nn.layer_normalization"}) {
    TensorHandle args[2] = {ints->CopyRef(), ints->CopyRef()};
    const size_t count = std::string(op) == "nn.reduce_sum" ? 1 : 2;
    TensorHandle result;
    core_->Execute(*exec_ctx_, op, cpu_, absl::MakeSpan(args, count),
                   OpAttrsRef(), absl::MakeSpan(&result, 1), nullptr);
    ASSERT_EQ(core_->Await(result), nullptr) << op;
    EXPECT_THAT(result.GetErrorIfPresent()->message(),
                HasSubstr(std::string(op) + ": argument 0 is i32"));
  }
}

}  // namespace
}  // namespace asyncrt::nn
