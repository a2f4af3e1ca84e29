// nn.grid_sample against PyTorch's grid_sample (which ONNX specifies) on
// one input, every mode, padding mode and align_corners (the expected
// values from torch.nn.functional.grid_sample), and errors.
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::FloatNear;
using ::testing::HasSubstr;
using ::testing::Pointwise;

class GridSampleTest : public AnyDTypeOpTest {};

TEST_F(GridSampleTest, MatchesPyTorchInEveryMode) {
  struct Case {
    const char* mode;
    const char* padding;
    int align_corners;
    std::vector<float> expected;
  };
  // x = [[1, 2, 3], [4, 5, 6]]; positions (0, 0), (1, 1), (-1, -1),
  // (1.5, 0) (outside), (0.3, -0.8).
  const Case cases[] = {
      {"bilinear", "zeros", 0, {3.5f, 1.5f, 0.25f, 0.f, 1.71499991f}},
      {"bilinear", "zeros", 1, {3.5f, 6.f, 1.f, 2.25f, 2.5999999f}},
      {"bilinear", "border", 0, {3.5f, 6.f, 1.f, 4.5f, 2.44999981f}},
      {"bilinear", "border", 1, {3.5f, 6.f, 1.f, 4.5f, 2.5999999f}},
      {"bilinear", "reflection", 0, {3.5f, 6.f, 1.f, 4.25f, 2.44999981f}},
      {"bilinear", "reflection", 1, {3.5f, 6.f, 1.f, 4.f, 2.5999999f}},
      {"nearest", "zeros", 0, {2.f, 0.f, 1.f, 0.f, 2.f}},
      {"nearest", "zeros", 1, {2.f, 6.f, 1.f, 3.f, 2.f}},
      {"nearest", "border", 0, {2.f, 6.f, 1.f, 3.f, 2.f}},
      {"nearest", "border", 1, {2.f, 6.f, 1.f, 3.f, 2.f}},
      {"nearest", "reflection", 0, {2.f, 6.f, 1.f, 3.f, 2.f}},
      {"nearest", "reflection", 1, {2.f, 6.f, 1.f, 3.f, 2.f}},
      {"bicubic", "zeros", 0, {4.15625f, 1.6875f, 0.0625f, -0.563598633f, 1.65789998f}},
      {"bicubic", "zeros", 1, {4.15625f, 6.f, 1.f, 2.78320312f, 2.98067331f}},
      {"bicubic", "border", 0, {3.5f, 6.375f, 0.625f, 4.5f, 2.21515822f}},
      {"bicubic", "border", 1, {3.5f, 6.f, 1.f, 4.59375f, 2.63525128f}},
      {"bicubic", "reflection", 0, {3.5f, 6.75f, 0.25f, 4.30859375f, 2.07340813f}},
      {"bicubic", "reflection", 1, {3.5f, 6.f, 1.f, 4.1875f, 2.52050066f}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.mode, " ", c.padding, " ", c.align_corners));
    OpAttrs attrs;
    attrs.SetString("mode", c.mode);
    attrs.SetString("padding_mode", c.padding);
    attrs.Set<int64_t>("align_corners", c.align_corners);
    auto y = Run("nn.grid_sample",
                 {F32({1, 1, 2, 3}, {1, 2, 3, 4, 5, 6}),
                  F32({1, 1, 5, 2}, {0, 0, 1, 1, -1, -1, 1.5f, 0, 0.3f, -0.8f})},
                 attrs);
    ASSERT_TRUE(y.ok()) << y.status();
    EXPECT_THAT(y->shape, ::testing::ElementsAre(1, 1, 1, 5));
    EXPECT_THAT(y->values<float>(), Pointwise(FloatNear(1e-5f), c.expected));
  }
}

TEST_F(GridSampleTest, Errors) {
  EXPECT_THAT(Error("nn.grid_sample", {F32({1, 1, 1, 1, 1}, {1}),
                                       F32({1, 1, 1, 1, 3}, {0, 0, 0})}),
              HasSubstr("2-D only"));
  OpAttrs mode;
  mode.SetString("mode", "area");
  EXPECT_THAT(Error("nn.grid_sample",
                    {F32({1, 1, 1, 1}, {1}), F32({1, 1, 1, 2}, {0, 0})}, mode),
              HasSubstr("mode 'area' is unknown"));
  EXPECT_THAT(Error("nn.grid_sample",
                    {F32({2, 1, 1, 1}, {1, 2}), F32({1, 1, 1, 2}, {0, 0})}),
              HasSubstr("are not N x C x H x W and N x H' x W' x 2"));
}

}  // namespace
}  // namespace asyncrt::nn
