// tfrt_test.get_thread_id, in a module that sets a default cost threshold.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s --check-prefixes=CHECK,ST
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s --check-prefixes=CHECK,MT

module attributes {tfrt.cost_threshold = 10 : i64} {

// CHECK-LABEL: --- Running 'thread_ids'
func.func @thread_ids() -> !tfrt.chain {
  %ch = tfrt.new.chain
  // The calling thread is not one of the queue's workers.
  %t = "tfrt_test.get_thread_id"(%ch) : (!tfrt.chain) -> i32
  // CHECK-NEXT: int32 = 0
  %ch0 = tfrt.print.i32 %t, %ch
  // A task of the single-threaded queue runs on the calling thread; one of
  // the multi-threaded queue runs on a worker, the first to ask: 1.
  %w = tfrt_test.do.async %ch0 : (!tfrt.chain) -> (i32) {
    %id = "tfrt_test.get_thread_id"(%ch0) : (!tfrt.chain) -> i32
    tfrt.return %id : i32
  }
  // ST-NEXT: int32 = 0
  // MT-NEXT: int32 = 1
  %ch1 = tfrt.print.i32 %w, %ch0
  tfrt.return %ch1 : !tfrt.chain
}

}
