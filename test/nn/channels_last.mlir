// -nn-channels-last runs a device's convolutions and pooling in NHWC: one
// transpose where a chain begins, weights transposed to M x kH x kW x
// C/group when compiled, elementwise ops between the chain's ops computed
// in NHWC, and the end of the chain a reshape where only unit dimensions
// move.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-channels-last="device=CUDA:0" %s | FileCheck %s
// RUN: asyncrt-compile --device=CUDA:0 --precision=f16 --emit-mlir %s | FileCheck %s --check-prefix=PIPELINE
// RUN: asyncrt-compile --device=CUDA:0 --channels-last=false --emit-mlir %s | FileCheck %s --check-prefix=NCHW

// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[X:.*]]: tensor<1x2x6x6xf32>, %[[B:.*]]: tensor<2xf32>)
func.func @chain(%x: tensor<1x2x6x6xf32>, %b: tensor<2xf32>) -> tensor<1x2xf32> {
  // The weights, 2 x 2 x 1 x 2 as 0..7, become 2 x 1 x 2 x 2: w'[m][h][w][c] = w[m][c][h][w].
  // CHECK-DAG: %[[W:.*]] = nn.constant dense<{{\[\[\[\[}}0.000000e+00, 2.000000e+00], [1.000000e+00, 3.000000e+00]]], {{\[\[\[}}4.000000e+00, 6.000000e+00], [5.000000e+00, 7.000000e+00]]]]> : tensor<2x1x2x2xf32>
  %w = nn.constant dense<[[[[0.0, 1.0]], [[2.0, 3.0]]], [[[4.0, 5.0]], [[6.0, 7.0]]]]> : tensor<2x2x1x2xf32> : tensor<2x2x1x2xf32>
  %dw = nn.constant dense<1.0> : tensor<2x1x3x3xf32> : tensor<2x1x3x3xf32>
  // CHECK-DAG: %[[XT:.*]] = nn.transpose %[[X]] {nn.device = "CUDA:0", perm = [0, 2, 3, 1]} : (tensor<1x2x6x6xf32>) -> tensor<1x6x6x2xf32>
  // CHECK: %[[A:.*]] = nn.conv %[[XT]], %[[W]], %[[B]] {activation = "relu", data_format = "NHWC", nn.device = "CUDA:0", pads = [0, 0, 0, 1]} : (tensor<1x6x6x2xf32>, tensor<2x1x2x2xf32>, tensor<2xf32>) -> tensor<1x6x6x2xf32>
  %a = nn.conv %x, %w, %b {activation = "relu", pads = [0, 0, 0, 1], nn.device = "CUDA:0"} : (tensor<1x2x6x6xf32>, tensor<2x2x1x2xf32>, tensor<2xf32>) -> tensor<1x2x6x6xf32>
  // A residual sum stays NHWC.
  // CHECK: %[[WD:.*]] = nn.constant dense<1.000000e+00> : tensor<2x3x3x1xf32> : tensor<2x3x3x1xf32>
  // CHECK: %[[C:.*]] = nn.conv %[[A]], %[[WD]], %[[B]], %[[A]] {data_format = "NHWC", group = 2 : i64, nn.device = "CUDA:0", pads = [1, 1, 1, 1]} : (tensor<1x6x6x2xf32>, tensor<2x3x3x1xf32>, tensor<2xf32>, tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  %c = nn.conv %a, %dw, %b, %a {group = 2 : i64, pads = [1, 1, 1, 1], nn.device = "CUDA:0"} : (tensor<1x2x6x6xf32>, tensor<2x1x3x3xf32>, tensor<2xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  // Elementwise ops between them compute in NHWC; a one-element operand
  // stays as it is.
  // CHECK: %[[S:.*]] = nn.add %[[C]], %[[A]] {nn.device = "CUDA:0"} : (tensor<1x6x6x2xf32>, tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  %s = nn.add %c, %a {nn.device = "CUDA:0"} : (tensor<1x2x6x6xf32>, tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  %one = nn.constant dense<0.5> : tensor<1xf32> : tensor<1xf32>
  // CHECK: %[[M:.*]] = nn.mul %[[S]], %{{.*}} {nn.device = "CUDA:0"} : (tensor<1x6x6x2xf32>, tensor<1xf32>) -> tensor<1x6x6x2xf32>
  %m = nn.mul %s, %one {nn.device = "CUDA:0"} : (tensor<1x2x6x6xf32>, tensor<1xf32>) -> tensor<1x2x6x6xf32>
  // CHECK: %[[R:.*]] = nn.relu %[[M]] {nn.device = "CUDA:0"} : (tensor<1x6x6x2xf32>) -> tensor<1x6x6x2xf32>
  %r = nn.relu %m {nn.device = "CUDA:0"} : (tensor<1x2x6x6xf32>) -> tensor<1x2x6x6xf32>
  // CHECK: %[[P:.*]] = nn.max_pool %[[R]] {data_format = "NHWC", kernel_shape = [2, 2], nn.device = "CUDA:0", strides = [2, 2]} : (tensor<1x6x6x2xf32>) -> tensor<1x3x3x2xf32>
  %p = nn.max_pool %r {data_format = "NCHW", kernel_shape = [2, 2], strides = [2, 2], nn.device = "CUDA:0"} : (tensor<1x2x6x6xf32>) -> tensor<1x2x3x3xf32>
  // CHECK: %[[G:.*]] = nn.global_average_pool %[[P]] {data_format = "NHWC", nn.device = "CUDA:0"} : (tensor<1x3x3x2xf32>) -> tensor<1x1x1x2xf32>
  %g = nn.global_average_pool %p {nn.device = "CUDA:0"} : (tensor<1x2x3x3xf32>) -> tensor<1x2x1x1xf32>
  // The way back to N x C x 1 x 1 moves only unit dimensions.
  // CHECK: %[[GR:.*]] = nn.reshape %[[G]] {nn.device = "CUDA:0", shape = [1, 2, 1, 1]} : (tensor<1x1x1x2xf32>) -> tensor<1x2x1x1xf32>
  // CHECK: nn.flatten %[[GR]]
  // CHECK-NOT: nn.transpose
  %f = nn.flatten %g {nn.device = "CUDA:0"} : (tensor<1x2x1x1xf32>) -> tensor<1x2xf32>
  return %f : tensor<1x2xf32>
}

// A result the function returns goes back to NCHW; weights that are not
// constants are transposed when the program runs (1 x 1 weights by a
// reshape); ops on other devices, and 1-D convolutions, stay as they are.
// CHECK-LABEL: func.func @edges
func.func @edges(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %x1: tensor<1x2x4xf32>, %w1: tensor<2x2x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4xf32>) {
  // CHECK: %[[WT:.*]] = nn.reshape %arg1 {nn.device = "CUDA:0", shape = [2, 1, 1, 2]}
  // CHECK: %[[Y:.*]] = nn.conv %{{.*}}, %[[WT]] {data_format = "NHWC", nn.device = "CUDA:0"}
  // CHECK: nn.transpose %[[Y]] {nn.device = "CUDA:0", perm = [0, 3, 1, 2]} : (tensor<1x4x4x2xf32>) -> tensor<1x2x4x4xf32>
  %y = nn.conv %x, %w {nn.device = "CUDA:0"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: nn.conv %arg0, %arg1 {nn.device = "SIM:0"} : (tensor<1x2x4x4xf32>
  %z = nn.conv %x, %w {nn.device = "SIM:0"} : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: nn.conv %arg2, %arg3 {nn.device = "CUDA:0"} : (tensor<1x2x4xf32>
  %y1 = nn.conv %x1, %w1 {nn.device = "CUDA:0"} : (tensor<1x2x4xf32>, tensor<2x2x1xf32>) -> tensor<1x2x4xf32>
  return %y, %z, %y1 : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4xf32>
}

// A concat over channels (SqueezeNet's fire modules) concatenates NHWC on
// the last axis; a squeeze-and-excite gate (N x C x 1 x 1) scales NHWC
// through a reshape.
// CHECK-LABEL: func.func @concat_and_gate
func.func @concat_and_gate(%x: tensor<1x4x5x5xf32>, %w1: tensor<3x4x1x1xf32>, %w2: tensor<2x4x3x3xf32>, %gate: tensor<1x5x1x1xf32>) -> tensor<1x5x5x5xf32> {
  // CHECK: %[[A:.*]] = nn.conv {{.*}}data_format = "NHWC"{{.*}} -> tensor<1x5x5x3xf32>
  %a = nn.conv %x, %w1 {nn.device = "CUDA:0"} : (tensor<1x4x5x5xf32>, tensor<3x4x1x1xf32>) -> tensor<1x3x5x5xf32>
  // CHECK: %[[B:.*]] = nn.conv {{.*}}data_format = "NHWC"{{.*}} -> tensor<1x5x5x2xf32>
  %b = nn.conv %x, %w2 {nn.device = "CUDA:0", pads = [1, 1, 1, 1]} : (tensor<1x4x5x5xf32>, tensor<2x4x3x3xf32>) -> tensor<1x2x5x5xf32>
  // CHECK: %[[C:.*]] = nn.concat %[[A]], %[[B]] {axis = 3 : i64, nn.device = "CUDA:0"} : (tensor<1x5x5x3xf32>, tensor<1x5x5x2xf32>) -> tensor<1x5x5x5xf32>
  %c = nn.concat %a, %b {axis = 1 : i64, nn.device = "CUDA:0"} : (tensor<1x3x5x5xf32>, tensor<1x2x5x5xf32>) -> tensor<1x5x5x5xf32>
  // CHECK: %[[G:.*]] = nn.reshape %arg3 {nn.device = "CUDA:0", shape = [1, 1, 1, 5]}
  // CHECK: %[[M:.*]] = nn.mul %[[C]], %[[G]] {nn.device = "CUDA:0"} : (tensor<1x5x5x5xf32>, tensor<1x1x1x5xf32>) -> tensor<1x5x5x5xf32>
  // CHECK: nn.transpose %[[M]] {nn.device = "CUDA:0", perm = [0, 3, 1, 2]}
  %m = nn.mul %c, %gate {nn.device = "CUDA:0"} : (tensor<1x5x5x5xf32>, tensor<1x5x1x1xf32>) -> tensor<1x5x5x5xf32>
  return %m : tensor<1x5x5x5xf32>
}

// The model pipeline does this for CUDA devices (after the precision
// conversion and placement), unless --channels-last=false.
// PIPELINE-LABEL: func.func @chain
// PIPELINE: ["data_format", "NHWC"]
// NCHW-LABEL: func.func @chain
// NCHW-NOT: NHWC
