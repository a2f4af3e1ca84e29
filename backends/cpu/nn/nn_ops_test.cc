// Tests of the nn.* op set through the eager API (the same registry graph
// mode uses): results against naive reference implementations, shapes from
// the shape functions, and errors that name the op.
#include "asyncrt/backends/nn_ops.h"

#include <fcntl.h>
#include <omp.h>
#include <sys/mman.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/match.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_site_cache.h"
#include "asyncrt/core_runtime/shape_memo.h"
#include "asyncrt/runtime/runtime.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "backends/cpu/nn/onednn_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "testing/memory_map_test_util.h"

namespace asyncrt::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

class NnOpsTest : public EagerOpTest {
 protected:
  // Runs `op` eagerly as Run() does, with oneDNN's verbose log of its
  // executions (kernel names and layouts) in `log`.
  absl::StatusOr<Tensor32> RunLogged(const std::string& op,
                                     const std::vector<Tensor32>& args,
                                     const OpAttrs& attrs, uint64_t read_only,
                                     std::string* log) {
    dnnl::set_verbose(1);
    ::testing::internal::CaptureStdout();
    absl::StatusOr<Tensor32> result = Run(op, args, attrs, read_only);
    *log = ::testing::internal::GetCapturedStdout();
    dnnl::set_verbose(0);
    return result;
  }

  // Runs `op` on `args` as a program's op site does (RunConcrete with the
  // site's shape memo and OpSiteCache); an error if it does not take that
  // path.
  absl::StatusOr<Tensor32> RunAtSite(const CoreRuntimeOp& op,
                                     std::vector<const TensorHandle*> args,
                                     const OpAttrsRef& attrs, ShapeMemo& memo,
                                     OpSiteCache& site) {
    TensorHandle result;
    if (!op.RunConcrete(*exec_ctx_, args, /*consumed_arguments=*/0, attrs,
                        result, memo, /*arena=*/nullptr, &site)) {
      return absl::InternalError("not run as a program site");
    }
    return Read(result);
  }
};

std::vector<float> Random(size_t count, unsigned seed) {
  return RandomFloats(count, seed);
}

void ExpectNear(const std::vector<float>& actual,
                const std::vector<float>& expected, float tolerance = 1e-5f) {
  ASSERT_EQ(actual.size(), expected.size());
  for (size_t i = 0; i < actual.size(); ++i) {
    EXPECT_NEAR(actual[i], expected[i],
                tolerance * std::max(1.0f, std::fabs(expected[i])))
        << "element " << i;
  }
}

//===--- Elementwise ------------------------------------------------------===//

TEST_F(NnOpsTest, BinaryOpsBroadcastLikeNumpy) {
  Tensor32 a{{2, 3}, {1, 2, 3, 4, 5, 6}};
  auto row = Run("nn.add", {a, {{3}, {10, 20, 30}}});
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(row->values, (std::vector<float>{11, 22, 33, 14, 25, 36}));

  auto outer = Run("nn.mul", {{{2, 1}, {2, 3}}, {{1, 3}, {1, 10, 100}}});
  ASSERT_TRUE(outer.ok()) << outer.status();
  EXPECT_EQ(outer->shape, (std::vector<int64_t>{2, 3}));
  EXPECT_EQ(outer->values, (std::vector<float>{2, 20, 200, 3, 30, 300}));

  auto scalar = Run("nn.sub", {{{}, {1}}, a});
  ASSERT_TRUE(scalar.ok()) << scalar.status();
  EXPECT_EQ(scalar->values, (std::vector<float>{0, -1, -2, -3, -4, -5}));

  // A middle dimension broadcast: [2, 1, 2] / [3, 1] -> [2, 3, 2].
  auto middle = Run("nn.div", {{{2, 1, 2}, {2, 4, 6, 8}}, {{3, 1}, {1, 2, 4}}});
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_EQ(middle->shape, (std::vector<int64_t>{2, 3, 2}));
  EXPECT_EQ(middle->values,
            (std::vector<float>{2, 4, 1, 2, 0.5, 1, 6, 8, 3, 4, 1.5, 2}));

  auto power = Run("nn.pow", {{{3}, {1, 2, 3}}, {{1}, {2}}});
  ASSERT_TRUE(power.ok());
  EXPECT_EQ(power->values, (std::vector<float>{1, 4, 9}));
  auto maximum = Run("nn.max", {{{3}, {1, 5, 3}}, {{3}, {4, 2, 3}}});
  ASSERT_TRUE(maximum.ok());
  EXPECT_EQ(maximum->values, (std::vector<float>{4, 5, 3}));
}

TEST_F(NnOpsTest, ShapesThatDoNotBroadcastFailNamingTheOp) {
  auto result = Run("nn.add", {{{2, 3}, Random(6, 1)}, {{2}, {1, 2}}});
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("nn.add"));
  EXPECT_THAT(result.status().message(), HasSubstr("do not broadcast"));
}

TEST_F(NnOpsTest, OtherDtypesFailNamingTheArgument) {
  auto ints = core_->MakeDenseTensorHandle<int32_t>({2}, {{1, 2}});
  ASSERT_TRUE(ints.ok());
  TensorHandle args[2] = {ints->CopyRef(), ints->CopyRef()};
  TensorHandle result;
  // Arithmetic takes integers; activations compute in f32 only.
  core_->Execute(*exec_ctx_, "nn.sigmoid", cpu_, absl::MakeSpan(args, 1),
                 OpAttrsRef(), absl::MakeSpan(&result, 1), nullptr);
  ASSERT_EQ(core_->Await(result), nullptr);
  EXPECT_THAT(result.GetErrorIfPresent()->message(),
              HasSubstr("nn.sigmoid: argument 0 is i32"));
}

TEST_F(NnOpsTest, UnaryOpsMatchTheirDefinitions) {
  Tensor32 x{{5}, {-2, -0.5, 0, 0.5, 3}};
  auto expect = [&](const std::string& op, auto f, const OpAttrs& attrs) {
    auto result = Run(op, {x}, attrs);
    ASSERT_TRUE(result.ok()) << op << ": " << result.status();
    std::vector<float> expected;
    for (float v : x.values) expected.push_back(f(v));
    ExpectNear(result->values, expected);
  };
  expect(
      "nn.relu", [](float v) { return v > 0 ? v : 0.0f; }, OpAttrs());
  expect(
      "nn.sigmoid", [](float v) { return 1 / (1 + std::exp(-v)); }, OpAttrs());
  expect(
      "nn.tanh", [](float v) { return std::tanh(v); }, OpAttrs());
  expect(
      "nn.erf", [](float v) { return std::erf(v); }, OpAttrs());
  expect(
      "nn.gelu",
      [](float v) { return 0.5f * v * (1 + std::erf(v / std::sqrt(2.0f))); },
      OpAttrs());
  expect(
      "nn.neg", [](float v) { return -v; }, OpAttrs());
  expect(
      "nn.abs", [](float v) { return std::fabs(v); }, OpAttrs());
  expect(
      "nn.hard_swish",
      [](float v) { return v * std::clamp(v / 6 + 0.5f, 0.0f, 1.0f); },
      OpAttrs());
  OpAttrs alpha;
  alpha.Set("alpha", 0.1f);
  expect(
      "nn.leaky_relu", [](float v) { return v >= 0 ? v : 0.1f * v; }, alpha);
  OpAttrs relu6;
  relu6.Set("min", 0.0f);
  relu6.Set("max", 0.75f);
  expect(
      "nn.clip", [](float v) { return std::clamp(v, 0.0f, 0.75f); }, relu6);
}

TEST_F(NnOpsTest, SoftmaxAlongAnyAxis) {
  Tensor32 x{{2, 3}, {1, 2, 3, 1, 1, 1}};
  auto last = Run("nn.softmax", {x});
  ASSERT_TRUE(last.ok()) << last.status();
  const float e = std::exp(1.0f), e2 = std::exp(2.0f), e3 = std::exp(3.0f);
  const float sum = e + e2 + e3;
  ExpectNear(last->values,
             {e / sum, e2 / sum, e3 / sum, 1 / 3.0f, 1 / 3.0f, 1 / 3.0f});

  OpAttrs axis0;
  axis0.Set("axis", int64_t{0});
  auto first = Run("nn.softmax", {x}, axis0);
  ASSERT_TRUE(first.ok());
  // Column 2: exp(3) and exp(1).
  EXPECT_NEAR(first->values[2], e3 / (e3 + e), 1e-6);
  EXPECT_NEAR(first->values[5], e / (e3 + e), 1e-6);

  auto log = Run("nn.log_softmax", {x});
  ASSERT_TRUE(log.ok());
  for (size_t i = 0; i < 6; ++i) {
    EXPECT_NEAR(log->values[i], std::log(last->values[i]), 1e-5);
  }

  OpAttrs bad;
  bad.Set("axis", int64_t{2});
  auto error = Run("nn.softmax", {x}, bad);
  ASSERT_FALSE(error.ok());
  EXPECT_THAT(error.status().message(),
              HasSubstr("nn.softmax: axis 2 is out of range for rank 2"));
}

//===--- MatMul -----------------------------------------------------------===//

// [batch, m, k] x [k, n] or [batch, k, n].
std::vector<float> NaiveMatmul(const std::vector<float>& a,
                               const std::vector<float>& b, int batch, int m,
                               int k, int n, bool b_batched) {
  std::vector<float> out(batch * m * n, 0.0f);
  for (int p = 0; p < batch; ++p) {
    for (int i = 0; i < m; ++i) {
      for (int j = 0; j < n; ++j) {
        float sum = 0;
        for (int l = 0; l < k; ++l) {
          sum += a[(p * m + i) * k + l] *
                 b[(b_batched ? p * k * n : 0) + l * n + j];
        }
        out[(p * m + i) * n + j] = sum;
      }
    }
  }
  return out;
}

TEST_F(NnOpsTest, MatmulBatchesAndBroadcasts) {
  std::vector<float> a = Random(2 * 3 * 5, 2), b = Random(5 * 4, 3);
  auto plain =
      Run("nn.matmul", {{{3, 5}, {a.begin(), a.begin() + 15}}, {{5, 4}, b}});
  ASSERT_TRUE(plain.ok()) << plain.status();
  EXPECT_EQ(plain->shape, (std::vector<int64_t>{3, 4}));
  ExpectNear(plain->values,
             NaiveMatmul({a.begin(), a.begin() + 15}, b, 1, 3, 5, 4, false));

  auto broadcast = Run("nn.matmul", {{{2, 3, 5}, a}, {{5, 4}, b}});
  ASSERT_TRUE(broadcast.ok()) << broadcast.status();
  EXPECT_EQ(broadcast->shape, (std::vector<int64_t>{2, 3, 4}));
  ExpectNear(broadcast->values, NaiveMatmul(a, b, 2, 3, 5, 4, false));

  std::vector<float> b2 = Random(2 * 5 * 4, 4);
  auto batched = Run("nn.matmul", {{{2, 3, 5}, a}, {{2, 5, 4}, b2}});
  ASSERT_TRUE(batched.ok()) << batched.status();
  ExpectNear(batched->values, NaiveMatmul(a, b2, 2, 3, 5, 4, true));

  // Vectors: [5] x [5, 4] -> [4]; [3, 5] x [5] -> [3].
  auto row = Run("nn.matmul", {{{5}, {a.begin(), a.begin() + 5}}, {{5, 4}, b}});
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->shape, (std::vector<int64_t>{4}));
  ExpectNear(row->values,
             NaiveMatmul({a.begin(), a.begin() + 5}, b, 1, 1, 5, 4, false));
  auto column = Run("nn.matmul", {{{3, 5}, {a.begin(), a.begin() + 15}},
                                  {{5}, {b.begin(), b.begin() + 5}}});
  ASSERT_TRUE(column.ok()) << column.status();
  EXPECT_EQ(column->shape, (std::vector<int64_t>{3}));
  ExpectNear(column->values,
             NaiveMatmul({a.begin(), a.begin() + 15},
                         {b.begin(), b.begin() + 5}, 1, 3, 5, 1, false));

  // Empty operands: an empty result, and a sum over nothing (K = 0).
  auto empty = Run("nn.matmul", {{{0, 3}, {}}, {{3, 4}, Random(12, 7)}});
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape, (std::vector<int64_t>{0, 4}));
  auto no_k = Run("nn.matmul", {{{2, 0}, {}}, {{0, 3}, {}}});
  ASSERT_TRUE(no_k.ok()) << no_k.status();
  EXPECT_EQ(no_k->values, (std::vector<float>(6, 0.0f)));

  auto mismatch =
      Run("nn.matmul", {{{3, 5}, Random(15, 5)}, {{4, 2}, Random(8, 6)}});
  ASSERT_FALSE(mismatch.ok());
  EXPECT_THAT(mismatch.status().message(),
              HasSubstr("nn.matmul: inner dimensions differ"));
}

// What -nn-fuse folds into a matmul: bias, residual sum and an activation
// (gelu, a scaling as "linear", relu), on plain and on constant weights
// (the path that folds batch into rows), and with K = 0.
TEST_F(NnOpsTest, MatmulFusesSumAndActivation) {
  std::vector<float> a = Random(2 * 3 * 5, 90), b = Random(5 * 4, 91);
  std::vector<float> bias = Random(4, 92), sum = Random(2 * 3 * 4, 93);
  std::vector<float> product = NaiveMatmul(a, b, 2, 3, 5, 4, false);
  struct Activation {
    const char* name;
    float alpha, beta;
    float (*apply)(float, float, float);
  };
  const Activation activations[] = {
      {"gelu", 0, 0,
       [](float v, float, float) {
         return 0.5f * v * (1.0f + std::erf(v / std::sqrt(2.0f)));
       }},
      {"linear", 0.125f, 0.5f,
       [](float v, float alpha, float beta) { return alpha * v + beta; }},
      {"relu", 0, 0, [](float v, float, float) { return v > 0 ? v : 0; }},
      {"swish", 0, 0,
       [](float v, float, float) { return v / (1.0f + std::exp(-v)); }},
  };
  for (const Activation& activation : activations) {
    for (uint64_t read_only : {0b0, 0b110}) {
      SCOPED_TRACE(testing::Message() << activation.name << " read_only="
                                      << read_only);
      OpAttrs attrs;
      attrs.SetString("activation", activation.name);
      attrs.Set("activation_alpha", activation.alpha);
      attrs.Set("activation_beta", activation.beta);
      auto fused = Run("nn.matmul",
                       {{{2, 3, 5}, a}, {{5, 4}, b}, {{4}, bias},
                        {{2, 3, 4}, sum}},
                       attrs, read_only);
      ASSERT_TRUE(fused.ok()) << fused.status();
      std::vector<float> expected(product.size());
      for (size_t i = 0; i < product.size(); ++i) {
        expected[i] = activation.apply(product[i] + bias[i % 4] + sum[i],
                                       activation.alpha, activation.beta);
      }
      ExpectNear(fused->values, expected, 1e-4f);
    }
  }
  // Primitives are made once per configuration: activation parameters
  // that print alike (six digits) are still different configurations.
  for (uint64_t read_only : {0b0, 0b10}) {
    for (float high : {0.25f, 0.25000003f}) {
      SCOPED_TRACE(testing::Message() << "clip at " << high
                                      << " read_only=" << read_only);
      OpAttrs attrs;
      attrs.SetString("activation", "clip");
      attrs.Set("activation_alpha", -high);
      attrs.Set("activation_beta", high);
      auto clipped = Run("nn.matmul", {{{2, 3, 5}, a}, {{5, 4}, b}}, attrs,
                         read_only);
      ASSERT_TRUE(clipped.ok()) << clipped.status();
      EXPECT_EQ(*std::max_element(clipped->values.begin(),
                                  clipped->values.end()),
                high);
      EXPECT_EQ(*std::min_element(clipped->values.begin(),
                                  clipped->values.end()),
                -high);
    }
  }

  // K = 0: bias + sum, then the activation.
  OpAttrs relu;
  relu.SetString("activation", "relu");
  auto no_k = Run("nn.matmul",
                  {{{2, 0}, {}}, {{0, 2}, {}}, {{2}, {1, -5}}, {{2, 2}, {1, 2, 3, 4}}},
                  relu);
  ASSERT_TRUE(no_k.ok()) << no_k.status();
  EXPECT_EQ(no_k->values, (std::vector<float>{2, 0, 4, 0}));

  auto wrong_sum = Run("nn.matmul", {{{3, 5}, Random(15, 94)},
                                     {{5, 4}, b}, {{4}, bias},
                                     {{3, 5}, Random(15, 95)}});
  ASSERT_FALSE(wrong_sum.ok());
  EXPECT_THAT(wrong_sum.status().message(),
              HasSubstr("nn.matmul: sum [3, 5] is not the result's shape"));
  OpAttrs unknown;
  unknown.SetString("activation", "mish");
  auto bad = Run("nn.matmul", {{{3, 5}, Random(15, 96)}, {{5, 4}, b}}, unknown);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown activation 'mish'"));
}

//===--- Conv -------------------------------------------------------------===//

struct ConvCase {
  int n, c, h, w, m, kh, kw, group;
  int stride, dilation, pad_top, pad_left, pad_bottom, pad_right;
  bool bias;
};

// ONNX Conv, written out.
std::vector<float> NaiveConv(const ConvCase& p, const std::vector<float>& x,
                             const std::vector<float>& w,
                             const std::vector<float>& bias, int oh, int ow) {
  std::vector<float> out(p.n * p.m * oh * ow);
  const int cg = p.c / p.group, mg = p.m / p.group;
  for (int n = 0; n < p.n; ++n)
    for (int m = 0; m < p.m; ++m)
      for (int y = 0; y < oh; ++y)
        for (int z = 0; z < ow; ++z) {
          float sum = p.bias ? bias[m] : 0.0f;
          const int g = m / mg;
          for (int c = 0; c < cg; ++c)
            for (int i = 0; i < p.kh; ++i)
              for (int j = 0; j < p.kw; ++j) {
                const int iy = y * p.stride - p.pad_top + i * p.dilation;
                const int iz = z * p.stride - p.pad_left + j * p.dilation;
                if (iy < 0 || iy >= p.h || iz < 0 || iz >= p.w) continue;
                sum += x[((n * p.c + g * cg + c) * p.h + iy) * p.w + iz] *
                       w[((m * cg + c) * p.kh + i) * p.kw + j];
              }
          out[((n * p.m + m) * oh + y) * ow + z] = sum;
        }
  return out;
}

TEST_F(NnOpsTest, ConvMatchesTheDefinition) {
  const ConvCase cases[] = {
      {1, 3, 8, 8, 4, 3, 3, 1, 1, 1, 1, 1, 1, 1, true},   // Same-size 3x3.
      {2, 4, 9, 7, 6, 3, 2, 2, 2, 1, 0, 1, 2, 0, false},  // Groups, stride.
      {1, 4, 10, 10, 4, 3, 3, 4, 1, 2, 2, 2, 2, 2,
       true},                                             // Depthwise, dilated.
      {1, 2, 5, 5, 3, 1, 1, 1, 1, 1, 0, 0, 0, 0, false},  // Pointwise.
  };
  unsigned seed = 10;
  for (const ConvCase& p : cases) {
    SCOPED_TRACE(testing::Message() << "c=" << p.c << " group=" << p.group
                                    << " stride=" << p.stride);
    std::vector<float> x = Random(p.n * p.c * p.h * p.w, seed++);
    std::vector<float> w = Random(p.m * (p.c / p.group) * p.kh * p.kw, seed++);
    std::vector<float> bias = Random(p.m, seed++);
    OpAttrs attrs;
    attrs.SetArray<int64_t>("strides", {p.stride, p.stride});
    attrs.SetArray<int64_t>("dilations", {p.dilation, p.dilation});
    attrs.SetArray<int64_t>("pads",
                            {p.pad_top, p.pad_left, p.pad_bottom, p.pad_right});
    attrs.Set("group", int64_t{p.group});
    std::vector<Tensor32> args = {{{p.n, p.c, p.h, p.w}, x},
                                  {{p.m, p.c / p.group, p.kh, p.kw}, w}};
    if (p.bias) args.push_back({{p.m}, bias});
    auto result = Run("nn.conv", args, attrs);
    ASSERT_TRUE(result.ok()) << result.status();
    const int oh =
        (p.h + p.pad_top + p.pad_bottom - (p.kh - 1) * p.dilation - 1) /
            p.stride +
        1;
    const int ow =
        (p.w + p.pad_left + p.pad_right - (p.kw - 1) * p.dilation - 1) /
            p.stride +
        1;
    EXPECT_EQ(result->shape, (std::vector<int64_t>{p.n, p.m, oh, ow}));
    ExpectNear(result->values, NaiveConv(p, x, w, bias, oh, ow), 1e-4f);
  }
}

TEST_F(NnOpsTest, ConvAutoPadAndOneDimension) {
  OpAttrs same;
  same.SetString("auto_pad", "SAME_UPPER");
  same.SetArray<int64_t>("strides", {2, 2});
  auto padded = Run(
      "nn.conv",
      {{{1, 1, 7, 7}, Random(49, 20)}, {{2, 1, 3, 3}, Random(18, 21)}}, same);
  ASSERT_TRUE(padded.ok()) << padded.status();
  EXPECT_EQ(padded->shape, (std::vector<int64_t>{1, 2, 4, 4}));

  // 1-D: [1, 2, 6] * [1, 2, 3] -> [1, 1, 4], checked against the 2-D case
  // with a height of 1.
  std::vector<float> x = Random(12, 22), w = Random(6, 23);
  auto one = Run("nn.conv", {{{1, 2, 6}, x}, {{1, 2, 3}, w}});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->shape, (std::vector<int64_t>{1, 1, 4}));
  ConvCase p{1, 2, 1, 6, 1, 1, 3, 1, 1, 1, 0, 0, 0, 0, false};
  ExpectNear(one->values, NaiveConv(p, x, w, {}, 1, 4), 1e-4f);
}

// The fusions of the model compiler: a residual sum, then an activation,
// both as oneDNN post-ops, against the unfused definition.
TEST_F(NnOpsTest, ConvFusesSumAndActivation) {
  for (int group : {1, 4}) {  // Blocked layouts; depthwise.
    SCOPED_TRACE(testing::Message() << "group=" << group);
    ConvCase p{1, 4, 6, 6, 4, 3, 3, group, 1, 1, 1, 1, 1, 1, true};
    std::vector<float> x = Random(144, 40), w = Random(144 / group, 41);
    std::vector<float> bias = Random(4, 42), sum = Random(144, 43);
    std::vector<float> conv = NaiveConv(p, x, w, bias, 6, 6);
    struct Activation {
      const char* name;
      float alpha, beta;
      float (*apply)(float, float, float);
    };
    const Activation activations[] = {
        {"relu", 0, 0, [](float v, float, float) { return v > 0 ? v : 0; }},
        {"leaky_relu", 0.1f, 0,
         [](float v, float a, float) { return v > 0 ? v : a * v; }},
        {"clip", -0.5f, 0.5f,
         [](float v, float lo, float hi) { return std::clamp(v, lo, hi); }},
        {"hard_swish", 0, 0,
         [](float v, float, float) {
           return v * std::clamp(v / 6.0f + 0.5f, 0.0f, 1.0f);
         }},
        {"sigmoid", 0, 0,
         [](float v, float, float) { return 1.0f / (1.0f + std::exp(-v)); }},
        {"tanh", 0, 0, [](float v, float, float) { return std::tanh(v); }},
        {"swish", 0, 0,
         [](float v, float, float) { return v / (1.0f + std::exp(-v)); }},
    };
    for (const Activation& activation : activations) {
      SCOPED_TRACE(activation.name);
      OpAttrs attrs;
      attrs.SetArray<int64_t>("pads", {1, 1, 1, 1});
      attrs.Set("group", int64_t{group});
      attrs.SetString("activation", activation.name);
      attrs.Set("activation_alpha", activation.alpha);
      attrs.Set("activation_beta", activation.beta);
      auto fused = Run("nn.conv",
                       {{{1, 4, 6, 6}, x},
                        {{4, 4 / group, 3, 3}, w},
                        {{4}, bias},
                        {{1, 4, 6, 6}, sum}},
                       attrs);
      ASSERT_TRUE(fused.ok()) << fused.status();
      std::vector<float> expected(conv.size());
      for (size_t i = 0; i < conv.size(); ++i) {
        expected[i] = activation.apply(conv[i] + sum[i], activation.alpha,
                                       activation.beta);
      }
      ExpectNear(fused->values, expected, 1e-4f);
    }
  }
  OpAttrs unknown;
  unknown.SetString("activation", "mish");
  auto bad = Run("nn.conv",
                 {{{1, 1, 3, 3}, Random(9, 44)}, {{1, 1, 1, 1}, Random(1, 45)}},
                 unknown);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("unknown activation 'mish'"));
  auto wrong_sum = Run("nn.conv", {{{1, 1, 3, 3}, Random(9, 46)},
                                   {{1, 1, 1, 1}, Random(1, 47)},
                                   {{1}, Random(1, 48)},
                                   {{1, 1, 2, 2}, Random(4, 49)}});
  ASSERT_FALSE(wrong_sum.ok());
  EXPECT_THAT(wrong_sum.status().message(),
              HasSubstr("is not the result's shape"));
}

// compute_layout = "blocked" (what -nn-assign-layouts sets on chains with
// 3x3 convolutions): on AVX-512 the convolution computes in nChw16c and,
// with algorithm "auto", runs oneDNN's Winograd kernels; "direct" opts
// out. Both agree with the definition, fused sum and activation included.
TEST_F(NnOpsTest, ConvWinogradAndBlockedLayouts) {
  const ConvCase p{1, 32, 10, 10, 32, 3, 3, 1, 1, 1, 1, 1, 1, 1, true};
  const std::vector<float> x = Random(3200, 50), w = Random(9216, 51);
  const std::vector<float> bias = Random(32, 52), sum = Random(3200, 53);
  std::vector<float> expected = NaiveConv(p, x, w, bias, 10, 10);
  for (size_t i = 0; i < expected.size(); ++i) {
    expected[i] = std::max(expected[i] + sum[i], 0.0f);
  }
  const std::vector<Tensor32> args = {
      {{1, 32, 10, 10}, x}, {{32, 32, 3, 3}, w}, {{32}, bias},
      {{1, 32, 10, 10}, sum}};
  const bool has_avx512 = OneDnnHasAvx512();
  for (const std::string algorithm : {"auto", "direct"}) {
    SCOPED_TRACE(algorithm);
    OpAttrs attrs;
    attrs.SetArray<int64_t>("pads", {1, 1, 1, 1});
    attrs.SetString("activation", "relu");
    attrs.SetString("compute_layout", "blocked");
    attrs.SetString("algorithm", algorithm);
    std::string log;
    auto result = RunLogged("nn.conv", args, attrs, /*read_only=*/0b0110, &log);
    ASSERT_TRUE(result.ok()) << result.status();
    ExpectNear(result->values, expected, 1e-4f);
    if (has_avx512) {
      EXPECT_EQ(absl::StrContains(log, "wino"), algorithm == "auto") << log;
      EXPECT_THAT(log, HasSubstr("dst_f32::blocked:aBcd16b"));
    }
  }
  OpAttrs keep;
  keep.SetString("compute_layout", "blocked");
  keep.SetString("result_layout", "onednn");
  TensorHandle kept =
      Execute("nn.conv", Args(*Handle(args[0]), *Handle(args[1], true)), keep);
  const Tensor* onednn = core_->Await(kept);
  ASSERT_NE(onednn, nullptr) << *kept.GetErrorIfPresent();
  if (has_avx512) {
    EXPECT_THAT(onednn->ToString(), HasSubstr("aBcd16b"));
  }

  for (const char* name : {"algorithm", "compute_layout"}) {
    OpAttrs bad;
    bad.SetString(name, "fastest");
    auto status = Run("nn.conv", {args[0], args[1]}, bad).status();
    EXPECT_THAT(status.message(),
                HasSubstr(absl::StrCat("nn.conv: unknown ", name,
                                       " \"fastest\"")));
  }
}

// compute_layout = "blocked" on the convolutions of MobileNet-like chains
// (what -nn-assign-layouts sets where a chain holds a depthwise
// convolution): depthwise convolutions (stride 1 and 2) and 1x1 ones over
// channels that are not a multiple of 16 (padded nChw16c) compute in
// blocked layouts on AVX-512; a grouped convolution that is not depthwise
// gets oneDNN's choice, not one forced on its groups. All agree with the
// definition, and none runs oneDNN's reference code.
TEST_F(NnOpsTest, ConvBlockedDepthwiseAndPaddedChannels) {
  const bool has_avx512 = OneDnnHasAvx512();
  struct Case {
    const char* name;
    ConvCase conv;
    const char* kernel;  // The oneDNN kernel on AVX-512.
    bool blocked;        // Whether the result must be in nChw16c there.
  };
  const Case cases[] = {
      {"depthwise",
       {1, 32, 9, 9, 32, 3, 3, 32, 1, 1, 1, 1, 1, 1, true},
       "jit_dw",
       true},
      {"depthwise strided",
       {1, 48, 9, 9, 48, 3, 3, 48, 2, 1, 1, 1, 1, 1, true},
       "jit_dw",
       true},
      {"1x1 to 24 channels",
       {1, 32, 5, 5, 24, 1, 1, 1, 1, 1, 0, 0, 0, 0, true},
       "jit_1x1",
       true},
      {"four groups",
       {1, 32, 5, 5, 32, 3, 3, 4, 1, 1, 1, 1, 1, 1, true},
       "convolution",
       false},
  };
  int seed = 60;
  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const ConvCase& p = c.conv;
    const int oh = (p.h + p.pad_top + p.pad_bottom - p.kh) / p.stride + 1;
    const int ow = (p.w + p.pad_left + p.pad_right - p.kw) / p.stride + 1;
    const std::vector<float> x = Random(p.c * p.h * p.w, seed++);
    const std::vector<float> w =
        Random(p.m * (p.c / p.group) * p.kh * p.kw, seed++);
    const std::vector<float> bias = Random(p.m, seed++);
    std::vector<float> expected = NaiveConv(p, x, w, bias, oh, ow);
    for (float& v : expected) v = std::clamp(v, 0.0f, 6.0f);
    OpAttrs attrs;
    attrs.SetArray<int64_t>("pads",
                            {p.pad_top, p.pad_left, p.pad_bottom, p.pad_right});
    attrs.SetArray<int64_t>("strides", {p.stride, p.stride});
    attrs.Set("group", int64_t{p.group});
    attrs.SetString("activation", "clip");
    attrs.Set("activation_alpha", 0.0f);
    attrs.Set("activation_beta", 6.0f);
    attrs.SetString("compute_layout", "blocked");
    const std::vector<Tensor32> args = {{{1, p.c, p.h, p.w}, x},
                                        {{p.m, p.c / p.group, p.kh, p.kw}, w},
                                        {{p.m}, bias}};
    std::string log;
    auto result = RunLogged("nn.conv", args, attrs, /*read_only=*/0b110, &log);
    ASSERT_TRUE(result.ok()) << result.status();
    ExpectNear(result->values, expected, 1e-4f);
    if (has_avx512) {
      EXPECT_THAT(log, Not(HasSubstr(",ref"))) << log;
      EXPECT_THAT(log, HasSubstr(c.kernel)) << log;
      if (c.blocked) {
        EXPECT_TRUE(absl::StrContains(log, "dst_f32::blocked:aBcd16b") ||
                    absl::StrContains(log, "dst_f32:p:blocked:aBcd16b"))
            << log;
      }
    }
  }
}

// A program's convolution site (corert.executeop, an op of
// corert.execute_sequence) keeps its first call's preparation in the
// site's OpSiteCache; later calls take it only with the same input layout
// and the same constant weights and bias, and get their own results in
// every case: other inputs, other weights, other shapes, writable weights.
TEST_F(NnOpsTest, ConvSiteKeepsItsPreparation) {
  absl::StatusOr<CoreRuntimeOp> op = cpu_->MakeOp("nn.conv");
  ASSERT_TRUE(op.ok()) << op.status();
  ShapeMemo memo;
  OpSiteCache site;
  OpAttrs attrs;
  attrs.SetArray<int64_t>("pads", {1, 1, 1, 1});
  attrs.SetString("activation", "relu");
  const OpAttrsRef frozen = attrs.Freeze();
  auto run = [&](const Tensor32& x, const Tensor32& w, bool constant_w,
                 const Tensor32& bias) -> absl::StatusOr<Tensor32> {
    absl::StatusOr<TensorHandle> handles[] = {Handle(x), Handle(w, constant_w),
                                              Handle(bias, true)};
    for (const auto& handle : handles) {
      if (!handle.ok()) return handle.status();
    }
    return RunAtSite(*op, {&*handles[0], &*handles[1], &*handles[2]}, frozen,
                     memo, site);
  };
  auto expected = [](const ConvCase& p, const Tensor32& x, const Tensor32& w,
                     const Tensor32& bias) {
    std::vector<float> out =
        NaiveConv(p, x.values, w.values, bias.values, p.h, p.w);
    for (float& v : out) v = std::max(v, 0.0f);
    return out;
  };
  const ConvCase small{1, 16, 6, 6, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true};
  const ConvCase large{1, 16, 9, 7, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true};
  const Tensor32 x1{{1, 16, 6, 6}, Random(576, 70)};
  const Tensor32 x2{{1, 16, 6, 6}, Random(576, 71)};
  const Tensor32 x3{{1, 16, 9, 7}, Random(1008, 72)};
  const Tensor32 w1{{16, 16, 3, 3}, Random(2304, 73)};
  const Tensor32 w2{{16, 16, 3, 3}, Random(2304, 74)};
  const Tensor32 bias{{16}, Random(16, 75)};
  // The constants are made once, as a program's are: the same buffers at
  // every call of the site.
  absl::StatusOr<TensorHandle> w1_handle = Handle(w1, true);
  absl::StatusOr<TensorHandle> bias_handle = Handle(bias, true);
  ASSERT_TRUE(w1_handle.ok() && bias_handle.ok());
  auto run_constant = [&](const Tensor32& x) -> absl::StatusOr<Tensor32> {
    absl::StatusOr<TensorHandle> x_handle = Handle(x);
    if (!x_handle.ok()) return x_handle.status();
    return RunAtSite(*op, {&*x_handle, &*w1_handle, &*bias_handle}, frozen,
                     memo, site);
  };
  auto first = run_constant(x1);
  ASSERT_TRUE(first.ok()) << first.status();
  ExpectNear(first->values, expected(small, x1, w1, bias), 1e-4f);
  EXPECT_FALSE(site.empty());
  auto second = run_constant(x2);  // The site's preparation.
  ASSERT_TRUE(second.ok()) << second.status();
  ExpectNear(second->values, expected(small, x2, w1, bias), 1e-4f);
  auto reshaped = run_constant(x3);  // Another input shape.
  ASSERT_TRUE(reshaped.ok()) << reshaped.status();
  ExpectNear(reshaped->values, expected(large, x3, w1, bias), 1e-4f);
  auto other_weights = run(x1, w2, true, bias);
  ASSERT_TRUE(other_weights.ok()) << other_weights.status();
  ExpectNear(other_weights->values, expected(small, x1, w2, bias), 1e-4f);
  auto writable_weights = run(x2, w2, false, bias);
  ASSERT_TRUE(writable_weights.ok()) << writable_weights.status();
  ExpectNear(writable_weights->values, expected(small, x2, w2, bias), 1e-4f);
  auto again = run_constant(x1);
  ASSERT_TRUE(again.ok()) << again.status();
  EXPECT_EQ(again->values, first->values);
}

// A pooling site keeps its primitives for its first input's layout and
// dimensions; another input shape at the same site is prepared afresh.
TEST_F(NnOpsTest, PoolSiteKeepsItsPrimitives) {
  absl::StatusOr<CoreRuntimeOp> op = cpu_->MakeOp("nn.max_pool");
  ASSERT_TRUE(op.ok()) << op.status();
  ShapeMemo memo;
  OpSiteCache site;
  OpAttrs attrs;
  attrs.SetArray<int64_t>("kernel_shape", {2, 2});
  attrs.SetArray<int64_t>("strides", {2, 2});
  const OpAttrsRef frozen = attrs.Freeze();
  auto run = [&](const Tensor32& x) -> absl::StatusOr<Tensor32> {
    absl::StatusOr<TensorHandle> handle = Handle(x);
    if (!handle.ok()) return handle.status();
    return RunAtSite(*op, {&*handle}, frozen, memo, site);
  };
  // Max over each 2x2 window of a C x H x W input.
  auto expected = [](const Tensor32& x) {
    const int64_t c = x.shape[1], h = x.shape[2], w = x.shape[3];
    std::vector<float> out;
    for (int64_t k = 0; k < c; ++k)
      for (int64_t i = 0; i + 1 < h; i += 2)
        for (int64_t j = 0; j + 1 < w; j += 2) {
          const float* p = &x.values[(k * h + i) * w + j];
          out.push_back(std::max({p[0], p[1], p[w], p[w + 1]}));
        }
    return out;
  };
  const Tensor32 a{{1, 3, 4, 4}, Random(48, 100)};
  const Tensor32 b{{1, 3, 4, 4}, Random(48, 101)};
  const Tensor32 c{{1, 3, 6, 8}, Random(144, 102)};
  for (const Tensor32* x : {&a, &b, &c, &a}) {
    absl::StatusOr<Tensor32> result = run(*x);
    ASSERT_TRUE(result.ok()) << result.status();
    EXPECT_EQ(result->values, expected(*x));
    EXPECT_FALSE(site.empty());
  }
}

// Several calls of a program run one convolution site at once: the first
// to finish preparing publishes its preparation, the others take it or
// their own, and every call gets its own input's result (run under
// ThreadSanitizer with the sanitizer suites).
TEST_F(NnOpsTest, ConvSiteSharedByThreads) {
  absl::StatusOr<CoreRuntimeOp> op = cpu_->MakeOp("nn.conv");
  ASSERT_TRUE(op.ok()) << op.status();
  ShapeMemo memo;
  OpSiteCache site;
  OpAttrs attrs;
  attrs.SetArray<int64_t>("pads", {1, 1, 1, 1});
  const OpAttrsRef frozen = attrs.Freeze();
  const ConvCase p{1, 16, 5, 5, 16, 3, 3, 1, 1, 1, 1, 1, 1, 1, true};
  const Tensor32 w{{16, 16, 3, 3}, Random(2304, 80)};
  const Tensor32 bias{{16}, Random(16, 81)};
  absl::StatusOr<TensorHandle> w_handle = Handle(w, true);
  absl::StatusOr<TensorHandle> bias_handle = Handle(bias, true);
  ASSERT_TRUE(w_handle.ok() && bias_handle.ok());
  constexpr int kThreads = 4, kCalls = 20;
  std::vector<Tensor32> inputs;
  std::vector<std::vector<float>> expected;
  for (int t = 0; t < kThreads; ++t) {
    inputs.push_back({{1, 16, 5, 5}, Random(400, 90 + t)});
    expected.push_back(
        NaiveConv(p, inputs.back().values, w.values, bias.values, 5, 5));
  }
  std::vector<int> mismatches(kThreads, 0);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      for (int call = 0; call < kCalls; ++call) {
        absl::StatusOr<TensorHandle> x = Handle(inputs[t]);
        if (!x.ok()) {
          ++mismatches[t];
          continue;
        }
        absl::StatusOr<Tensor32> values = RunAtSite(
            *op, {&*x, &*w_handle, &*bias_handle}, frozen, memo, site);
        if (!values.ok() || values->values.size() != expected[t].size()) {
          ++mismatches[t];
          continue;
        }
        for (size_t i = 0; i < expected[t].size(); ++i) {
          if (std::abs(values->values[i] - expected[t][i]) > 1e-4f) {
            ++mismatches[t];
            break;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_FALSE(site.empty());
  for (int t = 0; t < kThreads; ++t) EXPECT_EQ(mismatches[t], 0) << t;
}

// Constant weights (read-only buffers) take the paths that reorder them
// once into oneDNN's preferred layout and reuse them: the results must be
// those of plain weights, call after call.
// Resident kilobytes of the mapping that starts at `address` (smaps).
int64_t ResidentKb(const void* address) {
  std::ifstream smaps("/proc/self/smaps");
  std::string line;
  bool in_mapping = false;
  char start[32];
  std::snprintf(start, sizeof(start), "%lx-",
                static_cast<unsigned long>(reinterpret_cast<uintptr_t>(address)));
  while (std::getline(smaps, line)) {
    if (line.find('-') != std::string::npos && isxdigit(line[0]) &&
        line.find(' ') > line.find('-')) {
      in_mapping = line.rfind(start, 0) == 0;
    } else if (in_mapping && line.rfind("Rss:", 0) == 0) {
      return std::stoll(line.substr(4));
    }
  }
  return -1;
}

// Weights mapped from a file (as a BEF file's constants are) leave the
// resident set once an op computes from its reordered copy, and read back
// unchanged; writable buffers are left alone.
TEST(ReleaseConstantPagesTest, DropsMappedPagesAndKeepsTheBytes) {
  constexpr size_t kSize = 4 << 20;
  char path[] = "/tmp/asyncrt_pages_XXXXXX";
  const int fd = mkstemp(path);
  ASSERT_GE(fd, 0);
  std::vector<char> bytes(kSize);
  for (size_t i = 0; i < kSize; ++i) bytes[i] = static_cast<char>(i * 7);
  ASSERT_EQ(write(fd, bytes.data(), kSize), static_cast<ssize_t>(kSize));
  void* mapped = mmap(nullptr, kSize, PROT_READ, MAP_PRIVATE, fd, 0);
  close(fd);
  unlink(path);
  ASSERT_NE(mapped, MAP_FAILED);
  auto buffer = HostBuffer::CreateFromExternal(
      mapped, kSize, [](void* data, size_t size) { munmap(data, size); });
  int64_t checksum = 0;
  for (size_t i = 0; i < kSize; i += 4096) {
    checksum += static_cast<const char*>(mapped)[i];
  }
  EXPECT_GT(ResidentKb(mapped), 3 * 1024) << checksum;
  ReleaseConstantPages(*buffer);  // Writable: kept.
  EXPECT_GT(ResidentKb(mapped), 3 * 1024);
  buffer->MarkReadOnly();
  ReleaseConstantPages(*buffer);
  EXPECT_LT(ResidentKb(mapped), 1024);
  EXPECT_EQ(std::memcmp(mapped, bytes.data(), kSize), 0);
}

// Weights reordered once for a primitive are packed into memory advised
// for transparent huge pages, hold their values, and stay valid while the
// caller holds them.
TEST(CachedReorderedWeightsTest, LiveOnHugePagesWhileHeld) {
  constexpr int64_t kO = 64, kI = 32;
  std::vector<float> values(kO * kI * 9);
  for (size_t i = 0; i < values.size(); ++i) values[i] = 0.25f * i;
  auto buffer = HostBuffer::CreateFromExternal(
      values.data(), values.size() * sizeof(float), [](void*, size_t) {});
  buffer->MarkReadOnly();
  const dnnl::memory::desc plain({kO, kI, 3, 3}, dnnl::memory::data_type::f32,
                                 dnnl::memory::format_tag::oihw);
  const dnnl::memory::desc blocked({kO, kI, 3, 3}, dnnl::memory::data_type::f32,
                                   dnnl::memory::format_tag::OIhw16i16o);
  dnnl::memory source(plain, CpuEngine(), values.data());
  dnnl::reorder to_blocked(source, dnnl::memory(blocked, CpuEngine()));
  std::shared_ptr<const ReorderedWeights> reordered = CachedReorderedWeights(
      "huge-pages-test", *buffer, buffer, source, blocked, to_blocked);
  ASSERT_NE(reordered, nullptr);
  const void* data = reordered->weights.get_data_handle();
  EXPECT_EQ(reinterpret_cast<uintptr_t>(data) % 64, 0u);
  if (memory_test::TransparentHugePagesAvailable()) {
    EXPECT_TRUE(memory_test::AdvisedHugePages(data))
        << memory_test::MappingField(data, "VmFlags").value_or("no mapping");
  }
  // The same entry again, and its values back in the plain layout.
  EXPECT_EQ(CachedReorderedWeights("huge-pages-test", *buffer, buffer, source,
                                   blocked, to_blocked),
            reordered);
  std::vector<float> back(values.size());
  dnnl::memory plain_copy(plain, CpuEngine(), back.data());
  dnnl::stream stream(CpuEngine());
  dnnl::memory kept = reordered->weights;  // A handle to the same memory.
  dnnl::reorder(kept, plain_copy).execute(stream, kept, plain_copy);
  stream.wait();
  EXPECT_EQ(back, values);
}

TEST_F(NnOpsTest, ConstantWeightsGiveTheSameResults) {
  std::vector<Tensor32> matmul_args = {{{2, 3, 16}, Random(96, 50)},
                                       {{16, 24}, Random(384, 51)}};
  auto plain = Run("nn.matmul", matmul_args);
  ASSERT_TRUE(plain.ok()) << plain.status();
  for (int call = 0; call < 2; ++call) {
    auto constant =
        Run("nn.matmul", matmul_args, OpAttrs(), /*read_only=*/0b10);
    ASSERT_TRUE(constant.ok()) << constant.status();
    EXPECT_EQ(constant->shape, (std::vector<int64_t>{2, 3, 24}));
    ExpectNear(constant->values, plain->values, 1e-4f);
  }
  // A fused bias, on both paths (constant weights, and batched plain ones).
  std::vector<float> bias = Random(24, 55);
  std::vector<Tensor32> biased = matmul_args;
  biased.push_back({{24}, bias});
  std::vector<float> expected = plain->values;
  for (size_t i = 0; i < expected.size(); ++i) expected[i] += bias[i % 24];
  for (uint64_t read_only : {0b010, 0b110, 0b000}) {
    auto with_bias = Run("nn.matmul", biased, OpAttrs(), read_only);
    ASSERT_TRUE(with_bias.ok()) << with_bias.status();
    ExpectNear(with_bias->values, expected, 1e-4f);
  }
  auto bad_bias = Run("nn.matmul",
                      {matmul_args[0], matmul_args[1], {{23}, Random(23, 56)}});
  ASSERT_FALSE(bad_bias.ok());
  EXPECT_THAT(bad_bias.status().message(), HasSubstr("is not [24]"));
  OpAttrs pads;
  pads.SetArray<int64_t>("pads", {1, 1, 1, 1});
  std::vector<Tensor32> conv_args = {{{1, 8, 6, 6}, Random(288, 52)},
                                     {{16, 8, 3, 3}, Random(1152, 53)},
                                     {{16}, Random(16, 54)}};
  auto conv = Run("nn.conv", conv_args, pads);
  ASSERT_TRUE(conv.ok()) << conv.status();
  for (int call = 0; call < 2; ++call) {
    auto constant = Run("nn.conv", conv_args, pads, /*read_only=*/0b110);
    ASSERT_TRUE(constant.ok()) << constant.status();
    ExpectNear(constant->values, conv->values, 1e-4f);
  }
}

TEST_F(NnOpsTest, ConvRejectsInconsistentOperands) {
  auto channels = Run("nn.conv", {{{1, 3, 4, 4}, Random(48, 30)},
                                  {{2, 2, 3, 3}, Random(36, 31)}});
  ASSERT_FALSE(channels.ok());
  EXPECT_THAT(channels.status().message(),
              HasSubstr("nn.conv: input channels 3"));
  auto bias = Run("nn.conv", {{{1, 1, 4, 4}, Random(16, 32)},
                              {{2, 1, 3, 3}, Random(18, 33)},
                              {{3}, Random(3, 34)}});
  ASSERT_FALSE(bias.ok());
  EXPECT_THAT(bias.status().message(), HasSubstr("is not [2]"));
  OpAttrs pad;
  pad.SetString("auto_pad", "SOMETIMES");
  auto auto_pad = Run(
      "nn.conv",
      {{{1, 1, 4, 4}, Random(16, 35)}, {{2, 1, 3, 3}, Random(18, 36)}}, pad);
  ASSERT_FALSE(auto_pad.ok());
  EXPECT_THAT(auto_pad.status().message(), HasSubstr("unknown auto_pad"));
  auto window = Run("nn.conv", {{{1, 1, 2, 2}, Random(4, 37)},
                                {{1, 1, 3, 3}, Random(9, 38)}});
  ASSERT_FALSE(window.ok());
  EXPECT_THAT(window.status().message(), HasSubstr("larger than"));
}

// data_format = "NHWC" (what -nn-channels-last gives a CUDA device): the
// shared shape functions take N x H x W x C operands and M x kH x kW x
// C/group weights; the CPU, which computes NCHW, refuses to run it.
TEST_F(NnOpsTest, ChannelsLastShapesAndTheCpuRefusal) {
  auto shape_of = [](absl::string_view op,
                     std::vector<TensorMetadata> arguments,
                     const OpAttrs& attrs) -> absl::StatusOr<TensorShape> {
    std::vector<const TensorMetadata*> pointers;
    for (const TensorMetadata& argument : arguments) {
      pointers.push_back(&argument);
    }
    TensorMetadata result;
    absl::Status status = OpRegistry::Global().Find(op)->metadata_fn(
        ArgumentMetadata(pointers), attrs, absl::MakeSpan(&result, 1));
    if (!status.ok()) return status;
    return result.shape;
  };
  OpAttrs nhwc;
  nhwc.SetString("data_format", "NHWC");
  nhwc.SetArray<int64_t>("strides", {2, 2});
  nhwc.SetArray<int64_t>("pads", {1, 1, 1, 1});
  nhwc.Set<int64_t>("group", 2);
  // x 1 x 8 x 6 x 4, w 6 x 3 x 3 x 2 (group 2), bias 6, sum 1 x 4 x 3 x 6.
  const std::vector<TensorMetadata> conv_args = {{DType::kF32, {1, 8, 6, 4}},
                                                 {DType::kF32, {6, 3, 3, 2}},
                                                 {DType::kF32, {6}},
                                                 {DType::kF32, {1, 4, 3, 6}}};
  absl::StatusOr<TensorShape> conv = shape_of("nn.conv", conv_args, nhwc);
  ASSERT_TRUE(conv.ok()) << conv.status();
  EXPECT_THAT(conv->GetDimensions(), ElementsAre(1, 4, 3, 6));
  std::vector<TensorMetadata> wrong_sum = conv_args;
  wrong_sum[3] = TensorMetadata(DType::kF32, {1, 6, 4, 3});
  EXPECT_THAT(shape_of("nn.conv", wrong_sum, nhwc).status().message(),
              HasSubstr("is not the result's shape"));
  std::vector<TensorMetadata> channels_first_weights = conv_args;
  channels_first_weights[1] = TensorMetadata(DType::kF32, {6, 2, 3, 3});
  EXPECT_FALSE(shape_of("nn.conv", channels_first_weights, nhwc).ok());
  OpAttrs pool = Ints("kernel_shape", {2, 2});
  pool.SetString("data_format", "NHWC");
  absl::StatusOr<TensorShape> max =
      shape_of("nn.max_pool", {{DType::kF32, {1, 8, 6, 4}}}, pool);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_THAT(max->GetDimensions(), ElementsAre(1, 7, 5, 4));
  OpAttrs global;
  global.SetString("data_format", "NHWC");
  absl::StatusOr<TensorShape> average =
      shape_of("nn.global_average_pool", {{DType::kF32, {1, 8, 6, 4}}}, global);
  ASSERT_TRUE(average.ok()) << average.status();
  EXPECT_THAT(average->GetDimensions(), ElementsAre(1, 1, 1, 4));
  EXPECT_THAT(shape_of("nn.max_pool", {{DType::kF32, {1, 8, 6}}}, pool)
                  .status()
                  .message(),
              HasSubstr("data_format NHWC needs an N x H x W x C input"));
  OpAttrs unknown;
  unknown.SetString("data_format", "CHWN");
  EXPECT_THAT(shape_of("nn.conv", {conv_args[0], conv_args[1]}, unknown)
                  .status()
                  .message(),
              HasSubstr("unknown data_format \"CHWN\" (NCHW, NHWC)"));

  // The CPU's kernels refuse NHWC by name, after the shape function
  // accepted it.
  OpAttrs run_nhwc;
  run_nhwc.SetString("data_format", "NHWC");
  auto ran =
      Run("nn.conv",
          {{{1, 4, 4, 2}, Random(32, 50)}, {{3, 1, 1, 2}, Random(6, 51)}},
          run_nhwc);
  ASSERT_FALSE(ran.ok());
  EXPECT_THAT(ran.status().message(),
              HasSubstr("nn.conv: data_format NHWC runs on devices that "
                        "compute channels last (CUDA); the CPU computes NCHW"));
  auto pooled =
      Run("nn.global_average_pool", {{{1, 4, 4, 2}, Random(32, 52)}}, run_nhwc);
  ASSERT_FALSE(pooled.ok());
  EXPECT_THAT(pooled.status().message(), HasSubstr("the CPU computes NCHW"));
}

//===--- Pooling ----------------------------------------------------------===//

TEST_F(NnOpsTest, Pooling) {
  Tensor32 x{{1, 1, 4, 4},
             {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
  OpAttrs two;
  two.SetArray<int64_t>("kernel_shape", {2, 2});
  two.SetArray<int64_t>("strides", {2, 2});
  auto max = Run("nn.max_pool", {x}, two);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(max->shape, (std::vector<int64_t>{1, 1, 2, 2}));
  EXPECT_EQ(max->values, (std::vector<float>{6, 8, 14, 16}));

  auto average = Run("nn.average_pool", {x}, two);
  ASSERT_TRUE(average.ok()) << average.status();
  EXPECT_EQ(average->values, (std::vector<float>{3.5, 5.5, 11.5, 13.5}));

  // Padding is excluded from the average unless count_include_pad.
  OpAttrs padded;
  padded.SetArray<int64_t>("kernel_shape", {2, 2});
  padded.SetArray<int64_t>("pads", {1, 1, 0, 0});
  padded.SetArray<int64_t>("strides", {4, 4});
  auto excluded = Run("nn.average_pool", {x}, padded);
  ASSERT_TRUE(excluded.ok()) << excluded.status();
  EXPECT_EQ(excluded->values, (std::vector<float>{1}));
  padded.Set("count_include_pad", int64_t{1});
  auto included = Run("nn.average_pool", {x}, padded);
  ASSERT_TRUE(included.ok());
  EXPECT_EQ(included->values, (std::vector<float>{0.25}));

  auto global = Run("nn.global_average_pool", {x});
  ASSERT_TRUE(global.ok()) << global.status();
  EXPECT_EQ(global->shape, (std::vector<int64_t>{1, 1, 1, 1}));
  EXPECT_EQ(global->values, (std::vector<float>{8.5}));

  auto missing = Run("nn.max_pool", {x});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("kernel_shape"));
}

// ceil_mode (GoogLeNet's and SqueezeNet's pooling): the output size rounds
// up, the last window is cut by the input's end, and a window may not start
// in the end padding.
TEST_F(NnOpsTest, PoolingCeilMode) {
  Tensor32 x{{1, 1, 4, 4},
             {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16}};
  OpAttrs ceil;
  ceil.SetArray<int64_t>("kernel_shape", {3, 3});
  ceil.SetArray<int64_t>("strides", {2, 2});
  ceil.Set("ceil_mode", int64_t{1});
  auto max = Run("nn.max_pool", {x}, ceil);
  ASSERT_TRUE(max.ok()) << max.status();
  EXPECT_EQ(max->shape, (std::vector<int64_t>{1, 1, 2, 2}));  // floor: 1 x 1
  EXPECT_EQ(max->values, (std::vector<float>{11, 12, 15, 16}));
  auto average = Run("nn.average_pool", {x}, ceil);
  ASSERT_TRUE(average.ok()) << average.status();
  EXPECT_EQ(average->values, (std::vector<float>{6, 7.5, 12, 13.5}));

  // 1-D, 5 wide, kernel 2, stride 2, pads 1 and 1: floor gives 3 windows;
  // ceil's fourth would start at padded index 6, in the end padding.
  Tensor32 row{{1, 1, 5}, {1, 2, 3, 4, 5}};
  OpAttrs edge;
  edge.SetArray<int64_t>("kernel_shape", {2});
  edge.SetArray<int64_t>("strides", {2});
  edge.SetArray<int64_t>("pads", {1, 1});
  edge.Set("ceil_mode", int64_t{1});
  auto edge_max = Run("nn.max_pool", {row}, edge);
  ASSERT_TRUE(edge_max.ok()) << edge_max.status();
  EXPECT_EQ(edge_max->values, (std::vector<float>{1, 3, 5}));

  // An average counting padding would count the added end padding too.
  ceil.Set("count_include_pad", int64_t{1});
  auto counted = Run("nn.average_pool", {x}, ceil);
  ASSERT_FALSE(counted.ok());
  EXPECT_THAT(counted.status().message(), HasSubstr("count_include_pad"));
}

//===--- ConvTranspose and Resize -----------------------------------------===//
// (ONNX's node tests check their values in onnx_backend_test.)

TEST_F(NnOpsTest, ConvTransposeShapesAndErrors) {
  // 1 x 1 x 2 x 2 of ones, 3x3 ones, stride 2, output_padding 1: each
  // input pixel spreads a 3x3 block of ones; the extra row and column at
  // the end hold the bias (0) only.
  OpAttrs attrs;
  attrs.SetArray<int64_t>("strides", {2, 2});
  attrs.SetArray<int64_t>("output_padding", {1, 1});
  auto y = Run("nn.conv_transpose",
               {{{1, 1, 2, 2}, {1, 1, 1, 1}}, {{1, 1, 3, 3}, std::vector<float>(9, 1)}},
               attrs);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_EQ(y->shape, (std::vector<int64_t>{1, 1, 6, 6}));
  EXPECT_EQ(y->values[0], 1);
  EXPECT_EQ(y->values[2], 2);        // Row 0, column 2: two blocks overlap.
  EXPECT_EQ(y->values[2 * 6 + 2], 4);
  EXPECT_EQ(y->values[5], 0);        // The output padding column.
  OpAttrs too_much = attrs;
  too_much.SetArray<int64_t>("output_padding", {2, 2});
  auto bad = Run("nn.conv_transpose",
                 {{{1, 1, 2, 2}, {1, 1, 1, 1}}, {{1, 1, 3, 3}, std::vector<float>(9, 1)}},
                 too_much);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("nn.conv_transpose: output_padding must be below"));
  auto channels = Run("nn.conv_transpose", {{{1, 2, 2, 2}, Random(8, 100)},
                                            {{1, 1, 3, 3}, Random(9, 101)}});
  ASSERT_FALSE(channels.ok());
  EXPECT_THAT(channels.status().message(), HasSubstr("do not agree"));
}

TEST_F(NnOpsTest, ResizeNearestLinearAndErrors) {
  const Tensor32 x{{1, 1, 2, 2}, {1, 2, 3, 4}};
  OpAttrs nearest;
  nearest.SetArray<float>("scales", {1, 1, 2, 2});
  nearest.SetString("coordinate_transformation_mode", "asymmetric");
  nearest.SetString("nearest_mode", "floor");
  auto up = Run("nn.resize", {x}, nearest);
  ASSERT_TRUE(up.ok()) << up.status();
  EXPECT_EQ(up->shape, (std::vector<int64_t>{1, 1, 4, 4}));
  EXPECT_EQ(up->values, (std::vector<float>{1, 1, 2, 2, 1, 1, 2, 2,
                                            3, 3, 4, 4, 3, 3, 4, 4}));
  OpAttrs linear;
  linear.SetString("mode", "linear");
  linear.SetString("coordinate_transformation_mode", "align_corners");
  linear.SetArray<int64_t>("sizes", {1, 1, 3, 3});
  auto blended = Run("nn.resize", {x}, linear);
  ASSERT_TRUE(blended.ok()) << blended.status();
  ExpectNear(blended->values, {1, 1.5, 2, 2, 2.5, 3, 3, 3.5, 4});

  OpAttrs both = linear;
  both.SetArray<float>("scales", {1, 1, 2, 2});
  auto ambiguous = Run("nn.resize", {x}, both);
  ASSERT_FALSE(ambiguous.ok());
  EXPECT_THAT(ambiguous.status().message(),
              HasSubstr("needs either 'scales' or 'sizes'"));
  OpAttrs exclude = linear;
  exclude.Set<int64_t>("exclude_outside", 1);
  auto not_cubic = Run("nn.resize", {x}, exclude);
  ASSERT_FALSE(not_cubic.ok());
  EXPECT_THAT(not_cubic.status().message(),
              HasSubstr("exclude_outside = 1 is supported in cubic mode only"));
  OpAttrs short_scales;
  short_scales.SetArray<float>("scales", {2, 2});
  auto rank = Run("nn.resize", {x}, short_scales);
  ASSERT_FALSE(rank.ok());
  EXPECT_THAT(rank.status().message(), HasSubstr("one scale or size per"));
}

// Cubic (Keys, A = -0.75) on a ramp 0..3 at half steps (align_corners):
// exact on the ramp inside, and at the edges where the outer tap reads the
// edge value: 0.5 -> near(0.5) + 2 far(1.5) = 0.59375 - 0.1875. With
// exclude_outside that tap weighs nothing and the rest are renormalized.
TEST_F(NnOpsTest, ResizeCubic) {
  const Tensor32 ramp{{1, 1, 1, 4}, {0, 1, 2, 3}};
  OpAttrs cubic;
  cubic.SetString("mode", "cubic");
  cubic.SetString("coordinate_transformation_mode", "align_corners");
  cubic.SetArray<int64_t>("sizes", {1, 1, 1, 7});
  auto up = Run("nn.resize", {ramp}, cubic);
  ASSERT_TRUE(up.ok()) << up.status();
  ExpectNear(up->values, {0, 0.40625, 1, 1.5, 2, 2.59375, 3});
  OpAttrs excluded = cubic;
  excluded.Set<int64_t>("exclude_outside", 1);
  auto inside = Run("nn.resize", {ramp}, excluded);
  ASSERT_TRUE(inside.ok()) << inside.status();
  EXPECT_NEAR(inside->values[1], 0.40625 / 1.09375, 1e-6);
  EXPECT_NEAR(inside->values[3], 1.5, 1e-6);
  // Another A: -0.5 (Catmull-Rom) gives near(0.5) = 0.5625, far(1.5) =
  // -0.0625.
  OpAttrs catmull_rom = cubic;
  catmull_rom.Set("cubic_coeff_a", -0.5f);
  auto other = Run("nn.resize", {ramp}, catmull_rom);
  ASSERT_TRUE(other.ok()) << other.status();
  EXPECT_NEAR(other->values[1], 0.5625 - 0.125, 1e-6);
}

//===--- oneDNN layouts between ops ---------------------------------------===//

// A chain as the model compiler's -nn-assign-layouts leaves it: conv ->
// conv (its input and its fused residual in oneDNN's layout) -> max_pool ->
// global_average_pool, each asked for result_layout = "onednn" but the
// last. The results must be those of the plain chain; a OneDnnTensor
// handed to an op that does not take it (nn.relu) is converted first.
TEST_F(NnOpsTest, OneDnnLayoutsBetweenOpsGiveThePlainResults) {
  const Tensor32 x{{1, 16, 8, 8}, Random(1024, 80)};
  const Tensor32 w1{{16, 16, 3, 3}, Random(2304, 81)};
  const Tensor32 w2{{16, 1, 3, 3}, Random(144, 82)};  // Depthwise.
  const Tensor32 bias{{16}, Random(16, 83)};
  for (bool onednn : {false, true}) {
    SCOPED_TRACE(onednn ? "onednn" : "plain");
    OpAttrs conv1;
    conv1.SetArray<int64_t>("pads", {1, 1, 1, 1});
    conv1.SetString("activation", "relu");
    OpAttrs conv2;
    conv2.SetArray<int64_t>("pads", {1, 1, 1, 1});
    conv2.Set("group", int64_t{16});
    OpAttrs pool;
    pool.SetArray<int64_t>("kernel_shape", {2, 2});
    pool.SetArray<int64_t>("strides", {2, 2});
    if (onednn) {
      for (OpAttrs* attrs : {&conv1, &conv2, &pool}) {
        attrs->SetString("result_layout", "onednn");
      }
    }
    auto handle = [&](const Tensor32& t, bool read_only) {
      absl::StatusOr<TensorHandle> made = Handle(t, read_only);
      EXPECT_TRUE(made.ok());
      return *std::move(made);
    };
    TensorHandle y1 = Execute(
        "nn.conv",
        Args(handle(x, false), handle(w1, true), handle(bias, true)), conv1);
    const Tensor* first = core_->Await(y1);
    ASSERT_NE(first, nullptr) << *y1.GetErrorIfPresent();
    if (onednn) {
      EXPECT_EQ(first->tensor_type().name(), "OneDnnHost");
      EXPECT_THAT(first->ToString(),
                  HasSubstr("OneDnnTensor dtype = f32, shape = [1, 16, 8, 8], "
                            "layout = "));
    } else {
      EXPECT_EQ(first->tensor_type(), DenseHostTensorType());
    }
    // y2 = depthwise(y1) + y1: y1 is both the input and the residual.
    TensorHandle y2 =
        Execute("nn.conv",
                Args(y1.CopyRef(), handle(w2, true), handle(bias, true),
                     y1.CopyRef()),
                conv2);
    TensorHandle pooled = Execute("nn.max_pool", Args(y2.CopyRef()), pool);
    TensorHandle global = Execute("nn.global_average_pool", Args(pooled.CopyRef()));
    TensorHandle relu = Execute("nn.relu", Args(y2.CopyRef()));
    absl::StatusOr<Tensor32> global_values = Read(global);
    absl::StatusOr<Tensor32> relu_values = Read(relu);
    absl::StatusOr<Tensor32> y2_values = Read(y2);
    ASSERT_TRUE(global_values.ok()) << global_values.status();
    ASSERT_TRUE(relu_values.ok()) << relu_values.status();
    ASSERT_TRUE(y2_values.ok()) << y2_values.status();
    EXPECT_EQ(global_values->shape, (std::vector<int64_t>{1, 16, 1, 1}));
    // Against the plain ops run one by one on dense tensors.
    OpAttrs plain1 = conv1, plain2 = conv2, plain_pool = pool;
    for (OpAttrs* attrs : {&plain1, &plain2, &plain_pool}) {
      attrs->SetString("result_layout", "plain");
    }
    auto e1 = Run("nn.conv", {x, w1, bias}, plain1);
    ASSERT_TRUE(e1.ok()) << e1.status();
    auto e2 = Run("nn.conv", {*e1, w2, bias, *e1}, plain2);
    ASSERT_TRUE(e2.ok()) << e2.status();
    auto e_pool = Run("nn.max_pool", {*e2}, plain_pool);
    auto e_global = Run("nn.global_average_pool", {*e_pool});
    auto e_relu = Run("nn.relu", {*e2});
    ASSERT_TRUE(e_global.ok() && e_relu.ok());
    ExpectNear(y2_values->values, e2->values, 1e-5f);
    ExpectNear(global_values->values, e_global->values, 1e-5f);
    ExpectNear(relu_values->values, e_relu->values, 1e-5f);
  }
  OpAttrs unknown;
  unknown.SetString("result_layout", "nhwc");
  auto bad = Run("nn.conv", {x, w1}, unknown);
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(),
              HasSubstr("nn.conv: unknown result_layout 'nhwc'"));
  auto bad_pool = Run("nn.global_average_pool", {x}, unknown);
  ASSERT_FALSE(bad_pool.ok());
  EXPECT_THAT(bad_pool.status().message(), HasSubstr("unknown result_layout"));
}

//===--- Arguments not yet computed ---------------------------------------===//

// An op issued before its argument's metadata is known runs its shape
// function once the argument arrives: the implementation still gets result
// metadata, and a shape error is still one.
TEST_F(NnOpsTest, OpsOnPendingArgumentsStillCheckShapes) {
  TensorHandle x =
      *core_->MakeDenseTensorHandle<float>({2, 3}, {{-1, 2, -3, 4, -5, 6}});
  RCReference<IndirectAsyncValue> later = MakeIndirectAsyncValue();
  TensorHandle pending[1] = {TensorHandle(x.device(), later)};
  ASSERT_FALSE(pending[0].IsMetadataAvailable());
  TensorHandle relu;
  core_->Execute(*exec_ctx_, "nn.relu", cpu_, pending, OpAttrsRef(),
                 absl::MakeSpan(&relu, 1), nullptr);

  RCReference<IndirectAsyncValue> later_a = MakeIndirectAsyncValue();
  TensorHandle b = *core_->MakeDenseTensorHandle<float>({4, 2}, {{1.0f}});
  TensorHandle mismatched[2] = {TensorHandle(x.device(), later_a), b.CopyRef()};
  TensorHandle product;
  core_->Execute(*exec_ctx_, "nn.matmul", cpu_, mismatched, OpAttrsRef(),
                 absl::MakeSpan(&product, 1), nullptr);

  later->ForwardTo(x.CopyTensorRef());
  later_a->ForwardTo(x.CopyTensorRef());
  const Tensor* tensor = core_->Await(relu);
  ASSERT_NE(tensor, nullptr) << relu.GetErrorIfPresent()->message();
  auto values = static_cast<const DenseHostTensor*>(tensor)->elements<float>();
  EXPECT_EQ(std::vector<float>(values.begin(), values.end()),
            (std::vector<float>{0, 2, 0, 4, 0, 6}));
  ASSERT_EQ(core_->Await(product), nullptr);
  EXPECT_THAT(product.GetErrorIfPresent()->message(),
              HasSubstr("nn.matmul: inner dimensions differ: [2, 3] x [4, 2]"));
}

//===--- Threading policy -------------------------------------------------===//

// Several threads issue convolutions at once; every result must be right,
// and in latency mode no two primitives may ever run together.
void ConvFromManyThreads(CoreRuntime& core, OpHandler* cpu,
                         const ExecutionContext& exec_ctx) {
  const ConvCase p{1, 8, 12, 12, 8, 3, 3, 1, 1, 1, 1, 1, 1, 1, false};
  const std::vector<float> x = Random(p.n * p.c * p.h * p.w, 50);
  const std::vector<float> w = Random(p.m * p.c * p.kh * p.kw, 51);
  const std::vector<float> expected = NaiveConv(p, x, w, {}, 12, 12);
  OpAttrs attrs;
  attrs.SetArray<int64_t>("pads", {1, 1, 1, 1});
  const OpAttrsRef frozen = attrs.Freeze();
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 10; ++i) {
        TensorHandle args[2] = {*core.MakeDenseTensorHandle<float>(
                                    {1, 8, 12, 12}, absl::MakeConstSpan(x)),
                                *core.MakeDenseTensorHandle<float>(
                                    {8, 8, 3, 3}, absl::MakeConstSpan(w))};
        TensorHandle result;
        core.Execute(exec_ctx, "nn.conv", cpu, args, frozen,
                     absl::MakeSpan(&result, 1), nullptr);
        const Tensor* tensor = core.Await(result);
        ASSERT_NE(tensor, nullptr);
        auto values =
            static_cast<const DenseHostTensor*>(tensor)->elements<float>();
        ExpectNear(std::vector<float>(values.begin(), values.end()), expected,
                   1e-4f);
      }
    });
  }
  for (auto& thread : threads) thread.join();
}

TEST_F(NnOpsTest, LatencyModeRunsOnePrimitiveAtATime) {
  const Threading saved = GetThreading();
  SetThreading(Threading::kLatency);
  EXPECT_EQ(GetThreading(), Threading::kLatency);
  ResetMaxConcurrentPrimitives();
  ConvFromManyThreads(*core_, cpu_, *exec_ctx_);
  EXPECT_EQ(MaxConcurrentPrimitives(), 1);
  SetThreading(saved);
}

TEST_F(NnOpsTest, ThroughputModeRunsPrimitivesSideBySide) {
  const Threading saved = GetThreading();
  SetThreading(Threading::kThroughput);
  EXPECT_EQ(GetThreading(), Threading::kThroughput);
  ResetMaxConcurrentPrimitives();
  ConvFromManyThreads(*core_, cpu_, *exec_ctx_);
  // Never more than the threads that called; results checked above.
  EXPECT_GE(MaxConcurrentPrimitives(), 1);
  EXPECT_LE(MaxConcurrentPrimitives(), 4);
  SetThreading(saved);
}

// The threads of this process (/proc/self/status).
int ProcessThreads() {
  std::ifstream status("/proc/self/status");
  std::string line;
  while (std::getline(status, line)) {
    if (absl::StartsWith(line, "Threads:")) return std::stoi(line.substr(8));
  }
  return -1;
}

// oneDNN sizes a primitive's parallel regions when it creates it: a thread
// that creates one must already have the policy's team, else a one-thread
// latency mode would run that primitive on OpenMP's default team (every
// core), which then spins on the other cores between calls.
TEST_F(NnOpsTest, PrimitivesMadeOnAFreshThreadUseThePolicysTeam) {
  const Threading saved = GetThreading();
  SetThreading(Threading::kLatency);
  SetTeamSize(1);
  std::thread fresh([&] {
    if (omp_get_max_threads() < 2) {
      GTEST_SKIP() << "OpenMP's default team is one thread here";
    }
    const int before = ProcessThreads();
    // A convolution (oneDNN fixes its team when it makes it), made and run
    // here as the ops make and run theirs.
    auto nhwc = [](const dnnl::memory::dims& dims) {
      return dnnl::memory::desc(dims, dnnl::memory::data_type::f32,
                                dnnl::memory::format_tag::nhwc);
    };
    const dnnl::memory::desc x = nhwc({1, 64, 28, 28});
    const dnnl::memory::desc w = PlainF32({64, 64, 1, 1});
    const dnnl::convolution_forward::primitive_desc pd(
        dnnl::convolution_forward::desc(
            dnnl::prop_kind::forward_inference,
            dnnl::algorithm::convolution_direct, x,
            dnnl::memory::desc(w.dims(), dnnl::memory::data_type::f32,
                               dnnl::memory::format_tag::any),
            x, {1, 1}, {0, 0}, {0, 0}),
        PrimitiveAttr(), CpuEngine());
    dnnl::memory src(x, CpuEngine()), weights(pd.weights_desc(), CpuEngine()),
        dst(x, CpuEngine());
    std::memset(src.get_data_handle(), 0, x.get_size());
    std::memset(weights.get_data_handle(), 0, pd.weights_desc().get_size());
    PrimitiveStep step{dnnl::convolution_forward(pd),
                       {{DNNL_ARG_SRC, src},
                        {DNNL_ARG_WEIGHTS, weights},
                        {DNNL_ARG_DST, dst}}};
    ExecutePrimitives(absl::MakeConstSpan(&step, 1));
    EXPECT_EQ(ProcessThreads(), before) << "OpenMP started a team";
  });
  fresh.join();
  SetTeamSize(0);
  SetThreading(saved);
}

}  // namespace
}  // namespace asyncrt::nn
