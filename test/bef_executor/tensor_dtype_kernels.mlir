// Tensor kernels specialised by dtype (and rank): each is bound to its dtype
// when it is registered and checks its tensors against it. The allclose
// variants of every float type, ts.get_dimension, rank 6 and COO tensors.
// RUN: bef_executor %s 2>&1 | FileCheck %s

// 1.0 and values 1, 3 and 4 units in the last place above it; hexadecimal
// literals give the exact bits.
// CHECK-LABEL: --- Running 'allclose_f32'
func.func @allclose_f32() -> (i1, i1, i1, i1, i1, i1) {
  %c0 = tfrt.new.chain
  %one = tfrt_dht.create_uninitialized_tensor.f32.1 [2 : i64]
  %c1 = tfrt_dht.set_tensor_with_constant_values.f32 %one, %c0 [1.0 : f32, 0.0 : f32]
  %three = tfrt_dht.create_uninitialized_tensor.f32.1 [2 : i64]
  %c2 = tfrt_dht.set_tensor_with_constant_values.f32 %three, %c1 [0x3F800003 : f32, -0.0 : f32]
  %four = tfrt_dht.create_uninitialized_tensor.f32.1 [2 : i64]
  %c3 = tfrt_dht.set_tensor_with_constant_values.f32 %four, %c2 [0x3F800004 : f32, 0.0 : f32]
  %far = tfrt_dht.create_uninitialized_tensor.f32.1 [2 : i64]
  %c4 = tfrt_dht.set_tensor_with_constant_values.f32 %far, %c3 [1.001 : f32, 0.0 : f32]
  %a, %c5 = tfrt_dht.tensor_allclose.3ulp.f32 %one, %three, %c4
  %b, %c6 = tfrt_dht.tensor_allclose.3ulp.f32 %one, %four, %c5
  %c, %c7 = tfrt_dht.tensor_allclose.1000ulp.f32 %one, %four, %c6
  %d, %c8 = tfrt_dht.tensor_allclose.f32 %one, %four, %c7
  %e, %c9 = tfrt_dht.tensor_allclose.f32 %one, %far, %c8
  %f, %c10 = tfrt_dht.tensor_allclose.100000ulp.f32 %one, %far, %c9
  tfrt.return %a, %b, %c, %d, %e, %f : i1, i1, i1, i1, i1, i1
}
// CHECK-NEXT: 'allclose_f32' returned 1,0,1,1,0,1

// CHECK-LABEL: --- Running 'allclose_f64'
func.func @allclose_f64() -> (i1, i1, i1) {
  %c0 = tfrt.new.chain
  %one = tfrt_dht.create_uninitialized_tensor.f64.0 []
  %c1 = tfrt_dht.set_tensor_with_constant_values.f64 %one, %c0 [1.0 : f64]
  %next = tfrt_dht.create_uninitialized_tensor.f64.0 []
  %c2 = tfrt_dht.set_tensor_with_constant_values.f64 %next, %c1 [0x3FF0000000000BB8 : f64]
  // 3000 ulp apart.
  %a, %c3 = tfrt_dht.tensor_allclose.2000ulp.f64 %one, %next, %c2
  %b, %c4 = tfrt_dht.tensor_allclose.100000ulp.f64 %one, %next, %c3
  %c, %c5 = tfrt_dht.tensor_allclose.f64 %one, %next, %c4
  tfrt.return %a, %b, %c : i1, i1, i1
}
// CHECK-NEXT: 'allclose_f64' returned 0,1,1

// Half types: 1.0 and 3 ulp above it (f16 0x3C03, bf16 0x3F83), which the
// default tolerance rejects at their precision.
// CHECK-LABEL: --- Running 'allclose_half'
func.func @allclose_half() -> (i1, i1, i1, i1, i1, i1) {
  %c0 = tfrt.new.chain
  %h1 = tfrt_dht.create_uninitialized_tensor.f16.1 [1 : i64]
  %c1 = tfrt_dht.set_tensor_with_constant_values.f16 %h1, %c0 [1.0 : f16]
  %h2 = tfrt_dht.create_uninitialized_tensor.f16.1 [1 : i64]
  %c2 = tfrt_dht.set_tensor_with_constant_values.f16 %h2, %c1 [0x3C03 : f16]
  %b1 = tfrt_dht.create_uninitialized_tensor.bf16.1 [1 : i64]
  %c3 = tfrt_dht.set_tensor_with_constant_values.bf16 %b1, %c2 [1.0 : bf16]
  %b2 = tfrt_dht.create_uninitialized_tensor.bf16.1 [1 : i64]
  %c4 = tfrt_dht.set_tensor_with_constant_values.bf16 %b2, %c3 [0x3F83 : bf16]
  %r0, %c5 = tfrt_dht.tensor_allclose.f16 %h1, %h1, %c4
  %r1, %c6 = tfrt_dht.tensor_allclose.f16 %h1, %h2, %c5
  %r2, %c7 = tfrt_dht.tensor_allclose.3ulp.f16 %h1, %h2, %c6
  %r3, %c8 = tfrt_dht.tensor_allclose.bf16 %b1, %b2, %c7
  %r4, %c9 = tfrt_dht.tensor_allclose.3ulp.bf16 %b1, %b2, %c8
  %r5, %c10 = tfrt_dht.tensor_allclose.2000ulp.bf16 %b2, %b1, %c9
  tfrt.return %r0, %r1, %r2, %r3, %r4, %r5 : i1, i1, i1, i1, i1, i1
}
// CHECK-NEXT: 'allclose_half' returned 1,0,1,0,1,1

// NaN is close to nothing, not even itself.
// CHECK-LABEL: --- Running 'allclose_nan'
func.func @allclose_nan() -> (i1, i1) {
  %c0 = tfrt.new.chain
  %n = tfrt_dht.create_uninitialized_tensor.f32.0 []
  %c1 = tfrt_dht.set_tensor_with_constant_values.f32 %n, %c0 [0x7FC00000 : f32]
  %a, %c2 = tfrt_dht.tensor_allclose.100000ulp.f32 %n, %n, %c1
  %b, %c3 = tfrt_dht.tensor_allclose.f32 %n, %n, %c2
  tfrt.return %a, %b : i1, i1
}
// CHECK-NEXT: 'allclose_nan' returned 0,0

// A kernel of one dtype rejects tensors of another.
// CHECK-LABEL: --- Running 'wrong_dtype'
func.func @wrong_dtype() -> i1 {
  %c0 = tfrt.new.chain
  %i = tfrt_dht.create_uninitialized_tensor.i32.1 [1 : i64]
  %c1 = tfrt_dht.fill_tensor_with_constant.i32 %i, %c0 3 : i32
  // expected-error @+1 {{runtime error: expected a tensor of dtype f32, got one of dtype i32}}
  %eq, %c2 = tfrt_dht.tensor_equal.f32 %i, %i, %c1
  tfrt.return %eq : i1
}
// CHECK: 'wrong_dtype' returned <<error: expected a tensor of dtype f32, got one of dtype i32>>

// CHECK-LABEL: --- Running 'get_dimension'
func.func @get_dimension() -> (i64, i64) {
  %s = ts.build_shape [2 : i64, 7 : i64]
  %zero = tfrt.constant.i32 0
  %one = tfrt.constant.i32 1
  %a = ts.get_dimension %s, %zero
  %b = ts.get_dimension %s, %one
  tfrt.return %a, %b : i64, i64
}
// CHECK-NEXT: 'get_dimension' returned 2,7

// CHECK-LABEL: --- Running 'get_dimension_out_of_range'
func.func @get_dimension_out_of_range() -> i64 {
  %s = ts.build_shape [2 : i64]
  %two = tfrt.constant.i32 2
  // expected-error @+1 {{runtime error: dimension index 2 is out of range for shape [2]}}
  %a = ts.get_dimension %s, %two
  tfrt.return %a : i64
}
// CHECK: 'get_dimension_out_of_range' returned <<error: dimension index 2 is out of range for shape [2]>>

// CHECK-LABEL: --- Running 'rank_6'
func.func @rank_6() {
  %c0 = tfrt.new.chain
  %t = tfrt_dht.create_uninitialized_tensor.i8.6 [1 : i64, 1 : i64, 1 : i64, 1 : i64, 2 : i64, 1 : i64]
  %c1 = tfrt_dht.fill_tensor_with_constant.i8 %t, %c0 7 : i8
  // CHECK: DenseHostTensor dtype = i8, shape = [1, 1, 1, 1, 2, 1], values = [7, 7]
  %c2 = tfrt_dht.print_tensor %t, %c1
  %s = tfrt_dht_sync.create_uninitialized_tensor.bool.6 [1 : i64, 1 : i64, 1 : i64, 1 : i64, 1 : i64, 3 : i64]
  %c3 = tfrt_dht.fill_tensor_with_constant.bool %s, %c2 true
  // CHECK: DenseHostTensor dtype = i1, shape = [1, 1, 1, 1, 1, 3], values = [1, 1, 1]
  %c4 = tfrt_dht.print_tensor %s, %c3
  tfrt.return
}

// COO tensors of another dtype and rank; coo.print_tensor.
// CHECK-LABEL: --- Running 'coo'
func.func @coo() -> (i1, i1) {
  %c0 = tfrt.new.chain
  %t = tfrt_dht.create_uninitialized_tensor.i64.3 [2 : i64, 2 : i64, 2 : i64]
  %c1 = tfrt_dht.set_tensor_with_constant_values.i64 %t, %c0 [0 : i64, 5 : i64, 0 : i64, 0 : i64, 0 : i64, 0 : i64, 0 : i64, 9 : i64]
  %coo, %c2 = coo.convert_dht_to_coo.i64.3 %t, %c1
  // CHECK: CooHostTensor dtype = i64, shape = [2, 2, 2], indices = [0, 0, 1, 1, 1, 1], values = [5, 9]
  %c3 = coo.print_tensor %coo, %c2
  %eq, %c4 = coo.tensor_equal.i64.3 %coo, %coo, %c3
  %back, %c5 = coo.convert_coo_to_dht.i64.3 %coo, %c4
  %same, %c6 = tfrt_dht.tensor_equal.i64 %t, %back, %c5
  tfrt.return %eq, %same : i1, i1
}
// CHECK: 'coo' returned 1,1

// CHECK-LABEL: --- Running 'coo_wrong_rank'
func.func @coo_wrong_rank() -> !t.tensor {
  %c0 = tfrt.new.chain
  %t = tfrt_dht.create_uninitialized_tensor.f32.2 [1 : i64, 1 : i64]
  %c1 = tfrt_dht.fill_tensor_with_constant.f32 %t, %c0 1.0 : f32
  // expected-error @+1 {{runtime error: expected a tensor of rank 1, got one of shape [1, 1]}}
  %coo, %c2 = coo.convert_dht_to_coo.f32.1 %t, %c1
  tfrt.return %coo : !t.tensor
}
// CHECK: 'coo_wrong_rank' returned <<error: expected a tensor of rank 1, got one of shape [1, 1]>>

// Complex elements as (real, imaginary) pairs of their float type.
// CHECK-LABEL: --- Running 'complex_values'
func.func @complex_values() {
  %c0 = tfrt.new.chain
  %t = tfrt_dht.create_uninitialized_tensor.complex64.1 [2 : i64]
  %c1 = tfrt_dht.set_tensor_with_constant_values.complex64 %t, %c0 [1.0 : f32, 2.0 : f32, 3.0 : f32, -4.0 : f32]
  // CHECK: DenseHostTensor dtype = complex64, shape = [2], values = [(1.000000e+00,2.000000e+00), (3.000000e+00,-4.000000e+00)]
  %c2 = tfrt_dht.print_tensor %t, %c1
  tfrt.return
}
