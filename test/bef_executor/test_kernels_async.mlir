// tfrt_test kernels around asynchrony: atomic.get.i32's chain, usleep,
// as_chain, async_constant.i1 (quiesce: quiesce_kernel.mlir).
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'atomic_get_returns_a_chain'
func.func @atomic_get_returns_a_chain() -> (i32, !tfrt.chain) {
  %counter = "tfrt_test.atomic.create.i32"() : () -> !test.atomic.i32
  %ch0 = tfrt.new.chain
  %ch1 = "tfrt_test.atomic.inc.i32"(%counter, %ch0) : (!test.atomic.i32, !tfrt.chain) -> !tfrt.chain
  %v:2 = "tfrt_test.atomic.get.i32"(%counter, %ch1) : (!test.atomic.i32, !tfrt.chain) -> (i32, !tfrt.chain)
  // CHECK-NEXT: int32 = 1
  %ch2 = tfrt.print.i32 %v#0, %v#1
  tfrt.return %v#0, %ch2 : i32, !tfrt.chain
}
// CHECK-NEXT: 'atomic_get_returns_a_chain' returned 1,!tfrt.chain value

// usleep has no result: the sleep and its line happen on the blocking pool,
// before the next function starts (bef_executor quiesces in between).
// CHECK-LABEL: --- Running 'usleep'
func.func @usleep() {
  %us = tfrt.constant.i32 250
  "tfrt_test.usleep"(%us) : (i32) -> ()
  tfrt.return
}
// CHECK-NEXT: Slept for 250 microseconds

// CHECK-LABEL: --- Running 'as_chain_and_async_constant'
func.func @as_chain_and_async_constant() -> (!tfrt.chain, i1, i1) {
  %x = "tfrt_test.async_constant.i32"() {value = 7 : i32} : () -> i32
  %ch = "tfrt_test.as_chain"(%x) : (i32) -> !tfrt.chain
  %t = "tfrt_test.async_constant.i1"() {value = true} : () -> i1
  %f = "tfrt_test.async_constant.i1"() {value = false} : () -> i1
  tfrt.return %ch, %t, %f : !tfrt.chain, i1, i1
}
// CHECK-NEXT: 'as_chain_and_async_constant' returned !tfrt.chain value,1,0
