// -nn-assign-layouts keeps oneDNN's layouts between convolutions and
// pooling: an op whose every use takes them gets result_layout = "onednn".
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-assign-layouts %s | FileCheck %s
// RUN: asyncrt-opt -nn-assign-layouts=winograd=false %s | FileCheck %s --check-prefix=DIRECT
// RUN: asyncrt-opt -asyncrt-model-pipeline %s | asyncrt-translate -mlir-to-bef -o %t.bef
// RUN: bef_executor --devices=cpu --functions=main %t.bef 2>&1 | FileCheck %s --check-prefix=EXEC

// conv -> conv (input and residual) -> max_pool -> global_average_pool ->
// flatten: the chain stays in oneDNN's layout up to the global pooling,
// whose user (flatten) reads plain tensors. It holds a depthwise
// convolution, so its convolutions compute in blocked layouts.
// CHECK-LABEL: func.func @chain
func.func @chain(%x: tensor<1x8x4x4xf32>, %w: tensor<8x8x3x3xf32>, %dw: tensor<8x1x3x3xf32>, %b: tensor<8xf32>) -> tensor<1x8xf32> {
  // CHECK: %[[A:.*]] = nn.conv %arg0, %arg1, %arg3 {activation = "relu", compute_layout = "blocked", pads = [1, 1, 1, 1], result_layout = "onednn"}
  %a = nn.conv %x, %w, %b {activation = "relu", pads = [1, 1, 1, 1]} : (tensor<1x8x4x4xf32>, tensor<8x8x3x3xf32>, tensor<8xf32>) -> tensor<1x8x4x4xf32>
  // CHECK: %[[B:.*]] = nn.conv %[[A]], %arg2, %arg3, %[[A]] {compute_layout = "blocked", group = 8 : i64, pads = [1, 1, 1, 1], result_layout = "onednn"}
  %c = nn.conv %a, %dw, %b, %a {group = 8 : i64, pads = [1, 1, 1, 1]} : (tensor<1x8x4x4xf32>, tensor<8x1x3x3xf32>, tensor<8xf32>, tensor<1x8x4x4xf32>) -> tensor<1x8x4x4xf32>
  // CHECK: %[[P:.*]] = nn.max_pool %[[B]] {kernel_shape = [2, 2], result_layout = "onednn", strides = [2, 2]}
  %p = nn.max_pool %c {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x8x4x4xf32>) -> tensor<1x8x2x2xf32>
  // CHECK: %[[G:.*]] = nn.global_average_pool %[[P]] :
  %g = nn.global_average_pool %p : (tensor<1x8x2x2xf32>) -> tensor<1x8x1x1xf32>
  %f = nn.flatten %g : (tensor<1x8x1x1xf32>) -> tensor<1x8xf32>
  return %f : tensor<1x8xf32>
}

// Plain where any use is not a oneDNN layout reader, and for results the
// function returns; a convolution's weights are read plain.
// CHECK-LABEL: func.func @edges
func.func @edges(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) {
  // CHECK: nn.conv %arg0, %arg1 :
  %a = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %b = nn.conv %a, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = nn.tanh %a : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: nn.conv %{{.*}}, %arg1 :
  // CHECK: nn.max_pool %arg1 {kernel_shape = [1, 1]} :
  %wp = nn.max_pool %w {kernel_shape = [1, 1]} : (tensor<2x2x1x1xf32>) -> tensor<2x2x1x1xf32>
  %c = nn.conv %x, %wp : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %b, %r, %wp : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>
}

// A chain holding a Winograd candidate (ungrouped 3x3, stride 1, channels
// in multiples of 16) computes in blocked layouts: compute_layout =
// "blocked" on its candidates and 1x1 convolutions (not on the others:
// strided; pooling follows its input). A chain without a candidate keeps
// oneDNN's choice.
// CHECK-LABEL: func.func @blocked_chains
func.func @blocked_chains(%x: tensor<1x16x8x8xf32>, %w1: tensor<16x16x1x1xf32>, %w3: tensor<16x16x3x3xf32>, %s2: tensor<16x16x3x3xf32>) -> (tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>) {
  // CHECK: %[[A:.*]] = nn.conv %arg0, %arg1 {compute_layout = "blocked", result_layout = "onednn"}
  // Without Winograd: direct kernels, no blocked layouts.
  // DIRECT-LABEL: func.func @blocked_chains
  // DIRECT-NOT: compute_layout
  // DIRECT: nn.conv %arg0, %arg1 {algorithm = "direct", result_layout = "onednn"}
  // DIRECT: nn.conv %{{.*}}, %arg2 {algorithm = "direct", pads = [1, 1, 1, 1], result_layout = "onednn"}
  %a = nn.conv %x, %w1 : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  // CHECK: %[[B:.*]] = nn.conv %[[A]], %arg2 {compute_layout = "blocked", pads = [1, 1, 1, 1], result_layout = "onednn"}
  %b = nn.conv %a, %w3 {pads = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  // CHECK: nn.max_pool %[[B]] {kernel_shape = [2, 2], strides = [2, 2]}
  %p = nn.max_pool %b {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x16x8x8xf32>) -> tensor<1x16x4x4xf32>
  // CHECK: nn.conv %[[B]], %arg3 {pads = [1, 1, 1, 1], strides = [2, 2]} :
  %q = nn.conv %b, %s2 {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x4x4xf32>
  // No candidate: a 3x3 with stride 2 and a 1x1.
  // CHECK: %[[D:.*]] = nn.conv %arg0, %arg3 {result_layout = "onednn", strides = [2, 2]}
  %d = nn.conv %x, %s2 {strides = [2, 2]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x3x3xf32>
  // CHECK: nn.conv %[[D]], %arg1 {pads = [0, 0, 1, 1]} :
  %e = nn.conv %d, %w1 {pads = [0, 0, 1, 1]} : (tensor<1x16x3x3xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x4x4xf32>
  return %p, %e, %q : tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>, tensor<1x16x4x4xf32>
}

// A chain holding a depthwise convolution (MobileNet's inverted residuals)
// computes in blocked layouts on every convolution, the strided stem
// included, with or without Winograd; a grouped convolution that is not
// depthwise makes no chain blocked.
// CHECK-LABEL: func.func @depthwise_chains
// DIRECT-LABEL: func.func @depthwise_chains
func.func @depthwise_chains(%x: tensor<1x3x8x8xf32>, %stem: tensor<16x3x3x3xf32>, %dw: tensor<16x1x3x3xf32>, %w1: tensor<24x16x1x1xf32>, %g2: tensor<16x8x3x3xf32>) -> (tensor<1x24x4x4xf32>, tensor<1x16x4x4xf32>) {
  // CHECK: %[[S:.*]] = nn.conv %arg0, %arg1 {compute_layout = "blocked", pads = [1, 1, 1, 1], result_layout = "onednn", strides = [2, 2]}
  // DIRECT: %[[S:.*]] = nn.conv %arg0, %arg1 {algorithm = "direct", compute_layout = "blocked", pads = [1, 1, 1, 1], result_layout = "onednn", strides = [2, 2]}
  %s = nn.conv %x, %stem {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x4x4xf32>
  // CHECK: %[[D:.*]] = nn.conv %[[S]], %arg2 {compute_layout = "blocked", group = 16 : i64, pads = [1, 1, 1, 1], result_layout = "onednn"}
  // DIRECT: %[[D:.*]] = nn.conv %[[S]], %arg2 {algorithm = "direct", compute_layout = "blocked", group = 16 : i64, pads = [1, 1, 1, 1], result_layout = "onednn"}
  %d = nn.conv %s, %dw {group = 16 : i64, pads = [1, 1, 1, 1]} : (tensor<1x16x4x4xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x4x4xf32>
  // CHECK: nn.conv %[[D]], %arg3 {compute_layout = "blocked"} :
  // DIRECT: nn.conv %[[D]], %arg3 {algorithm = "direct", compute_layout = "blocked"} :
  %p = nn.conv %d, %w1 : (tensor<1x16x4x4xf32>, tensor<24x16x1x1xf32>) -> tensor<1x24x4x4xf32>
  // Two groups of 8 channels: not depthwise.
  // CHECK: %[[G:.*]] = nn.conv %arg0, %arg1 {pads = [1, 1, 1, 1], result_layout = "onednn", strides = [2, 2]}
  %t = nn.conv %x, %stem {pads = [1, 1, 1, 1], strides = [2, 2]} : (tensor<1x3x8x8xf32>, tensor<16x3x3x3xf32>) -> tensor<1x16x4x4xf32>
  // CHECK: nn.conv %[[G]], %arg4 {group = 2 : i64, pads = [1, 1, 1, 1]} :
  %g = nn.conv %t, %g2 {group = 2 : i64, pads = [1, 1, 1, 1]} : (tensor<1x16x4x4xf32>, tensor<16x8x3x3xf32>) -> tensor<1x16x4x4xf32>
  return %p, %g : tensor<1x24x4x4xf32>, tensor<1x16x4x4xf32>
}

// A squeeze-and-excite block (EfficientNet, MobileNetV3): the depthwise
// result feeds a global pooling and the channel scaling x * s, which keeps
// the layout of both operands (oneDNN's binary primitive) and hands its
// product to the projection on. The chain is one: every convolution is
// blocked. A product that is not a channel scaling (s of another shape)
// takes no oneDNN layout.
// CHECK-LABEL: func.func @squeeze_excite
func.func @squeeze_excite(%x: tensor<1x16x4x4xf32>, %dw: tensor<16x1x3x3xf32>, %fc1: tensor<4x16x1x1xf32>, %fc2: tensor<16x4x1x1xf32>, %w: tensor<24x16x1x1xf32>, %row: tensor<1x1x1x4xf32>) -> (tensor<1x24x4x4xf32>, tensor<1x16x4x4xf32>) {
  // CHECK: %[[D:.*]] = nn.conv %arg0, %arg1 {activation = "swish", compute_layout = "blocked", group = 16 : i64, pads = [1, 1, 1, 1], result_layout = "onednn"}
  %d = nn.conv %x, %dw {activation = "swish", group = 16 : i64, pads = [1, 1, 1, 1]} : (tensor<1x16x4x4xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x4x4xf32>
  // CHECK: %[[P:.*]] = nn.global_average_pool %[[D]] {result_layout = "onednn"}
  %p = nn.global_average_pool %d : (tensor<1x16x4x4xf32>) -> tensor<1x16x1x1xf32>
  // CHECK: %[[F:.*]] = nn.conv %[[P]], %arg2 {activation = "swish", compute_layout = "blocked", result_layout = "onednn"}
  %f = nn.conv %p, %fc1 {activation = "swish"} : (tensor<1x16x1x1xf32>, tensor<4x16x1x1xf32>) -> tensor<1x4x1x1xf32>
  // CHECK: %[[S:.*]] = nn.conv %[[F]], %arg3 {activation = "sigmoid", compute_layout = "blocked", result_layout = "onednn"}
  %s = nn.conv %f, %fc2 {activation = "sigmoid"} : (tensor<1x4x1x1xf32>, tensor<16x4x1x1xf32>) -> tensor<1x16x1x1xf32>
  // CHECK: %[[M:.*]] = nn.mul %[[S]], %[[D]] {result_layout = "onednn"}
  %m = nn.mul %s, %d : (tensor<1x16x1x1xf32>, tensor<1x16x4x4xf32>) -> tensor<1x16x4x4xf32>
  // CHECK: nn.conv %[[M]], %arg4 {compute_layout = "blocked"} :
  %y = nn.conv %m, %w : (tensor<1x16x4x4xf32>, tensor<24x16x1x1xf32>) -> tensor<1x24x4x4xf32>
  // CHECK: %[[E:.*]] = nn.conv %arg0, %arg1 {compute_layout = "blocked", group = 16 : i64, pads = [1, 1, 1, 1]} :
  // CHECK: nn.mul %[[E]], %arg5 :
  %e = nn.conv %x, %dw {group = 16 : i64, pads = [1, 1, 1, 1]} : (tensor<1x16x4x4xf32>, tensor<16x1x3x3xf32>) -> tensor<1x16x4x4xf32>
  %r = nn.mul %e, %row : (tensor<1x16x4x4xf32>, tensor<1x1x1x4xf32>) -> tensor<1x16x4x4xf32>
  return %y, %r : tensor<1x24x4x4xf32>, tensor<1x16x4x4xf32>
}

// A fire module (SqueezeNet): a 1x1 squeeze, two expands (1x1 and 3x3)
// joined along the channels, then the next squeeze. The concatenation
// takes and gives oneDNN's layout, so the module is one blocked chain.
// CHECK-LABEL: func.func @fire
func.func @fire(%x: tensor<1x32x8x8xf32>, %sq: tensor<16x32x1x1xf32>, %e1: tensor<32x16x1x1xf32>, %e3: tensor<32x16x3x3xf32>, %next: tensor<16x64x1x1xf32>) -> tensor<1x16x8x8xf32> {
  // CHECK: %[[S:.*]] = nn.conv %arg0, %arg1 {compute_layout = "blocked", result_layout = "onednn"}
  %s = nn.conv %x, %sq : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  // CHECK: %[[A:.*]] = nn.conv %[[S]], %arg2 {compute_layout = "blocked", result_layout = "onednn"}
  %a = nn.conv %s, %e1 : (tensor<1x16x8x8xf32>, tensor<32x16x1x1xf32>) -> tensor<1x32x8x8xf32>
  // CHECK: %[[B:.*]] = nn.conv %[[S]], %arg3 {compute_layout = "blocked", pads = [1, 1, 1, 1], result_layout = "onednn"}
  %b = nn.conv %s, %e3 {pads = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<32x16x3x3xf32>) -> tensor<1x32x8x8xf32>
  // CHECK: %[[C:.*]] = nn.concat %[[A]], %[[B]] {axis = 1 : i64, result_layout = "onednn"}
  %c = nn.concat %a, %b {axis = 1 : i64} : (tensor<1x32x8x8xf32>, tensor<1x32x8x8xf32>) -> tensor<1x64x8x8xf32>
  // CHECK: nn.conv %[[C]], %arg4 {compute_layout = "blocked"} :
  %n = nn.conv %c, %next : (tensor<1x64x8x8xf32>, tensor<16x64x1x1xf32>) -> tensor<1x16x8x8xf32>
  return %n : tensor<1x16x8x8xf32>
}

// A dense layer (DenseNet): the block's features concatenated, then batch
// normalization and relu (pre-activation) before a 1x1 convolution. Both
// read and give oneDNN's layout, so the block is one chain; a relu whose
// user takes plain tensors gives a plain one.
// CHECK-LABEL: func.func @dense_layer
func.func @dense_layer(%x: tensor<1x32x8x8xf32>, %w0: tensor<16x32x1x1xf32>, %w1: tensor<16x16x3x3xf32>, %scale: tensor<32xf32>, %bias: tensor<32xf32>, %mean: tensor<32xf32>, %var: tensor<32xf32>, %next: tensor<16x32x1x1xf32>) -> (tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>) {
  // CHECK: %[[A:.*]] = nn.conv %arg0, %arg1 {{{.*}}result_layout = "onednn"}
  %a = nn.conv %x, %w0 : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  // CHECK: %[[B:.*]] = nn.conv %[[A]], %arg2 {{{.*}}result_layout = "onednn"}
  %b = nn.conv %a, %w1 {pads = [1, 1, 1, 1]} : (tensor<1x16x8x8xf32>, tensor<16x16x3x3xf32>) -> tensor<1x16x8x8xf32>
  // CHECK: %[[C:.*]] = nn.concat %[[A]], %[[B]] {axis = 1 : i64, result_layout = "onednn"}
  %c = nn.concat %a, %b {axis = 1 : i64} : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x32x8x8xf32>
  // CHECK: %[[N:.*]] = nn.batch_normalization %[[C]], %arg3, %arg4, %arg5, %arg6 {result_layout = "onednn"}
  %n = nn.batch_normalization %c, %scale, %bias, %mean, %var : (tensor<1x32x8x8xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) -> tensor<1x32x8x8xf32>
  // CHECK: %[[R:.*]] = nn.relu %[[N]] {result_layout = "onednn"}
  %r = nn.relu %n : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  // CHECK: nn.conv %[[R]], %arg7 {compute_layout = "blocked"} :
  %y = nn.conv %r, %next : (tensor<1x32x8x8xf32>, tensor<16x32x1x1xf32>) -> tensor<1x16x8x8xf32>
  // CHECK: nn.relu %[[N]] :
  %out = nn.relu %n : (tensor<1x32x8x8xf32>) -> tensor<1x32x8x8xf32>
  return %y, %out : tensor<1x16x8x8xf32>, tensor<1x32x8x8xf32>
}

// A concatenation along another axis reads and gives plain tensors, and
// so do the convolutions it reads.
// CHECK-LABEL: func.func @concat_elsewhere
func.func @concat_elsewhere(%x: tensor<1x16x8x8xf32>, %w: tensor<16x16x1x1xf32>) -> tensor<1x16x8x16xf32> {
  // CHECK: nn.conv %arg0, %arg1 :
  %a = nn.conv %x, %w : (tensor<1x16x8x8xf32>, tensor<16x16x1x1xf32>) -> tensor<1x16x8x8xf32>
  // CHECK: nn.concat %{{.*}}, %{{.*}} {axis = 3 : i64} :
  %c = nn.concat %a, %a {axis = 3 : i64} : (tensor<1x16x8x8xf32>, tensor<1x16x8x8xf32>) -> tensor<1x16x8x16xf32>
  return %c : tensor<1x16x8x16xf32>
}

// The compiled chain runs (graph_mode.mlir checks such values).
// EXEC-NOT: error
// EXEC: 'main' returned !corert.tensorhandle value
func.func @main() -> tensor<1x2x1x1xf32> {
  %x = nn.constant dense<1.0> : tensor<1x2x2x2xf32> : tensor<1x2x2x2xf32>
  %w = nn.constant dense<1.0> : tensor<2x2x1x1xf32> : tensor<2x2x1x1xf32>
  %a = nn.conv %x, %w : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x2x2xf32>
  %zero = nn.constant dense<0.0> : tensor<2xf32> : tensor<2xf32>
  %b = nn.conv %a, %w, %zero, %a : (tensor<1x2x2x2xf32>, tensor<2x2x1x1xf32>, tensor<2xf32>, tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  %g = nn.global_average_pool %b : (tensor<1x2x2x2xf32>) -> tensor<1x2x1x1xf32>
  return %g : tensor<1x2x1x1xf32>
}
