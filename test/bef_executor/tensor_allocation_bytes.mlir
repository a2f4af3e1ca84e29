// A dense host tensor costs one allocation: a 64-byte buffer header followed
// by its elements, so the allocator sees the byte counts TFRT's allocator
// tests expect (32 f32 elements = 128 bytes of data = 192 bytes).
// Checks allocations in the fast executor's stream order: not a property of the semantics.
// UNSUPPORTED: reference-executor
// RUN: bef_executor --host_allocator_type=test_fixed_size_1k %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'header_and_elements'
func.func @header_and_elements() {
  // Each unused tensor is freed as soon as it is made. %x0 is in the
  // entry's stream and runs first; the others start from the work queue in
  // stream id order (%x2's stream first), as in TFRT's allocator.mlir.
  // CHECK: Allocating 192 bytes. 832 remaining.
  // CHECK: Attempted to allocate 4160 bytes. However current capacity is only 1024.
  // CHECK: Allocating 192 bytes. 832 remaining.
  %x0 = tfrt_dht.create_uninitialized_tensor.f32.1 [32 : i64]
  %x1 = tfrt_dht.create_uninitialized_tensor.f32.1 [32 : i64]
  // expected-error @+1 {{runtime error: Cannot allocate tensor}}
  %x2 = tfrt_dht.create_uninitialized_tensor.f32.1 [1024 : i64]
  tfrt.return
}

// CHECK-LABEL: --- Running 'released_with_the_tensor'
func.func @released_with_the_tensor() {
  // Everything above was returned: the full budget is there again.
  // CHECK: Allocating 68 bytes. 956 remaining.
  %x = tfrt_dht.create_uninitialized_tensor.i32.1 [1 : i64]
  tfrt.return
}
