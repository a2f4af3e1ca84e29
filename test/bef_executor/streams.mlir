// Stream scheduling, as TFRT's executor: the converter records the stream
// analysis (docs/compiler.md) of every function but tfrt.sync ones in the
// BEF file; a kernel that becomes ready in another stream than the kernel
// that readied it starts on the work queue (one task per stream, in stream
// id order) instead of inline; kernels of the same stream run last ready,
// first run.
// Checks the fast executor's stream schedule: not a property of the semantics.
// UNSUPPORTED: reference-executor
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s --check-prefixes=CHECK,MT
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s --check-prefixes=CHECK,ST

module attributes {tfrt.cost_threshold = 10 : i64} {

// %t0 and %t1 each cost the threshold (no _tfrt_cost): two streams. %t0
// continues the stream of %ch0's definer and runs inline on the calling
// thread (id 0); %t1 starts on a worker (the first to ask: id 1) with the
// multi-threaded queue, and on the calling thread when the single-threaded
// queue runs its tasks.
// CHECK-LABEL: --- Running 'independent_expensive_kernels'
func.func @independent_expensive_kernels() -> !tfrt.chain {
  %ch = tfrt.new.chain
  %t = "tfrt_test.get_thread_id"(%ch) : (!tfrt.chain) -> (i32)
  // CHECK-NEXT: int32 = 0
  %ch0 = tfrt.print.i32 %t, %ch
  %t0 = "tfrt_test.get_thread_id"(%ch0) : (!tfrt.chain) -> (i32)
  %t1 = "tfrt_test.get_thread_id"(%ch0) : (!tfrt.chain) -> (i32)
  // CHECK-NEXT: int32 = 0
  // MT-NEXT: int32 = 1
  // ST-NEXT: int32 = 0
  %ch1 = tfrt.print.i32 %t0, %ch0
  %ch2 = tfrt.print.i32 %t1, %ch1
  %ch3 = tfrt.merge.chains %ch1, %ch2 : !tfrt.chain, !tfrt.chain
  tfrt.return %ch3 : !tfrt.chain
}
// CHECK-NEXT: 'independent_expensive_kernels' returned !tfrt.chain value

// Cheap kernels (cost 1, below the threshold) merge into one stream and
// run inline: the users of %c0 are ready in program order and run last
// first, each followed by its own users (TFRT's lifo_scheduling).
// CHECK-LABEL: --- Running 'cheap_kernels_stay_inline'
func.func @cheap_kernels_stay_inline() -> i32 {
  %c0 = tfrt.constant.i32 1
  // CHECK-NEXT: id: 1
  // CHECK-NEXT: id: 0
  // CHECK-NEXT: id: 2
  %c1 = tfrt_test.test_cost %c0 {id = 0 : i64, _tfrt_cost = 1 : i64} : i32
  %c2 = tfrt_test.test_cost %c0 {id = 1 : i64, _tfrt_cost = 1 : i64} : i32
  %c3 = tfrt_test.test_cost %c1 {id = 2 : i64, _tfrt_cost = 1 : i64} : i32
  %sum = tfrt.add.i32 %c2, %c3
  tfrt.return %sum : i32
}
// CHECK-NEXT: 'cheap_kernels_stay_inline' returned 2

// Independent expensive kernels ready at the start: the one in the entry's
// stream runs inline, the others start on the work queue; all run once.
// With the single-threaded queue, the tasks run in stream id order.
// CHECK-LABEL: --- Running 'expensive_kernels_at_the_start'
func.func @expensive_kernels_at_the_start() -> (!tfrt.chain, !tfrt.chain, !tfrt.chain) {
  %a = tfrt_test.test_cost {id = 1 : i64, _tfrt_cost = 20 : i64}
  %b = tfrt_test.test_cost {id = 2 : i64, _tfrt_cost = 20 : i64}
  %c = tfrt_test.test_cost {id = 3 : i64, _tfrt_cost = 20 : i64}
  tfrt.return %a, %b, %c : !tfrt.chain, !tfrt.chain, !tfrt.chain
}
// MT-DAG: id: 1
// MT-DAG: id: 2
// MT-DAG: id: 3
// ST-NEXT: id: 1
// ST-NEXT: id: 3
// ST-NEXT: id: 2
// CHECK: 'expensive_kernels_at_the_start' returned !tfrt.chain value,!tfrt.chain value,!tfrt.chain value

// A tfrt.sync function runs each kernel once, in program order, on the
// calling thread, streams or not.
// CHECK-LABEL: --- Running 'sync_function'
func.func @sync_function() -> i32 attributes {tfrt.sync} {
  %c0 = "tfrt.constant_s.i32"() {value = 1 : i32} : () -> i32
  // CHECK-NEXT: id: 7
  // CHECK-NEXT: id: 8
  // CHECK-NEXT: 'sync_function' returned 1
  %a = tfrt_test.test_cost %c0 {id = 7 : i64, _tfrt_cost = 20 : i64} : i32
  %b = tfrt_test.test_cost %c0 {id = 8 : i64, _tfrt_cost = 20 : i64} : i32
  tfrt.return %a : i32
}

}
