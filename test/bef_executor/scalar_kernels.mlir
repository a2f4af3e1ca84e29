// Every scalar kernel of the tfrt dialect, once.
// RUN: bef_executor %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'i64_and_f64'
func.func @i64_and_f64() -> (i64, i64, i64, i1, i1, f64, f64, f64, f64) {
  %a = tfrt.constant.i64 9
  %b = tfrt.constant.i64 4
  %sum = tfrt.add.i64 %a, %b
  %product = "tfrt.multiply.i64"(%a, %b) : (i64, i64) -> i64
  %min = "tfrt.minimum.i64"(%a, %b) : (i64, i64) -> i64
  %eq = tfrt.equal.i64 %a, %a
  %le = tfrt.lessequal.i64 %a, %b
  %x = tfrt.constant.f64 1.5
  %y = tfrt.constant.f64 -2.0
  %fsum = tfrt.add.f64 %x, %y
  %fproduct = "tfrt.multiply.f64"(%x, %y) : (f64, f64) -> f64
  %fmin = "tfrt.minimum.f64"(%x, %y) : (f64, f64) -> f64
  %fdiv = tfrt.div.f64 %x, %y
  tfrt.return %sum, %product, %min, %eq, %le, %fsum, %fproduct, %fmin, %fdiv : i64, i64, i64, i1, i1, f64, f64, f64, f64
}
// CHECK-NEXT: 'i64_and_f64' returned 13,36,4,1,0,-5.000000e-01,-3.000000e+00,-2.000000e+00,-7.500000e-01

// CHECK-LABEL: --- Running 'f32'
func.func @f32() -> (f32, f32, f32, f32) {
  %x = tfrt.constant.f32 3.0
  %y = tfrt.constant.f32 0.5
  %product = "tfrt.multiply.f32"(%x, %y) : (f32, f32) -> f32
  %min = "tfrt.minimum.f32"(%x, %y) : (f32, f32) -> f32
  %div = tfrt.div.f32 %x, %y
  %sum = tfrt.add.f32 %x, %y
  tfrt.return %product, %min, %div, %sum : f32, f32, f32, f32
}
// CHECK-NEXT: 'f32' returned 1.500000e+00,5.000000e-01,6.000000e+00,3.500000e+00

// CHECK-LABEL: --- Running 'casts'
func.func @casts() -> (f32, i64, f64, i64, i32) {
  %big = tfrt.constant.i64 7
  %to_f32 = tfrt.cast.i64_to_f32 %big
  %f = tfrt.constant.f32 2.75
  %to_i64 = tfrt.cast.f32_to_i64 %f
  %to_f64 = tfrt.cast.i64_to_f64 %big
  %d = tfrt.constant.f64 -3.5
  %back = tfrt.cast.f64_to_i64 %d
  %u = tfrt.constant.ui32 4095
  %i = tfrt.constant.i32 1
  tfrt.return %to_f32, %to_i64, %to_f64, %back, %i : f32, i64, f64, i64, i32
}
// CHECK-NEXT: 'casts' returned 7.000000e+00,2,7.000000e+00,-3,1

// CHECK-LABEL: --- Running 'prints'
func.func @prints() {
  %ch0 = tfrt.new.chain
  %t = tfrt.constant.i1 1
  %d = tfrt.constant.f64 0.125
  // CHECK-NEXT: int1 = 1
  %ch1 = tfrt.print.i1 %t, %ch0
  // CHECK-NEXT: f64 = 0.125000
  %ch2 = tfrt.print.f64 %d, %ch1
  // CHECK-NEXT: f32 = -1.000000
  %f = tfrt.constant.f32 -1.0
  %ch3 = tfrt.print.f32 %f, %ch2
  tfrt.return
}

// CHECK-LABEL: --- Running 'float_division_by_zero'
func.func @float_division_by_zero() -> f32 {
  %x = tfrt.constant.f32 1.0
  %zero = tfrt.constant.f32 0.0
  // expected-error @+1 {{runtime error: Divide by zero}}
  %q = tfrt.div.f32 %x, %zero
  tfrt.return %q : f32
}
// CHECK-NEXT: 'float_division_by_zero' returned <<error: Divide by zero>>

// CHECK-LABEL: --- Running 'minus_and_integer_division'
func.func @minus_and_integer_division() -> (i32, i64, i64, i64, i64, i64) {
  %a = tfrt.constant.i32 3
  %b = tfrt.constant.i32 10
  %d32 = "tfrt.minus.i32"(%a, %b) : (i32, i32) -> i32
  %x = tfrt.constant.i64 -7
  %y = tfrt.constant.i64 2
  %d64 = "tfrt.minus.i64"(%x, %y) : (i64, i64) -> i64
  %q, %r = "tfrt.div.i64"(%x, %y) : (i64, i64) -> (i64, i64)
  %min = tfrt.constant.i64 -9223372036854775808
  %minus_one = tfrt.constant.i64 -1
  %wq, %wr = "tfrt.div.i64"(%min, %minus_one) : (i64, i64) -> (i64, i64)
  tfrt.return %d32, %d64, %q, %r, %wq, %wr : i32, i64, i64, i64, i64, i64
}
// CHECK-NEXT: 'minus_and_integer_division' returned -7,-9,-3,-1,-9223372036854775808,0

// CHECK-LABEL: --- Running 'i64_division_by_zero'
func.func @i64_division_by_zero() -> i64 {
  %x = tfrt.constant.i64 1
  %zero = tfrt.constant.i64 0
  // expected-error @+1 {{runtime error: Divide by zero}}
  %q, %r = "tfrt.div.i64"(%x, %zero) : (i64, i64) -> (i64, i64)
  tfrt.return %q : i64
}
// CHECK-NEXT: 'i64_division_by_zero' returned <<error: Divide by zero>>

// CHECK-LABEL: --- Running 'complex_and_f16'
func.func @complex_and_f16() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %c64 = "tfrt.constant.complex64"() {re = 1.5 : f32, im = -2.0 : f32} : () -> complex<f32>
  // CHECK-NEXT: complex64 = 1.500000+-2.000000i
  %ch1 = "tfrt.print.complex64"(%c64, %ch0) : (complex<f32>, !tfrt.chain) -> !tfrt.chain
  %c128 = "tfrt.constant.complex128"() {re = 0.25 : f64, im = 4.0 : f64} : () -> complex<f64>
  // CHECK-NEXT: complex128 = 0.250000+4.000000i
  %ch2 = "tfrt.print.complex128"(%c128, %ch1) : (complex<f64>, !tfrt.chain) -> !tfrt.chain
  // TFRT prints a half's bits: 1.0 is 0x3C00.
  %h = "tfrt.constant.f16"() {value = 1.0 : f16} : () -> f16
  // CHECK-NEXT: f16 = 15360
  %ch3 = "tfrt.print.f16"(%h, %ch2) : (f16, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch3 : !tfrt.chain
}
