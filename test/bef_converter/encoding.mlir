// RUN: asyncrt-translate -mlir-to-bef %s | od -A d -t x1 -N 4 | FileCheck %s
// RUN: asyncrt-translate -mlir-to-bef %s | wc -c > %t.full
// RUN: asyncrt-translate -mlir-to-bef --disable-optional-sections %s | wc -c > %t.lean
// RUN: test $(cat %t.lean) -lt $(cat %t.full)

// Magic bytes, then format version 1.2.
// CHECK: 0000000 0b ef 01 02

func.func @attributes() {
  "test.op"() {
    i = 1 : i32, f = 2.5 : f32, s = "text", t = i64, u, a = [1 : i32, 2 : i32],
    mixed = ["x", 3 : i64], d = dense<[1, 2, 3]> : tensor<3xi32>,
    callee = @attributes
  } : () -> ()
  tfrt.return
}
