// nn.lrn: ONNX's window (c - floor((size - 1) / 2) to c + ceil((size - 1)
// / 2): for odd sizes PyTorch's local_response_norm, whose values these
// are; for even sizes the window leans forward, unlike PyTorch's) and
// errors.
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

class LrnTest : public AnyDTypeOpTest {};

AnyTensor Input() {
  // (-6 .. 5) / 3 as 1 x 4 x 3.
  std::vector<float> values;
  for (int i = -6; i < 6; ++i) values.push_back(i / 3.0f);
  AnyTensor t{DType::kF32, {1, 4, 3}, {}};
  for (float v : values) {
    const char* p = reinterpret_cast<const char*>(&v);
    t.bytes.insert(t.bytes.end(), p, p + sizeof(v));
  }
  return t;
}

TEST_F(LrnTest, OddAndEvenWindows) {
  OpAttrs odd;
  odd.Set<int64_t>("size", 3);
  odd.Set("alpha", 1.0f);
  odd.Set("beta", 0.75f);
  odd.Set("bias", 2.0f);
  auto y = Run("nn.lrn", {Input()}, odd);
  ASSERT_TRUE(y.ok()) << y.status();
  EXPECT_THAT(y->values<float>(),
              Pointwise(FloatNear(1e-6f),
                        std::vector<float>{-0.754790485f, -0.717898428f,
                                           -0.645680726f, -0.377395242f,
                                           -0.284591615f, -0.154919326f, 0,
                                           0.154919326f, 0.284591615f,
                                           0.529684663f, 0.645680726f,
                                           0.717898428f}));
  OpAttrs even;
  even.Set<int64_t>("size", 2);
  even.Set("alpha", 0.5f);
  even.Set("beta", 0.5f);
  even.Set("bias", 1.0f);
  auto z = Run("nn.lrn", {Input()}, even);
  ASSERT_TRUE(z.ok()) << z.status();
  EXPECT_THAT(z->values<float>(),
              Pointwise(FloatNear(1e-6f),
                        std::vector<float>{-1.33333337f, -1.24034739f,
                                           -1.09888446f, -0.89442718f,
                                           -0.624695122f, -0.312347561f, 0,
                                           0.274721116f, 0.49613896f,
                                           0.89442718f, 1.10940039f,
                                           1.2803688f}));
}

TEST_F(LrnTest, Errors) {
  EXPECT_THAT(Error("nn.lrn", {Input()}), HasSubstr("needs a positive `size`"));
  OpAttrs size;
  size.Set<int64_t>("size", 3);
  EXPECT_THAT(Error("nn.lrn", {F32({4}, {1, 2, 3, 4})}, size),
              HasSubstr("x must be N x C x D1"));
}

}  // namespace
}  // namespace asyncrt::nn
