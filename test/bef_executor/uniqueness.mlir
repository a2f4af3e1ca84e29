// tfrt_test.get_uniqueness (is the async value's reference the only one?)
// and tfrt_test.make_indirect. The executor holds one reference per use of
// a value, so a value is unique at its last use.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'direct'
func.func @direct() -> !tfrt.chain {
  %ch = tfrt.new.chain
  %a = tfrt.constant.i32 1
  %b = tfrt.constant.i32 2
  // %a is used again below; %b is not.
  %ua = "tfrt_test.get_uniqueness"(%a) : (i32) -> i1
  %ub = "tfrt_test.get_uniqueness"(%b) : (i32) -> i1
  // print_bool takes a leading chain, as TFRT declares it.
  // CHECK-NEXT: false
  %ch0 = "tfrt_test.print_bool"(%ch, %ua) : (!tfrt.chain, i1) -> !tfrt.chain
  // CHECK-NEXT: true
  %ch1 = "tfrt_test.print_bool"(%ch0, %ub) : (!tfrt.chain, i1) -> !tfrt.chain
  // CHECK-NEXT: int32 = 1
  %ch2 = tfrt.print.i32 %a, %ch1
  tfrt.return %ch2 : !tfrt.chain
}

// Through an indirect value, the value it points at counts too.
// CHECK-LABEL: --- Running 'indirect'
func.func @indirect() -> !tfrt.chain {
  %ch = tfrt.new.chain
  %a = tfrt.constant.i32 100
  %b = tfrt.constant.i32 200
  %ia = "tfrt_test.make_indirect"(%a) : (i32) -> i32
  %ib = "tfrt_test.make_indirect"(%b) : (i32) -> i32
  %uia = "tfrt_test.get_uniqueness"(%ia) : (i32) -> i1
  %uib = "tfrt_test.get_uniqueness"(%ib) : (i32) -> i1
  // CHECK-NEXT: false
  %ch0 = "tfrt_test.print_bool"(%ch, %uia) : (!tfrt.chain, i1) -> !tfrt.chain
  // CHECK-NEXT: true
  %ch1 = "tfrt_test.print_bool"(%ch0, %uib) : (!tfrt.chain, i1) -> !tfrt.chain
  // CHECK-NEXT: int32 = 100
  %ch2 = tfrt.print.i32 %a, %ch1
  // The indirect value reads as the value it forwards to.
  %sum = tfrt.add.i32 %ia, %ia
  // CHECK-NEXT: int32 = 200
  %ch3 = tfrt.print.i32 %sum, %ch2
  tfrt.return %ch3 : !tfrt.chain
}

// Values passed to a call are not unique inside it: the caller's and the
// call's references both hold them.
func.func @callee(%x: i32) -> i1 {
  %u = "tfrt_test.get_uniqueness"(%x) : (i32) -> i1
  tfrt.return %u : i1
}

// CHECK-LABEL: --- Running 'through_call'
func.func @through_call() -> i1 {
  %a = tfrt.constant.i32 1
  %u = tfrt.call @callee(%a) : (i32) -> i1
  tfrt.return %u : i1
}
// CHECK-NEXT: 'through_call' returned 0
