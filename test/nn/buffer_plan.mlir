// -nn-plan-buffers: one arena per call for a function's intermediate
// tensors. Values share bytes only where the dataflow orders every reader
// of one before the other's producer.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-plan-buffers %s | FileCheck %s
// The plan as lowered (the whole pipeline would fuse these chains first):
// RUN: asyncrt-opt -nn-plan-buffers -nn-to-corert %s | FileCheck %s --check-prefix=CORERT
// RUN: asyncrt-opt -asyncrt-model-pipeline %s | asyncrt-translate -mlir-to-bef -o %t.bef
// RUN: bef_executor --devices=cpu %t.bef | FileCheck %s --check-prefix=EXEC
// EXEC: 'constants' returned !corert.tensorhandle value

// A chain: %c takes %a's bytes (%b, its only reader, is an ancestor of
// %c); the function's result is not planned.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: nn.arena_size = 128 : i64
// CHECK: nn.relu %arg0 {_buffer_offset = 0 : i64, _buffer_size = 64 : i64}
// CHECK: nn.sigmoid %{{.*}} {_buffer_offset = 64 : i64, _buffer_size = 64 : i64}
// CHECK: nn.tanh %{{.*}} {_buffer_offset = 0 : i64, _buffer_size = 64 : i64}
// CHECK: nn.abs %{{.*}} :
// CORERT-LABEL: func.func @chain
// CORERT: %[[CPU:.*]] = corert.get_op_handler
// CORERT: %[[PLANNED:.*]] = corert.arena_op_handler %[[CPU]] {{{.*}}size = 128 : i64}
// CORERT: corert.executeop(%[[PLANNED]]) "nn.relu"(%arg0) {_buffer_offset = 0 : i64, _buffer_size = {{[0-9]+}} : i64}
// CORERT: corert.executeop(%[[PLANNED]]) "nn.abs"
// CORERT-NOT: _buffer_offset
// CORERT: tfrt.return
func.func @chain(%x: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %a = nn.relu %x : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %b = nn.sigmoid %a : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %c = nn.tanh %b : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %d = nn.abs %c : (tensor<1x16xf32>) -> tensor<1x16xf32>
  return %d : tensor<1x16xf32>
}

// %q is written after %p's last reader (%r) but does not depend on it: the
// executor may run it first, so it gets bytes of its own. %s depends on
// both and takes %p's.
// CHECK-LABEL: func.func @independent_branches
// CHECK-SAME: nn.arena_size = 192 : i64
// CHECK: %[[P:.*]] = nn.relu %arg0 {_buffer_offset = 0 : i64, _buffer_size = {{[0-9]+}} : i64}
// CHECK: nn.sigmoid %[[P]] {_buffer_offset = 64 : i64, _buffer_size = {{[0-9]+}} : i64}
// CHECK: nn.tanh %arg0 {_buffer_offset = 128 : i64, _buffer_size = {{[0-9]+}} : i64}
// CHECK: nn.add %{{.*}}, %{{.*}} {_buffer_offset = 0 : i64, _buffer_size = {{[0-9]+}} : i64}
func.func @independent_branches(%x: tensor<1x16xf32>) -> tensor<1x16xf32> {
  %p = nn.relu %x : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %r = nn.sigmoid %p : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %q = nn.tanh %x : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %s = nn.add %r, %q : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %t = nn.abs %s : (tensor<1x16xf32>) -> tensor<1x16xf32>
  return %t : tensor<1x16xf32>
}

// A view (nn.reshape shares its operand's buffer) keeps its source alive
// until the view's readers are done: %b may not take %a's bytes while %v
// is still to be read. A value whose view is returned is not planned.
// CHECK-LABEL: func.func @views
// CHECK: %[[A:.*]] = nn.relu %arg0 {_buffer_offset = 0 : i64, _buffer_size = {{[0-9]+}} : i64}
// CHECK: %[[V:.*]] = nn.reshape %[[A]] {shape = [16]} :
// CHECK: nn.sigmoid %arg0 {_buffer_offset = 64 : i64, _buffer_size = {{[0-9]+}} : i64}
// CHECK: nn.exp %arg0 :
// CHECK: nn.flatten
func.func @views(%x: tensor<1x16xf32>) -> (tensor<16xf32>, tensor<1x16xf32>, tensor<1x16xf32>) {
  %a = nn.relu %x : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %v = nn.reshape %a {shape = [16]} : (tensor<1x16xf32>) -> tensor<16xf32>
  %b = nn.sigmoid %x : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %c = nn.neg %v : (tensor<16xf32>) -> tensor<16xf32>
  %d = nn.add %b, %x : (tensor<1x16xf32>, tensor<1x16xf32>) -> tensor<1x16xf32>
  %e = nn.exp %x : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %f = nn.flatten %e : (tensor<1x16xf32>) -> tensor<1x16xf32>
  return %c, %d, %f : tensor<16xf32>, tensor<1x16xf32>, tensor<1x16xf32>
}

// A convolution that reads its fused sum last computes in the sum's bytes
// (oneDNN adds into its destination).
// CHECK-LABEL: func.func @residual
// CHECK: %[[SUM:.*]] = nn.conv %arg0, %arg1 {_buffer_offset = 0 : i64, _buffer_size = {{[0-9]+}} : i64}
// CHECK: nn.conv %arg0, %arg1, %arg2, %[[SUM]] {_buffer_offset = 0 : i64, _buffer_size = {{[0-9]+}} : i64}
func.func @residual(%x: tensor<1x4x4x4xf32>, %w: tensor<4x4x1x1xf32>, %bias: tensor<4xf32>) -> tensor<1x4x4x4xf32> {
  %s = nn.conv %x, %w : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>) -> tensor<1x4x4x4xf32>
  %y = nn.conv %x, %w, %bias, %s : (tensor<1x4x4x4xf32>, tensor<4x4x1x1xf32>, tensor<4xf32>, tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  %r = nn.relu %y : (tensor<1x4x4x4xf32>) -> tensor<1x4x4x4xf32>
  return %r : tensor<1x4x4x4xf32>
}

// Runs in BEF: the arena op handler, planned ops on it.
// CHECK-LABEL: func.func @constants
func.func @constants() -> tensor<1x2xf32> {
  %x = nn.constant dense<[[1.0, -2.0]]> : tensor<1x2xf32> : tensor<1x2xf32>
  %a = nn.relu %x : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %b = nn.sigmoid %a : (tensor<1x2xf32>) -> tensor<1x2xf32>
  %c = nn.tanh %b : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %c : tensor<1x2xf32>
}
