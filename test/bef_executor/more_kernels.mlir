// RUN: bef_executor %s 2>&1 | FileCheck %s --check-prefixes=CHECK,ST
// RUN: bef_executor --work_queue_type=mstd:2,2 %s 2>&1 | FileCheck %s

func.func @square(%x: i32) -> i32 {
  %y = "tfrt.multiply.i32"(%x, %x) : (i32, i32) -> i32
  tfrt.return %y : i32
}

func.func @negate(%x: i32) -> i32 {
  %zero = tfrt.constant.i32 0
  %minus_one = tfrt.constant.i32 -1
  %y = "tfrt.multiply.i32"(%x, %minus_one) : (i32, i32) -> i32
  tfrt.return %y : i32
}

// CHECK-LABEL: --- Running 'cond_and_case'
func.func @cond_and_case() -> (i32, i32, i32, i32) {
  %true = tfrt.constant.i1 1
  %false = tfrt.constant.i1 0
  %three = tfrt.constant.i32 3
  %a = tfrt.cond %true @square @negate (%three) : (i32) -> (i32)
  %b = tfrt.cond %false @square @negate (%three) : (i32) -> (i32)
  %zero = tfrt.constant.i32 0
  %seven = tfrt.constant.i32 7
  %c = tfrt.case %zero [@square, @negate] (%three) : (i32) -> (i32)
  // An index out of range picks the last branch.
  %d = tfrt.case %seven [@square, @negate] (%three) : (i32) -> (i32)
  tfrt.return %a, %b, %c, %d : i32, i32, i32, i32
}
// CHECK-NEXT: 'cond_and_case' returned 9,-3,9,-3

func.func @chained_square(%ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32) {
  %y = "tfrt.multiply.i32"(%x, %x) : (i32, i32) -> i32
  tfrt.return %ch, %y : !tfrt.chain, i32
}

func.func @chained_negate(%ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32) {
  %minus_one = tfrt.constant.i32 -1
  %y = "tfrt.multiply.i32"(%x, %minus_one) : (i32, i32) -> i32
  %ch1 = tfrt.print.i32 %y, %ch
  tfrt.return %ch1, %y : !tfrt.chain, i32
}

// TFRT's chained form threads the chain through the branch.
// CHECK-LABEL: --- Running 'chained_case'
func.func @chained_case() -> (i32, !tfrt.chain) {
  %ch0 = tfrt.new.chain
  %one = tfrt.constant.i32 1
  %four = tfrt.constant.i32 4
  %ch1, %r = tfrt.case %one [@chained_square, @chained_negate] (%ch0, %four) : (i32) -> (i32)
  // CHECK-NEXT: int32 = -4
  // CHECK-NEXT: int32 = -4
  %ch2 = tfrt.print.i32 %r, %ch1
  tfrt.return %r, %ch2 : i32, !tfrt.chain
}
// CHECK-NEXT: 'chained_case' returned -4,!tfrt.chain value

// Counts down from the argument: returns (x - 1) and whether to go on.
func.func @count_down(%x: i32) -> (i32, i1) {
  %minus_one = tfrt.constant.i32 -1
  %zero = tfrt.constant.i32 0
  %next = tfrt.add.i32 %x, %minus_one
  %done = tfrt.lessequal.i32 %next, %zero
  %true = tfrt.constant.i1 1
  %false = tfrt.constant.i1 0
  %again = tfrt.if %done : () -> (i1) {
    %f = tfrt.constant.i1 0
    tfrt.return %f : i1
  } else {
    %t = tfrt.constant.i1 1
    tfrt.return %t : i1
  }
  tfrt.return %next, %again : i32, i1
}

// CHECK-LABEL: --- Running 'while_loop'
func.func @while_loop() -> i32 {
  %true = tfrt.constant.i1 1
  %five = tfrt.constant.i32 5
  %r = tfrt.while %true @count_down(%five) parallel_iterations(1) : (i32) -> (i32)
  tfrt.return %r : i32
}
// CHECK-NEXT: 'while_loop' returned 0

// Returns the print's chain so that its callers wait for the print.
func.func @expensive() -> (i32, !tfrt.chain) {
  %ch0 = tfrt.new.chain
  %s = "tfrt_test.get_string"() {value = "computing once"} : () -> !tfrt.string
  %ch1 = "tfrt_test.print_string"(%s, %ch0) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  %x = tfrt.constant.i32 42
  tfrt.return %x, %ch1 : i32, !tfrt.chain
}

// CHECK-LABEL: --- Running 'once'
// CHECK-NEXT: string = computing once
// CHECK-NOT: computing once
// CHECK: 'once' returned 42,42,!tfrt.chain value
func.func @once() -> (i32, i32, !tfrt.chain) {
  %a, %ch_a = tfrt.once @expensive() : () -> (i32, !tfrt.chain)
  %b, %ch_b = tfrt.once @expensive() : () -> (i32, !tfrt.chain)
  %ch = tfrt.merge.chains %ch_a, %ch_b : !tfrt.chain, !tfrt.chain
  tfrt.return %a, %b, %ch : i32, i32, !tfrt.chain
}

func.func @add_block(%start: i32, %end: i32, %counter: !test.atomic.i32) -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %n = "tfrt.multiply.i32"(%start, %end) : (i32, i32) -> i32
  %ch1 = "tfrt_test.atomic.inc.i32"(%counter, %ch0) : (!test.atomic.i32, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'parallel'
func.func @parallel() -> i32 {
  %counter = "tfrt_test.atomic.create.i32"() : () -> !test.atomic.i32
  %start = tfrt.constant.i32 0
  %end = tfrt.constant.i32 10
  %block = tfrt.constant.i32 3
  // Blocks [0,3) [3,6) [6,9) [9,10): four calls.
  %done = tfrt.parallel_call.i32 %start to %end fixed %block @add_block(%counter) : !test.atomic.i32
  %count = "tfrt_test.atomic.get.i32"(%counter, %done) : (!test.atomic.i32, !tfrt.chain) -> i32
  tfrt.return %count : i32
}
// CHECK-NEXT: 'parallel' returned 4

// CHECK-LABEL: --- Running 'misc'
func.func @misc() -> (i32, i32, !tfrt.chain) {
  %ch0 = tfrt.new.chain
  %x = tfrt.constant.i32 6
  // CHECK-NEXT: Slept for 100 microseconds
  %hundred = tfrt.constant.i32 100
  %ch1 = "tfrt_test.blocking.usleep"(%hundred) : (i32) -> !tfrt.chain
  %y = "tfrt_test.async_copy_2.i32"(%x, %ch1) : (i32, !tfrt.chain) -> i32
  %a, %b = "tfrt_test.share_to_two"(%y) : (i32) -> (i32, i32)
  // CHECK-NEXT: (2, 4)
  %c = "tfrt_tutorial.create_coordinate"() {x = 2 : i32, y = 4 : i32} : () -> !tfrt_tutorial.coordinate
  %ch2 = "tfrt_tutorial.print_coordinate"(%c, %ch1) : (!tfrt_tutorial.coordinate, !tfrt.chain) -> !tfrt.chain
  // The operand form, as TFRT's tutorial writes it.
  // CHECK-NEXT: (3, 5)
  %three = tfrt.constant.i32 3
  %five = tfrt.constant.i32 5
  %d = "tfrt_tutorial.create_coordinate"(%three, %five) : (i32, i32) -> !tfrt_tutorial.coordinate
  %ch3 = "tfrt_tutorial.print_coordinate"(%d, %ch2) : (!tfrt_tutorial.coordinate, !tfrt.chain) -> !tfrt.chain
  // The last print's chain is returned so that it comes before this line.
  tfrt.return %a, %b, %ch3 : i32, i32, !tfrt.chain
}
// CHECK-NEXT: 'misc' returned 6,6,!tfrt.chain value

// Values die right after their last use, not at the end of the function.
// Kernels make each value, then move it into its async value (the moved-from
// value dies silently). The two constants are in different streams: with
// worker threads they may run at the same time.
// CHECK-LABEL: --- Running 'value_lifetimes'
// ST-NEXT: constructed vt.value(1)
// ST-NEXT: move constructed vt.value(1)
// ST-NEXT: constructed vt.value(2)
// ST-NEXT: move constructed vt.value(2)
// CHECK: constructed vt.value(3)
// CHECK-NEXT: move constructed vt.value(3)
// CHECK-NEXT: destroyed vt.value(1)
// CHECK-NEXT: destroyed vt.value(2)
// CHECK-NEXT: print vt_value(3)
// CHECK-NEXT: destroyed vt.value(3)
func.func @value_lifetimes() {
  %ch0 = tfrt.new.chain
  %a = "vt.constant"() {value = 1 : i32} : () -> !vt.value
  %b = "vt.constant"() {value = 2 : i32} : () -> !vt.value
  %c = "vt.add"(%a, %b) : (!vt.value, !vt.value) -> !vt.value
  %ch1 = "vt.print"(%c, %ch0) : (!vt.value, !tfrt.chain) -> !tfrt.chain
  tfrt.return
}
