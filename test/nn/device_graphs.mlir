// Device graphs: -corert-outline-device-graphs moves a function's work on
// one device into a function of its own, called with corert.captured_call,
// which the runtime runs plainly once, records as a graph on the second
// call and replays after (the example plug-in's simulated accelerator has
// graphs, and logs them). Different inputs per call show that a replay
// reads the new arguments.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -nn-assign-device="device=SIM:0" -nn-to-corert -corert-outline-device-graphs %s | FileCheck %s
// RUN: asyncrt-opt -nn-assign-device="device=SIM:0" -nn-to-corert -corert-outline-device-graphs %s | grep -v '^}$' > %t.mlir
// RUN: sed -n 's|^// DRIVER: ||p' %s >> %t.mlir
// RUN: asyncrt-translate -mlir-to-bef %t.mlir -o %t.bef
// RUN: env ASYNCRT_SIM_LOG_GRAPHS=1 bef_executor --devices=cpu --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so --functions=print_main1,print_main2,print_main3,print_main4,host_copy_inside,host_copy_inside,host_copy_inside,host_copy_inside %t.bef 2>&1 | FileCheck %s --check-prefix=EXEC
// Without graphs on the device (here: not outlined), the same values:
// RUN: asyncrt-opt -nn-assign-device="device=SIM:0" -nn-to-corert %s | grep -v '^}$' > %t.plain.mlir
// RUN: sed -n 's|^// DRIVER: ||p' %s | sed '/host_copy_inside/,$d' >> %t.plain.mlir
// RUN: echo '}' >> %t.plain.mlir
// RUN: asyncrt-translate -mlir-to-bef %t.plain.mlir -o %t.plain.bef
// RUN: env ASYNCRT_SIM_LOG_GRAPHS=1 bef_executor --devices=cpu --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so --functions=print_main1,print_main2,print_main3 %t.plain.bef 2>&1 | FileCheck %s --check-prefix=PLAIN

// CHECK-LABEL: func.func @main(%arg0: !corert.tensorhandle)
// CHECK: %[[SIM:.*]] = "tfrt.get_device"(%{{.*}}) {{{.*}}device_name = "SIM:0"}
// CHECK: %[[HOST:.*]] = "tfrt.get_device"(%{{.*}}) {{{.*}}device_name = "CPU:0"}
// CHECK: %[[X:.*]] = corert.transfer_inferred_tensortype %arg0, %[[SIM]]
// CHECK-NEXT: %[[R:.*]]:2 = corert.captured_call %[[SIM]], %[[X]] {{{.*}}callee = @main_on_SIM_0} : (!corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
// CHECK-NOT: corert.executeop
// CHECK: tfrt.return
// CHECK-LABEL: func.func @main_on_SIM_0(%arg0: !corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
// CHECK: corert.get_op_handler %{{.*}} "SIM:0"
// CHECK: "nn.relu"(%arg0)
// CHECK: corert.const_dense_tensor_on
// CHECK: "nn.add"
// CHECK: "nn.matmul"
// CHECK: tfrt.return
func.func @main(%x: tensor<2x2xf32>) -> (tensor<2x2xf32>, tensor<2x2xf32>) {
  %w = nn.constant dense<[[-1.0, 2.0], [-3.0, 4.0]]> : tensor<2x2xf32> : tensor<2x2xf32>
  %r = nn.relu %x : (tensor<2x2xf32>) -> tensor<2x2xf32>
  %s = nn.add %w, %r : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  %m = nn.matmul %s, %w : (tensor<2x2xf32>, tensor<2x2xf32>) -> tensor<2x2xf32>
  return %m, %s : tensor<2x2xf32>, tensor<2x2xf32>
}

// x1 = [[1, -2], [3, -4]]: s = w + relu(x1) = [[0, 2], [0, 4]],
// m = s w = [[-6, 8], [-12, 16]]. x2 = [[2, 0], [0, 1]]: s = [[1, 2],
// [-3, 5]], m = [[-7, 10], [-12, 14]]. x3 = 0: s = w, m = w w =
// [[-5, 6], [-9, 10]].
// EXEC-LABEL: --- Running 'print_main1'
// EXEC-NOT: sim: graph
// EXEC: values = [-6.000000e+00, 8.000000e+00, -1.200000e+01, 1.600000e+01]
// EXEC-NEXT: values = [0.000000e+00, 2.000000e+00, 0.000000e+00, 4.000000e+00]
// EXEC-LABEL: --- Running 'print_main2'
// EXEC-NEXT: sim: graph recorded: 3 items
// EXEC-NEXT: values = [-7.000000e+00, 1.000000e+01, -1.200000e+01, 1.400000e+01]
// EXEC-NEXT: values = [1.000000e+00, 2.000000e+00, -3.000000e+00, 5.000000e+00]
// EXEC-LABEL: --- Running 'print_main3'
// EXEC-NEXT: sim: graph launched
// EXEC-NEXT: values = [-5.000000e+00, 6.000000e+00, -9.000000e+00, 1.000000e+01]
// EXEC-NEXT: values = [-1.000000e+00, 2.000000e+00, -3.000000e+00, 4.000000e+00]
// EXEC-LABEL: --- Running 'print_main4'
// EXEC-NEXT: sim: graph launched
// EXEC-NEXT: values = [-6.000000e+00, 8.000000e+00, -1.200000e+01, 1.600000e+01]
// EXEC-NEXT: values = [0.000000e+00, 2.000000e+00, 0.000000e+00, 4.000000e+00]
// A callee that copies to the host cannot be recorded: the second and
// third calls try, and every call is a plain one, with the same values.
// EXEC-LABEL: --- Running 'host_copy_inside'
// EXEC-NEXT: values = [1.000000e+00, 0.000000e+00, 3.000000e+00, 0.000000e+00]
// EXEC-LABEL: --- Running 'host_copy_inside'
// EXEC-NEXT: sim: graph not recorded: it has a copy from or to host memory
// EXEC-NEXT: values = [1.000000e+00, 0.000000e+00, 3.000000e+00, 0.000000e+00]
// EXEC-LABEL: --- Running 'host_copy_inside'
// EXEC-NEXT: sim: graph not recorded: it has a copy from or to host memory
// EXEC-NEXT: values = [1.000000e+00, 0.000000e+00, 3.000000e+00, 0.000000e+00]
// EXEC-LABEL: --- Running 'host_copy_inside'
// EXEC-NEXT: values = [1.000000e+00, 0.000000e+00, 3.000000e+00, 0.000000e+00]
// EXEC-NOT: sim: graph

// PLAIN-NOT: sim: graph
// PLAIN: values = [-6.000000e+00, 8.000000e+00, -1.200000e+01, 1.600000e+01]
// PLAIN: values = [-7.000000e+00, 1.000000e+01, -1.200000e+01, 1.400000e+01]
// PLAIN: values = [-5.000000e+00, 6.000000e+00, -9.000000e+00, 1.000000e+01]
// PLAIN-NOT: sim: graph

// DRIVER: func.func @print_main1() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %x = corert.const_dense_tensor dense<[[1.0, -2.0], [3.0, -4.0]]> : tensor<2x2xf32>
// DRIVER:   %m, %s = tfrt.call @main(%x) : (!corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
// DRIVER:   %ch1 = corert.print_tensorhandle %m, %ch0
// DRIVER:   %ch2 = corert.print_tensorhandle %s, %ch1
// DRIVER:   tfrt.return %ch2 : !tfrt.chain
// DRIVER: }
// DRIVER: func.func @print_main2() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %x = corert.const_dense_tensor dense<[[2.0, 0.0], [0.0, 1.0]]> : tensor<2x2xf32>
// DRIVER:   %m, %s = tfrt.call @main(%x) : (!corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
// DRIVER:   %ch1 = corert.print_tensorhandle %m, %ch0
// DRIVER:   %ch2 = corert.print_tensorhandle %s, %ch1
// DRIVER:   tfrt.return %ch2 : !tfrt.chain
// DRIVER: }
// DRIVER: func.func @print_main3() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %x = corert.const_dense_tensor dense<0.0> : tensor<2x2xf32>
// DRIVER:   %m, %s = tfrt.call @main(%x) : (!corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
// DRIVER:   %ch1 = corert.print_tensorhandle %m, %ch0
// DRIVER:   %ch2 = corert.print_tensorhandle %s, %ch1
// DRIVER:   tfrt.return %ch2 : !tfrt.chain
// DRIVER: }
// DRIVER: func.func @print_main4() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %x = corert.const_dense_tensor dense<[[1.0, -2.0], [3.0, -4.0]]> : tensor<2x2xf32>
// DRIVER:   %m, %s = tfrt.call @main(%x) : (!corert.tensorhandle) -> (!corert.tensorhandle, !corert.tensorhandle)
// DRIVER:   %ch1 = corert.print_tensorhandle %m, %ch0
// DRIVER:   %ch2 = corert.print_tensorhandle %s, %ch1
// DRIVER:   tfrt.return %ch2 : !tfrt.chain
// DRIVER: }
// DRIVER: func.func @relu_via_host(%x: !corert.tensorhandle) -> !corert.tensorhandle {
// DRIVER:   %ch = tfrt.new.chain
// DRIVER:   %sim = corert.get_op_handler %ch "SIM:0"
// DRIVER:   %host = "tfrt.get_device"(%ch) {device_name = "CPU:0"} : (!tfrt.chain) -> !tfrt.device
// DRIVER:   %r = corert.executeop(%sim) "nn.relu"(%x) : 1
// DRIVER:   %r_host = corert.transfer_inferred_tensortype %r, %host
// DRIVER:   tfrt.return %r_host : !corert.tensorhandle
// DRIVER: }
// DRIVER: func.func @host_copy_inside() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %sim = "tfrt.get_device"(%ch0) {device_name = "SIM:0"} : (!tfrt.chain) -> !tfrt.device
// DRIVER:   %x = corert.const_dense_tensor_on %sim dense<[[1.0, -2.0], [3.0, -4.0]]> : tensor<2x2xf32>
// DRIVER:   %r = corert.captured_call %sim, %x {callee = @relu_via_host} : (!corert.tensorhandle) -> !corert.tensorhandle
// DRIVER:   %ch1 = corert.print_tensorhandle %r, %ch0
// DRIVER:   tfrt.return %ch1 : !tfrt.chain
// DRIVER: }
// DRIVER: }
