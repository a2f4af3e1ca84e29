// -nn-to-corert="synthetic-weights=1" (asyncrt-compile --synthetic-weights,
// for benchmarks): a constant of more than 1024 elements becomes
// corert.synthetic_dense_tensor_on (deterministic pseudo-random values made
// on the first call), a small one stays in the program. Two calls give the
// same result.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-to-corert="synthetic-weights=1" %s | FileCheck %s
// RUN: asyncrt-opt -nn-to-corert="synthetic-weights=1" %s | grep -v '^}$' > %t.mlir
// RUN: sed -n 's|^// DRIVER: ||p' %s >> %t.mlir
// RUN: asyncrt-translate -mlir-to-bef %t.mlir -o %t.bef
// RUN: bef_executor --devices=cpu --functions=print_main %t.bef | FileCheck %s --check-prefix=EXEC

// CHECK-LABEL: func.func @main
// CHECK-DAG: %[[HOST:.*]] = "tfrt.get_device"(%{{.*}}) {{{.*}}device_name = "CPU:0"}
// CHECK-DAG: %[[W:.*]] = corert.synthetic_dense_tensor_on %[[HOST]] {{{.*}}dtype = "f32", seed = 1 : i64, shape = [32, 64]}
// CHECK-DAG: %[[B:.*]] = corert.const_dense_tensor dense<5.000000e-01> : tensor<64xf32>
// CHECK: corert.executeop({{.*}}) "nn.matmul"(%{{.*}}, %[[W]])
func.func @main(%x: tensor<1x32xf32>) -> tensor<1x64xf32> {
  %w = nn.constant dense<0.25> : tensor<32x64xf32> : tensor<32x64xf32>
  %b = nn.constant dense<0.5> : tensor<64xf32> : tensor<64xf32>
  %m = nn.matmul %x, %w : (tensor<1x32xf32>, tensor<32x64xf32>) -> tensor<1x64xf32>
  %r = nn.add %m, %b : (tensor<1x64xf32>, tensor<64xf32>) -> tensor<1x64xf32>
  return %r : tensor<1x64xf32>
}

// Not the real weights (all 0.25: every output would be 8.5), and the same
// on both calls.
// EXEC-LABEL: --- Running 'print_main'
// EXEC-NEXT: DenseHostTensor dtype = f32, shape = [1, 64], values = [[[FIRST:[-0-9.e+]+]], [[SECOND:[-0-9.e+]+]],
// EXEC-NOT: 8.500000e+00
// EXEC-NEXT: DenseHostTensor dtype = f32, shape = [1, 64], values = [[[FIRST]], [[SECOND]],
// DRIVER: func.func @print_main() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %x = "corert.const_dense_tensor"() {value = dense<1.0> : tensor<1x32xf32>} : () -> !corert.tensorhandle
// DRIVER:   %r1 = tfrt.call @main(%x) : (!corert.tensorhandle) -> !corert.tensorhandle
// DRIVER:   %ch1 = corert.print_tensorhandle %r1, %ch0
// DRIVER:   %r2 = tfrt.call @main(%x) : (!corert.tensorhandle) -> !corert.tensorhandle
// DRIVER:   %ch2 = corert.print_tensorhandle %r2, %ch1
// DRIVER:   tfrt.return %ch2 : !tfrt.chain
// DRIVER: }
// DRIVER: }
