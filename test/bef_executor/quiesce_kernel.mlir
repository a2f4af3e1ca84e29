// tfrt_test.quiesce, which waits for the work queue. Only with the
// single-threaded queue: with worker threads, kernels of other streams run
// on workers, where quiesce is an error (test_kernels_async.mlir).
// Checks which ready kernel the fast executor runs first: not a property of the semantics.
// UNSUPPORTED: reference-executor
// RUN: bef_executor %s 2>&1 | FileCheck %s

// The increment runs on the work queue (with `s`, only inside Await or
// Quiesce): quiesce waits for it, so a fresh chain sees the count. Nothing
// but the scheduler orders quiesce after do.async: the kernels of the
// entry's stream run on this thread, last ready first (the counter, then
// do.async, quiesce, and the read), the others from the queue.
// CHECK-LABEL: --- Running 'quiesce'
func.func @quiesce() attributes {tfrt.cost_threshold = 2 : i64} {
  %fresh = tfrt.new.chain {_tfrt_cost = 1 : i64}
  "tfrt_test.quiesce"() {_tfrt_cost = 1 : i64} : () -> ()
  %ch = tfrt.new.chain {_tfrt_cost = 1 : i64}
  %counter = "tfrt_test.atomic.create.i32"() {_tfrt_cost = 1 : i64} : () -> !test.atomic.i32
  %done = tfrt_test.do.async %counter, %ch attributes {_tfrt_cost = 1 : i64} : (!test.atomic.i32, !tfrt.chain) -> (!tfrt.chain) {
    %c = "tfrt_test.atomic.inc.i32"(%counter, %ch) : (!test.atomic.i32, !tfrt.chain) -> !tfrt.chain
    tfrt.return %c : !tfrt.chain
  }
  %v:2 = "tfrt_test.atomic.get.i32"(%counter, %fresh) {_tfrt_cost = 1 : i64} : (!test.atomic.i32, !tfrt.chain) -> (i32, !tfrt.chain)
  // CHECK-NEXT: int32 = 1
  tfrt.print.i32 %v#0, %v#1 {_tfrt_cost = 1 : i64}
  tfrt.return
}
