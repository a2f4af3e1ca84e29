// Kernels see the name scope of their MLIR location (tfrt_test.
// print_debug_info prints it): a name location's name, a call site's
// callee's, the first named part of a fused location. The names also come
// back from BEF to MLIR, and --disable-optional-sections drops them.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor %t.bef | FileCheck %s
// RUN: asyncrt-translate -mlir-to-bef --disable-optional-sections %s -o %t.lean.bef
// RUN: bef_executor %t.lean.bef | FileCheck %s --check-prefix=LEAN
// RUN: asyncrt-translate -bef-to-mlir -mlir-print-debuginfo %t.bef | FileCheck %s --check-prefix=ROUND

// CHECK-LABEL: --- Running 'debug_info'
// CHECK-NEXT: scope0/kernel0
// CHECK-NEXT: Kernel has no debug info
// CHECK-NEXT: scope1/kernel1
// CHECK-NEXT: foo
// CHECK-NEXT: bar
// CHECK-NEXT: callee
// LEAN-LABEL: --- Running 'debug_info'
// LEAN-COUNT-6: Kernel has no debug info
// ROUND-DAG: loc("scope0/kernel0"
// ROUND-DAG: loc("scope1/kernel1"(
func.func @debug_info() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %ch1 = "tfrt_test.print_debug_info"(%ch0) : (!tfrt.chain) -> (!tfrt.chain) loc(#named)
  %ch2 = "tfrt_test.print_debug_info"(%ch1) : (!tfrt.chain) -> (!tfrt.chain)
  %ch3 = "tfrt_test.print_debug_info"(%ch2) : (!tfrt.chain) -> (!tfrt.chain) loc("scope1/kernel1"("f.mlir":3:4))
  %ch4 = "tfrt_test.print_debug_info"(%ch3) : (!tfrt.chain) -> (!tfrt.chain) loc(fused["foo", "bar"])
  %ch5 = "tfrt_test.print_debug_info"(%ch4) : (!tfrt.chain) -> (!tfrt.chain) loc(fused["foo.py":42:314, "bar"])
  %ch6 = "tfrt_test.print_debug_info"(%ch5) : (!tfrt.chain) -> (!tfrt.chain) loc(callsite("callee" at "bar.py":42:314))
  tfrt.return %ch6 : !tfrt.chain
}

#named = loc("scope0/kernel0")
