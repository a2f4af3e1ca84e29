// -nn-fuse-attention: the head reshapes and transposes, the two matrix
// products (the first scaled) and the softmax of a transformer's attention
// become one nn.attention; the CUDA pipeline runs it unless told not to
// (--fuse-attention=false), and the host keeps the unfused ops.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-fuse-attention %s | FileCheck %s
// RUN: asyncrt-compile --device=CUDA:0 --emit-mlir %s | FileCheck %s --check-prefix=CUDA
// RUN: asyncrt-compile --device=CUDA:0 --fuse-attention=false --emit-mlir %s | FileCheck %s --check-prefix=UNFUSED
// RUN: asyncrt-compile --emit-mlir %s | FileCheck %s --check-prefix=UNFUSED

// CHECK-LABEL: func.func @attention
// CHECK-SAME: (%[[Q:.*]]: tensor<1x6x8xf32>, %[[K:.*]]: tensor<1x5x8xf32>, %[[V:.*]]: tensor<1x5x8xf32>)
// CHECK-NEXT: %[[A:.*]] = nn.attention %[[Q]], %[[K]], %[[V]] {kv_num_heads = 2 : i64, q_num_heads = 2 : i64, scale = 5.000000e-01 : f32} : (tensor<1x6x8xf32>, tensor<1x5x8xf32>, tensor<1x5x8xf32>) -> tensor<1x6x8xf32>
// CHECK-NEXT: return %[[A]]
// CUDA-LABEL: func.func @attention(
// CUDA: "nn.attention"
// UNFUSED-NOT: nn.attention
func.func @attention(%q: tensor<1x6x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) -> tensor<1x6x8xf32> {
  %q4 = nn.reshape %q {shape = [1, 6, 2, 4]} : (tensor<1x6x8xf32>) -> tensor<1x6x2x4xf32>
  %qh = nn.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32>
  %k4 = nn.reshape %k {shape = [1, 5, 2, 4]} : (tensor<1x5x8xf32>) -> tensor<1x5x2x4xf32>
  %kh = nn.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x5x2x4xf32>) -> tensor<1x2x4x5xf32>
  %v4 = nn.reshape %v {shape = [1, 5, 2, 4]} : (tensor<1x5x8xf32>) -> tensor<1x5x2x4xf32>
  %vh = nn.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x5x2x4xf32>) -> tensor<1x2x5x4xf32>
  %s = nn.matmul %qh, %kh {activation = "linear", activation_alpha = 0.5 : f32} : (tensor<1x2x6x4xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x6x5xf32>
  %p = nn.softmax %s {axis = -1 : i64} : (tensor<1x2x6x5xf32>) -> tensor<1x2x6x5xf32>
  %c = nn.matmul %p, %vh : (tensor<1x2x6x5xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x6x4xf32>
  %ct = nn.transpose %c {perm = [0, 2, 1, 3]} : (tensor<1x2x6x4xf32>) -> tensor<1x6x2x4xf32>
  %y = nn.reshape %ct {shape = [1, 6, 8]} : (tensor<1x6x2x4xf32>) -> tensor<1x6x8xf32>
  return %y : tensor<1x6x8xf32>
}

// Not fused: the scores are read twice (returned too), and a softmax over
// another axis.
// CHECK-LABEL: func.func @not_attention
// CHECK-NOT: nn.attention
// CHECK: return
func.func @not_attention(%q: tensor<1x6x8xf32>, %k: tensor<1x5x8xf32>, %v: tensor<1x5x8xf32>) -> (tensor<1x6x8xf32>, tensor<1x2x6x5xf32>, tensor<1x6x8xf32>) {
  %q4 = nn.reshape %q {shape = [1, 6, 2, 4]} : (tensor<1x6x8xf32>) -> tensor<1x6x2x4xf32>
  %qh = nn.transpose %q4 {perm = [0, 2, 1, 3]} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32>
  %k4 = nn.reshape %k {shape = [1, 5, 2, 4]} : (tensor<1x5x8xf32>) -> tensor<1x5x2x4xf32>
  %kh = nn.transpose %k4 {perm = [0, 2, 3, 1]} : (tensor<1x5x2x4xf32>) -> tensor<1x2x4x5xf32>
  %v4 = nn.reshape %v {shape = [1, 5, 2, 4]} : (tensor<1x5x8xf32>) -> tensor<1x5x2x4xf32>
  %vh = nn.transpose %v4 {perm = [0, 2, 1, 3]} : (tensor<1x5x2x4xf32>) -> tensor<1x2x5x4xf32>
  %s = nn.matmul %qh, %kh : (tensor<1x2x6x4xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x6x5xf32>
  %p = nn.softmax %s {axis = -1 : i64} : (tensor<1x2x6x5xf32>) -> tensor<1x2x6x5xf32>
  %c = nn.matmul %p, %vh : (tensor<1x2x6x5xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x6x4xf32>
  %ct = nn.transpose %c {perm = [0, 2, 1, 3]} : (tensor<1x2x6x4xf32>) -> tensor<1x6x2x4xf32>
  %y = nn.reshape %ct {shape = [1, 6, 8]} : (tensor<1x6x2x4xf32>) -> tensor<1x6x8xf32>
  %q4b = nn.reshape %q {shape = [1, 6, 2, 4]} : (tensor<1x6x8xf32>) -> tensor<1x6x2x4xf32>
  %qhb = nn.transpose %q4b {perm = [0, 2, 1, 3]} : (tensor<1x6x2x4xf32>) -> tensor<1x2x6x4xf32>
  %k4b = nn.reshape %k {shape = [1, 5, 2, 4]} : (tensor<1x5x8xf32>) -> tensor<1x5x2x4xf32>
  %khb = nn.transpose %k4b {perm = [0, 2, 3, 1]} : (tensor<1x5x2x4xf32>) -> tensor<1x2x4x5xf32>
  %v4b = nn.reshape %v {shape = [1, 5, 2, 4]} : (tensor<1x5x8xf32>) -> tensor<1x5x2x4xf32>
  %vhb = nn.transpose %v4b {perm = [0, 2, 1, 3]} : (tensor<1x5x2x4xf32>) -> tensor<1x2x5x4xf32>
  %sb = nn.matmul %qhb, %khb : (tensor<1x2x6x4xf32>, tensor<1x2x4x5xf32>) -> tensor<1x2x6x5xf32>
  %pb = nn.softmax %sb {axis = 2 : i64} : (tensor<1x2x6x5xf32>) -> tensor<1x2x6x5xf32>
  %vb = nn.reshape %v {shape = [1, 5, 2, 4]} : (tensor<1x5x8xf32>) -> tensor<1x5x2x4xf32>
  %vhc = nn.transpose %vb {perm = [0, 2, 1, 3]} : (tensor<1x5x2x4xf32>) -> tensor<1x2x5x4xf32>
  %cb = nn.matmul %pb, %vhc : (tensor<1x2x6x5xf32>, tensor<1x2x5x4xf32>) -> tensor<1x2x6x4xf32>
  %ctb = nn.transpose %cb {perm = [0, 2, 1, 3]} : (tensor<1x2x6x4xf32>) -> tensor<1x6x2x4xf32>
  %yb = nn.reshape %ctb {shape = [1, 6, 8]} : (tensor<1x6x2x4xf32>) -> tensor<1x6x8xf32>
  return %y, %s, %yb : tensor<1x6x8xf32>, tensor<1x2x6x5xf32>, tensor<1x6x8xf32>
}
