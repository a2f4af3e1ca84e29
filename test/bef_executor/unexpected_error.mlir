// An error without an expected-error comment fails the run.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: not bef_executor %t.bef 2>&1 | FileCheck %s

// CHECK: --- Running 'fails'
func.func @fails() -> i32 {
  %x = "tfrt_test.fail"() : () -> i32
  tfrt.return %x : i32
}
// CHECK: 'fails' returned <<error: something bad happened>>
// CHECK: unexpected error: runtime error: something bad happened
