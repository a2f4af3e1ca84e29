// corert_sync kernels in tfrt.sync functions, and create_dense_tensor of
// every kind of dtype (each kernel bound to its dtype).
// RUN: bef_executor -devices=cpu %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'sync_handlers_and_tensors'
func.func @sync_handlers_and_tensors() attributes {tfrt.sync} {
  %cpu = corert_sync.get_op_handler "cpu"
  corert_sync.register_op_handler %cpu "also_cpu"
  %same = corert_sync.get_op_handler "also_cpu"
  %a = corert_sync.create_dense_tensor.f32 {shape = [1, 2], value = [2.0 : f32, 3.0 : f32]}
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2], values = [2.000000e+00, 3.000000e+00]
  corert_sync.print_tensorhandle %a
  %b = corert_sync.const_dense_tensor dense<[[1.0, 1.0]]> : tensor<1x2xf32>
  %sum = corert_sync.executeop(%same) "tfrt_test.add"(%a, %b) : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2], values = [3.000000e+00, 4.000000e+00]
  corert_sync.print_tensorhandle %sum
  // One value is repeated over the shape.
  %c = corert_sync.create_dense_tensor.ui8 {shape = [3], value = [9 : ui8]}
  // CHECK-NEXT: DenseHostTensor dtype = u8, shape = [3], values = [9, 9, 9]
  corert_sync.print_tensorhandle %c
  tfrt.return
}

// CHECK-LABEL: --- Running 'unknown_sync_handler'
func.func @unknown_sync_handler() attributes {tfrt.sync} {
  // expected-error @+1 {{runtime error: op_handler not found: gpu}}
  %gpu = corert_sync.get_op_handler "gpu"
  tfrt.return
}

// CHECK-LABEL: --- Running 'dense_tensors'
func.func @dense_tensors() {
  %ch0 = tfrt.new.chain
  %a = corert.create_dense_tensor.complex64 {shape = [2], value = [1.0 : f32, 2.0 : f32, 3.0 : f32, -4.0 : f32]}
  // CHECK: DenseHostTensor dtype = complex64, shape = [2], values = [(1.000000e+00,2.000000e+00), (3.000000e+00,-4.000000e+00)]
  %ch1 = corert.print_tensorhandle %a, %ch0
  %b = corert.create_dense_tensor.complex128 {shape = [1], value = [0.5 : f64, 0.25 : f64]}
  // CHECK: DenseHostTensor dtype = complex128, shape = [1], values = [(5.000000e-01,2.500000e-01)]
  %ch2 = corert.print_tensorhandle %b, %ch1
  %c = corert.create_dense_tensor.bool {shape = [2], value = [true, false]}
  // CHECK: DenseHostTensor dtype = i1, shape = [2], values = [1, 0]
  %ch3 = corert.print_tensorhandle %c, %ch2
  tfrt.return
}

// The kernel of one dtype takes values of that dtype only.
// CHECK-LABEL: --- Running 'wrong_value_dtype'
func.func @wrong_value_dtype() -> !corert.tensorhandle {
  // expected-error @+1 {{runtime error: 'value' must hold f32 elements}}
  %a = corert.create_dense_tensor.f32 {shape = [1], value = [1 : i32]}
  tfrt.return %a : !corert.tensorhandle
}
// CHECK: 'wrong_value_dtype' returned <<error: 'value' must hold f32 elements>>
