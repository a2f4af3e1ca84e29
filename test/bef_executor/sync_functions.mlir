// tfrt.sync functions: the sync kernels, errors at their kernel, program
// order, and tfrt_test.sync_benchmark.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef 2>&1 | FileCheck %s --check-prefixes=CHECK,ST
// RUN: bef_executor --work_queue_type=mstd:2 %t.bef 2>&1 | FileCheck %s --check-prefixes=CHECK,MT

// CHECK-LABEL: --- Running 'constants_and_adds'
func.func @constants_and_adds() -> (i1, i32, i64, f32, f64)
    attributes {tfrt.sync} {
  %b = "tfrt.constant_s.i1"() {value = true} : () -> i1
  %i = "tfrt.constant_s.i32"() {value = 2147483647 : i32} : () -> i32
  %one = "tfrt.constant_s.i32"() {value = 1 : i32} : () -> i32
  %l = "tfrt.constant_s.i64"() {value = 40 : i64} : () -> i64
  %f = "tfrt.constant_s.f32"() {value = 1.5 : f32} : () -> f32
  %d = "tfrt.constant_s.f64"() {value = 0.25 : f64} : () -> f64
  // Integers wrap around.
  %i2 = "tfrt.add_s.i32"(%i, %one) : (i32, i32) -> i32
  %l2 = "tfrt.add_s.i64"(%l, %l) : (i64, i64) -> i64
  %f2 = "tfrt.add_s.f32"(%f, %f) : (f32, f32) -> f32
  %d2 = "tfrt.add_s.f64"(%d, %d) : (f64, f64) -> f64
  tfrt.return %b, %i2, %l2, %f2, %d2 : i1, i32, i64, f32, f64
}
// CHECK-NEXT: 'constants_and_adds' returned 1,-2147483648,80,3.000000e+00,5.000000e-01

// CHECK-LABEL: --- Running 'fail_s'
func.func @fail_s() -> i32 attributes {tfrt.sync} {
  // expected-error @+1 {{runtime error: something bad happened}}
  %x = "tfrt_test.fail_s"() : () -> i32
  // Downstream kernels do not run.
  // CHECK-NOT: int32
  %ch = tfrt.new.chain
  %ch1 = tfrt.print.i32 %x, %ch
  tfrt.return %x : i32
}
// CHECK: 'fail_s' returned <<error: something bad happened>>

// CHECK-LABEL: --- Running 'error_s'
func.func @error_s() -> i32 attributes {tfrt.sync} {
  %one = "tfrt.constant_s.i32"() {value = 1 : i32} : () -> i32
  // expected-error @+1 {{runtime error: something bad happened}}
  %x = "tfrt_test.error_s"() : () -> i32
  %y = "tfrt.add_s.i32"(%x, %one) : (i32, i32) -> i32
  tfrt.return %y : i32
}
// CHECK-NEXT: 'error_s' returned <<error: something bad happened>>

// CHECK-LABEL: --- Running 'sums'
func.func @sums() -> (i32, i32, i32, i32) attributes {tfrt.sync} {
  %a = "tfrt.constant_s.i32"() {value = 10 : i32} : () -> i32
  %b = "tfrt.constant_s.i32"() {value = 20 : i32} : () -> i32
  %c = "tfrt.constant_s.i32"() {value = 30 : i32} : () -> i32
  %only = "tfrt_test.sync_sum"(%a) : (i32) -> i32
  %all = "tfrt_test.sync_sum"(%a, %b, %c) : (i32, i32, i32) -> i32
  // The same value passed more than once counts each time.
  %repeated = "tfrt_test.sync_sum2"(%a, %b, %b, %a) : (i32, i32, i32, i32) -> i32
  %attrs = "tfrt_test.sync_sum_attributes"()
      {a = 1 : i32, b = 2 : i32, c = 39 : i32, name = "not an i32"} : () -> i32
  tfrt.return %only, %all, %repeated, %attrs : i32, i32, i32, i32
}
// CHECK-NEXT: 'sums' returned 10,60,60,42

// Without chains, a sync function's side effects follow program order:
// here the dataflow executor's LIFO order would print 2 first.
// CHECK-LABEL: --- Running 'program_order'
func.func @program_order() attributes {tfrt.sync} {
  %a = "tfrt.constant_s.i32"() {value = 1 : i32} : () -> i32
  %b = "tfrt.constant_s.i32"() {value = 2 : i32} : () -> i32
  %c = "tfrt.constant_s.i32"() {value = 3 : i32} : () -> i32
  %ch = tfrt.new.chain
  %ch1 = tfrt.print.i32 %a, %ch
  %ch2 = tfrt.print.i32 %b, %ch
  %ch3 = tfrt.print.i32 %c, %ch
  tfrt.return
}
// CHECK-NEXT: int32 = 1
// CHECK-NEXT: int32 = 2
// CHECK-NEXT: int32 = 3

// Outside tfrt.sync a kernel runs once its operands are: the print of %b
// comes first but waits for its value, computed on the work queue (with
// worker threads, possibly before the other print). In a sync function
// kernels run in program order.
// CHECK-LABEL: --- Running 'dataflow_order'
func.func @dataflow_order() {
  %ch = tfrt.new.chain
  %a = tfrt.constant.i32 1
  %b = "tfrt_test.async_constant.i32"() {value = 2 : i32} : () -> i32
  %ch1 = tfrt.print.i32 %b, %ch
  %ch2 = tfrt.print.i32 %a, %ch
  tfrt.return
}
// ST-NEXT: int32 = 1
// ST-NEXT: int32 = 2
// MT-DAG: int32 = 1
// MT-DAG: int32 = 2

// CHECK-LABEL: --- Running 'sync_order'
func.func @sync_order() attributes {tfrt.sync} {
  %ch = tfrt.new.chain
  %a = "tfrt.constant_s.i32"() {value = 1 : i32} : () -> i32
  %b = "tfrt.constant_s.i32"() {value = 2 : i32} : () -> i32
  %ch1 = tfrt.print.i32 %b, %ch
  %ch2 = tfrt.print.i32 %a, %ch
  tfrt.return
}
// CHECK-NEXT: int32 = 2
// CHECK-NEXT: int32 = 1

func.func @fib(%a: i32, %b: i32) -> i32 attributes {tfrt.sync} {
  %c = "tfrt.add_s.i32"(%a, %b) : (i32, i32) -> i32
  %d = "tfrt.add_s.i32"(%b, %c) : (i32, i32) -> i32
  tfrt.return %d : i32
}
// CHECK: --- Not running 'fib' because it has arguments.

// sync_benchmark has no results and runs @fib on the calling thread.
// CHECK-LABEL: --- Running 'sync_benchmark'
func.func @sync_benchmark() attributes {tfrt.sync} {
  %a = "tfrt.constant_s.i32"() {value = 0 : i32} : () -> i32
  %b = "tfrt.constant_s.i32"() {value = 1 : i32} : () -> i32
  tfrt_test.sync_benchmark @fib(%a : i32, %b : i32)
      duration_secs = 10, max_count = 25, num_warmup_runs = 2
  tfrt.return
}
// CHECK-NEXT: BM:fib:Duration(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:Count: 25
// CHECK-NEXT: BM:fib:Time Min(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:Time 50%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:Time 95%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:Time 99%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:CPU Min(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:CPU 50%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:CPU 95%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:CPU 99%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:fib:CPU utilization(percent): {{[0-9.]+}}
// CHECK-NOT: error

func.func @sync_add_mul(%a: i32, %b: i32) -> (i32, i32) attributes {tfrt.sync} {
  %c = "tfrt.add_s.i32"(%a, %b) : (i32, i32) -> i32
  %d = "tfrt.mul_s.i32"(%a, %b) : (i32, i32) -> i32
  tfrt.return %c, %d : i32, i32
}

// An async function calling a sync one through a kernel.
// CHECK-LABEL: --- Running 'invoke_sync_function'
func.func @invoke_sync_function() -> (i32, i32, i32) {
  %a = tfrt.constant.i32 6
  %b = tfrt.constant.i32 7
  %s, %p = "tfrt_test.invoke_sync_function.i32_i32.i32_i32"(%a, %b) {fn = @sync_add_mul} : (i32, i32) -> (i32, i32)
  // expected-error @+1 {{runtime error: function 'sync_add_mul' takes 2 arguments and returns 2}}
  %only = "tfrt_test.invoke_sync_function.i32_i32.i32"(%a, %b) {fn = @sync_add_mul} : (i32, i32) -> i32
  tfrt.return %s, %p, %only : i32, i32, i32
}
// CHECK: 'invoke_sync_function' returned 13,42,<<error: function 'sync_add_mul' takes 2 arguments and returns 2>>
