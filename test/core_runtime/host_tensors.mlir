// ts, tfrt_dht, tfrt_sht and coo kernels.
// RUN: bef_executor %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'shapes'
func.func @shapes() {
  %a = ts.build_shape [2 : i64, 3 : i64]
  // CHECK-DAG: shape = [2, 3]
  %c0 = ts.print_shape %a
  %n = ts.get_num_elements %a
  // CHECK-DAG: int64 = 6
  %c1 = tfrt.print.i64 %n, %c0
  %p = ts.build_partial_shape [-1 : i64, 4 : i64]
  // CHECK-DAG: partial_tensor_shape = [-1, 4]
  %c2 = ts.print_partial_shape %p
  // expected-error @+1 {{runtime error: Unknown dimensions at following indices = [0]}}
  %s = ts.to_shape %p
  tfrt.return
}

// CHECK-LABEL: --- Running 'dense'
func.func @dense() {
  %c0 = tfrt.new.chain
  %t = tfrt_dht.create_uninitialized_tensor.f32.2 [2 : i64, 2 : i64]
  %c1 = tfrt_dht.set_tensor_with_constant_values.f32 %t, %c0 [1.0 : f32, 0.0 : f32, 0.0 : f32, 2.5 : f32]
  // CHECK: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.000000e+00, 0.000000e+00, 0.000000e+00, 2.500000e+00]
  %c2 = tfrt_dht.print_tensor %t, %c1
  %coo, %c3 = coo.convert_dht_to_coo.f32.2 %t, %c2
  // CHECK: CooHostTensor dtype = f32, shape = [2, 2], indices = [0, 0, 1, 1], values = [1.000000e+00, 2.500000e+00]
  %c4 = tfrt_dht.print_tensor %coo, %c3
  %back, %c5 = coo.convert_coo_to_dht.f32.2 %coo, %c4
  %eq, %c6 = tfrt_dht.tensor_equal.f32 %t, %back, %c5
  // CHECK: int1 = 1
  %c7 = tfrt.print.i1 %eq, %c6
  // expected-error @+1 {{runtime error: Incorrect number of values for the tensor: 1, but expected 4}}
  %c8 = tfrt_dht.set_tensor_with_constant_values.f32 %t, %c7 [1.0 : f32]
  tfrt.return
}

// CHECK-LABEL: --- Running 'strings'
func.func @strings() {
  %c0 = tfrt.new.chain
  %t = "tfrt_sht.create_tensor"() {shape = [2], values = ["a", "b"]} : () -> !t.tensor
  // CHECK: StringHostTensor shape = [2], values = ["a", "b"]
  %c1 = tfrt_dht.print_tensor %t, %c0
  tfrt.return
}
