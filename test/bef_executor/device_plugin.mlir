// A device plug-in (the example simulated accelerator, plain C on the
// device plug-in API) loaded by bef_executor: its device is listed beside
// the CPU; a program copies a tensor to it, runs nn.relu there
// (corert.executeop on its handler) and copies the result back; an op
// mixing host and device tensors fails naming both devices; a file that is
// not a plug-in is an error naming it.
// REQUIRES: nn_ops
// RUN: bef_executor --list_devices --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so | FileCheck %s --check-prefix=LIST
// RUN: env ASYNCRT_PLUGIN_PATH=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so ASYNCRT_SIM_DEVICE_COUNT=2 bef_executor --list_devices | FileCheck %s --check-prefixes=LIST,TWO
// RUN: not bef_executor --plugins=%s --list_devices 2>&1 | FileCheck %s --check-prefix=BAD
// --device_memory_limit: by name, by type (a name wins), badly written,
// naming no device.
// RUN: env ASYNCRT_SIM_DEVICE_COUNT=2 bef_executor --list_devices --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so --device_memory_limit=SIM:1=1MiB,sim=2MiB | FileCheck %s --check-prefix=LIMIT
// RUN: not bef_executor --list_devices --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so --device_memory_limit=sim=2TB 2>&1 | FileCheck %s --check-prefix=LIMIT-BAD
// RUN: not bef_executor --list_devices --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so --device_memory_limit=SIM:5=2MiB 2>&1 | FileCheck %s --check-prefix=LIMIT-NONE
// LIMIT: {{^}}/device:SIM:0 type=sim memory_limit=2.0MiB {{.*}}"Example simulated accelerator (host threads, 2 MiB arena)"
// LIMIT: {{^}}/device:SIM:1 type=sim memory_limit=1.0MiB {{.*}}"Example simulated accelerator (host threads, 1 MiB arena)"
// LIMIT-BAD: error: device memory limit 'sim=2TB': the size is not a positive number of bytes
// LIMIT-NONE: error: device memory limit 'SIM:5' names no device of a device plug-in (devices: SIM:0;
// RUN: not bef_executor --devices=cpu --plugins=%asyncrt_lib_dir/libasyncrt_sim_accelerator.so %s 2>&1 | FileCheck %s

// LIST: {{^}}/device:CPU:0 type=cpu
// LIST-NEXT: {{^}}/device:SIM:0 type=sim memory_limit={{[0-9.]+}}MiB {{.*}}"Example simulated accelerator
// TWO-NEXT: {{^}}/device:SIM:1 type=sim
// LIST-NOT: /device:

// BAD: error: cannot load device plug-in {{.*}}device_plugin.mlir

// CHECK-LABEL: --- Running 'relu_on_sim'
func.func @relu_on_sim() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %sim = corert.get_op_handler %ch0 "sim"
  %device = "tfrt.get_device"(%ch0) {device_name = "SIM:0"} : (!tfrt.chain) -> !tfrt.device
  %host = "tfrt.get_device"(%ch0) {device_name = "CPU:0"} : (!tfrt.chain) -> !tfrt.device
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [4], values = [-1.0 : f32, 2.0 : f32, -3.0 : f32, 4.0 : f32] } : 1
  %x_sim = corert.transfer_inferred_tensortype %x, %device
  %r_sim = corert.executeop(%sim) "nn.relu"(%x_sim) : 1
  // CHECK-NEXT: DenseDeviceTensor dtype = f32, shape = [4], device = SIM:0
  %ch1 = corert.print_tensorhandle %r_sim, %ch0
  %r = corert.transfer_inferred_tensortype %r_sim, %host
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [4], values = [0.000000e+00, 2.000000e+00, 0.000000e+00, 4.000000e+00]
  %ch2 = corert.print_tensorhandle %r, %ch1
  tfrt.return %ch2 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'mixing_devices'
// CHECK: error: {{.*}}nn.add runs on SIM:0 but its argument 1 is on CPU:0: copy it there first (TensorHandle::TransferTo, or corert.transfer in a program)
func.func @mixing_devices() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %sim = corert.get_op_handler %ch0 "sim"
  %device = "tfrt.get_device"(%ch0) {device_name = "SIM:0"} : (!tfrt.chain) -> !tfrt.device
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [2], values = [1.0 : f32, 2.0 : f32] } : 1
  %x_sim = corert.transfer_inferred_tensortype %x, %device
  %bad = corert.executeop(%sim) "nn.add"(%x_sim, %x) : 1
  tfrt.return %bad : !corert.tensorhandle
}
