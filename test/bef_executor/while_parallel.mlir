// tfrt.while with parallel_iterations: the next iteration starts once the
// condition is known, while the previous one's slow values are still being
// computed, at most N iterations at a time.
// Checks the interleaving of the fast executor's schedule: not a property of the semantics.
// UNSUPPORTED: reference-executor
// RUN: bef_executor %s 2>&1 | FileCheck %s --check-prefixes=CHECK,ST
// RUN: bef_executor --work_queue_type=mstd:2,4 %s 2>&1 | FileCheck %s --check-prefixes=CHECK,MT

// Loop values: a counter (fast) and a chain from a 50 ms sleep (slow).
func.func @step(%i: i32, %slow: !tfrt.chain) -> (i32, !tfrt.chain, i1) {
  %ch0 = tfrt.new.chain
  %one = tfrt.constant.i32 1
  %next = tfrt.add.i32 %i, %one
  %ch1 = tfrt.print.i32 %next, %ch0
  %us = tfrt.constant.i32 50000
  // The sleep follows the print: prints show when iterations start.
  %printed = tfrt.merge.chains %slow, %ch1 : !tfrt.chain, !tfrt.chain
  %done = "tfrt_test.blocking.usleep"(%us, %printed) : (i32, !tfrt.chain) -> !tfrt.chain
  %three = tfrt.constant.i32 3
  %again = tfrt.lessequal.i32 %next, %three
  tfrt.return %next, %done, %again : i32, !tfrt.chain, i1
}

// Four iterations all start before the first sleep ends (their prints run
// on the workers, in any order). The single-threaded queue runs one task at
// a time, in order, so there each print waits for the sleep queued before
// it.
// CHECK-LABEL: --- Running 'four_at_once'
// CHECK-NEXT: int32 = 1
// MT-DAG: int32 = 2
// MT-DAG: int32 = 3
// MT-DAG: int32 = 4
// MT: Slept for 50000 microseconds
// MT-NEXT: Slept for 50000 microseconds
// MT-NEXT: Slept for 50000 microseconds
// MT-NEXT: Slept for 50000 microseconds
// ST-NEXT: Slept for 50000 microseconds
// ST-NEXT: int32 = 2
// ST-NEXT: Slept for 50000 microseconds
// ST-NEXT: int32 = 3
// ST-NEXT: Slept for 50000 microseconds
// ST-NEXT: int32 = 4
// ST-NEXT: Slept for 50000 microseconds
// CHECK-NEXT: 'four_at_once' returned 4,!tfrt.chain value
func.func @four_at_once() -> (i32, !tfrt.chain) {
  %true = tfrt.constant.i1 1
  %zero = tfrt.constant.i32 0
  %ch = tfrt.new.chain
  %r, %c = tfrt.while %true @step(%zero, %ch) parallel_iterations(4) : (i32, !tfrt.chain) -> (i32, !tfrt.chain)
  tfrt.return %r, %c : i32, !tfrt.chain
}

// One at a time: each iteration waits for the previous one's sleep.
// CHECK-LABEL: --- Running 'one_at_a_time'
// CHECK-NEXT: int32 = 1
// CHECK-NEXT: Slept for 50000 microseconds
// CHECK-NEXT: int32 = 2
// CHECK-NEXT: Slept for 50000 microseconds
// CHECK-NEXT: int32 = 3
// CHECK-NEXT: Slept for 50000 microseconds
// CHECK-NEXT: int32 = 4
// CHECK-NEXT: Slept for 50000 microseconds
// CHECK-NEXT: 'one_at_a_time' returned 4,!tfrt.chain value
func.func @one_at_a_time() -> (i32, !tfrt.chain) {
  %true = tfrt.constant.i1 1
  %zero = tfrt.constant.i32 0
  %ch = tfrt.new.chain
  %r, %c = tfrt.while %true @step(%zero, %ch) parallel_iterations(1) : (i32, !tfrt.chain) -> (i32, !tfrt.chain)
  tfrt.return %r, %c : i32, !tfrt.chain
}
