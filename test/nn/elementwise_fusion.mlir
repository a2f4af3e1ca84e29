// -nn-fuse-elementwise: f32 elementwise chains whose intermediate values
// nothing else reads become one nn.fused_elementwise (its results, bitwise
// the separate ops', are tested by fused_elementwise_op_test).
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-fuse-elementwise %s | FileCheck %s

// relu((a * b) - a) + tanh(b), then times a one-element scale.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[A:.*]]: tensor<8xf32>, %[[B:.*]]: tensor<8xf32>, %[[S:.*]]: tensor<1xf32>)
// CHECK-NEXT: %[[F:.*]] = nn.fused_elementwise %[[A]], %[[B]], %[[S]] {operands = [0, 1, 3, 0, 4, -1, 1, -1, 5, 6, 7, 2], ops = [2, 1, 10, 16, 0, 2]}
// CHECK-NEXT: return %[[F]]
func.func @chain(%a: tensor<8xf32>, %b: tensor<8xf32>, %s: tensor<1xf32>) -> tensor<8xf32> {
  %0 = nn.mul %a, %b : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %1 = nn.sub %0, %a : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %2 = nn.relu %1 : (tensor<8xf32>) -> tensor<8xf32>
  %3 = nn.tanh %b : (tensor<8xf32>) -> tensor<8xf32>
  %4 = nn.add %2, %3 : (tensor<8xf32>, tensor<8xf32>) -> tensor<8xf32>
  %5 = nn.mul %4, %s : (tensor<8xf32>, tensor<1xf32>) -> tensor<8xf32>
  return %5 : tensor<8xf32>
}

// A value read outside the chain stays: the chain fuses from its uses on.
// CHECK-LABEL: func.func @escaping
// CHECK: %[[E:.*]] = nn.exp %{{.*}}
// CHECK: %[[F:.*]] = nn.fused_elementwise %[[E]] {operands = [0, -1, 1, -1], ops = [11, 10]}
// CHECK: return %[[E]], %[[F]]
func.func @escaping(%a: tensor<4xf32>) -> (tensor<4xf32>, tensor<4xf32>) {
  %0 = nn.exp %a : (tensor<4xf32>) -> tensor<4xf32>
  %1 = nn.neg %0 : (tensor<4xf32>) -> tensor<4xf32>
  %2 = nn.relu %1 : (tensor<4xf32>) -> tensor<4xf32>
  return %0, %2 : tensor<4xf32>, tensor<4xf32>
}

// Not fused: other dtypes, broadcasting beyond one element, attributes, a
// lone op.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: nn.fused_elementwise
// CHECK: return
func.func @not_fused(%i: tensor<4xi32>, %a: tensor<2x4xf32>, %row: tensor<4xf32>) -> (tensor<4xi32>, tensor<2x4xf32>, tensor<2x4xf32>) {
  %0 = nn.add %i, %i : (tensor<4xi32>, tensor<4xi32>) -> tensor<4xi32>
  %1 = nn.neg %0 : (tensor<4xi32>) -> tensor<4xi32>
  %2 = nn.add %a, %row : (tensor<2x4xf32>, tensor<4xf32>) -> tensor<2x4xf32>
  %3 = nn.relu %2 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %4 = nn.leaky_relu %a {alpha = 0.1 : f32} : (tensor<2x4xf32>) -> tensor<2x4xf32>
  %5 = nn.neg %4 : (tensor<2x4xf32>) -> tensor<2x4xf32>
  return %1, %3, %5 : tensor<4xi32>, tensor<2x4xf32>, tensor<2x4xf32>
}

// A relu of a batch normalization nothing else reads becomes the
// normalization's activation (one pass); not where the normalization's
// own value is read too.
// CHECK-LABEL: func.func @norm_relu
// CHECK: %[[N:.*]] = nn.batch_normalization %arg0, %arg1, %arg1, %arg1, %arg1 {activation = "relu", epsilon = 1.000000e-03 : f32}
// CHECK-NOT: nn.relu %[[N]]
// CHECK: %[[M:.*]] = nn.batch_normalization %arg0, %arg1, %arg1, %arg1, %arg1 :
// CHECK: %[[R:.*]] = nn.relu %[[M]]
// CHECK: return %[[N]], %[[M]], %[[R]]
func.func @norm_relu(%x: tensor<1x4x2x2xf32>, %p: tensor<4xf32>) -> (tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>) {
  %n = nn.batch_normalization %x, %p, %p, %p, %p {epsilon = 1.0e-3 : f32} : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %r = nn.relu %n : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  %m = nn.batch_normalization %x, %p, %p, %p, %p : (tensor<1x4x2x2xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>, tensor<4xf32>) -> tensor<1x4x2x2xf32>
  %s = nn.relu %m : (tensor<1x4x2x2xf32>) -> tensor<1x4x2x2xf32>
  return %r, %m, %s : tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>, tensor<1x4x2x2xf32>
}
