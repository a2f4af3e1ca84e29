// tfrt_test.relu writes into its argument's buffer when it holds the last
// reference: three relus in a chain allocate nothing after the input. A
// relu of a value still used later copies. In all, 3 allocations (6
// without reuse).
// RUN: bef_executor --host_allocator_type=profiled_allocator %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'relu_in_place'
func.func @relu_in_place() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [4], values = [-1 : i32, 2 : i32, -3 : i32, 4 : i32] } : 1
  %r1 = corert.executeop(%cpu) "tfrt_test.relu"(%x) : 1
  %r2 = corert.executeop(%cpu) "tfrt_test.relu"(%r1) : 1
  %r3 = corert.executeop(%cpu) "tfrt_test.relu"(%r2) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [4], values = [0, 2, 0, 4]
  %ch1 = "corert.print_tensorhandle"(%r3, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'relu_of_a_shared_value'
func.func @relu_of_a_shared_value() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [2], values = [-5 : i32, 5 : i32] } : 1
  %r = corert.executeop(%cpu) "tfrt_test.relu"(%x) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [0, 5]
  %ch1 = "corert.print_tensorhandle"(%r, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [-5, 5]
  %ch2 = "corert.print_tensorhandle"(%x, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK: HostAllocator profile: 3 allocations,
