// nn.batch_normalization and nn.relu on OneDnnTensors
// (onednn_channelwise.cc): computed in the layout their input comes in
// (channel blocks, padded ones too, and nhwc) when the result is asked for
// in oneDNN's layout, by the plain kernels otherwise. Every result against
// the plain kernel's.
#include <string>
#include <utility>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "backends/cpu/nn/onednn_tensor.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace asyncrt::nn {
namespace {

class OneDnnChannelwiseTest : public EagerOpTest {
 protected:
  // `op` on `x` (in oneDNN's layout `compute_layout`, see InOneDnnLayout)
  // and `params` (plain), with `activation = "relu"` where `relu`, read
  // back plain; the result's tensor type in
  // `type`, oneDNN's verbose log of the op in `log`.
  absl::StatusOr<Tensor32> RunInLayout(const std::string& op, const Tensor32& x,
                                       const std::vector<Tensor32>& params,
                                       const std::string& compute_layout,
                                       bool relu, bool onednn_result,
                                       std::string* type, std::string* log) {
    std::vector<TensorHandle> args;
    args.push_back(InOneDnnLayout(x, compute_layout));
    core_->Await(args[0]);
    for (const Tensor32& param : params) {
      absl::StatusOr<TensorHandle> handle = Handle(param, /*read_only=*/true);
      if (!handle.ok()) return handle.status();
      args.push_back(*std::move(handle));
    }
    OpAttrs attrs;
    attrs.Set<float>("epsilon", 1e-3f);
    if (relu) attrs.SetString("activation", "relu");
    if (onednn_result) attrs.SetString("result_layout", "onednn");
    dnnl::set_verbose(1);
    ::testing::internal::CaptureStdout();
    TensorHandle result = Execute(op, std::move(args), attrs);
    const Tensor* tensor = core_->Await(result);
    *log = ::testing::internal::GetCapturedStdout();
    dnnl::set_verbose(0);
    if (tensor != nullptr) *type = std::string(tensor->tensor_type().name());
    return Read(result);
  }
};

TEST_F(OneDnnChannelwiseTest, BatchNormAndReluComputeInTheInputsLayout) {
  // Whole channel blocks, padded ones (24 channels in blocks of 16), nhwc.
  struct Case {
    int64_t channels;
    std::string compute_layout;
  };
  for (const Case& c :
       {Case{32, "blocked"}, Case{24, "blocked"}, Case{24, ""}}) {
    const int64_t n = 2, hw = 5 * 7;
    const Tensor32 x{{n, c.channels, 5, 7},
                     RandomFloats(n * c.channels * hw, c.channels)};
    std::vector<Tensor32> params;
    for (unsigned i = 0; i < 4; ++i) {
      params.push_back({{c.channels}, RandomFloats(c.channels, 10 + i)});
    }
    for (float& var : params[3].values) var = var * var + 0.1f;
    // Batch normalization also with a relu folded in.
    for (const std::string op :
         {"nn.batch_normalization", "nn.batch_normalization+relu", "nn.relu"}) {
      const bool folded = op == "nn.batch_normalization+relu";
      const std::vector<Tensor32> op_params =
          op == "nn.relu" ? std::vector<Tensor32>() : params;
      std::vector<Tensor32> plain_args = {x};
      plain_args.insert(plain_args.end(), op_params.begin(), op_params.end());
      OpAttrs attrs;
      attrs.Set<float>("epsilon", 1e-3f);
      if (folded) attrs.SetString("activation", "relu");
      const std::string op_name = folded ? "nn.batch_normalization" : op;
      absl::StatusOr<Tensor32> expected = Run(op_name, plain_args, attrs);
      ASSERT_TRUE(expected.ok()) << expected.status();
      for (bool onednn_result : {true, false}) {
        SCOPED_TRACE(testing::Message()
                     << op << ", " << c.channels << " channels, "
                     << (c.compute_layout.empty() ? "nhwc" : "blocked")
                     << ", result " << (onednn_result ? "onednn" : "plain"));
        std::string type, log;
        absl::StatusOr<Tensor32> result =
            RunInLayout(op_name, x, op_params, c.compute_layout, folded,
                        onednn_result, &type, &log);
        ASSERT_TRUE(result.ok()) << result.status();
        EXPECT_EQ(result->shape, expected->shape);
        EXPECT_THAT(result->values,
                    ::testing::Pointwise(::testing::FloatNear(1e-6f),
                                         expected->values));
        // In the input's layout: no reorder, the result a OneDnnTensor.
        // Asked for plain: the plain kernel, after a reorder.
        EXPECT_EQ(type, onednn_result ? "OneDnnHost" : "DenseHost");
        if (onednn_result) {
          EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("exec,cpu")))
              << log;
        } else {
          EXPECT_THAT(log, ::testing::HasSubstr("exec,cpu,reorder")) << log;
        }
      }
    }
  }
}

// A padded channel block's padding stays zero through batch normalization
// (oneDNN's primitives expect zeros there; the shift applied to it would
// make it 100): the result's raw bytes in channel blocks of 16 (aBcd16b,
// AVX-512) or 8 (aBcd8b, AVX2), 20 channels, so the last block is padded.
TEST_F(OneDnnChannelwiseTest, BlockPaddingStaysZero) {
  const int64_t channels = 20, pixels = 16;
  const Tensor32 x{{1, channels, 4, 4}, RandomFloats(channels * pixels, 1)};
  std::vector<TensorHandle> args;
  args.push_back(InOneDnnLayout(x));
  for (float fill : {1.0f, 100.0f, 0.0f, 1.0f}) {  // scale, B, mean, var
    args.push_back(
        *Handle({{channels}, std::vector<float>(channels, fill)}, true));
  }
  OpAttrs onednn;
  onednn.SetString("result_layout", "onednn");
  TensorHandle result =
      Execute("nn.batch_normalization", std::move(args), onednn);
  const Tensor* tensor = core_->Await(result);
  ASSERT_NE(tensor, nullptr);
  ASSERT_EQ(tensor->tensor_type(), OneDnnTensor::Type());
  const auto& blocked = static_cast<const OneDnnTensor&>(*tensor);
  const std::string layout = OneDnnLayoutName(blocked.desc());
  const int64_t block = layout == "aBcd16b" ? 16 : layout == "aBcd8b" ? 8 : 0;
  if (block == 0) GTEST_SKIP() << "oneDNN chose no channel blocks: " << layout;
  const int64_t blocks = (channels + block - 1) / block;
  const int64_t last = blocks - 1;  // Holds channels last * block onwards.
  const float* data = static_cast<const float*>(blocked.data());
  for (int64_t p = 0; p < pixels; ++p) {
    for (int64_t lane = 0; lane < block; ++lane) {
      const int64_t channel = last * block + lane;
      const float value = data[(last * pixels + p) * block + lane];
      if (channel < channels) {
        EXPECT_NEAR(value, x.values[channel * pixels + p] + 100.0f, 1e-2f);
      } else {
        EXPECT_EQ(value, 0.0f) << "pixel " << p << ", lane " << lane;
      }
    }
  }
}

}  // namespace
}  // namespace asyncrt::nn
