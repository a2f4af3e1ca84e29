// corert.arena_op_handler: each call of its function makes one arena, and
// ops with a slot (`_buffer_offset`, `_buffer_size`) run on it compute
// their results there.
// The run makes 3 allocations: %x, the arena, and %r, whose slot lies past
// the arena's end (so it is allocated as before); the planned %a, %b and
// %c allocate nothing (4 allocations when the ops run on %cpu). An arena
// that cannot be allocated is an error of the call, not a crash.
// REQUIRES: nn_ops
// RUN: not bef_executor --devices=cpu --host_allocator_type=profiled_allocator %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'planned_chain'
func.func @planned_chain() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %planned = corert.arena_op_handler %cpu {size = 128 : i64}
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [2, 4], values = [1.0 : f32, -2.0 : f32, 3.0 : f32, -4.0 : f32, 5.0 : f32, -6.0 : f32, 7.0 : f32, -8.0 : f32] } : 1
  %a = corert.executeop(%planned) "nn.relu"(%x) {_buffer_offset = 0 : i64, _buffer_size = 32 : i64} : 1
  %b = corert.executeop(%planned) "nn.neg"(%a) {_buffer_offset = 64 : i64, _buffer_size = 32 : i64} : 1
  %c = corert.executeop(%planned) "nn.abs"(%b) {_buffer_offset = 0 : i64, _buffer_size = 32 : i64} : 1
  %r = corert.executeop(%planned) "nn.neg"(%c) {_buffer_offset = 128 : i64, _buffer_size = 32 : i64} : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 4], values = [-1.000000e+00, -0.000000e+00, -3.000000e+00, -0.000000e+00, -5.000000e+00, -0.000000e+00, -7.000000e+00, -0.000000e+00]
  %ch1 = corert.print_tensorhandle %r, %ch0
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2, 4], values = [1.000000e+00, -2.000000e+00,
  %ch2 = corert.print_tensorhandle %x, %ch1
  tfrt.return %ch2 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'arena_too_large'
// CHECK: error: {{.*}}cannot allocate a planned arena of 1152921504606846976 bytes
func.func @arena_too_large() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %planned = corert.arena_op_handler %cpu {size = 1152921504606846976 : i64}
  %x = corert.const_dense_tensor dense<[1.0, -2.0]> : tensor<2xf32>
  %r = corert.executeop(%planned) "nn.relu"(%x) {_buffer_offset = 0 : i64, _buffer_size = 32 : i64} : 1
  tfrt.return %r : !corert.tensorhandle
}
// CHECK: HostAllocator profile: 3 allocations,
