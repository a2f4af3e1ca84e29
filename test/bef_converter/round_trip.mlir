// MLIR -> BEF -> MLIR gives back an equivalent module.
// RUN: asyncrt-translate -mlir-to-bef %s | asyncrt-translate -bef-to-mlir | asyncrt-opt -allow-unregistered-dialect | FileCheck %s
// RUN: asyncrt-translate -mlir-to-bef --disable-optional-sections %s -o %t.lean
// RUN: not asyncrt-translate -bef-to-mlir %t.lean 2>&1 | FileCheck %s --check-prefix=LEAN

// Without register types, ops whose verifiers check types cannot be rebuilt.
// LEAN: warning: Missing AttributeTypes, AttributeNames or RegisterTypes sections.
// LEAN: error: 'tfrt.constant.i32' op result #0 must be 32-bit signless integer, but got 'none'

// CHECK-LABEL: func @add(%{{.*}}: i32) -> i32
func.func @add(%x: i32) -> i32 {
  // CHECK-NEXT: %[[C:.*]] = tfrt.constant.i32 42
  // CHECK-NEXT: %[[S:.*]] = tfrt.add.i32 %{{.*}}, %[[C]]
  // CHECK-NEXT: tfrt.return %[[S]] : i32
  %c = tfrt.constant.i32 42
  %s = tfrt.add.i32 %x, %c
  tfrt.return %s : i32
}

// CHECK-LABEL: func @calls() -> i32
func.func @calls() -> i32 {
  // CHECK: tfrt.call @add(%{{.*}}) : (i32) -> i32
  %c = tfrt.constant.i32 1
  %r = tfrt.call @add(%c) : (i32) -> i32
  tfrt.return %r : i32
}

// CHECK-LABEL: func @attributes()
func.func @attributes() {
  // CHECK: "test.op"() {a = [1 : i32, 2 : i32], f = 2.500000e+00 : f32, s = "text", u} : () -> ()
  "test.op"() {a = [1 : i32, 2 : i32], f = 2.5 : f32, s = "text", u} : () -> ()
  tfrt.return
}

// CHECK-LABEL: func @regions(
func.func @regions(%cond: i1, %v: i32) -> i32 {
  // CHECK: tfrt.if
  // CHECK: tfrt.return
  // CHECK: } else {
  %r = tfrt.if %cond, %v : (i32) -> (i32) {
    tfrt.return %v : i32
  } else {
    %one = tfrt.constant.i32 1
    %w = tfrt.add.i32 %v, %one
    tfrt.return %w : i32
  }
  tfrt.return %r : i32
}

// CHECK-LABEL: func private @native(i32) -> i32 attributes {tfrt.native}
func.func private @native(%x: i32) -> i32 attributes {tfrt.native}

// Dense elements of every element type, splat or not, and complex types.
// CHECK-LABEL: func @dense_elements()
func.func @dense_elements() {
  // CHECK-NEXT: dense<[true, false, true]> : tensor<3xi1>
  // CHECK-NEXT: dense<[1.500000e+00, -2.000000e+00]> : tensor<2xf32>
  // CHECK-NEXT: dense<{{\[}}[1.000000e+00, 2.000000e+00], [3.000000e+00, 4.500000e+00]]> : tensor<2x2xf64>
  // CHECK-NEXT: dense<5.000000e-01> : tensor<3xbf16>
  // CHECK-NEXT: dense<[1.000000e+00, 2.500000e-01]> : tensor<2xf16>
  // CHECK-NEXT: dense<[1, -2, 3]> : tensor<3xi16>
  // CHECK-NEXT: dense<[(1.000000e+00,2.000000e+00), (3.000000e+00,-4.000000e+00)]> : tensor<2xcomplex<f32>>
  // CHECK-NEXT: dense<(1.000000e+00,2.000000e+00)> : tensor<2x2xcomplex<f64>>
  // CHECK-NEXT: {t = [complex<f64>, f32], value = complex<f32>}
  "simple.op"() {value = dense<[true, false, true]> : tensor<3xi1>} : () -> ()
  "simple.op"() {value = dense<[1.5, -2.0]> : tensor<2xf32>} : () -> ()
  "simple.op"() {value = dense<[[1.0, 2.0], [3.0, 4.5]]> : tensor<2x2xf64>} : () -> ()
  "simple.op"() {value = dense<0.5> : tensor<3xbf16>} : () -> ()
  "simple.op"() {value = dense<[1.0, 0.25]> : tensor<2xf16>} : () -> ()
  "simple.op"() {value = dense<[1, -2, 3]> : tensor<3xi16>} : () -> ()
  "simple.op"() {value = dense<[(1.0, 2.0), (3.0, -4.0)]> : tensor<2xcomplex<f32>>} : () -> ()
  "simple.op"() {value = dense<(1.0, 2.0)> : tensor<2x2xcomplex<f64>>} : () -> ()
  "simple.op"() {value = complex<f32>, t = [complex<f64>, f32]} : () -> ()
  tfrt.return
}
