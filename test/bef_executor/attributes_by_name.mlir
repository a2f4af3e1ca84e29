// Kernels read their attributes by the names their ODS ops give them: other
// attributes (`_tfrt_cost`, which sorts first) do not get in the way.
// RUN: bef_executor -devices=cpu %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'with_costs'
func.func @with_costs() -> (i32, f64, complex<f32>, i64, i32) {
  %a = "tfrt.constant.i32"() {_tfrt_cost = 3 : i64, value = 7 : i32} : () -> i32
  %b = "tfrt.constant_s.f64"() {_tfrt_cost = 1 : i64, value = 0.5 : f64} : () -> f64
  %c = "tfrt.constant.complex64"() {_a = "first", re = 1.5 : f32, im = -2.0 : f32} : () -> complex<f32>
  %shape = "ts.build_shape"() {_tfrt_cost = 2 : i64, value = [4 : i64, 5 : i64]} : () -> !ts.shape
  %n = ts.get_num_elements %shape
  %d = "tfrt_test.async_constant.i32"() {_tfrt_cost = 9 : i64, value = 11 : i32} : () -> i32
  tfrt.return %a, %b, %c, %n, %d : i32, f64, complex<f32>, i64, i32
}
// CHECK-NEXT: 'with_costs' returned 7,5.000000e-01,{{.*}},20,11

// CHECK-LABEL: --- Running 'strings'
func.func @strings() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %s = "tfrt_test.get_string"() {_tfrt_cost = 1 : i64, value = "named"} : () -> !tfrt.string
  // CHECK-NEXT: string = named
  %ch1 = "tfrt_test.print_string"(%s, %ch0) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  %t = "tfrt_dht.create_uninitialized_tensor.i32.1"() {_tfrt_cost = 1 : i64, shape = [2 : i64]} : () -> !t.tensor
  %ch2 = "tfrt_dht.fill_tensor_with_constant.i32"(%t, %ch1) {_tfrt_cost = 1 : i64, value = 6 : i32} : (!t.tensor, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [6, 6]
  %ch3 = tfrt_dht.print_tensor %t, %ch2
  tfrt.return %ch3 : !tfrt.chain
}
// CHECK-NEXT: 'strings' returned !tfrt.chain value

// corert's string attributes: no other string stands in for a missing one.
// CHECK-LABEL: --- Running 'op_handler_by_name'
func.func @op_handler_by_name() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = "corert.get_op_handler"(%ch0) {_note = "not a handler name", op_handler_name = "cpu"} : (!tfrt.chain) -> !corert.ophandler
  %t = corert.create_dense_tensor.i32 {shape = [1], value = [5 : i32]}
  %r = corert.executeop(%cpu) "tfrt_test.add"(%t, %t) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [1], values = [10]
  %ch1 = corert.print_tensorhandle %r, %ch0
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'op_handler_by_name' returned !tfrt.chain value
