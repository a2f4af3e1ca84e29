// tfrt.call, tfrt.if and tfrt.repeat.i32 are non-strict: they start as soon
// as one operand exists, their bodies wait only on the values they use, and
// error operands reach the body instead of skipping the kernel. The
// single-threaded queue runs async kernels' work only once the function has
// nothing else to do, so the order of the prints is deterministic.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor --work_queue_type=s %t.bef 2>&1 | FileCheck %s
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s --check-prefix=ANY

func.func @print_all(%x: i32, %y: i32, %z: i32) {
  %ch0 = tfrt.new.chain
  tfrt.print.i32 %x, %ch0
  tfrt.print.i32 %y, %ch0
  tfrt.print.i32 %z, %ch0
  tfrt.return
}

// The callee prints 1 at once; %v3 does not even exist yet when it starts.
// CHECK-LABEL: --- Running 'call_starts_early'
// ANY-LABEL: --- Running 'call_starts_early'
func.func @call_starts_early() {
  %c1 = tfrt.constant.i32 1
  %v2 = "tfrt_test.async_add.i32"(%c1, %c1) : (i32, i32) -> i32
  %v3 = "tfrt_test.async_add.i32"(%c1, %v2) : (i32, i32) -> i32
  tfrt.call @print_all(%c1, %v2, %v3) : (i32, i32, i32) -> ()
  %c5 = tfrt.constant.i32 5
  %ch0 = tfrt.new.chain
  tfrt.print.i32 %c5, %ch0
  tfrt.return
}
// CHECK-NEXT: int32 = 1
// CHECK-NEXT: int32 = 5
// CHECK-NEXT: int32 = 2
// CHECK-NEXT: int32 = 3
// ANY-DAG: int32 = 1
// ANY-DAG: int32 = 2
// ANY-DAG: int32 = 3
// ANY-DAG: int32 = 5

// The condition is known, an argument is not: the branch runs at once.
// CHECK-LABEL: --- Running 'if_with_pending_argument'
func.func @if_with_pending_argument() {
  %true = tfrt.constant.i1 1
  %c1 = tfrt.constant.i32 1
  %v2 = "tfrt_test.async_add.i32"(%c1, %c1) : (i32, i32) -> i32
  tfrt.if %true, %c1, %v2 : (i32, i32) -> () {
    %ch3 = tfrt.new.chain
    tfrt.print.i32 %c1, %ch3
    tfrt.print.i32 %v2, %ch3
    tfrt.return
  } else {
    tfrt.return
  }
  %ch0 = tfrt.new.chain
  "tfrt_test.print_hello"(%ch0) : (!tfrt.chain) -> !tfrt.chain
  tfrt.return
}
// CHECK-NEXT: int32 = 1
// CHECK-NEXT: hello host executor!
// CHECK-NEXT: int32 = 2

// A pending condition holds the branch back, not the kernels after the if.
// CHECK-LABEL: --- Running 'if_with_pending_condition'
func.func @if_with_pending_condition() -> i32 {
  %ch0 = tfrt.new.chain
  %true = "tfrt_test.async_constant.i1"() { value = 1 : i1 } : () -> i1
  %c1 = tfrt.constant.i32 1
  %c2 = tfrt.constant.i32 2
  %r = tfrt.if %true, %c1, %c2 : (i32, i32) -> (i32) {
    %ch3 = tfrt.new.chain
    %ch4 = tfrt.print.i32 %c1, %ch3
    tfrt.print.i32 %c2, %ch4
    tfrt.return %c2 : i32
  } else {
    tfrt.return %c1 : i32
  }
  "tfrt_test.print_hello"(%ch0) : (!tfrt.chain) -> !tfrt.chain
  tfrt.return %r : i32
}
// CHECK-NEXT: hello host executor!
// CHECK-NEXT: int32 = 1
// CHECK-NEXT: int32 = 2
// CHECK-NEXT: 'if_with_pending_condition' returned 2

// CHECK-LABEL: --- Running 'repeat_with_pending_count'
func.func @repeat_with_pending_count() -> i32 {
  %count = "tfrt_test.async_constant.i32"() { value = 2 : i32 } : () -> i32
  %ch0 = tfrt.new.chain
  %v0 = tfrt.constant.i32 1
  %ch1, %v1 = tfrt.repeat.i32 %count, %ch0, %v0 : !tfrt.chain, i32 {
    %ch2 = tfrt.print.i32 %v0, %ch0
    %v2 = tfrt.add.i32 %v0, %v0
    tfrt.return %ch2, %v2 : !tfrt.chain, i32
  }
  "tfrt_test.print_hello"(%ch0) : (!tfrt.chain) -> !tfrt.chain
  tfrt.return %v1 : i32
}
// CHECK-NEXT: hello host executor!
// CHECK-NEXT: int32 = 1
// CHECK-NEXT: int32 = 2
// CHECK-NEXT: 'repeat_with_pending_count' returned 4

func.func @first(%x: i32, %y: i32) -> i32 {
  tfrt.return %x : i32
}

// An error operand reaches the callee; only what uses it fails.
// CHECK-LABEL: --- Running 'call_with_error_operand'
// ANY-LABEL: --- Running 'call_with_error_operand'
func.func @call_with_error_operand() -> i32 {
  %c1 = tfrt.constant.i32 1
  // expected-error @+1 {{runtime error: something bad happened}}
  %x = "tfrt_test.fail"() : () -> i32
  %r = tfrt.call @first(%c1, %x) : (i32, i32) -> i32
  tfrt.return %r : i32
}
// CHECK: 'call_with_error_operand' returned 1
// ANY: 'call_with_error_operand' returned 1

// An error condition becomes the results; the branches do not run.
// CHECK-LABEL: --- Running 'if_with_error_condition'
func.func @if_with_error_condition() -> i32 {
  // expected-error @+1 {{runtime error: something bad happened}}
  %cond = "tfrt_test.fail"() : () -> i1
  %c1 = tfrt.constant.i32 1
  %r = tfrt.if %cond, %c1 : (i32) -> (i32) {
    %ch = tfrt.new.chain
    tfrt.print.i32 %c1, %ch
    tfrt.return %c1 : i32
  } else {
    tfrt.return %c1 : i32
  }
  tfrt.return %r : i32
}
// CHECK-NOT: int32
// CHECK: 'if_with_error_condition' returned <<error: something bad happened>>

// The loop passes an error chain on: later iterations do not print.
// CHECK-LABEL: --- Running 'repeat_with_error_operand'
func.func @repeat_with_error_operand() {
  %ch0 = tfrt.new.chain
  // expected-error @+1 {{runtime error: something bad happened}}
  %v0 = "tfrt_test.fail"() : () -> i32
  %count = tfrt.constant.i32 3
  tfrt.repeat.i32 %count, %ch0, %v0 : !tfrt.chain, i32 {
    %ch2 = tfrt.print.i32 %v0, %ch0
    %ch3 = "tfrt_test.print_hello"(%ch0) : (!tfrt.chain) -> !tfrt.chain
    tfrt.return %ch2, %v0 : !tfrt.chain, i32
  }
  tfrt.print.i32 %count, %ch0
  tfrt.return
}
// CHECK: hello host executor!
// CHECK-NOT: hello host executor!
// CHECK: int32 = 3
