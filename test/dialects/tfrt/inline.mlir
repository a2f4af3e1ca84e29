// -inline through tfrt.call and tfrt.return.
// RUN: asyncrt-opt %s -inline -split-input-file | FileCheck %s

// A private callee is inlined and then erased.
// CHECK-NOT: func.func private @add_one
func.func private @add_one(%x: i32) -> i32 {
  %one = tfrt.constant.i32 1
  %y = tfrt.add.i32 %x, %one
  tfrt.return %y : i32
}

// CHECK-LABEL: func @caller
// CHECK-SAME: (%[[X:.*]]: i32)
// CHECK-NOT: tfrt.call
// CHECK: %[[ONE:.*]] = tfrt.constant.i32 1
// CHECK-NEXT: %[[Y:.*]] = tfrt.add.i32 %[[X]], %[[ONE]]
// CHECK-NEXT: tfrt.return %[[Y]] : i32
func.func @caller(%x: i32) -> i32 {
  %y = tfrt.call @add_one(%x) : (i32) -> i32
  tfrt.return %y : i32
}

// -----

// A callee with several results and a chain; a public callee stays.
// CHECK-LABEL: func @print_and_pass
func.func @print_and_pass(%ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32) {
  %ch1 = tfrt.print.i32 %x, %ch
  tfrt.return %ch1, %x : !tfrt.chain, i32
}

// CHECK-LABEL: func @caller
// CHECK-SAME: (%[[CH:.*]]: !tfrt.chain, %[[X:.*]]: i32)
// CHECK-NEXT: %[[CH1:.*]] = tfrt.print.i32 %[[X]], %[[CH]]
// CHECK-NEXT: tfrt.return %[[CH1]], %[[X]] : !tfrt.chain, i32
func.func @caller(%ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32) {
  %r:2 = tfrt.call @print_and_pass(%ch, %x) : (!tfrt.chain, i32) -> (!tfrt.chain, i32)
  tfrt.return %r#0, %r#1 : !tfrt.chain, i32
}

// -----

func.func private @double(%x: i32) -> i32 {
  %y = tfrt.add.i32 %x, %x
  tfrt.return %y : i32
}

// Calls inside control-flow regions are inlined in place.
// CHECK-LABEL: func @call_in_region
// CHECK-SAME: (%[[N:.*]]: i32, %[[X:.*]]: i32)
// CHECK-NEXT: tfrt.repeat.i32 %[[N]], %[[X]] : i32 {
// CHECK-NEXT:   %[[Y:.*]] = tfrt.add.i32 %[[X]], %[[X]]
// CHECK-NEXT:   tfrt.return %[[Y]] : i32
// CHECK-NEXT: }
func.func @call_in_region(%n: i32, %x: i32) -> i32 {
  %r = tfrt.repeat.i32 %n, %x : i32 {
    %y = tfrt.call @double(%x) : (i32) -> i32
    tfrt.return %y : i32
  }
  tfrt.return %r : i32
}

// -----

// Native functions have no body; sync and async bodies do not mix.
// CHECK-LABEL: func.func private @native(i32) -> i32 attributes {tfrt.native}
func.func private @native(%x: i32) -> i32 attributes {tfrt.native}

// CHECK-LABEL: func.func private @sync_double
func.func private @sync_double(%x: i32) -> i32 attributes {tfrt.sync} {
  %y = "tfrt.add_s.i32"(%x, %x) : (i32, i32) -> i32
  tfrt.return %y : i32
}

// CHECK-LABEL: func @async_caller
// CHECK-NEXT: %[[A:.*]] = tfrt.call @native(%{{.*}}) : (i32) -> i32
// CHECK-NEXT: %[[B:.*]] = tfrt.call @sync_double(%[[A]]) : (i32) -> i32
// CHECK-NEXT: tfrt.return %[[B]] : i32
func.func @async_caller(%x: i32) -> i32 {
  %a = tfrt.call @native(%x) : (i32) -> i32
  %b = tfrt.call @sync_double(%a) : (i32) -> i32
  tfrt.return %b : i32
}

// -----

// func.call of a function ending in tfrt.return inlines the same way.
// CHECK-LABEL: func @func_call_caller
// CHECK-SAME: (%[[X:.*]]: i32)
// CHECK-NEXT: %[[Y:.*]] = tfrt.add.i32 %[[X]], %[[X]]
// CHECK-NEXT: tfrt.return %[[Y]] : i32
func.func private @double(%x: i32) -> i32 {
  %y = tfrt.add.i32 %x, %x
  tfrt.return %y : i32
}

func.func @func_call_caller(%x: i32) -> i32 {
  %y = func.call @double(%x) : (i32) -> i32
  tfrt.return %y : i32
}
