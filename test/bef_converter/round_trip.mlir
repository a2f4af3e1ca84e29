// MLIR -> BEF -> MLIR gives back an equivalent module.
// RUN: asyncrt-translate -mlir-to-bef %s | asyncrt-translate -bef-to-mlir | asyncrt-opt -allow-unregistered-dialect | FileCheck %s
// RUN: asyncrt-translate -mlir-to-bef --disable-optional-sections %s -o %t.lean
// RUN: not asyncrt-translate -bef-to-mlir %t.lean 2>&1 | FileCheck %s --check-prefix=LEAN

// LEAN: was written with --disable-optional-sections

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
