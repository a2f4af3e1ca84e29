// The example `make run` runs stays runnable.
// RUN: asyncrt-translate -mlir-to-bef %S/../../examples/tour.mlir -o %t.bef
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s

// CHECK: --- Running 'hello':
// CHECK-NEXT: hello host executor!
// CHECK: 'sum_of_squares' returned 385
// CHECK: --- Running 'divide':
// CHECK-NEXT: int32 = 42
// CHECK-NEXT: 'divide' returned 42,0,!tfrt.chain value
