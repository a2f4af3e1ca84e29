// Functions using corert.executeop translate to BEF (op_attrs: nested
// arrays become aggregates) and back.
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: asyncrt-translate -bef-to-mlir %t.bef | FileCheck %s

// CHECK-LABEL: func @executeop
func.func @executeop() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  // CHECK: corert.executeop({{.*}}) "tfrt_test.create_dense_tensor"() {shape = [1, 3], values = [1 : i32]} : 1
  %a = corert.executeop(%cpu)
    "tfrt_test.create_dense_tensor"() {shape = [1, 3], values = [1 : i32]} : 1
  // CHECK: corert.executeop({{.*}}) "tfrt_test.matmul"({{.*}}) {transpose_a = false, transpose_b = false} : 1
  %b = corert.executeop(%cpu) "tfrt_test.matmul"(%a, %a)
    {transpose_a = false, transpose_b = false} : 1
  // CHECK: corert.executeop.seq
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print"(%b)
  // CHECK: corert.print_tensorhandle
  %ch2 = corert.print_tensorhandle %b, %ch1
  tfrt.return %ch2 : !tfrt.chain
}
