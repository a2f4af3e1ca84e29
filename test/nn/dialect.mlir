// The nn dialect: ops verify with the runtime's shape functions.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -split-input-file -verify-diagnostics %s | FileCheck %s

// CHECK-LABEL: func.func @conv_relu
func.func @conv_relu(%x: tensor<1x3x8x8xf32>, %w: tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32> {
  // CHECK: nn.conv %{{.*}}, %{{.*}} {pads = [1, 1, 1, 1], strides = [2, 2]}
  %y = nn.conv %x, %w {strides = [2, 2], pads = [1, 1, 1, 1]} : (tensor<1x3x8x8xf32>, tensor<4x3x3x3xf32>) -> tensor<1x4x4x4xf32>
  %r = nn.relu %y : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}

// -----

// Dynamic shapes are checked once they are known.
// CHECK-LABEL: func.func @dynamic
func.func @dynamic(%a: tensor<?x3xf32>, %b: tensor<3x4xf32>) -> tensor<?x4xf32> {
  %c = nn.matmul %a, %b : (tensor<?x3xf32>, tensor<3x4xf32>) -> tensor<?x4xf32>
  return %c : tensor<?x4xf32>
}

// -----

func.func @inner_dimensions(%a: tensor<2x3xf32>, %b: tensor<4x2xf32>) -> tensor<2x2xf32> {
  // expected-error @+1 {{'nn.matmul' op nn.matmul: inner dimensions differ: [2, 3] x [4, 2]}}
  %c = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<4x2xf32>) -> tensor<2x2xf32>
  return %c : tensor<2x2xf32>
}

// -----

func.func @wrong_result(%a: tensor<2x3xf32>, %b: tensor<3x4xf32>) -> tensor<2x5xf32> {
  // expected-error @+1 {{result 0 has type 'tensor<2x5xf32>' but the shape function gives 'tensor<2x4xf32>'}}
  %c = nn.matmul %a, %b : (tensor<2x3xf32>, tensor<3x4xf32>) -> tensor<2x5xf32>
  return %c : tensor<2x5xf32>
}

// -----

func.func @bad_attribute(%x: tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32> {
  // expected-error @+1 {{unknown auto_pad}}
  %y = nn.max_pool %x {kernel_shape = [2, 2], strides = [2, 2], auto_pad = "SIDEWAYS"} : (tensor<1x1x4x4xf32>) -> tensor<1x1x2x2xf32>
  return %y : tensor<1x1x2x2xf32>
}

// -----

func.func @split(%x: tensor<6x2xf32>) -> (tensor<2x2xf32>, tensor<4x2xf32>) {
  %a, %b = nn.split %x {axis = 0 : i64, split = [2, 4]} : (tensor<6x2xf32>) -> (tensor<2x2xf32>, tensor<4x2xf32>)
  return %a, %b : tensor<2x2xf32>, tensor<4x2xf32>
}

// -----

func.func @constant_type() -> tensor<3xf32> {
  // expected-error @+1 {{value type 'tensor<2xf32>' differs from the result type 'tensor<3xf32>'}}
  %c = nn.constant dense<[1.0, 2.0]> : tensor<2xf32> : tensor<3xf32>
  return %c : tensor<3xf32>
}
