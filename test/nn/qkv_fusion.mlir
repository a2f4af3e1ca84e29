// -nn-fuse-qkv: an nn.attention's three projections of one input, with
// constant weights and biases, become one product whose result the
// attention reads packed (qkv_widths); the CUDA pipeline runs it unless
// told not to (--fuse-qkv=false). The CPU computes the packed form to the
// same values.
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
  %x2 = nn.constant dense<[[-0.524, 0.088, -0.260, 0.208, 0.251, -0.869, -0.974, 0.675], [-0.481, -0.531, 0.991, -0.059, 0.673, -0.047, 0.278, -0.699], [0.270, 0.736, 0.046, 0.483, 0.343, -0.872, 0.516, 0.182], [-0.397, -0.938, 0.731, -0.055, 0.438, 0.758, 0.428, 0.842], [-0.210, 0.602, -0.111, 0.871, 0.758, -0.805, -0.728, -0.566], [0.931, -0.128, 0.253, -0.398, 0.014, -0.228, -0.298, 0.170]]> : tensor<6x8xf32> : tensor<6x8xf32>
  %x = nn.reshape %x2 {shape = [1, 6, 8]} : (tensor<6x8xf32>) -> tensor<1x6x8xf32>
  %wq = nn.constant dense<[[0.169, 0.808, 0.364, 0.858, 0.713, 0.982, 0.343, -0.674], [0.721, 0.929, 0.809, 0.138, 0.428, -0.578, 0.663, 0.147], [-0.430, -0.873, 0.708, 0.980, -0.823, 0.601, -0.179, -0.698], [-0.412, 0.538, 0.746, -0.912, 0.229, -0.910, 0.437, -0.338], [0.762, 0.961, 0.011, 0.997, -0.381, -0.846, 0.200, -0.937], [-0.605, -0.184, 0.221, -0.688, -0.915, 0.736, -0.372, 0.917], [0.793, -0.244, -0.079, 0.040, 0.288, 0.191, 0.119, 0.240], [0.881, 0.014, -0.138, 0.441, -0.525, -0.398, 0.956, 0.042]]> : tensor<8x8xf32> : tensor<8x8xf32>
  %bq = nn.constant dense<[0.097, -0.977, -0.170, 0.160, -0.960, 0.232, 0.264, -0.880]> : tensor<8xf32> : tensor<8xf32>
  %q = nn.matmul %x, %wq, %bq : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  %wk = nn.constant dense<[[0.255, -0.067, 0.359, -0.295, 0.414, 0.476, -0.956, -0.879], [0.352, 0.927, -0.498, -0.087, 0.185, -0.360, -0.272, -0.375], [-0.262, 0.191, -0.399, -0.246, 0.545, -0.946, 0.139, 0.470], [-0.380, -0.555, 0.608, -0.523, -0.625, -0.130, 0.396, -0.796], [-0.356, -0.332, 0.667, -0.123, 0.711, -0.661, -0.327, 0.300], [0.770, -0.098, -0.550, -0.758, 0.059, -0.618, 0.614, 0.677], [-0.633, -0.443, 0.614, 0.284, 0.613, -0.309, -0.741, -0.416], [0.588, -0.458, -0.307, -0.166, -0.160, -0.181, 0.841, -0.688]]> : tensor<8x8xf32> : tensor<8x8xf32>
  %bk = nn.constant dense<[-0.991, 0.887, 0.760, 0.974, -0.131, 0.900, 0.855, -0.556]> : tensor<8xf32> : tensor<8xf32>
  %k = nn.matmul %x, %wk, %bk : (tensor<1x6x8xf32>, tensor<8x8xf32>, tensor<8xf32>) -> tensor<1x6x8xf32>
  %wv = nn.constant dense<[[0.491, 0.673, 0.326, 0.038, -0.422, -0.318, -0.545, -0.864], [0.177, -0.426, 0.620, -0.910, 0.807, 0.387, 0.848, 0.793], [0.799, 0.154, -0.974, 0.491, -0.656, -0.400, 0.326, 0.050], [-0.172, 0.878, 0.224, -0.317, -0.495, 0.723, -0.046, 0.565], [-0.296, -0.605, 0.069, 0.634, -0.657, 0.583, 0.844, 0.612], [0.647, -0.985, 0.257, 0.725, -0.900, -0.457, -0.463, 0.055], [-0.154, -0.054, 0.553, -0.996, -0.890, -0.746, -0.751, -0.863], [0.949, 0.709, -0.828, 0.004, -0.368, -0.371, -0.297, 0.294]]> : tensor<8x8xf32> : tensor<8x8xf32>
  %bv = nn.constant dense<[0.173, -0.278, -0.618, -0.342, -0.752, 0.111, 0.432, -0.240]> : tensor<8xf32> : tensor<8xf32>
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
