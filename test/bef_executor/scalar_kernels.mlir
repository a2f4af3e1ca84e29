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
