// The tfrt_dht_sync kernels of tfrt.sync functions: no chains in or out.
// RUN: bef_executor %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'fill_and_compare'
func.func @fill_and_compare() -> (i1, i1, i1, i1) attributes {tfrt.sync} {
  %a = tfrt_dht_sync.create_uninitialized_tensor.i64.1 [3 : i64]
  tfrt_dht_sync.fill_tensor_with_constant.i64 %a 4 : i64
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [3], values = [4, 4, 4]
  tfrt_dht_sync.print_tensor %a
  %b = tfrt_dht_sync.create_uninitialized_tensor.i64.1 [3 : i64]
  %x = "tfrt.constant_s.i64"() {value = 4 : i64} : () -> i64
  %y = "tfrt.constant_s.i64"() {value = 5 : i64} : () -> i64
  tfrt_dht_sync.set_tensor_with_values.i64 %b, %x, %x, %y : i64, i64, i64
  // CHECK-NEXT: DenseHostTensor dtype = i64, shape = [3], values = [4, 4, 5]
  tfrt_dht_sync.print_tensor %b
  %same = tfrt_dht_sync.tensor_equal.i64 %a, %a
  %differ = tfrt_dht_sync.tensor_equal.i64 %a, %b
  %f = tfrt_dht_sync.create_uninitialized_tensor.f32.0 []
  tfrt_dht_sync.fill_tensor_with_constant.f32 %f 2.0 : f32
  %g = tfrt_dht_sync.create_uninitialized_tensor.f32.0 []
  tfrt_dht_sync.set_tensor_with_constant_values.f32 %g [2.00001 : f32]
  %close = tfrt_dht_sync.tensor_allclose.f32 %f, %g
  %h = tfrt_dht_sync.create_uninitialized_tensor.f64.0 []
  tfrt_dht_sync.fill_tensor_with_constant.f64 %h 3.0 : f64
  %far = tfrt_dht_sync.tensor_allclose.f64 %h, %h
  tfrt.return %same, %differ, %close, %far : i1, i1, i1, i1
}
// CHECK-NEXT: 'fill_and_compare' returned 1,0,1,1

// CHECK-LABEL: --- Running 'buffers'
func.func @buffers() -> i1 attributes {tfrt.sync} {
  %t = tfrt_dht_sync.create_uninitialized_tensor.i32.1 [2 : i64]
  tfrt_dht_sync.set_tensor_with_constant_values.i32 %t [7 : i32, 8 : i32]
  %buffer = tfrt_dht_sync.get_buffer %t
  // CHECK-NEXT: HostBuffer<pointer={{.*}}, size=8>
  tfrt_dht_sync.print_buffer %buffer
  %shape = tfrt_dht_sync.get_tensor_shape %t
  // The same bytes, seen as a tensor again.
  %u = tfrt_dht_sync.make_tensor.i32 %buffer, %shape
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [7, 8]
  tfrt_dht_sync.print_tensor %u
  %eq = tfrt_dht_sync.tensor_equal.i32 %t, %u
  tfrt.return %eq : i1
}
// CHECK-NEXT: 'buffers' returned 1

// CHECK-LABEL: --- Running 'wrong_count'
func.func @wrong_count() attributes {tfrt.sync} {
  %t = tfrt_dht_sync.create_uninitialized_tensor.i32.1 [2 : i64]
  %x = "tfrt.constant_s.i32"() {value = 1 : i32} : () -> i32
  // expected-error @+1 {{runtime error: Incorrect number of values for the tensor: 1, but expected 2}}
  tfrt_dht_sync.set_tensor_with_values.i32 %t, %x : i32
  tfrt.return
}
