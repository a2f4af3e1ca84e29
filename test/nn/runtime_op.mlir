// nn.runtime_op: a runtime registry op by name (what lazy traces record for
// ops the dialect does not model), verified by that op's shape function and
// lowered to corert.executeop of the op it names. A function with
// nn.values_on takes and returns its tensors on that device.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -split-input-file -verify-diagnostics %s | FileCheck %s
// The last two cases fail to verify (so asyncrt-opt fails):
// RUN: not asyncrt-opt -split-input-file -nn-to-corert %s 2>/dev/null | FileCheck %s --check-prefix=LOWERED

// CHECK-LABEL: func.func @by_name
// LOWERED-LABEL: func.func @by_name
func.func @by_name(%a: tensor<2x3xf32>) -> tensor<3x2xf32> {
  // CHECK: nn.runtime_op %{{.*}} {op_name = "nn.transpose", perm = [1, 0]}
  // LOWERED: corert.executeop(%{{.*}}) "nn.transpose"(%{{.*}}) {perm = [1, 0]} : 1
  %t = nn.runtime_op %a {op_name = "nn.transpose", perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<3x2xf32>
  return %t : tensor<3x2xf32>
}

// -----

// LOWERED-LABEL: func.func @on_device
// LOWERED-SAME: (%[[A:.*]]: !corert.tensorhandle) -> !corert.tensorhandle
// LOWERED: %[[SIM:.*]] = corert.get_op_handler %{{.*}} "SIM:0"
// LOWERED-NOT: corert.transfer
// LOWERED: %[[R:.*]] = corert.executeop(%[[SIM]]) "nn.relu"(%[[A]]) : 1
// LOWERED-NOT: corert.transfer
// LOWERED: tfrt.return %[[R]]
func.func @on_device(%a: tensor<4xf32>) -> tensor<4xf32> attributes {nn.values_on = "SIM:0"} {
  %r = nn.relu %a {nn.device = "SIM:0"} : (tensor<4xf32>) -> tensor<4xf32>
  return %r : tensor<4xf32>
}

// -----

func.func @unknown(%a: tensor<2xf32>) -> tensor<2xf32> {
  // expected-error @+1 {{'nn.runtime_op' op the runtime has no op 'nn.no_such_op'}}
  %t = nn.runtime_op %a {op_name = "nn.no_such_op"} : (tensor<2xf32>) -> tensor<2xf32>
  return %t : tensor<2xf32>
}

// -----

func.func @wrong_result(%a: tensor<2x3xf32>) -> tensor<2x3xf32> {
  // expected-error @+1 {{result 0 has type 'tensor<2x3xf32>' but the shape function gives 'tensor<3x2xf32>'}}
  %t = nn.runtime_op %a {op_name = "nn.transpose", perm = [1, 0]} : (tensor<2x3xf32>) -> tensor<2x3xf32>
  return %t : tensor<2x3xf32>
}
