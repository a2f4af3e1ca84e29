// RUN: bef_executor %s 2>&1 | FileCheck %s
// RUN: bef_executor --work_queue_type=mstd:2 %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'bench'
// CHECK-NEXT: BM:add_async:Duration(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:Count: 50
// CHECK-NEXT: BM:add_async:Time Min(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:Time 50%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:Time 95%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:Time 99%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:CPU Min(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:CPU 50%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:CPU 95%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:CPU 99%(ns): {{[0-9]+}}
// CHECK-NEXT: BM:add_async:CPU utilization(percent): {{[0-9.]+}}
func.func @bench() {
  %c = tfrt.constant.i32 1
  tfrt_test.benchmark "add_async"(%c : i32) duration_secs = 10, max_count = 50, num_warmup_runs = 3 {
    %x = "tfrt_test.async_add.i32"(%c, %c) : (i32, i32) -> i32
    tfrt.return %x : i32
  }
  tfrt.return
}
