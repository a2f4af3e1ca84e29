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

// A BEF file whose module text does not match the symbol it is filed under
// (here rewritten in place) is an error, not a module under another name.
// RUN: asyncrt-translate -mlir-to-bef %S/compiled_modules.mlir -o %t.bef
// RUN: python3 -c "import sys; p = sys.argv[1]; b = open(p, 'rb').read(); open(p, 'wb').write(b.replace(b'module @kernel0', b'module @kernelX'))" %t.bef
// RUN: not asyncrt-translate -bef-to-mlir %t.bef 2>&1 | FileCheck %s --check-prefix=RENAMED
// RENAMED: error: compiled module @kernel0 does not parse as that module
