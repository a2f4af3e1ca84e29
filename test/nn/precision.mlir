// -nn-convert-precision: the model computes in f16 (or bf16) behind its f32
// signature. The argument is cast at entry, the constant converted, the
// matmul and relu take the shape functions' f16 types, nn.is_nan (f32 only)
// computes in f32 between casts, and the result is cast back. Run on the
// CPU, which computes f16 ops in f32 on the same rounded values.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-convert-precision="dtype=f16" %s | FileCheck %s
// RUN: asyncrt-opt -nn-convert-precision="dtype=bf16" %s | FileCheck %s --check-prefix=BF16
// RUN: asyncrt-opt -nn-convert-precision="dtype=f16" -nn-to-corert %s | grep -v '^}$' > %t.mlir
// RUN: sed -n 's|^// DRIVER: ||p' %s >> %t.mlir
// RUN: asyncrt-translate -mlir-to-bef %t.mlir -o %t.bef
// RUN: bef_executor --devices=cpu --functions=print_main %t.bef | FileCheck %s --check-prefix=EXEC
// RUN: not asyncrt-opt -nn-convert-precision="dtype=f8" %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: nn-convert-precision: dtype must be f16 or bf16, not 'f8'

// CHECK-LABEL: func.func @main(%arg0: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x3xi1>)
// CHECK: %[[X:.*]] = nn.cast %arg0 {to = f16} : (tensor<2x3xf32>) -> tensor<2x3xf16>
// CHECK: %[[W:.*]] = nn.constant dense<{{.*}}9.997550e-02{{.*}}> : tensor<3x2xf16>
// CHECK: %[[M:.*]] = nn.matmul %[[X]], %[[W]] : (tensor<2x3xf16>, tensor<3x2xf16>) -> tensor<2x2xf16>
// CHECK: %[[R:.*]] = nn.relu %[[M]] : (tensor<2x2xf16>) -> tensor<2x2xf16>
// CHECK: %[[X32:.*]] = nn.cast %[[X]] {to = f32} : (tensor<2x3xf16>) -> tensor<2x3xf32>
// CHECK: %[[N:.*]] = nn.is_nan %[[X32]] : (tensor<2x3xf32>) -> tensor<2x3xi1>
// CHECK: %[[R32:.*]] = nn.cast %[[R]] {to = f32} : (tensor<2x2xf16>) -> tensor<2x2xf32>
// CHECK: return %[[R32]], %[[N]] : tensor<2x2xf32>, tensor<2x3xi1>
// BF16: nn.matmul {{.*}} : (tensor<2x3xbf16>, tensor<3x2xbf16>) -> tensor<2x2xbf16>
func.func @main(%x: tensor<2x3xf32>) -> (tensor<2x2xf32>, tensor<2x3xi1>) {
  %w = nn.constant dense<[[0.5, -1.0], [0.25, 2.0], [1.0, 0.1]]> : tensor<3x2xf32> : tensor<3x2xf32>
  %m = nn.matmul %x, %w : (tensor<2x3xf32>, tensor<3x2xf32>) -> tensor<2x2xf32>
  %r = nn.relu %m : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %n = nn.is_nan %x : (tensor<2x3xf32>) -> tensor<2x3xi1>
  return %r, %n : tensor<2x2xf32>, tensor<2x3xi1>
}

// x w = [[4, 3 + 3 * 0.1], [1.625, 2 + 2 * 0.1]] with 0.1 as f16
// (0.0999755859), each rounded to f16: 3.29992676 -> 3.30078125 and
// 2.19995117 -> 2.19921875.
// EXEC-LABEL: --- Running 'print_main'
// EXEC-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [4.000000e+00, 3.300781e+00, 1.625000e+00, 2.199219e+00]
// EXEC-NEXT: DenseHostTensor dtype = i1, shape = [2, 3], values = [0, 0, 0, 0, 0, 0]
// DRIVER: func.func @print_main() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %x = "corert.const_dense_tensor"() {value = dense<[[1.0, 2.0, 3.0], [-1.0, 0.5, 2.0]]> : tensor<2x3xf32>} : () -> !corert.tensorhandle
// DRIVER:   %r, %n = tfrt.call @main(%x) : (!corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
// DRIVER:   %ch1 = corert.print_tensorhandle %r, %ch0
// DRIVER:   %ch2 = corert.print_tensorhandle %n, %ch1
// DRIVER:   tfrt.return %ch2 : !tfrt.chain
// DRIVER: }
// DRIVER: }
