// tfrt_test.unique_loc fails when two kernels share a location: the
// converter gives every kernel its own, even kernels with unknown locations.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'unknown_locations'
func.func @unknown_locations() -> !tfrt.chain {
  %a = "tfrt_test.unique_loc"() {name = "first"} : () -> !tfrt.chain loc(unknown)
  %b = "tfrt_test.unique_loc"() {name = "second"} : () -> !tfrt.chain loc(unknown)
  %c = "tfrt_test.unique_loc"() {name = "third"} : () -> !tfrt.chain loc(unknown)
  %d = "tfrt_test.unique_loc"() {name = "fourth"} : () -> !tfrt.chain loc("same.mlir":1:1)
  %e = "tfrt_test.unique_loc"() {name = "fifth"} : () -> !tfrt.chain loc("same.mlir":1:1)
  %all = tfrt.merge.chains %a, %b, %c, %d, %e : !tfrt.chain, !tfrt.chain, !tfrt.chain, !tfrt.chain, !tfrt.chain
  tfrt.return %all : !tfrt.chain
}
// CHECK-NEXT: 'unknown_locations' returned !tfrt.chain value

// The same kernel run again (each iteration of a loop) is not another
// kernel.
// CHECK-LABEL: --- Running 'same_kernel_twice'
func.func @same_kernel_twice() -> i32 {
  %n = tfrt.constant.i32 3
  %zero = tfrt.constant.i32 0
  %r = tfrt.repeat.i32 %n, %zero : i32 {
    %ch = "tfrt_test.unique_loc"() {name = "body"} : () -> !tfrt.chain
    %one = tfrt.constant.i32 1
    %next = tfrt.add.i32 %zero, %one
    tfrt.return %next : i32
  }
  tfrt.return %r : i32
}
// CHECK-NEXT: 'same_kernel_twice' returned 3
