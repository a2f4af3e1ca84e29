// Nested modules marked tfrt.compiled travel in the BEF file as MLIR text,
// referenced by symbol (`@module::@function`), and come back on translation.
// RUN: asyncrt-translate -mlir-to-bef %s | asyncrt-translate -bef-to-mlir | FileCheck %s

// CHECK: module @kernel0 attributes {tfrt.compiled}
// CHECK-NEXT: func.func @main(%{{.*}}: memref<?x?xf32>)
// CHECK: module @kernel1 attributes {tfrt.compiled}
// CHECK-NEXT: func.func @entry()
// CHECK-NEXT: return
module @kernel0 attributes {tfrt.compiled} {
  func.func @main(%input: memref<?x?xf32>) {
    return
  }
}

module @kernel1 attributes {tfrt.compiled} {
  func.func @entry() {
    return
  }
}

// CHECK-LABEL: func.func @uses
// CHECK-NEXT: "simple.kernel"() {func = @kernel0::@main} : () -> ()
// CHECK-NEXT: "simple.kernel"() {func = @kernel1::@entry, whole = @kernel0} : () -> ()
// CHECK-NEXT: "simple.kernel"() {funcs = [@kernel0::@main, @kernel1::@entry]} : () -> ()
func.func @uses() {
  "simple.kernel"() {func = @kernel0::@main} : () -> ()
  "simple.kernel"() {func = @kernel1::@entry, whole = @kernel0} : () -> ()
  "simple.kernel"() {funcs = [@kernel0::@main, @kernel1::@entry]} : () -> ()
  tfrt.return
}
