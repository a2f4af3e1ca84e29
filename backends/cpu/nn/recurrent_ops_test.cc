// nn.rnn, nn.gru and nn.lstm: one-unit cells worked out by hand from
// ONNX's equations, and properties that tie the directions, layouts and
// sequence lengths together (ONNX's backend tests check larger cases).
#include <cmath>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

float Sigmoid(float x) { return 1.f / (1.f + std::exp(-x)); }

AnyTensor F32Of(std::vector<int64_t> shape, const std::vector<float>& values) {
  AnyTensor t{DType::kF32, std::move(shape), {}};
  t.bytes.resize(values.size() * sizeof(float));
  std::memcpy(t.bytes.data(), values.data(), t.bytes.size());
  return t;
}

OpAttrs Direction(const char* direction) {
  OpAttrs attrs;
  attrs.SetString("direction", direction);
  return attrs;
}

class RecurrentOpsTest : public AnyDTypeOpTest {};

TEST_F(RecurrentOpsTest, RnnOfOneUnit) {
  // h_t = tanh(0.5 x_t + 0.5 h_{t-1} + 0.1 + 0.2), from h_0 = 0.
  auto results = RunN("nn.rnn",
                      {F32({2, 1, 1}, {1, -2}), F32({1, 1, 1}, {0.5}),
                       F32({1, 1, 1}, {0.5}), F32({1, 2}, {0.1, 0.2})},
                      OpAttrs(), 2);
  ASSERT_TRUE(results.ok()) << results.status();
  const float h1 = std::tanh(0.5f + 0.3f);
  const float h2 = std::tanh(-1.f + 0.5f * h1 + 0.3f);
  EXPECT_EQ((*results)[0].shape, (std::vector<int64_t>{2, 1, 1, 1}));
  EXPECT_THAT((*results)[0].values<float>(),
              ElementsAre(FloatNear(h1, 1e-6), FloatNear(h2, 1e-6)));
  EXPECT_THAT((*results)[1].values<float>(), ElementsAre(FloatNear(h2, 1e-6)));
}

TEST_F(RecurrentOpsTest, GruOfOneUnitBothResetOrders) {
  // Gates z, r, h; W = [0.3, -0.2, 0.8], R = [0.5, 0.4, -0.6], biases
  // Wb = [0.1, 0.0, 0.2], Rb = [0.0, 0.1, -0.3]; initial h = 0.5, x = 1.
  const float x = 1.f, h0 = 0.5f;
  const float z = Sigmoid(0.3f * x + 0.5f * h0 + 0.1f);
  const float r = Sigmoid(-0.2f * x + 0.4f * h0 + 0.1f);
  const float reset_first =
      std::tanh(0.8f * x + (r * h0) * -0.6f + 0.2f - 0.3f);
  const float linear_first =
      std::tanh(0.8f * x + r * (h0 * -0.6f - 0.3f) + 0.2f);
  for (int linear_before_reset : {0, 1}) {
    OpAttrs attrs;
    attrs.Set<int64_t>("linear_before_reset", linear_before_reset);
    auto results = RunN("nn.gru",
                        {F32({1, 1, 1}, {x}), F32({1, 3, 1}, {0.3, -0.2, 0.8}),
                         F32({1, 3, 1}, {0.5, 0.4, -0.6}),
                         F32({1, 6}, {0.1, 0.0, 0.2, 0.0, 0.1, -0.3}),
                         I32({1}, {1}), F32({1, 1, 1}, {h0})},
                        attrs, 2);
    ASSERT_TRUE(results.ok()) << results.status();
    const float candidate = linear_before_reset ? linear_first : reset_first;
    const float h1 = (1 - z) * candidate + z * h0;
    EXPECT_THAT((*results)[1].values<float>(), ElementsAre(FloatNear(h1, 1e-6)))
        << "linear_before_reset " << linear_before_reset;
  }
}

TEST_F(RecurrentOpsTest, LstmOfOneUnitWithPeepholesClipAndInputForget) {
  // Gates i, o, f, c; W = [0.2, 0.4, -0.3, 0.9], R = [0.1, -0.2, 0.3, 0.5],
  // no bias, peepholes P = [0.5, -0.4, 0.25]; h_0 = 0.3, c_0 = -1, x = 2.
  const float x = 2.f, h0 = 0.3f, c0 = -1.f;
  const std::vector<AnyTensor> args = {F32({1, 1, 1}, {x}),
                                       F32({1, 4, 1}, {0.2, 0.4, -0.3, 0.9}),
                                       F32({1, 4, 1}, {0.1, -0.2, 0.3, 0.5}),
                                       F32({1, 8}, {0, 0, 0, 0, 0, 0, 0, 0}),
                                       I64({1}, {1}),
                                       F32({1, 1, 1}, {h0}),
                                       F32({1, 1, 1}, {c0}),
                                       F32({1, 3}, {0.5, -0.4, 0.25})};
  auto expect = [&](const OpAttrs& attrs, float clip, bool input_forget) {
    auto clipped = [&](float v) {
      return clip > 0 ? std::fmin(std::fmax(v, -clip), clip) : v;
    };
    const float i = Sigmoid(clipped(0.2f * x + 0.1f * h0 + 0.5f * c0));
    const float f = input_forget
                        ? 1 - i
                        : Sigmoid(clipped(-0.3f * x + 0.3f * h0 + 0.25f * c0));
    const float g = std::tanh(clipped(0.9f * x + 0.5f * h0));
    const float c = f * c0 + i * g;
    const float o = Sigmoid(clipped(0.4f * x - 0.2f * h0 - 0.4f * c));
    auto results = RunN("nn.lstm", args, attrs, 3);
    ASSERT_TRUE(results.ok()) << results.status();
    EXPECT_THAT((*results)[0].values<float>(),
                ElementsAre(FloatNear(o * std::tanh(c), 1e-6)));
    EXPECT_THAT((*results)[2].values<float>(), ElementsAre(FloatNear(c, 1e-6)));
  };
  expect(OpAttrs(), 0, false);
  OpAttrs clip;
  clip.Set("clip", 0.5f);
  expect(clip, 0.5f, false);
  OpAttrs coupled;
  coupled.Set<int64_t>("input_forget", 1);
  expect(coupled, 0, true);
}

TEST_F(RecurrentOpsTest, ActivationsAndTheirParameters) {
  // f = HardSigmoid(alpha 0.5, beta 0.25) instead of tanh, in any case.
  OpAttrs attrs;
  OpAttrs names;
  names.SetString("0", "hardsigmoid");
  attrs.SetAggregate("activations", names);
  attrs.SetArray<float>("activation_alpha", {0.5f});
  attrs.SetArray<float>("activation_beta", {0.25f});
  auto y = Run(
      "nn.rnn",
      {F32({1, 1, 1}, {1}), F32({1, 1, 1}, {0.5}), F32({1, 1, 1}, {0})}, attrs);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->values<float>(), ElementsAre(FloatNear(0.5f, 1e-6)));
}

// Random operands of an LSTM of 3 steps, batch 2, input 3, hidden 4.
struct LstmCase {
  static constexpr int64_t kSteps = 3, kBatch = 2, kInput = 3, kHidden = 4;
  std::vector<float> x = RandomFloats(kSteps * kBatch * kInput, 1);
  std::vector<float> w = RandomFloats(2 * 4 * kHidden * kInput, 2);
  std::vector<float> r = RandomFloats(2 * 4 * kHidden * kHidden, 3);
  std::vector<float> b = RandomFloats(2 * 8 * kHidden, 4);

  // The operands of direction `d` alone (X as given).
  std::vector<AnyTensor> Operands(const std::vector<float>& x_values, int d,
                                  int directions) const {
    const size_t w_size = 4 * kHidden * kInput, r_size = 4 * kHidden * kHidden,
                 b_size = 8 * kHidden;
    auto part = [&](const std::vector<float>& all, size_t size) {
      return directions == 2 ? all
                             : std::vector<float>(all.begin() + d * size,
                                                  all.begin() + (d + 1) * size);
    };
    return {F32Of({kSteps, kBatch, kInput}, x_values),
            F32Of({directions, 4 * kHidden, kInput}, part(w, w_size)),
            F32Of({directions, 4 * kHidden, kHidden}, part(r, r_size)),
            F32Of({directions, 8 * kHidden}, part(b, b_size))};
  }
  // X with its steps in reverse order.
  std::vector<float> ReversedX() const {
    std::vector<float> out(x.size());
    const size_t step = kBatch * kInput;
    for (int64_t t = 0; t < kSteps; ++t) {
      std::copy_n(x.begin() + t * step, step,
                  out.begin() + (kSteps - 1 - t) * step);
    }
    return out;
  }
};

TEST_F(RecurrentOpsTest, BidirectionalIsForwardAndReverse) {
  LstmCase c;
  auto both =
      RunN("nn.lstm", c.Operands(c.x, 0, 2), Direction("bidirectional"), 2);
  auto forward = RunN("nn.lstm", c.Operands(c.x, 0, 1), OpAttrs(), 2);
  auto reverse =
      RunN("nn.lstm", c.Operands(c.x, 1, 1), Direction("reverse"), 2);
  // The reverse direction is the forward recurrence over reversed steps.
  auto reversed_x =
      RunN("nn.lstm", c.Operands(c.ReversedX(), 1, 1), OpAttrs(), 2);
  ASSERT_TRUE(both.ok() && forward.ok() && reverse.ok() && reversed_x.ok());
  const std::vector<float> y = (*both)[0].values<float>();  // [T, 2, N, H].
  const std::vector<float> y_forward = (*forward)[0].values<float>();
  const std::vector<float> y_reverse = (*reverse)[0].values<float>();
  const std::vector<float> y_reversed_x = (*reversed_x)[0].values<float>();
  const int64_t block = LstmCase::kBatch * LstmCase::kHidden;
  for (int64_t t = 0; t < LstmCase::kSteps; ++t) {
    for (int64_t k = 0; k < block; ++k) {
      EXPECT_FLOAT_EQ(y[(t * 2) * block + k], y_forward[t * block + k]);
      EXPECT_FLOAT_EQ(y[(t * 2 + 1) * block + k], y_reverse[t * block + k]);
      EXPECT_NEAR(y_reverse[t * block + k],
                  y_reversed_x[(LstmCase::kSteps - 1 - t) * block + k], 1e-6);
    }
  }
  std::vector<float> y_h = (*forward)[1].values<float>();
  const std::vector<float> reverse_h = (*reverse)[1].values<float>();
  y_h.insert(y_h.end(), reverse_h.begin(), reverse_h.end());
  EXPECT_THAT((*both)[1].values<float>(), Pointwise(::testing::FloatEq(), y_h));
}

TEST_F(RecurrentOpsTest, BatchMajorLayoutMatchesTimeMajor) {
  LstmCase c;
  auto time_major = RunN("nn.lstm", c.Operands(c.x, 0, 1), OpAttrs(), 2);
  // X as [N, T, I].
  std::vector<float> batch_x(c.x.size());
  for (int64_t t = 0; t < LstmCase::kSteps; ++t) {
    for (int64_t b = 0; b < LstmCase::kBatch; ++b) {
      std::copy_n(
          c.x.begin() + (t * LstmCase::kBatch + b) * LstmCase::kInput,
          LstmCase::kInput,
          batch_x.begin() + (b * LstmCase::kSteps + t) * LstmCase::kInput);
    }
  }
  std::vector<AnyTensor> operands = c.Operands(batch_x, 0, 1);
  operands[0].shape = {LstmCase::kBatch, LstmCase::kSteps, LstmCase::kInput};
  auto batch_major = RunN("nn.lstm", operands, Int("layout", 1), 2);
  ASSERT_TRUE(time_major.ok() && batch_major.ok());
  EXPECT_EQ((*batch_major)[0].shape, (std::vector<int64_t>{2, 3, 1, 4}));
  EXPECT_EQ((*batch_major)[1].shape, (std::vector<int64_t>{2, 1, 4}));
  const std::vector<float> y = (*time_major)[0].values<float>();
  const std::vector<float> y_batch = (*batch_major)[0].values<float>();
  const int64_t h = LstmCase::kHidden;
  for (int64_t t = 0; t < LstmCase::kSteps; ++t) {
    for (int64_t b = 0; b < LstmCase::kBatch; ++b) {
      for (int64_t j = 0; j < h; ++j) {
        EXPECT_FLOAT_EQ(y_batch[(b * LstmCase::kSteps + t) * h + j],
                        y[(t * LstmCase::kBatch + b) * h + j]);
      }
    }
  }
}

TEST_F(RecurrentOpsTest, ShorterSequencesStopAndPadWithZeros) {
  // Entry 1 has 2 of 3 steps: its Y_h is the state after step 2, its last
  // Y row zeros; in reverse it starts from its own step 2.
  LstmCase c;
  for (const char* direction : {"forward", "reverse"}) {
    std::vector<AnyTensor> operands = c.Operands(c.x, 0, 1);
    operands.push_back(I32({2}, {3, 2}));
    auto full = RunN("nn.lstm", c.Operands(c.x, 0, 1), Direction(direction), 2);
    auto short_ = RunN("nn.lstm", operands, Direction(direction), 2);
    // Entry 1's first two steps alone.
    std::vector<float> x2(c.x.begin(), c.x.begin() + 2 * 2 * 3);
    std::vector<AnyTensor> two_steps = c.Operands(c.x, 0, 1);
    two_steps[0] = F32Of({2, 2, 3}, x2);
    auto truncated = RunN("nn.lstm", two_steps, Direction(direction), 2);
    ASSERT_TRUE(full.ok() && short_.ok() && truncated.ok()) << direction;
    const std::vector<float> y = (*short_)[0].values<float>();
    const std::vector<float> y_full = (*full)[0].values<float>();
    const std::vector<float> y_trunc = (*truncated)[0].values<float>();
    const std::vector<float> h = (*short_)[1].values<float>();
    const std::vector<float> h_full = (*full)[1].values<float>();
    const std::vector<float> h_trunc = (*truncated)[1].values<float>();
    for (int64_t j = 0; j < 4; ++j) {
      // Entry 0 runs all 3 steps; entry 1 as if its sequence had 2.
      for (int64_t t = 0; t < 3; ++t) {
        EXPECT_FLOAT_EQ(y[(t * 2) * 4 + j], y_full[(t * 2) * 4 + j]);
      }
      for (int64_t t = 0; t < 2; ++t) {
        EXPECT_FLOAT_EQ(y[(t * 2 + 1) * 4 + j], y_trunc[(t * 2 + 1) * 4 + j]);
      }
      EXPECT_EQ(y[(2 * 2 + 1) * 4 + j], 0.f);
      EXPECT_FLOAT_EQ(h[j], h_full[j]);
      EXPECT_FLOAT_EQ(h[4 + j], h_trunc[4 + j]);
    }
  }
}

TEST_F(RecurrentOpsTest, Errors) {
  const std::vector<AnyTensor> rnn = {
      F32({1, 1, 2}, {1, 2}), F32({1, 3, 2}, {0, 0, 0, 0, 0, 0}),
      F32({1, 3, 3}, {0, 0, 0, 0, 0, 0, 0, 0, 0})};
  EXPECT_THAT(Error("nn.rnn", rnn, Int("hidden_size", 2)),
              HasSubstr("nn.rnn: W must be f32 [1, 2, 2], not f32 [1, 3, 2]"));
  EXPECT_THAT(Error("nn.gru", rnn, Direction("sideways")),
              HasSubstr("direction 'sideways' is not forward, reverse or "
                        "bidirectional"));
  EXPECT_THAT(Error("nn.lstm", {rnn[0], rnn[1]}),
              HasSubstr("takes X, W, R and up to 5 optional operands, not 2"));
  OpAttrs unknown;
  OpAttrs names;
  names.SetString("0", "Swish");
  unknown.SetAggregate("activations", names);
  EXPECT_THAT(Error("nn.rnn", rnn, unknown),
              HasSubstr("unknown activation 'Swish'"));
  std::vector<AnyTensor> lens = {F32({1, 1, 2}, {1, 2}), F32({1, 1, 2}, {0, 0}),
                                 F32({1, 1, 1}, {0}), F32({1, 2}, {0, 0}),
                                 I32({1}, {2})};
  EXPECT_THAT(Error("nn.rnn", lens),
              HasSubstr("sequence_lens[0] is 2; there are 1 steps"));
  EXPECT_THAT(Error("nn.rnn", lens, OpAttrs(), 3), HasSubstr("has 1 to 2 "
                                                             "results, not 3"));
}

}  // namespace
}  // namespace asyncrt::nn
