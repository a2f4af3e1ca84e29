// Symbol references into modules that are not compiled elsewhere.
// RUN: not asyncrt-translate -mlir-to-bef %s -o /dev/null 2>&1 | FileCheck %s

module @plain {
  func.func @main() {
    return
  }
}

func.func @uses() {
  // CHECK: error: BEF files cannot encode the 'func' attribute
  "simple.kernel"() {func = @plain::@main} : () -> ()
  tfrt.return
}
