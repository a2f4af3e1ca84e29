// tfrt_test.print_typed_attr, written in its custom form.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'typed_attributes'
func.func @typed_attributes() -> !tfrt.chain {
  %ch = tfrt.new.chain
  // CHECK-NEXT: I64: 7
  %ch0 = tfrt_test.print_typed_attr %ch {value = 7 : i64}
  // CHECK-NEXT: I32: -3
  %ch1 = tfrt_test.print_typed_attr %ch0 {value = -3 : i32}
  // CHECK-NEXT: F32: 2.500000e-01
  %ch2 = tfrt_test.print_typed_attr %ch1 {value = 0.25 : f32}
  // CHECK-NEXT: F64: -1.500000e+00
  %ch3 = tfrt_test.print_typed_attr %ch2 {value = -1.5 : f64}
  // CHECK-NEXT: I1: 1
  %ch4 = tfrt_test.print_typed_attr %ch3 {value = true}
  // CHECK-NEXT: I1: 0
  %ch5 = tfrt_test.print_typed_attr %ch4 {value = false}
  tfrt.return %ch5 : !tfrt.chain
}
// CHECK-NEXT: 'typed_attributes' returned !tfrt.chain value
