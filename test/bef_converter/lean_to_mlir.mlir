// A BEF file without its optional sections still translates back: register
// types come from the function signature where they can, `none` elsewhere.
// RUN: asyncrt-translate -mlir-to-bef --disable-optional-sections %s | asyncrt-translate --bef-to-mlir --mlir-print-op-generic 2>&1 | FileCheck %s

// CHECK: warning: Missing AttributeTypes, AttributeNames or RegisterTypes sections.
// CHECK-NOT: warning

// CHECK-LABEL: "func.func"
// CHECK-SAME: sym_name = "lean"
func.func @lean(%a: i32) -> (i32, f32) {
  // CHECK-NEXT: ^bb0(%[[A:.*]]: i32):
  // CHECK-NEXT: %[[X:.*]] = "simple.op"(%[[A]]) {value = 42 : i32} : (i32) -> none
  // CHECK-NEXT: %[[Y:.*]] = "simple.op"(%[[X]]) {name = "y"} : (none) -> f32
  // CHECK-NEXT: "tfrt.return"(%[[A]], %[[Y]]) : (i32, f32) -> ()
  %x = "simple.op"(%a) {value = 42 : i32} : (i32) -> i32
  %y = "simple.op"(%x) {name = "y"} : (i32) -> f32
  tfrt.return %a, %y : i32, f32
}

// CHECK-LABEL: "func.func"
// CHECK-SAME: sym_name = "second"
func.func @second() -> i32 {
  %x = "simple.op"() : () -> i32
  tfrt.return %x : i32
}
