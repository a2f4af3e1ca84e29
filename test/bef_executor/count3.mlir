// tfrt_test.count3.{i32,i64}: x + 1, x + 2, x + 3, wrapping around.
// RUN: bef_executor %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'count3'
func.func @count3() -> (i32, i32, i32, i64, i64, i64) {
  %x = tfrt.constant.i32 2147483646
  %a:3 = tfrt_test.count3.i32 %x
  %y = tfrt.constant.i64 40
  %b:3 = tfrt_test.count3.i64 %y
  tfrt.return %a#0, %a#1, %a#2, %b#0, %b#1, %b#2 : i32, i32, i32, i64, i64, i64
}
// CHECK-NEXT: 'count3' returned 2147483647,-2147483648,-2147483647,41,42,43
