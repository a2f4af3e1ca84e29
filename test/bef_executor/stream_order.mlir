// Default scheduling is TFRT's stream scheduler (no tfrt.cost_threshold
// needed): unknown ops cost the default threshold, so independent kernels
// get streams of their own.
// Checks the fast executor's stream schedule: not a property of the semantics.
// UNSUPPORTED: reference-executor
// RUN: bef_executor %s 2>&1 | FileCheck %s
// RUN: bef_executor --work_queue_type=mstd:2 %s 2>&1 | FileCheck %s --check-prefix=MT

// Ready at the start: %a continues the entry's stream and runs first; the
// others start from the work queue, one task per stream in stream id order
// (%d, %c, then %b's).
// CHECK-LABEL: --- Running 'start_order'
// CHECK-NEXT: constructed vt.value(10)
// CHECK-NEXT: move constructed vt.value(10)
// CHECK-NEXT: constructed vt.value(40)
// CHECK-NEXT: move constructed vt.value(40)
// CHECK-NEXT: destroyed vt.value(40)
// CHECK-NEXT: constructed vt.value(30)
// CHECK-NEXT: move constructed vt.value(30)
// CHECK-NEXT: destroyed vt.value(30)
// CHECK-NEXT: constructed vt.value(20)
// CHECK-NEXT: move constructed vt.value(20)
// CHECK-NEXT: constructed vt.value(30)
// MT-LABEL: --- Running 'start_order'
// MT: print vt_value(30)
func.func @start_order() {
  %ch = tfrt.new.chain
  %a = "vt.constant"() {value = 10 : i32} : () -> !vt.value
  %b = "vt.constant"() {value = 20 : i32} : () -> !vt.value
  %sum = "vt.add"(%a, %b) : (!vt.value, !vt.value) -> !vt.value
  "vt.print"(%sum, %ch) : (!vt.value, !tfrt.chain) -> !tfrt.chain
  %c = "vt.constant"() {value = 30 : i32} : () -> !vt.value
  %d = "vt.constant"() {value = 40 : i32} : () -> !vt.value
  tfrt.return
}

// A function with a non-strict kernel (tfrt.if) and the bodies it runs keep
// the dataflow order: the body's print comes before the later print.
// CHECK-LABEL: --- Running 'non_strict_keeps_dataflow_order'
// CHECK-NEXT: int32 = 1
// CHECK-NEXT: int32 = 2
func.func @non_strict_keeps_dataflow_order() {
  %true = tfrt.constant.i1 1
  %one = tfrt.constant.i32 1
  tfrt.if %true, %one : (i32) -> () {
    %ch = tfrt.new.chain
    tfrt.print.i32 %one, %ch
    tfrt.return
  }
  %two = tfrt.constant.i32 2
  %ch = tfrt.new.chain
  tfrt.print.i32 %two, %ch
  tfrt.return
}

// With non-strict kernels, kernels are visited in program order and run
// once visited and ready: the non-strict if starts its branch (printing %a,
// and %b once the work queue computes it) before the later print runs,
// although that print's operands are ready first.
// CHECK-LABEL: --- Running 'visits_in_program_order'
// CHECK-NEXT: int32 = 7
// CHECK-NEXT: int32 = 100
// CHECK-NEXT: int32 = 14
func.func @visits_in_program_order() {
  %ch = tfrt.new.chain
  %hundred = tfrt.constant.i32 100
  %cond = tfrt.constant.i1 0
  %a = tfrt.constant.i32 7
  %b = "tfrt_test.async_add.i32"(%a, %a) : (i32, i32) -> i32
  tfrt.if %cond, %a, %b : (i32, i32) -> () {
    tfrt.return
  } else {
    %ch0 = tfrt.new.chain
    tfrt.print.i32 %a, %ch0
    tfrt.print.i32 %b, %ch0
    tfrt.return
  }
  tfrt.print.i32 %hundred, %ch
  tfrt.return
}
