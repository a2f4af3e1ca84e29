// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: not bef_executor %t.bef 2>&1 | FileCheck %s
// RUN: bef_executor --host_allocator_type=malloc %t.bef 2>&1 | FileCheck %s --check-prefix=MALLOC

// CHECK: --- Running 'leaks'
// CHECK: Memory leak detected: 1 alive allocations, 4 alive bytes
// MALLOC-NOT: Memory leak
func.func @leaks() {
  "tfrt_test.memory_leak_one_int32"() : () -> ()
  tfrt.return
}
