// Kernels from a plug-in loaded with --shared_libs.
// RUN: bef_executor --shared_libs=%asyncrt_lib_dir/asyncrt_example_plugin.so %s 2>&1 | FileCheck %s
// RUN: not bef_executor --shared_libs=%t.missing.so %s 2>&1 | FileCheck %s --check-prefix=MISSING

// CHECK: --- Running 'from_plugin'
// CHECK-NEXT: hello from the plug-in, world
// MISSING: error: cannot load
func.func @from_plugin() {
  %ch = "plugin.hello"() {name = "world"} : () -> !tfrt.chain
  tfrt.return
}
