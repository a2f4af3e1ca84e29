// RUN: bef_executor --enable_tracing --host_allocator_type=malloc %s 2>&1 | FileCheck %s --check-prefix=TRACE
// RUN: bef_executor --host_allocator_type=test_fixed_size_1k %s 2>&1 | FileCheck %s --check-prefix=FIXED
// RUN: bef_executor --host_allocator_type=profiled_allocator %s 2>&1 | FileCheck %s --check-prefix=PROFILED
// RUN: not bef_executor --host_allocator_type=bogus %s 2>&1 | FileCheck %s --check-prefix=BOGUS
// RUN: bef_executor --help | FileCheck %s --check-prefix=HELP

// TRACE: --- Running 'allocates':
// TRACE-NEXT: Scope:Bef Executor
// TRACE-NEXT: Scope:Function: allocates
// TRACE-NEXT: End Scope
// TRACE-NEXT: End Scope

// FIXED: Allocating 4 bytes. 1020 remaining.

// PROFILED: HostAllocator profile: 1 allocations, 4 peak bytes, 1 alive allocations, 4 alive bytes

// BOGUS: error: invalid host allocator type 'bogus'

// HELP-DAG: --functions
// HELP-DAG: --host_allocator_type
// HELP-DAG: --print_error_code
// HELP-DAG: --shared_libs
// HELP-DAG: --test_init_function
// HELP-DAG: --work_queue_type

func.func @allocates() {
  "tfrt_test.memory_leak_one_int32"() : () -> ()
  tfrt.return
}
