// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'integers'
// Returning the last chain makes the call wait for the prints: kernels of
// other streams than the entry's run from the work queue, which the
// single-threaded queue runs only while the caller waits.
func.func @integers() -> (i32, i64, i1, !tfrt.chain) {
  %ch0 = tfrt.new.chain
  %max = tfrt.constant.i32 2147483647
  %one = tfrt.constant.i32 1
  // Integer addition wraps.
  // CHECK-NEXT: int32 = -2147483648
  %wrapped = tfrt.add.i32 %max, %one
  %ch1 = tfrt.print.i32 %wrapped, %ch0
  %seven = tfrt.constant.i32 7
  %two = tfrt.constant.i32 2
  // CHECK-NEXT: int32 = 3
  // CHECK-NEXT: int32 = 1
  %q, %r = tfrt.div.i32 %seven, %two
  %ch2 = tfrt.print.i32 %q, %ch1
  %ch3 = tfrt.print.i32 %r, %ch2
  // CHECK-NEXT: int32 = 14
  %product = "tfrt.multiply.i32"(%seven, %two) : (i32, i32) -> i32
  %ch4 = tfrt.print.i32 %product, %ch3
  // CHECK-NEXT: int32 = 2
  %min = "tfrt.minimum.i32"(%seven, %two) : (i32, i32) -> i32
  %ch5 = tfrt.print.i32 %min, %ch4
  %big = tfrt.constant.i64 5000000000
  // CHECK-NEXT: int64 = 5000000000
  %ch6 = tfrt.print.i64 %big, %ch5
  // CHECK-NEXT: int1 = 0
  %eq = tfrt.equal.i32 %seven, %two
  %ch7 = tfrt.print.i1 %eq, %ch6
  // CHECK-NEXT: int1 = 1
  %le = tfrt.lessequal.i32 %two, %seven
  %ch8 = tfrt.print.i1 %le, %ch7
  tfrt.return %product, %big, %le, %ch8 : i32, i64, i1, !tfrt.chain
}
// CHECK-NEXT: 'integers' returned 14,5000000000,1,!tfrt.chain value

// CHECK-LABEL: --- Running 'floats'
func.func @floats() -> (f32, f64, !tfrt.chain) {
  %ch0 = tfrt.new.chain
  %a = tfrt.constant.f32 1.5
  %b = tfrt.constant.f32 0.25
  // CHECK-NEXT: f32 = 1.750000
  %sum = tfrt.add.f32 %a, %b
  %ch1 = tfrt.print.f32 %sum, %ch0
  %c = tfrt.constant.f64 3.0
  %d = tfrt.constant.f64 4.0
  // CHECK-NEXT: f64 = 0.750000
  %quotient = "tfrt.div.f64"(%c, %d) : (f64, f64) -> f64
  %ch2 = tfrt.print.f64 %quotient, %ch1
  // CHECK-NEXT: int64 = 3
  %truncated = "tfrt.cast.f64_to_i64"(%c) : (f64) -> i64
  %ch3 = tfrt.print.i64 %truncated, %ch2
  tfrt.return %sum, %quotient, %ch3 : f32, f64, !tfrt.chain
}
// CHECK-NEXT: 'floats' returned 1.750000e+00,7.500000e-01,!tfrt.chain value

// CHECK-LABEL: --- Running 'chains'
func.func @chains() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %x = tfrt.constant.i32 5
  // CHECK-NEXT: int32 = 5
  // CHECK-NEXT: int32 = 5
  %ch1 = tfrt.print.i32 %x, %ch0
  %ch2 = tfrt.print.i32 %x, %ch0
  %merged = tfrt.merge.chains %ch1, %ch2 : !tfrt.chain, !tfrt.chain
  tfrt.return %merged : !tfrt.chain
}
// CHECK-NEXT: 'chains' returned !tfrt.chain value

// CHECK-LABEL: --- Not running 'takes_arguments' because it has arguments.
func.func @takes_arguments(%x: i32) -> i32 {
  tfrt.return %x : i32
}
