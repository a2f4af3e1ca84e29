// -nn-fuse folds zero pads into the windowed op that reads them: a pad of
// nothing is dropped; a symmetric zero pad of the spatial dimensions read
// only by an average pooling (which then counts the padding) or a
// convolution becomes the op's own `pads` (Inception-v3's exports pad
// before each block's 3x3 average pooling). Asymmetric pads, other values
// and modes, pads of N or C, and ops that pad themselves keep the pad. The
// folded program computes what the unfolded one does.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-fuse %s | FileCheck %s
// RUN: asyncrt-run %s > %t.plain
// RUN: asyncrt-opt -nn-fuse %s > %t.mlir && asyncrt-run %t.mlir > %t.folded
// RUN: diff %t.plain %t.folded

// CHECK-LABEL: func.func @main
// CHECK-NOT: nn.pad
// CHECK: nn.average_pool %[[X:[0-9]+]] {ceil_mode = 0 : i64, count_include_pad = 1 : i64, kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [1, 1]}
// CHECK-NOT: nn.pad
// CHECK: nn.conv %[[X]], %{{[0-9]+}} {pads = [2, 1, 2, 1]}
// CHECK: nn.pad %[[X]] {mode = "constant", pads = [0, 0, 1, 0, 0, 0, 0, 0]}
// CHECK: nn.pad %[[X]] {mode = "constant", pads = [0, 0, 1, 1, 0, 0, 1, 1], value = 5.000000e-01 : f32}
// CHECK: nn.pad %[[X]] {mode = "reflect", pads = [0, 0, 1, 1, 0, 0, 1, 1]}
func.func @main() -> (tensor<1x2x5x5xf32>, tensor<1x3x7x5xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>) {
  %x = nn.constant dense<[-0.524, 0.088, -0.260, 0.208, 0.251, -0.869, -0.974, 0.675, -0.481, -0.531, 0.991, -0.059, 0.673, -0.047, 0.278, -0.699, 0.270, 0.736, 0.046, 0.483, 0.343, -0.872, 0.516, 0.182, -0.397, -0.938, 0.731, -0.055, 0.438, 0.758, 0.428, 0.842, -0.210, 0.602, -0.111, 0.871, 0.758, -0.805, -0.728, -0.566, 0.931, -0.128, 0.253, -0.398, 0.014, -0.228, -0.298, 0.170, 0.169, 0.808]> : tensor<50xf32> : tensor<50xf32>
  %x4 = nn.reshape %x {shape = [1, 2, 5, 5]} : (tensor<50xf32>) -> tensor<1x2x5x5xf32>
  %p = nn.pad %x4 {mode = "constant", pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x2x5x5xf32>) -> tensor<1x2x7x7xf32>
  %a = nn.average_pool %p {ceil_mode = 0 : i64, kernel_shape = [3, 3], pads = [0, 0, 0, 0], strides = [1, 1]} : (tensor<1x2x7x7xf32>) -> tensor<1x2x5x5xf32>
  %w = nn.constant dense<[0.364, 0.858, 0.713, 0.982, 0.343, -0.674, 0.721, 0.929, 0.809, 0.138, 0.428, -0.578, 0.663, 0.147, -0.430, -0.873, 0.708, 0.980, -0.823, 0.601, -0.179, -0.698, -0.412, 0.538, 0.746, -0.912, 0.229, -0.910, 0.437, -0.338, 0.762, 0.961, 0.011, 0.997, -0.381, -0.846, 0.200, -0.937, -0.605, -0.184, 0.221, -0.688, -0.915, 0.736, -0.372, 0.917, 0.793, -0.244, -0.079, 0.040, 0.288, 0.191, 0.119, 0.240]> : tensor<54xf32> : tensor<54xf32>
  %w4 = nn.reshape %w {shape = [3, 2, 3, 3]} : (tensor<54xf32>) -> tensor<3x2x3x3xf32>
  %q = nn.pad %x4 {mode = "constant", pads = [0, 0, 2, 1, 0, 0, 2, 1]} : (tensor<1x2x5x5xf32>) -> tensor<1x2x9x7xf32>
  %c = nn.conv %q, %w4 : (tensor<1x2x9x7xf32>, tensor<3x2x3x3xf32>) -> tensor<1x3x7x5xf32>
  %r = nn.pad %x4 {mode = "constant", pads = [0, 0, 1, 0, 0, 0, 0, 0]} : (tensor<1x2x5x5xf32>) -> tensor<1x2x6x5xf32>
  %b = nn.average_pool %r {kernel_shape = [3, 2], strides = [1, 1]} : (tensor<1x2x6x5xf32>) -> tensor<1x2x4x4xf32>
  %v = nn.pad %x4 {mode = "constant", pads = [0, 0, 1, 1, 0, 0, 1, 1], value = 0.5 : f32} : (tensor<1x2x5x5xf32>) -> tensor<1x2x7x7xf32>
  %d = nn.average_pool %v {kernel_shape = [3, 3], strides = [1, 1]} : (tensor<1x2x7x7xf32>) -> tensor<1x2x5x5xf32>
  %m = nn.pad %x4 {mode = "reflect", pads = [0, 0, 1, 1, 0, 0, 1, 1]} : (tensor<1x2x5x5xf32>) -> tensor<1x2x7x7xf32>
  %e = nn.average_pool %m {kernel_shape = [3, 3], strides = [1, 1]} : (tensor<1x2x7x7xf32>) -> tensor<1x2x5x5xf32>
  return %a, %c, %b, %d, %e : tensor<1x2x5x5xf32>, tensor<1x3x7x5xf32>, tensor<1x2x4x4xf32>, tensor<1x2x5x5xf32>, tensor<1x2x5x5xf32>
}
