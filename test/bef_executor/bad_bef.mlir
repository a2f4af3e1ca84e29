// Truncated and corrupted BEF files are clean errors, never crashes.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: head -c 40 %t.bef > %t.truncated
// RUN: not bef_executor %t.truncated 2>&1 | FileCheck %s --check-prefix=TRUNC
// RUN: printf '\x0b\xef\x07\x00' > %t.version
// RUN: not bef_executor %t.version 2>&1 | FileCheck %s --check-prefix=VERSION
// An empty .bef file is a malformed BEF file, not an empty MLIR module.
// RUN: : > %t.empty.bef
// RUN: not bef_executor %t.empty.bef 2>&1 | FileCheck %s --check-prefix=EMPTY

// TRUNC: error: malformed BEF:
// VERSION: error: malformed BEF: header at offset 4: unsupported BEF version 7.0
// EMPTY: error: malformed BEF: header at offset 0: truncated

func.func @f() -> i32 {
  %x = tfrt.constant.i32 1
  tfrt.return %x : i32
}
