// -nn-fuse-qkv: an nn.attention's three projections of one input, with
// constant weights and biases, become one product whose result the
// attention reads packed (qkv_widths); the CUDA pipeline runs it unless
// told not to (--fuse-qkv=false). The CPU computes the packed form to the
// same values (the constants are multiples of 1/64, so every product's sum
// is exact whatever order a machine's kernels add in).
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-fuse-qkv %s | FileCheck %s
// RUN: asyncrt-run %s > %t.plain
// RUN: asyncrt-opt -nn-fuse-qkv %s > %t.mlir && asyncrt-run %t.mlir > %t.fused
// RUN: diff %t.plain %t.fused
// RUN: asyncrt-compile --device=CUDA:0 --emit-mlir %s | FileCheck %s --check-prefix=CUDA
// RUN: asyncrt-compile --device=CUDA:0 --fuse-qkv=false --emit-mlir %s | FileCheck %s --check-prefix=UNFUSED

// CHECK-LABEL: func.func @main
// CHECK: %[[W:.*]] = nn.constant dense_resource<qkv_weights> : tensor<8x24xf32>
// CHECK: %[[B:.*]] = nn.constant dense_resource<qkv_bias> : tensor<24xf32>
// CHECK: %[[QKV:.*]] = nn.matmul %{{.*}}, %[[W]], %[[B]] : (tensor<1x6x8xf32>, tensor<8x24xf32>, tensor<24xf32>) -> tensor<1x6x24xf32>
// CHECK-NEXT: nn.attention %[[QKV]] {q_num_heads = 2 : i64, qkv_widths = [8, 8, 8]} : (tensor<1x6x24xf32>) -> tensor<1x6x8xf32>
// CHECK-NOT: nn.matmul
// CHECK: return
// CUDA: ["qkv_widths", [8, 8, 8]]
// CUDA-SAME: op_names = ["nn.reshape", "nn.matmul", "nn.attention"]
// UNFUSED-NOT: qkv_widths
func.func @main() -> tensor<1x6x8xf32> {
  %x2 = nn.constant dense<[[-0.53125, 0.09375, -0.265625, 0.203125, 0.25, -0.875, -0.96875, 0.671875], [-0.484375, -0.53125, 0.984375, -0.0625, 0.671875, -0.046875, 0.28125, -0.703125], [0.265625, 0.734375, 0.046875, 0.484375, 0.34375, -0.875, 0.515625, 0.1875], [-0.390625, -0.9375, 0.734375, -0.0625, 0.4375, 0.765625, 0.421875, 0.84375], [-0.203125, 0.609375, -0.109375, 0.875, 0.765625, -0.8125, -0.734375, -0.5625], [0.9375, -0.125, 0.25, -0.390625, 0.015625, -0.234375, -0.296875, 0.171875]]> : tensor<6x8xf32> : tensor<6x8xf32>
  %x = nn.reshape %x2 {shape = [1, 6, 8]} : (tensor<6x8xf32>) -> tensor<1x6x8xf32>
  %wq = nn.constant dense<[[0.171875, 0.8125, 0.359375, 0.859375, 0.71875, 0.984375, 0.34375, -0.671875], [0.71875, 0.921875, 0.8125, 0.140625, 0.421875, -0.578125, 0.65625, 0.140625], [-0.4375, -0.875, 0.703125, 0.984375, -0.828125, 0.59375, -0.171875, -0.703125], [-0.40625, 0.53125, 0.75, -0.90625, 0.234375, -0.90625, 0.4375, -0.34375], [0.765625, 0.96875, 0.015625, 1.0, -0.375, -0.84375, 0.203125, -0.9375], [-0.609375, -0.1875, 0.21875, -0.6875, -0.921875, 0.734375, -0.375, 0.921875], [0.796875, -0.25, -0.078125, 0.046875, 0.28125, 0.1875, 0.125, 0.234375], [0.875, 0.015625, -0.140625, 0.4375, -0.53125, -0.390625, 0.953125, 0.046875]]> : tensor<8x8xf32> : tensor<8x8xf32>
  %bq = nn.constant dense<[0.09375, -0.984375, -0.171875, 0.15625, -0.953125, 0.234375, 0.265625, -0.875]> : tensor<8xf32> : tensor<8xf32>
  %q = nn.matmul %x, %wq, %bq : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  %wk = nn.constant dense<[[0.25, -0.0625, 0.359375, -0.296875, 0.40625, 0.46875, -0.953125, -0.875], [0.359375, 0.921875, -0.5, -0.09375, 0.1875, -0.359375, -0.265625, -0.375], [-0.265625, 0.1875, -0.40625, -0.25, 0.546875, -0.953125, 0.140625, 0.46875], [-0.375, -0.5625, 0.609375, -0.515625, -0.625, -0.125, 0.390625, -0.796875], [-0.359375, -0.328125, 0.671875, -0.125, 0.71875, -0.65625, -0.328125, 0.296875], [0.765625, -0.09375, -0.546875, -0.765625, 0.0625, -0.625, 0.609375, 0.671875], [-0.640625, -0.4375, 0.609375, 0.28125, 0.609375, -0.3125, -0.734375, -0.421875], [0.59375, -0.453125, -0.3125, -0.171875, -0.15625, -0.1875, 0.84375, -0.6875]]> : tensor<8x8xf32> : tensor<8x8xf32>
  %bk = nn.constant dense<[-0.984375, 0.890625, 0.765625, 0.96875, -0.125, 0.90625, 0.859375, -0.5625]> : tensor<8xf32> : tensor<8xf32>
  %k = nn.matmul %x, %wk, %bk : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  %wv = nn.constant dense<[[0.484375, 0.671875, 0.328125, 0.03125, -0.421875, -0.3125, -0.546875, -0.859375], [0.171875, -0.421875, 0.625, -0.90625, 0.8125, 0.390625, 0.84375, 0.796875], [0.796875, 0.15625, -0.96875, 0.484375, -0.65625, -0.40625, 0.328125, 0.046875], [-0.171875, 0.875, 0.21875, -0.3125, -0.5, 0.71875, -0.046875, 0.5625], [-0.296875, -0.609375, 0.0625, 0.640625, -0.65625, 0.578125, 0.84375, 0.609375], [0.640625, -0.984375, 0.25, 0.71875, -0.90625, -0.453125, -0.46875, 0.0625], [-0.15625, -0.046875, 0.546875, -1.0, -0.890625, -0.75, -0.75, -0.859375], [0.953125, 0.703125, -0.828125, 0.0, -0.375, -0.375, -0.296875, 0.296875]]> : tensor<8x8xf32> : tensor<8x8xf32>
  %bv = nn.constant dense<[0.171875, -0.28125, -0.625, -0.34375, -0.75, 0.109375, 0.4375, -0.234375]> : tensor<8xf32> : tensor<8xf32>
  %v = nn.matmul %x, %wv, %bv : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  %a = nn.attention %q, %k, %v {q_num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<1x6x8xf32>, tensor<1x6x8xf32>) -> tensor<1x6x8xf32>
  return %a : tensor<1x6x8xf32>
}

// Not fused: K projects another input.
// CHECK-LABEL: func.func @not_one_input
// CHECK-COUNT-3: nn.matmul
// CHECK: nn.attention %{{.*}}, %{{.*}}, %{{.*}} {q_num_heads = 2 : i64}
func.func @not_one_input(%x: tensor<1x6x8xf32>, %other: tensor<1x6x8xf32>) -> tensor<1x6x8xf32> {
  %w = nn.constant dense<0.25> : tensor<8x8xf32> : tensor<8x8xf32>
  %b = nn.constant dense<0.5> : tensor<8xf32> : tensor<8xf32>
  %q = nn.matmul %x, %w, %b : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  %k = nn.matmul %other, %w, %b : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  %v = nn.matmul %x, %w, %b : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  %a = nn.attention %q, %k, %v {q_num_heads = 2 : i64} : (tensor<1x6x8xf32>, tensor<1x6x8xf32>, tensor<1x6x8xf32>) -> tensor<1x6x8xf32>
  return %a : tensor<1x6x8xf32>
}
