// --devices=cpu names a CPU op handler "cpu" before the program runs, as
// TFRT's bef_executor does for the devices it creates.
// RUN: bef_executor -devices=cpu %s 2>&1 | FileCheck %s
// RUN: not bef_executor %s 2>&1 | FileCheck %s --check-prefix=NONE
// RUN: not bef_executor -devices=cpu,tpu %s 2>&1 | FileCheck %s --check-prefix=UNKNOWN

// NONE: 'scalar_plus_dense' returned <<error: op_handler not found: cpu>>
// UNKNOWN: error: unknown device 'tpu' (known: cpu)

// CHECK-LABEL: --- Running 'scalar_plus_dense'
func.func @scalar_plus_dense() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_from_scalar"() {shape = [2, 3], value = 1 : i32} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2, 3], values = [2 : i32]} : 1
  // The sum arrives later, from the work queue; the print waits for it.
  %c = corert.executeop(%cpu) "tfrt_test.add.denseonly3"(%a, %b) : 1
  // CHECK-NEXT: DenseHostTensor dtype = i32, shape = [2, 3], values = [3, 3, 3, 3, 3, 3]
  %ch1 = "corert.print_tensorhandle"(%c, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}
// CHECK-NEXT: 'scalar_plus_dense' returned !tfrt.chain value

// CHECK-LABEL: --- Running 'missing_value'
func.func @missing_value() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  // expected-error @+1 {{test.create_from_scalar must have 'value' attribute}}
  %a = "corert.executeop"(%cpu) {op_attrs = [["shape", [2 : i64, 3 : i64]]], op_name = "tfrt_test.create_from_scalar"} : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return %ch0 : !tfrt.chain
}
// CHECK-NEXT: 'missing_value' returned !tfrt.chain value
