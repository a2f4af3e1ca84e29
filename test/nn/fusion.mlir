// -nn-fuse folds residual adds and activations into convolutions.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-fuse %s | FileCheck %s

// A ResNet block's tail: conv, add the shortcut, relu.
// CHECK-LABEL: func.func @residual_relu
func.func @residual_relu(%x: tensor<1x4x8x8xf32>, %w: tensor<4x4x3x3xf32>, %b: tensor<4xf32>, %shortcut: tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32> {
  // CHECK: %[[Y:.*]] = nn.conv %arg0, %arg1, %arg2, %arg3 {activation = "relu", pads = [1, 1, 1, 1]}
  // CHECK-NEXT: return %[[Y]]
  %c = nn.conv %x, %w, %b {pads = [1, 1, 1, 1]} : (tensor<1x4x8x8xf32>, tensor<4x4x3x3xf32>, tensor<4xf32>) -> tensor<1x4x8x8xf32>
  %s = nn.add %shortcut, %c : (tensor<1x4x8x8xf32>, tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  %r = nn.relu %s : (tensor<1x4x8x8xf32>) -> tensor<1x4x8x8xf32>
  return %r : tensor<1x4x8x8xf32>
}

// MobileNet's Relu6 as a clip; a convolution without bias gets a zero bias
// when it takes a sum.
// CHECK-LABEL: func.func @clip_and_sum_without_bias
func.func @clip_and_sum_without_bias(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %y: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  // CHECK: %[[ZERO:.*]] = nn.constant dense<0.000000e+00> : tensor<2xf32>
  // CHECK: nn.conv %arg0, %arg1 {activation = "clip", activation_alpha = 0.000000e+00 : f32, activation_beta = 6.000000e+00 : f32}
  %c = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r6 = nn.clip %c {min = 0.0 : f32, max = 6.0 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: nn.conv %arg0, %arg1, %[[ZERO]], %arg2 :
  %d = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %s = nn.add %d, %y : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  return %r6, %s : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// Not fused: a convolution with a second use, and an add that broadcasts.
// CHECK-LABEL: func.func @not_fused
func.func @not_fused(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %bias: tensor<1x2x1x1xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  // CHECK: %[[C:.*]] = nn.conv %arg0, %arg1 :
  // CHECK: nn.relu %[[C]]
  %c = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %r = nn.relu %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: %[[D:.*]] = nn.conv %arg0, %arg1 :
  // CHECK: nn.add %[[D]], %arg2
  %d = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %e = nn.add %d, %bias : (tensor<1x2x4x4xf32>, tensor<1x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  return %c, %r, %e : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// hardswish as PyTorch exports it before opset 14, x * hard_sigmoid(x)
// with alpha 1/6: a convolution's activation when nothing else reads its
// result, else one nn.hard_swish. Not for another alpha, nor for a
// hard_sigmoid of another value (MobileNetV3's squeeze-and-excite scale).
// CHECK-LABEL: func.func @hard_swish
func.func @hard_swish(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %y: tensor<1x2x4x4xf32>) -> (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  // CHECK: %[[C:.*]] = nn.conv %arg0, %arg1 {activation = "hard_swish"}
  %c = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %cs = nn.hard_sigmoid %c {alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %ch = nn.mul %c, %cs : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: %[[H:.*]] = nn.hard_swish %arg2
  %ys = nn.hard_sigmoid %y {alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %yh = nn.mul %ys, %y : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: %[[S:.*]] = nn.hard_sigmoid %arg2 {alpha = 2.000000e-01 : f32}
  // CHECK: %[[M:.*]] = nn.mul %arg2, %[[S]]
  %zs = nn.hard_sigmoid %y {alpha = 0.2 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %zh = nn.mul %y, %zs : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: %[[E:.*]] = nn.hard_sigmoid %arg0 {alpha
  // CHECK: %[[F:.*]] = nn.mul %arg2, %[[E]]
  %es = nn.hard_sigmoid %x {alpha = 0.166666672 : f32, beta = 5.000000e-01 : f32} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %eh = nn.mul %y, %es : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: return %[[C]], %[[H]], %[[M]], %[[F]]
  return %ch, %yh, %zh, %eh : tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// SiLU as PyTorch exports it, x * sigmoid(x) (EfficientNet): a
// convolution's or matmul's swish activation when nothing else reads its
// result; a sigmoid alone becomes the sigmoid activation. A pair on a value
// with other readers stays (for -nn-fuse-elementwise).
// CHECK-LABEL: func.func @swish
func.func @swish(%x: tensor<1x2x4x4xf32>, %w: tensor<2x2x1x1xf32>, %a: tensor<4x8xf32>, %b: tensor<8x8xf32>) -> (tensor<1x2x4x4xf32>, tensor<4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) {
  // CHECK: %[[C:.*]] = nn.conv %arg0, %arg1 {activation = "swish"}
  %c = nn.conv %x, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %cs = nn.sigmoid %c : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %cm = nn.mul %cs, %c : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: %[[M:.*]] = nn.matmul %arg2, %arg3 {activation = "swish"}
  %m = nn.matmul %a, %b : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %ms = nn.sigmoid %m : (tensor<4x8xf32>) -> tensor<4x8xf32>
  %mm = nn.mul %m, %ms : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[G:.*]] = nn.conv %[[C]], %arg1 {activation = "sigmoid"}
  %g = nn.conv %cm, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %gs = nn.sigmoid %g : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: %[[K:.*]] = nn.conv %[[C]], %arg1 :
  // CHECK: %[[KS:.*]] = nn.sigmoid %[[K]]
  // CHECK: %[[KM:.*]] = nn.mul %[[K]], %[[KS]]
  %k = nn.conv %cm, %w : (tensor<1x2x4x4xf32>, tensor<2x2x1x1xf32>) -> tensor<1x2x4x4xf32>
  %ks = nn.sigmoid %k : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %km = nn.mul %k, %ks : (tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  // CHECK: return %[[C]], %[[M]], %[[G]], %[[KM]], %[[K]]
  return %cm, %mm, %gs, %km, %k : tensor<1x2x4x4xf32>, tensor<4x8xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>, tensor<1x2x4x4xf32>
}

// GELU and layer normalization as PyTorch exports them.
// CHECK-LABEL: func.func @gelu_layer_norm
func.func @gelu_layer_norm(%x: tensor<2x8xf32>) -> tensor<2x8xf32> {
  %sqrt2 = nn.constant dense<1.41421354> : tensor<f32> : tensor<f32>
  %one = nn.constant dense<1.0> : tensor<f32> : tensor<f32>
  %half = nn.constant dense<0.5> : tensor<f32> : tensor<f32>
  %two = nn.constant dense<2.0> : tensor<f32> : tensor<f32>
  %eps = nn.constant dense<1.0e-12> : tensor<f32> : tensor<f32>
  %gamma = nn.constant dense<1.5> : tensor<8xf32> : tensor<8xf32>
  %beta = nn.constant dense<0.25> : tensor<8xf32> : tensor<8xf32>
  // CHECK: %[[G:.*]] = nn.gelu %arg0
  %d = nn.div %x, %sqrt2 : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %e = nn.erf %d : (tensor<2x8xf32>) -> tensor<2x8xf32>
  %p = nn.add %e, %one : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %m = nn.mul %x, %p : (tensor<2x8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  %g = nn.mul %m, %half : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  // CHECK: %[[N:.*]] = nn.layer_normalization %[[G]], %{{.*}}, %{{.*}} {axis = -1 : i64, epsilon = 9.99999996E-13 : f32}
  // CHECK-NEXT: return %[[N]]
  %mean = nn.reduce_mean %g {axes = [-1]} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %c = nn.sub %g, %mean : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %sq = nn.pow %c, %two : (tensor<2x8xf32>, tensor<f32>) -> tensor<2x8xf32>
  %var = nn.reduce_mean %sq {axes = [-1]} : (tensor<2x8xf32>) -> tensor<2x1xf32>
  %ve = nn.add %var, %eps : (tensor<2x1xf32>, tensor<f32>) -> tensor<2x1xf32>
  %sd = nn.sqrt %ve : (tensor<2x1xf32>) -> tensor<2x1xf32>
  %n = nn.div %c, %sd : (tensor<2x8xf32>, tensor<2x1xf32>) -> tensor<2x8xf32>
  %s = nn.mul %n, %gamma : (tensor<2x8xf32>, tensor<8xf32>) -> tensor<2x8xf32>
  %y = nn.add %beta, %s : (tensor<8xf32>, tensor<2x8xf32>) -> tensor<2x8xf32>
  return %y : tensor<2x8xf32>
}

// A linear layer on 3-D input: matmul, then the bias added.
// CHECK-LABEL: func.func @matmul_bias
func.func @matmul_bias(%x: tensor<1x4x8xf32>) -> tensor<1x4x3xf32> {
  %w = nn.constant dense<0.5> : tensor<8x3xf32> : tensor<8x3xf32>
  %b = nn.constant dense<[1.0, 2.0, 3.0]> : tensor<3xf32> : tensor<3xf32>
  // CHECK: %[[Y:.*]] = nn.matmul %arg0, %{{.*}}, %{{.*}} :
  // CHECK-NEXT: return %[[Y]]
  %m = nn.matmul %x, %w : (tensor<1x4x8xf32>, tensor<8x3xf32>) -> tensor<1x4x3xf32>
  %y = nn.add %b, %m : (tensor<3xf32>, tensor<1x4x3xf32>) -> tensor<1x4x3xf32>
  return %y : tensor<1x4x3xf32>
}

// A transformer layer's matmuls: attention scores divided by a constant
// (a "linear" activation), a feed-forward layer with GELU, and the
// residual added to the output projection (the fused sum).
// CHECK-LABEL: func.func @transformer_matmuls
func.func @transformer_matmuls(%q: tensor<2x4x8xf32>, %k: tensor<2x8x4xf32>, %x: tensor<4x8xf32>) -> (tensor<2x4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>) {
  %scale = nn.constant dense<8.0> : tensor<f32> : tensor<f32>
  %w = nn.constant dense<0.5> : tensor<8x8xf32> : tensor<8x8xf32>
  %b = nn.constant dense<0.25> : tensor<8xf32> : tensor<8xf32>
  // CHECK: %[[S:.*]] = nn.matmul %arg0, %arg1 {activation = "linear", activation_alpha = 1.250000e-01 : f32}
  %s = nn.matmul %q, %k : (tensor<2x4x8xf32>, tensor<2x8x4xf32>) -> tensor<2x4x4xf32>
  %scaled = nn.div %s, %scale : (tensor<2x4x4xf32>, tensor<f32>) -> tensor<2x4x4xf32>
  // CHECK: %[[H:.*]] = nn.matmul %arg2, %[[W:.*]], %[[B:.*]] {activation = "gelu"}
  %h = nn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %hb = nn.add %h, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %g = nn.gelu %hb : (tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: %[[O:.*]] = nn.matmul %[[H]], %[[W]], %[[B]], %arg2 :
  %o = nn.matmul %g, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %ob = nn.add %o, %b : (tensor<4x8xf32>, tensor<8xf32>) -> tensor<4x8xf32>
  %r = nn.add %x, %ob : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // Not fused: a product with a tensor that is not a scalar constant.
  // CHECK: %[[M:.*]] = nn.matmul %arg2, %[[W]] :
  // CHECK: nn.mul %[[M]], %arg2
  %m = nn.matmul %x, %w : (tensor<4x8xf32>, tensor<8x8xf32>) -> tensor<4x8xf32>
  %mm = nn.mul %m, %x : (tensor<4x8xf32>, tensor<4x8xf32>) -> tensor<4x8xf32>
  // CHECK: return %[[S]], %[[O]], %{{.*}}
  return %scaled, %r, %mm : tensor<2x4x4xf32>, tensor<4x8xf32>, tensor<4x8xf32>
}

// Batch normalization after a convolution folds into its weights and bias:
// s = scale / sqrt(variance + epsilon) = [2, 0.5]; w' = w * s;
// b' = (b - mean) * s + bias = [(1 - 1) * 2 + 3, (1 - 3) * 0.5 + 0].
// Then the relu fuses as before.
// CHECK-LABEL: func.func @batch_norm_folding
func.func @batch_norm_folding(%x: tensor<1x1x2x2xf32>) -> tensor<1x2x2x2xf32> {
  %w = nn.constant dense<[[[[1.0]]], [[[8.0]]]]> : tensor<2x1x1x1xf32> : tensor<2x1x1x1xf32>
  %b = nn.constant dense<1.0> : tensor<2xf32> : tensor<2xf32>
  %scale = nn.constant dense<[2.0, 1.0]> : tensor<2xf32> : tensor<2xf32>
  %bias = nn.constant dense<[3.0, 0.0]> : tensor<2xf32> : tensor<2xf32>
  %mean = nn.constant dense<[1.0, 3.0]> : tensor<2xf32> : tensor<2xf32>
  %var = nn.constant dense<[1.0, 4.0]> : tensor<2xf32> : tensor<2xf32>
  // CHECK-DAG: %[[W:.*]] = nn.constant dense<[{{\[\[\[}}2.000000e+00]]], {{\[\[\[}}4.000000e+00]]]]> : tensor<2x1x1x1xf32>
  // CHECK-DAG: %[[B:.*]] = nn.constant dense<[3.000000e+00, -1.000000e+00]> : tensor<2xf32>
  // CHECK: %[[Y:.*]] = nn.conv %arg0, %[[W]], %[[B]] {activation = "relu"}
  // CHECK-NEXT: return %[[Y]]
  %c = nn.conv %x, %w, %b : (tensor<1x1x2x2xf32>, tensor<2x1x1x1xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %n = nn.batch_normalization %c, %scale, %bias, %mean, %var {epsilon = 0.0 : f32} : (tensor<1x2x2x2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>, tensor<2xf32>) -> tensor<1x2x2x2xf32>
  %r = nn.relu %n : (tensor<1x2x2x2xf32>) -> tensor<1x2x2x2xf32>
  return %r : tensor<1x2x2x2xf32>
}

// A pad of nothing (DenseNet's exports put one before each transition's
// average pooling) is dropped; a pad of something stays.
// CHECK-LABEL: func.func @empty_pad
// CHECK-NEXT: %[[P:.*]] = nn.average_pool %arg0
// CHECK-NEXT: %[[Q:.*]] = nn.pad %arg0 {mode = "constant", pads = [0, 0, 1, 0, 0, 0, 0, 0]}
// CHECK-NEXT: return %[[P]], %[[Q]]
func.func @empty_pad(%x: tensor<1x2x4x4xf32>) -> (tensor<1x2x2x2xf32>, tensor<1x2x5x4xf32>) {
  %p = nn.pad %x {mode = "constant", pads = [0, 0, 0, 0, 0, 0, 0, 0]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x4x4xf32>
  %a = nn.average_pool %p {kernel_shape = [2, 2], strides = [2, 2]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x2x2xf32>
  %q = nn.pad %x {mode = "constant", pads = [0, 0, 1, 0, 0, 0, 0, 0]} : (tensor<1x2x4x4xf32>) -> tensor<1x2x5x4xf32>
  return %a, %q : tensor<1x2x2x2xf32>, tensor<1x2x5x4xf32>
}
