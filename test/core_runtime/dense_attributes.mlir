// Dense tensor constants of float, bool and complex element types.
// RUN: bef_executor %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'dense_constants'
func.func @dense_constants() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %a = corert.const_dense_tensor dense<[(1.0, 2.0), (3.0, -4.5)]> : tensor<2xcomplex<f32>>
  // CHECK-NEXT: DenseHostTensor dtype = complex64, shape = [2], values = [(1.000000e+00,2.000000e+00), (3.000000e+00,-4.500000e+00)]
  %ch1 = "corert.print_tensorhandle"(%a, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %b = corert.const_dense_tensor dense<[[1.5, 2.0], [0.25, -1.0]]> : tensor<2x2xf32>
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.500000e+00, 2.000000e+00, 2.500000e-01, -1.000000e+00]
  %ch2 = "corert.print_tensorhandle"(%b, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %c = corert.const_dense_tensor dense<[true, false, true]> : tensor<3xi1>
  // CHECK-NEXT: DenseHostTensor dtype = i1, shape = [3], values = [1, 0, 1]
  %ch3 = "corert.print_tensorhandle"(%c, %ch2) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %d = corert.const_dense_tensor dense<(0.5, 1.0)> : tensor<2xcomplex<f64>>
  // CHECK-NEXT: DenseHostTensor dtype = complex128, shape = [2], values = [(5.000000e-01,1.000000e+00), (5.000000e-01,1.000000e+00)]
  %ch4 = "corert.print_tensorhandle"(%d, %ch3) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch4 : !tfrt.chain
}
// CHECK-NEXT: 'dense_constants' returned !tfrt.chain value
