// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s
// RUN: bef_executor --print_error_code %t.bef 2>&1 | FileCheck %s --check-prefix=CODE

// CHECK-LABEL: --- Running 'divide_by_zero'
func.func @divide_by_zero() -> i32 {
  %x = tfrt.constant.i32 1
  %zero = tfrt.constant.i32 0
  // expected-error @+1 {{runtime error: Divide by zero}}
  %q, %r = tfrt.div.i32 %x, %zero
  // Kernels downstream of an error do not run and report nothing.
  // CHECK-NOT: int32
  %ch0 = tfrt.new.chain
  %ch1 = tfrt.print.i32 %q, %ch0
  tfrt.return %q : i32
}
// CHECK-NEXT: 'divide_by_zero' returned <<error: Divide by zero>>
// CODE: 'divide_by_zero' returned <<error: Divide by zero, code: INVALID_ARGUMENT>>

// CHECK-LABEL: --- Running 'async_failure'
func.func @async_failure() -> i32 {
  %one = tfrt.constant.i32 1
  // expected-error @+1 {{runtime error: something bad happened asynchronously}}
  %x = "tfrt_test.report_error_concrete_async"(%one) : (i32) -> i32
  %y = tfrt.add.i32 %x, %one
  tfrt.return %y : i32
}
// CHECK-NEXT: 'async_failure' returned <<error: something bad happened asynchronously>>

// CHECK-LABEL: --- Running 'cancelled'
func.func @cancelled() -> i32 {
  %ch0 = tfrt.new.chain
  %x, %ch1 = "tfrt_test.cancel"(%ch0) : (!tfrt.chain) -> (i32, !tfrt.chain)
  // CHECK-NOT: int32 = 0
  %ch2 = tfrt.print.i32 %x, %ch1
  %y = tfrt.add.i32 %x, %x
  tfrt.return %y : i32
}
// CHECK-NEXT: 'cancelled' returned <<error: Cancelled>>
