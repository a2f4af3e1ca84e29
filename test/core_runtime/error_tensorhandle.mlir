// tfrt_test.error_tensorhandle: one !corert.tensorhandle result, the error
// `invalid tensorhandle`, reported at the kernel.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'error_tensorhandle'
func.func @error_tensorhandle() -> (i32, !corert.tensorhandle) {
  %ch0 = tfrt.new.chain
  %one = tfrt.constant.i32 1
  // expected-error @+1 {{runtime error: invalid tensorhandle}}
  %handle = "tfrt_test.error_tensorhandle"() : () -> !corert.tensorhandle
  // Users of the handle do not run.
  // CHECK-NOT: shape =
  %shape = "corert.tensorhandle_to_shape"(%handle, %ch0)
    : (!corert.tensorhandle, !tfrt.chain) -> !ts.shape
  %ch1 = "ts.print_shape"(%shape, %ch0) : (!ts.shape, !tfrt.chain) -> !tfrt.chain
  tfrt.return %one, %handle : i32, !corert.tensorhandle
}
// CHECK: 'error_tensorhandle' returned 1,<<error: invalid tensorhandle>>
