// An op writes its result into the buffer of an argument it holds the last
// reference to: here each add reuses its left operand's buffer, so the four
// adds allocate nothing; %ones, used by every add, is never overwritten. A
// value an op reads twice (%twice) is not reused. In all, 4 allocations
// (8 without reuse).
// RUN: bef_executor --host_allocator_type=profiled_allocator %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'reuse_last_uses'
func.func @reuse_last_uses() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %ones = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [256], values = [1 : i32] } : 1
  %x0 = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [256], values = [10 : i32] } : 1
  %x1 = corert.executeop(%cpu) "tfrt_test.add"(%x0, %ones) : 1
  %x2 = corert.executeop(%cpu) "tfrt_test.add"(%x1, %ones) : 1
  %x3 = corert.executeop(%cpu) "tfrt_test.add"(%x2, %ones) : 1
  %x4 = corert.executeop(%cpu) "tfrt_test.add"(%x3, %ones) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [256], values = [14, 14,
  %ch1 = "corert.print_tensorhandle"(%x4, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [256], values = [1, 1,
  %ch2 = "corert.print_tensorhandle"(%ones, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'shared_values_are_copied'
func.func @shared_values_are_copied() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %twice = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [2], values = [3 : i32] } : 1
  %sum = corert.executeop(%cpu) "tfrt_test.add"(%twice, %twice) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [6, 6]
  %ch1 = "corert.print_tensorhandle"(%sum, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2], values = [3, 3]
  %ch2 = "corert.print_tensorhandle"(%twice, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}
// CHECK: HostAllocator profile: 4 allocations,
