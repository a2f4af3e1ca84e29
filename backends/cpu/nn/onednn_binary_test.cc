// nn.mul on OneDnnTensors (onednn_binary.cc): a squeeze-and-excite block's
// channel scaling keeps the convolution's blocked layout and runs oneDNN's
// JIT binary kernel (never its reference code), whatever layout the scale
// comes in; any other product with a OneDnnTensor is computed on plain
// copies. Every result against the plain elementwise kernel.
#include <string>
#include <utility>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace asyncrt::nn {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

class OneDnnMulTest : public EagerOpTest {
 protected:
  TensorHandle Make(const Tensor32& tensor, bool read_only = false) {
    absl::StatusOr<TensorHandle> made = Handle(tensor, read_only);
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? *std::move(made) : TensorHandle();
  }

  // A 1x1 convolution of `x` by identity weights: x itself, as a
  // OneDnnTensor in the blocked layout its chain computes in.
  TensorHandle Blocked(const Tensor32& x) {
    const int64_t channels = x.shape[1];
    std::vector<float> identity(channels * channels, 0.0f);
    for (int64_t c = 0; c < channels; ++c) identity[c * channels + c] = 1.0f;
    OpAttrs attrs;
    attrs.SetString("result_layout", "onednn");
    attrs.SetString("compute_layout", "blocked");
    std::vector<TensorHandle> args;
    args.push_back(Make(x));
    args.push_back(Make({{channels, channels, 1, 1}, identity}, true));
    return Execute("nn.conv", std::move(args), attrs);
  }

  // `x` through an identity 1x1 convolution of groups of 8 channels (as
  // RegNet's): a OneDnnTensor in 8-channel blocks, for which oneDNN 2.6 has
  // no JIT binary kernel under AVX-512.
  TensorHandle EightChannelBlocks(const Tensor32& x) {
    const int64_t channels = x.shape[1];
    std::vector<float> identity(channels * 8, 0.0f);
    for (int64_t c = 0; c < channels; ++c) identity[c * 8 + c % 8] = 1.0f;
    OpAttrs attrs;
    attrs.SetString("result_layout", "onednn");
    attrs.SetString("compute_layout", "blocked");
    attrs.Set("group", channels / 8);
    std::vector<TensorHandle> args;
    args.push_back(Make(x));
    args.push_back(Make({{channels, 8, 1, 1}, identity}, true));
    return Execute("nn.conv", std::move(args), attrs);
  }

  // nn.mul of `a` and `b` with `attrs`, read back plain, with oneDNN's
  // verbose log of the run in `log`.
  absl::StatusOr<Tensor32> Multiply(TensorHandle a, TensorHandle b,
                                    const OpAttrs& attrs, std::string* log,
                                    std::string* result_type) {
    dnnl::set_verbose(1);
    ::testing::internal::CaptureStdout();
    std::vector<TensorHandle> args;
    args.push_back(std::move(a));
    args.push_back(std::move(b));
    TensorHandle product = Execute("nn.mul", std::move(args), attrs);
    const Tensor* tensor = core_->Await(product);
    *log = ::testing::internal::GetCapturedStdout();
    dnnl::set_verbose(0);
    if (tensor != nullptr)
      *result_type = std::string(tensor->tensor_type().name());
    return Read(product);
  }
};

// x [1, C, 5, 5] in a blocked layout times s [1, C, 1, 1], s plain or
// itself blocked, on either side, the result plain or blocked: the values
// of the plain kernel, by oneDNN's JIT binary kernel. 24 and 40 channels
// pad the blocks.
TEST_F(OneDnnMulTest, ChannelScaleKeepsTheBlockedLayout) {
  for (int64_t channels : {16, 24, 40}) {
    const Tensor32 x{{1, channels, 5, 5}, RandomFloats(channels * 25, 1)};
    const Tensor32 s{{1, channels, 1, 1}, RandomFloats(channels, 2)};
    absl::StatusOr<Tensor32> expected = Run("nn.mul", {x, s});
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (bool scale_blocked : {false, true}) {
      for (bool scale_first : {false, true}) {
        for (bool onednn_result : {false, true}) {
          SCOPED_TRACE(testing::Message()
                       << channels << " channels, scale "
                       << (scale_blocked ? "blocked" : "plain")
                       << (scale_first ? " first" : " second") << ", result "
                       << (onednn_result ? "onednn" : "plain"));
          TensorHandle scale = scale_blocked ? Blocked(s) : Make(s);
          TensorHandle blocked_x = Blocked(x);
          ASSERT_NE(core_->Await(blocked_x), nullptr);
          ASSERT_NE(core_->Await(scale), nullptr);
          OpAttrs attrs;
          if (onednn_result) attrs.SetString("result_layout", "onednn");
          std::string log, type;
          absl::StatusOr<Tensor32> product =
              scale_first ? Multiply(std::move(scale), std::move(blocked_x),
                                     attrs, &log, &type)
                          : Multiply(std::move(blocked_x), std::move(scale),
                                     attrs, &log, &type);
          ASSERT_TRUE(product.ok()) << product.status();
          EXPECT_EQ(product->shape, x.shape);
          EXPECT_EQ(product->values, expected->values);
          EXPECT_EQ(type, onednn_result ? "OneDnnHost" : "DenseHost");
          EXPECT_THAT(log, HasSubstr("exec,cpu,binary,jit")) << log;
          EXPECT_THAT(log, Not(HasSubstr("binary,ref"))) << log;
        }
      }
    }
  }
}

// Where oneDNN has only its reference binary kernel for x's layout, the
// product is computed on plain copies instead (RegNetY ran 5x slower).
TEST_F(OneDnnMulTest, NoReferenceKernel) {
  const Tensor32 x{{1, 32, 6, 6}, RandomFloats(32 * 36, 7)};
  const Tensor32 s{{1, 32, 1, 1}, RandomFloats(32, 8)};
  absl::StatusOr<Tensor32> expected = Run("nn.mul", {x, s});
  ASSERT_TRUE(expected.ok()) << expected.status();
  OpAttrs attrs;
  attrs.SetString("result_layout", "onednn");
  std::string log, type;
  TensorHandle grouped = EightChannelBlocks(x);
  ASSERT_NE(core_->Await(grouped), nullptr);
  absl::StatusOr<Tensor32> product =
      Multiply(std::move(grouped), Make(s), attrs, &log, &type);
  ASSERT_TRUE(product.ok()) << product.status();
  EXPECT_EQ(product->values, expected->values);
  EXPECT_THAT(log, Not(HasSubstr("binary,ref"))) << log;
}

// Other products with a OneDnnTensor (operands of one shape, broadcasting
// over a spatial dimension) run the elementwise kernel on plain copies;
// nn.mul of dense tensors is unchanged.
TEST_F(OneDnnMulTest, OtherProductsRunOnPlainCopies) {
  const Tensor32 x{{1, 16, 3, 4}, RandomFloats(192, 3)};
  const Tensor32 same{{1, 16, 3, 4}, RandomFloats(192, 4)};
  const Tensor32 row{{1, 1, 1, 4}, RandomFloats(4, 5)};
  for (const Tensor32* other : {&same, &row}) {
    absl::StatusOr<Tensor32> expected = Run("nn.mul", {x, *other});
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::string log, type;
    absl::StatusOr<Tensor32> product =
        Multiply(Blocked(x), Make(*other), OpAttrs(), &log, &type);
    ASSERT_TRUE(product.ok()) << product.status();
    EXPECT_EQ(product->values, expected->values);
    EXPECT_EQ(type, "DenseHost");
    EXPECT_THAT(log, Not(HasSubstr("binary")));
  }
  absl::StatusOr<Tensor32> dense = Run("nn.mul", {{{2}, {2, 3}}, {{1}, {4}}});
  ASSERT_TRUE(dense.ok()) << dense.status();
  EXPECT_EQ(dense->values, (std::vector<float>{8, 12}));
  // An unknown result layout is an error on the channel-scale path too.
  OpAttrs bad;
  bad.SetString("result_layout", "nhwc");
  std::string log, type;
  absl::StatusOr<Tensor32> refused = Multiply(
      Blocked(x), Make({{1, 16, 1, 1}, RandomFloats(16, 6)}), bad, &log, &type);
  ASSERT_FALSE(refused.ok());
  EXPECT_THAT(refused.status().message(),
              HasSubstr("nn.mul: unknown result_layout 'nhwc'"));
}

}  // namespace
}  // namespace asyncrt::nn
