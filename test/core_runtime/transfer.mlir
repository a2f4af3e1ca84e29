// corert.get_dst_tensor_type, corert.transfer (both of TFRT's forms) and
// corert.transfer_inferred_tensortype on the host device: a scalar host
// tensor becomes a dense one; a device or format the runtime lacks is an
// error at the transfer.
// RUN: bef_executor %s 2>&1 | FileCheck %s
// RUN: asyncrt-translate -mlir-to-bef %s | asyncrt-translate -bef-to-mlir | FileCheck %s --check-prefix=ROUND

// CHECK-LABEL: --- Running 'transfer_to_host'
func.func @transfer_to_host() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %scalar = corert.executeop(%cpu) "tfrt_test.create_from_scalar"() {shape = [3], value = 7 : i32} : 1
  // CHECK-NEXT: ScalarHostTensor dtype = i32, shape = [3], value = 7
  %ch1 = "corert.print_tensorhandle"(%scalar, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %dev = "tfrt.get_device"(%ch0) {device_name = "CPU:0"} : (!tfrt.chain) -> !tfrt.device
  %tt = corert.get_dst_tensor_type %scalar, %dev
  // ROUND: corert.transfer %{{.*}}, %{{.*}}, %{{.*}}{{$}}
  %dense = corert.transfer %scalar, %dev, %tt
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [3], values = [7, 7, 7]
  %ch2 = "corert.print_tensorhandle"(%dense, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %inferred = corert.transfer_inferred_tensortype %scalar, %dev
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [3], values = [7, 7, 7]
  %ch3 = "corert.print_tensorhandle"(%inferred, %ch2) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch3 : !tfrt.chain
}

// TFRT's earlier form: the device by name, a bitmask of tensor formats.
// CHECK-LABEL: --- Running 'transfer_with_format_mask'
func.func @transfer_with_format_mask() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %scalar = corert.executeop(%cpu) "tfrt_test.create_from_scalar"() {shape = [2], value = 1.5 : f32} : 1
  // ROUND: corert.transfer %{{.*}} {device = "CPU:0", formats = 1 : i64}
  %dense = "corert.transfer"(%scalar) {device = "CPU:0", formats = 1}
    : (!corert.tensorhandle) -> !corert.tensorhandle
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [1.500000e+00, 1.500000e+00]
  %ch1 = "corert.print_tensorhandle"(%dense, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %same = corert.transfer %dense {device = "CPU:0", formats = 17}
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [2], values = [1.500000e+00, 1.500000e+00]
  %ch2 = "corert.print_tensorhandle"(%same, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'transfer_errors'
func.func @transfer_errors() -> (!corert.tensorhandle, !corert.tensorhandle) {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %t = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [1], values = [1 : i32]} : 1
  // expected-error @+1 {{runtime error: no device GPU:0}}
  %gpu = corert.transfer %t {device = "GPU:0", formats = 16}
  // expected-error @+1 {{runtime error: no tensor format in mask 16 for device CPU:0 (1: dense host)}}
  %bad = corert.transfer %t {device = "CPU:0", formats = 16}
  tfrt.return %gpu, %bad : !corert.tensorhandle, !corert.tensorhandle
}
// CHECK: 'transfer_errors' returned <<error: no device GPU:0>>,<<error: no tensor format in mask 16 for device CPU:0 (1: dense host)>>
