// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s --allow-empty
// An unknown kernel fails the load at its location; nothing runs.

// CHECK-NOT: --- Running
func.func @uses_unknown() {
  // expected-error @+1 {{unknown kernel name 'no.such_kernel'}}
  "no.such_kernel"() : () -> ()
  tfrt.return
}
