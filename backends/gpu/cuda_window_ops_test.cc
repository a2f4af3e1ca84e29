// The CUDA plug-in's window ops beyond 2-D images, resizing and the
// integer bitwise ops, each against the CPU op on the same random inputs:
// 3-D convolutions and pooling (video and volumetric models), transposed
// convolutions (cuDNN's backward data), pooling windows cuDNN does not take
// (ceil_mode, dilations, asymmetric padding: our kernel), nn.resize, and
// nn.bitwise_*.
//
// Without a GPU every test skips and says why; WindowOpsRefuseWhatCudnn
// CannotTake and ResizeTakesScalesOrSizes also run against the fake CUDA
// (cuda_plugin_test.host_only).
#include <cstdint>
#include <string>
#include <vector>

#include "asyncrt/core_runtime/core_runtime.h"
#include "backends/gpu/cuda_op_test.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using testing::Args;
using testing::CudaPluginTest;
using ::testing::HasSubstr;

constexpr float kF16Tolerance = 5e-3f;

TEST_F(CudaPluginTest, VolumetricConvolutionsMatchTheCpu) {
  // A 3 x 3 x 3 convolution with padding, bias and relu (R3D's blocks).
  OpAttrs same;
  same.SetArray<int64_t>("pads", {1, 1, 1, 1, 1, 1});
  same.SetString("activation", "relu");
  for (DType dtype : {DType::kF32, DType::kF16}) {
    ExpectSame(
        "nn.conv",
        Args(Random({1, 4, 6, 10, 10}), Random({8, 4, 3, 3, 3}), Random({8})),
        same, dtype, dtype == DType::kF32 ? 1e-5f : kF16Tolerance);
  }
  // Strided, dilated in depth, grouped, with a residual sum.
  OpAttrs grouped;
  grouped.SetArray<int64_t>("strides", {1, 2, 2});
  grouped.SetArray<int64_t>("dilations", {2, 1, 1});
  grouped.SetArray<int64_t>("pads", {2, 1, 1, 2, 1, 1});
  grouped.Set<int64_t>("group", 3);
  ExpectSame("nn.conv",
             Args(Random({2, 6, 7, 9, 9}), Random({9, 2, 3, 3, 3}), Random({9}),
                  Random({2, 9, 7, 5, 5})),
             grouped, DType::kF32, 1e-5f);
  // R(2+1)D's factored kernels: 1 x 3 x 3 in space, 3 x 1 x 1 in time.
  OpAttrs spatial;
  spatial.SetArray<int64_t>("pads", {0, 1, 1, 0, 1, 1});
  ExpectSame("nn.conv", Args(Random({1, 3, 4, 8, 8}), Random({5, 3, 1, 3, 3})),
             spatial, DType::kF16, kF16Tolerance);
  OpAttrs temporal;
  temporal.SetArray<int64_t>("pads", {1, 0, 0, 1, 0, 0});
  ExpectSame("nn.conv", Args(Random({1, 5, 4, 8, 8}), Random({4, 5, 3, 1, 1})),
             temporal, DType::kF16, kF16Tolerance);
}

TEST_F(CudaPluginTest, VolumetricPoolingMatchesTheCpu) {
  OpAttrs max;
  max.SetArray<int64_t>("kernel_shape", {2, 3, 3});
  max.SetArray<int64_t>("strides", {2, 2, 2});
  max.SetArray<int64_t>("pads", {0, 1, 1, 0, 1, 1});
  ExpectSame("nn.max_pool", Args(Random({1, 3, 6, 9, 9})), max);
  ExpectSame("nn.max_pool", Args(Random({1, 3, 6, 9, 9})), max, DType::kF16,
             1e-3f);
  OpAttrs average;
  average.SetArray<int64_t>("kernel_shape", {2, 2, 2});
  average.SetArray<int64_t>("strides", {2, 2, 2});
  ExpectSame("nn.average_pool", Args(Random({2, 4, 4, 6, 6})), average);
  average.SetArray<int64_t>("pads", {1, 1, 1, 1, 1, 1});
  for (int64_t include : {0, 1}) {
    average.Set<int64_t>("count_include_pad", include);
    ExpectSame("nn.average_pool", Args(Random({1, 2, 5, 5, 5})), average);
  }
  ExpectSame("nn.global_average_pool", Args(Random({2, 8, 3, 4, 4})),
             OpAttrs());
}

// What cuDNN's symmetric windows cannot give runs on our kernel: ceil_mode
// (SqueezeNet's max pooling), dilations, padding that differs before and
// after; channels first and channels last, 1-D to 3-D.
TEST_F(CudaPluginTest, PoolingWindowsCudnnDoesNotTakeMatchTheCpu) {
  OpAttrs ceil;
  ceil.SetArray<int64_t>("kernel_shape", {3, 3});
  ceil.SetArray<int64_t>("strides", {2, 2});
  ceil.Set<int64_t>("ceil_mode", 1);
  ExpectSame("nn.max_pool", Args(Random({1, 4, 14, 14})), ceil);
  ExpectSameChannelsLast("nn.max_pool", Args(Random({2, 6, 14, 14})), ceil,
                         DType::kF16, 1e-3f);
  OpAttrs ceil_average = ceil;
  ceil_average.SetArray<int64_t>("pads", {1, 1, 1, 1});
  ExpectSame("nn.average_pool", Args(Random({1, 3, 12, 12})), ceil_average);
  OpAttrs dilated;
  dilated.SetArray<int64_t>("kernel_shape", {2, 3});
  dilated.SetArray<int64_t>("dilations", {2, 2});
  dilated.SetArray<int64_t>("pads", {1, 1, 1, 1});
  ExpectSame("nn.max_pool", Args(Random({2, 3, 10, 11})), dilated);
  OpAttrs asymmetric;
  asymmetric.SetArray<int64_t>("kernel_shape", {3, 2});
  asymmetric.SetArray<int64_t>("pads", {0, 1, 2, 0});
  for (int64_t include : {0, 1}) {
    asymmetric.Set<int64_t>("count_include_pad", include);
    ExpectSame("nn.average_pool", Args(Random({1, 5, 8, 9})), asymmetric);
    ExpectSameChannelsLast("nn.average_pool", Args(Random({1, 5, 8, 9})),
                           asymmetric, DType::kF32, 1e-5f);
  }
  ExpectSame("nn.max_pool", Args(Random({1, 5, 8, 9})), asymmetric);
  OpAttrs ceil_1d;
  ceil_1d.SetArray<int64_t>("kernel_shape", {3});
  ceil_1d.SetArray<int64_t>("strides", {2});
  ceil_1d.Set<int64_t>("ceil_mode", 1);
  ExpectSame("nn.max_pool", Args(Random({2, 3, 16})), ceil_1d);
  OpAttrs ceil_3d;
  ceil_3d.SetArray<int64_t>("kernel_shape", {2, 3, 3});
  ceil_3d.SetArray<int64_t>("strides", {2, 2, 2});
  ceil_3d.Set<int64_t>("ceil_mode", 1);
  ExpectSame("nn.max_pool", Args(Random({1, 2, 5, 8, 8})), ceil_3d);
}

TEST_F(CudaPluginTest, TransposedConvolutionsMatchTheCpu) {
  // Upsampling by 2 with output padding and a bias.
  OpAttrs upsample;
  upsample.SetArray<int64_t>("strides", {2, 2});
  upsample.SetArray<int64_t>("pads", {1, 1, 1, 1});
  upsample.SetArray<int64_t>("output_padding", {1, 1});
  for (DType dtype : {DType::kF32, DType::kF16}) {
    ExpectSame("nn.conv_transpose",
               Args(Random({2, 4, 5, 5}), Random({4, 3, 3, 3}), Random({3})),
               upsample, dtype, dtype == DType::kF32 ? 1e-5f : kF16Tolerance);
  }
  // Grouped and dilated.
  OpAttrs grouped;
  grouped.SetArray<int64_t>("strides", {2, 1});
  grouped.SetArray<int64_t>("dilations", {1, 2});
  grouped.SetArray<int64_t>("pads", {1, 2, 1, 2});
  grouped.Set<int64_t>("group", 2);
  ExpectSame("nn.conv_transpose",
             Args(Random({1, 4, 6, 7}), Random({4, 3, 4, 3})), grouped);
  // SAME_UPPER at stride 2 (output twice the input).
  OpAttrs same;
  same.SetArray<int64_t>("strides", {2, 2});
  same.SetString("auto_pad", "SAME_UPPER");
  ExpectSame("nn.conv_transpose",
             Args(Random({1, 3, 4, 4}), Random({3, 2, 4, 4})), same);
  // 1-D.
  OpAttrs strided;
  strided.SetArray<int64_t>("strides", {3});
  ExpectSame("nn.conv_transpose",
             Args(Random({2, 3, 7}), Random({3, 4, 3}), Random({4})), strided);
  // 3-D: a U-Net's 2 x 2 x 2 up-convolution, in f16.
  OpAttrs volume;
  volume.SetArray<int64_t>("strides", {2, 2, 2});
  ExpectSame(
      "nn.conv_transpose",
      Args(Random({1, 8, 3, 4, 4}), Random({8, 4, 2, 2, 2}), Random({4})),
      volume, DType::kF16, kF16Tolerance);
  ExpectSame("nn.conv_transpose",
             Args(Random({1, 4, 3, 4, 4}), Random({4, 2, 3, 3, 3})), OpAttrs());
}

TEST_F(CudaPluginTest, BitwiseOpsMatchTheCpu) {
  struct Case {
    DType dtype;
    float low, high;
  };
  for (const Case& c :
       {Case{DType::kI8, -120.f, 120.f}, Case{DType::kUI8, 0.f, 250.f},
        Case{DType::kI32, -1e6f, 1e6f}, Case{DType::kI64, -1e6f, 1e6f}}) {
    for (const char* op :
         {"nn.bitwise_and", "nn.bitwise_or", "nn.bitwise_xor"}) {
      // Broadcast: [3, 4, 5] with [4, 1].
      ExpectSame(
          op,
          Args(Random({3, 4, 5}, c.low, c.high), Random({4, 1}, c.low, c.high)),
          OpAttrs(), c.dtype, 0.f);
    }
    ExpectSame("nn.bitwise_not", Args(Random({7, 9}, c.low, c.high)), OpAttrs(),
               c.dtype, 0.f);
  }
}

// nn.resize in every mode, by scales (read through get_attr_floats: an
// unrounded length when in x scale is not whole) or sizes.
TEST_F(CudaPluginTest, ResizeMatchesTheCpu) {
  auto attrs = [](const char* mode, const char* transform,
                  std::vector<float> scales, std::vector<int64_t> sizes) {
    OpAttrs a;
    a.SetString("mode", mode);
    a.SetString("coordinate_transformation_mode", transform);
    if (!scales.empty()) a.SetArray<float>("scales", scales);
    if (!sizes.empty()) a.SetArray<int64_t>("sizes", sizes);
    return a;
  };
  // YOLO's and U-Net's upsampling by 2.
  OpAttrs nearest = attrs("nearest", "asymmetric", {1, 1, 2, 2}, {});
  nearest.SetString("nearest_mode", "floor");
  ExpectSame("nn.resize", Args(Random({1, 3, 5, 6})), nearest);
  ExpectSame("nn.resize", Args(Random({1, 3, 5, 6})), nearest, DType::kF16,
             0.f);
  ExpectSame("nn.resize", Args(Random({2, 3, 4}, -100.f, 100.f)),
             attrs("nearest", "half_pixel", {}, {2, 5, 7}), DType::kI32, 0.f);
  OpAttrs ceil = attrs("nearest", "half_pixel", {1, 1, 0.6f, 1.7f}, {});
  ceil.SetString("nearest_mode", "round_prefer_ceil");
  ExpectSame("nn.resize", Args(Random({1, 2, 10, 7})), ceil);
  for (DType dtype : {DType::kF32, DType::kF16}) {
    const float tolerance = dtype == DType::kF32 ? 1e-5f : kF16Tolerance;
    ExpectSame("nn.resize", Args(Random({1, 4, 7, 9})),
               attrs("linear", "half_pixel", {1, 1, 2, 2}, {}), dtype,
               tolerance);
    ExpectSame("nn.resize", Args(Random({2, 3, 6, 5})),
               attrs("linear", "align_corners", {}, {2, 3, 11, 8}), dtype,
               tolerance);
  }
  // A scale whose length is not whole (5 x 1.5 = 7.5: 7 outputs, the
  // coordinates divided by 1.5, not 7 / 5).
  ExpectSame("nn.resize", Args(Random({1, 2, 5, 5})),
             attrs("linear", "pytorch_half_pixel", {1, 1, 1.5f, 1.5f}, {}));
  OpAttrs cubic = attrs("cubic", "half_pixel", {1, 1, 1.6f, 0.7f}, {});
  cubic.Set<int64_t>("exclude_outside", 1);
  cubic.Set<float>("cubic_coeff_a", -0.5f);
  ExpectSame("nn.resize", Args(Random({1, 2, 6, 8})), cubic);
  // Trilinear over a volume.
  ExpectSame("nn.resize", Args(Random({1, 2, 3, 4, 4})),
             attrs("linear", "half_pixel", {1, 1, 2, 2, 2}, {}));
}

// The host side reads a resize's scales or sizes (against the fake CUDA
// too: without get_attr_floats a resize by scales would fail).
TEST_F(CudaPluginTest, ResizeTakesScalesOrSizes) {
  TensorHandle x = Random({1, 2, 3, 3}).TransferTo(*exec_ctx_, *gpu_);
  OpAttrs scaled;
  scaled.SetString("mode", "linear");
  scaled.SetArray<float>("scales", {1, 1, 2, 2});
  EXPECT_EQ(ErrorOf(Run("nn.resize", "cuda", {&x}, scaled)), "<no error>");
  OpAttrs sized;
  sized.SetArray<int64_t>("sizes", {1, 2, 5, 4});
  EXPECT_EQ(ErrorOf(Run("nn.resize", "cuda", {&x}, sized)), "<no error>");
  TensorHandle integers =
      Cast(Random({1, 2, 3, 3}), DType::kI32).TransferTo(*exec_ctx_, *gpu_);
  EXPECT_THAT(ErrorOf(Run("nn.resize", "cuda", {&integers}, scaled)),
              HasSubstr("linear mode needs f32, f16 or bf16, got i32"));
}

// Errors on the op, never a wrong result: windows cuDNN cannot take and
// our kernel does not cover, and bitwise ops on floats. Needs no kernel's
// result (runs against the fake CUDA too).
TEST_F(CudaPluginTest, WindowOpsRefuseWhatCudnnCannotTake) {
  auto on_gpu = [&](TensorHandle handle) {
    return handle.TransferTo(*exec_ctx_, *gpu_);
  };
  TensorHandle x = on_gpu(Random({1, 2, 5, 5}));
  TensorHandle w = on_gpu(Random({2, 2, 3, 3}));
  OpAttrs asymmetric;
  asymmetric.SetArray<int64_t>("pads", {0, 0, 1, 1});
  EXPECT_THAT(ErrorOf(Run("nn.conv_transpose", "cuda", {&x, &w}, asymmetric)),
              HasSubstr("this transposed convolution's padding (0 before, 1 "
                        "after) is not supported on CUDA yet"));
  TensorHandle volume = on_gpu(Random({1, 2, 4, 5, 5}));
  TensorHandle volume_w = on_gpu(Random({2, 2, 3, 3, 3}));
  OpAttrs volume_pads;
  volume_pads.SetArray<int64_t>("pads", {1, 1, 1, 1, 1, 2});
  EXPECT_THAT(
      ErrorOf(Run("nn.conv", "cuda", {&volume, &volume_w}, volume_pads)),
      HasSubstr("asymmetric padding (1 before, 2 after) is not "
                "supported on CUDA yet"));
  TensorHandle f = on_gpu(Random({4}));
  const std::string error = ErrorOf(Run("nn.bitwise_and", "cuda", {&f, &f}));
  EXPECT_THAT(error, HasSubstr("nn.bitwise_and"));
  EXPECT_THAT(error, HasSubstr("f32"));
}

}  // namespace
}  // namespace asyncrt
