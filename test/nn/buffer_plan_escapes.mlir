// -nn-plan-buffers plans only values whose every reader is an nn op of the
// function's block: an op of another dialect (a call may still read its
// arguments after its results are ready) or the function's results make a
// value, and what it is a view of, escape the plan.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-plan-buffers %s | FileCheck %s

func.func private @consume(tensor<16xf32>) -> tensor<16xf32>

// CHECK-LABEL: func.func @called
// CHECK: nn.relu %arg0 :
// CHECK: nn.reshape
// CHECK: nn.sigmoid %arg0 {_buffer_offset = 0 : i64, _buffer_size = 64 : i64}
func.func @called(%x: tensor<1x16xf32>) -> (tensor<16xf32>, tensor<1x16xf32>) {
  %a = nn.relu %x : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %v = nn.reshape %a {shape = [16]} : (tensor<1x16xf32>) -> tensor<16xf32>
  %r = func.call @consume(%v) : (tensor<16xf32>) -> tensor<16xf32>
  %b = nn.sigmoid %x : (tensor<1x16xf32>) -> tensor<1x16xf32>
  %c = nn.abs %b : (tensor<1x16xf32>) -> tensor<1x16xf32>
  return %r, %c : tensor<16xf32>, tensor<1x16xf32>
}
