// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s

func.func @double(%x: i32) -> i32 {
  %y = tfrt.add.i32 %x, %x
  tfrt.return %y : i32
}

// CHECK-LABEL: --- Running 'call'
func.func @call() -> i32 {
  %x = tfrt.constant.i32 21
  %y = tfrt.call @double(%x) : (i32) -> i32
  tfrt.return %y : i32
}
// CHECK-NEXT: 'call' returned 42

// Region bodies with arguments are listed before their function.
// CHECK: --- Not running '' because it has arguments.
// CHECK: --- Not running '' because it has arguments.
// CHECK-LABEL: --- Running 'if_else'
func.func @if_else() -> (i32, i32) {
  %true = tfrt.constant.i1 1
  %false = tfrt.constant.i1 0
  %a = tfrt.constant.i32 1
  %b = tfrt.constant.i32 2
  %then = tfrt.if %true, %a, %b : (i32, i32) -> (i32) {
    tfrt.return %a : i32
  } else {
    tfrt.return %b : i32
  }
  %else = tfrt.if %false, %a, %b : (i32, i32) -> (i32) {
    tfrt.return %a : i32
  } else {
    tfrt.return %b : i32
  }
  tfrt.return %then, %else : i32, i32
}
// CHECK: 'if_else' returned 1,2

// CHECK-LABEL: --- Running 'repeat'
func.func @repeat() -> (i32, i32) {
  %count = tfrt.constant.i32 5
  %zero = tfrt.constant.i32 0
  %one = tfrt.constant.i32 1
  %total, %step = tfrt.repeat.i32 %count, %zero, %one : i32, i32 {
    %next = tfrt.add.i32 %zero, %one
    tfrt.return %next, %one : i32, i32
  }
  tfrt.return %total, %step : i32, i32
}
// CHECK: 'repeat' returned 5,1

// CHECK-LABEL: --- Running 'repeat_async'
func.func @repeat_async() -> i32 {
  %count = tfrt.constant.i32 10
  %zero = tfrt.constant.i32 0
  %total = tfrt.repeat.i32 %count, %zero : i32 {
    %one = tfrt.constant.i32 1
    %next = "tfrt_test.async_add.i32"(%zero, %one) : (i32, i32) -> i32
    tfrt.return %next : i32
  }
  tfrt.return %total : i32
}
// CHECK: 'repeat_async' returned 10
