// Placement by the compiler: -nn-assign-device puts the nn ops on a device
// (nn.device, unless an op has one), and -nn-to-corert runs each on that
// device's op handler with every copy explicit: a constant used on the
// device is corert.const_dense_tensor_on it (copied there on the first call
// and kept with the file for the others), a value the host needs back (an
// op pinned to CPU:0, the function's results) is copied back. Run twice on
// the example plug-in's simulated accelerator.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-assign-device="device=SIM:0" -nn-to-corert %s | FileCheck %s
// The lowered module (its closing brace dropped), plus a function (the
// DRIVER lines: written against the lowered signature) that prints what
// @main returns:
// RUN: asyncrt-opt -nn-assign-device="device=SIM:0" -nn-to-corert %s | grep -v '^}$' > %t.mlir
// RUN: sed -n 's|^// DRIVER: ||p' %s >> %t.mlir
// RUN: asyncrt-translate -mlir-to-bef %t.mlir -o %t.bef
// RUN: bef_executor --devices=cpu --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so --functions=print_main %t.bef | FileCheck %s --check-prefix=EXEC
// An op the device lacks (nn.neg, were it not pinned to the CPU) fails the
// program's load, naming the op and the device, not its calls:
// RUN: sed 's|nn.neg %m {nn.device = "CPU:0"}|nn.neg %m|' %s | asyncrt-opt -nn-assign-device="device=SIM:0" -nn-to-corert | asyncrt-translate -mlir-to-bef -o %t.lacking.bef
// RUN: not bef_executor --devices=cpu --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so %t.lacking.bef 2>&1 | FileCheck %s --check-prefix=LACKING
// LACKING: error: runtime error: nn.neg has no implementation for SIM:0 (device type sim)
// LACKING-NOT: Running
// RUN: not asyncrt-opt -nn-assign-device="device=sim" %s 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: error: nn-assign-device: 'sim' is not a device name like CPU:0 or SIM:0

// CHECK-LABEL: func.func @main() -> (!corert.tensorhandle, !corert.tensorhandle)
// CHECK: %[[CH:.*]] = tfrt.new.chain
// CHECK: %[[CPU:.*]] = corert.get_op_handler %[[CH]] "cpu"
// CHECK-DAG: %[[SIM:.*]] = corert.get_op_handler %[[CH]] "SIM:0"
// CHECK-DAG: %[[SIM_DEVICE:.*]] = "tfrt.get_device"(%[[CH]]) {{{.*}}device_name = "SIM:0"}
// CHECK-DAG: %[[HOST_DEVICE:.*]] = "tfrt.get_device"(%[[CH]]) {{{.*}}device_name = "CPU:0"}
// CHECK-NOT: corert.const_dense_tensor {
// CHECK: %[[X_SIM:.*]] = corert.const_dense_tensor_on %[[SIM_DEVICE]] dense<{{.*}}> : tensor<2x2xf32>
// CHECK: %[[R:.*]] = corert.executeop(%[[SIM]]) "nn.relu"(%[[X_SIM]]) : 1
// CHECK: %[[S:.*]] = corert.executeop(%[[SIM]]) "nn.add"(%[[X_SIM]], %[[R]]) : 1
// CHECK: %[[M:.*]] = corert.executeop(%[[SIM]]) "nn.matmul"(%[[S]], %[[X_SIM]]) : 1
// CHECK: %[[M_HOST:.*]] = corert.transfer_inferred_tensortype %[[M]], %[[HOST_DEVICE]]
// CHECK: %[[N:.*]] = corert.executeop(%[[CPU]]) "nn.neg"(%[[M_HOST]]) : 1
// CHECK: %[[S_HOST:.*]] = corert.transfer_inferred_tensortype %[[S]], %[[HOST_DEVICE]]
// CHECK: tfrt.return %[[N]], %[[S_HOST]] : !corert.tensorhandle, !corert.tensorhandle
func.func @main() -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %x = nn.constant dense<[[-1.0, 2.0], [-3.0, 4.0]]> : tensor<2x2xf32> : tensor<2x2xf32>
  %r = nn.relu %x : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = nn.add %x, %r : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = nn.matmul %s, %x : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %n = nn.neg %m {nn.device = "CPU:0"} : (tensor<2x2xf32>) -> tensor<2x2xf32>
  return %n, %s : tensor<2x2xf32>, tensor<2x2xf32>
}

// EXEC-LABEL: --- Running 'print_main'
// x = [[-1, 2], [-3, 4]], relu(x) = [[0, 2], [0, 4]], s = x + relu(x),
// -(s x) = [[11, -14], [21, -26]].
// EXEC-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.100000e+01, -1.400000e+01, 2.100000e+01, -2.600000e+01]
// EXEC-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [-1.000000e+00, 4.000000e+00, -3.000000e+00, 8.000000e+00]
// The second call, with the constant's copy made by the first:
// EXEC-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [1.100000e+01, -1.400000e+01, 2.100000e+01, -2.600000e+01]
// EXEC-NEXT: DenseHostTensor dtype = f32, shape = [2, 2], values = [-1.000000e+00, 4.000000e+00, -3.000000e+00, 8.000000e+00]
// DRIVER: func.func @print_main() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %n, %s = tfrt.call @main() : () -> (!corert.tensorhandle, !corert.tensorhandle)
// DRIVER:   %ch1 = corert.print_tensorhandle %n, %ch0
// DRIVER:   %ch2 = corert.print_tensorhandle %s, %ch1
// DRIVER:   %n2, %s2 = tfrt.call @main() : () -> (!corert.tensorhandle, !corert.tensorhandle)
// DRIVER:   %ch3 = corert.print_tensorhandle %n2, %ch2
// DRIVER:   %ch4 = corert.print_tensorhandle %s2, %ch3
// DRIVER:   tfrt.return %ch4 : !tfrt.chain
// DRIVER: }
// DRIVER: }
