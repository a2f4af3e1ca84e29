// corert.execute_sequence runs a chain of ops as one kernel with the
// results and errors of the corert.executeop chain it replaces: each
// function runs as written and after -corert-fuse-op-sequences, against
// the same checks.
// REQUIRES: nn_ops
// RUN: not bef_executor --test_init_function=register_handlers %s 2>&1 | FileCheck %s
// RUN: asyncrt-opt -corert-fuse-op-sequences %s | FileCheck %s --check-prefix=FUSED
// RUN: asyncrt-opt -corert-fuse-op-sequences %s -o %t.mlir
// RUN: not bef_executor --test_init_function=register_handlers %t.mlir 2>&1 | FileCheck %s

func.func @register_handlers() {
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  corert.register_op_handler %cpu "cpu"
  tfrt.return
}

// FUSED-LABEL: func.func @chain
// FUSED: "corert.execute_sequence"
// FUSED-SAME: op_names = ["tfrt_test.add", "tfrt_test.add", "tfrt_test.argmax"]
// CHECK-LABEL: --- Running 'chain'
func.func @chain() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2, 3], values = [1 : i32, 2 : i32, 3 : i32, 6 : i32, 5 : i32, 4 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %c = corert.executeop(%cpu) "tfrt_test.add"(%b, %a) : 1
  %d = corert.executeop(%cpu) "tfrt_test.argmax"(%c) {axis = 1 : i32} : 1
  // The sequence reads %a three times, and must not write into it.
  // CHECK: DenseHostTensor dtype = i32, shape = [2], values = [2, 0]
  %ch1 = "corert.print_tensorhandle"(%d, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  // CHECK: DenseHostTensor dtype = i32, shape = [2, 3], values = [1, 2, 3, 6, 5, 4]
  %ch2 = "corert.print_tensorhandle"(%a, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}

// An op whose result arrives later, inside the chain and at its end.
// FUSED-LABEL: func.func @async_inside
// FUSED: "corert.execute_sequence"
// FUSED-SAME: op_names = ["tfrt_test.create_dense_tensor", "tfrt_test.async.noop", "tfrt_test.add", "tfrt_test.async.noop"]
// CHECK-LABEL: --- Running 'async_inside'
func.func @async_inside() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [3 : i32, 4 : i32]} : 1
  %later = corert.executeop(%cpu) "tfrt_test.async.noop"(%a) : 1
  %sum = corert.executeop(%cpu) "tfrt_test.add"(%later, %later) : 1
  %last = corert.executeop(%cpu) "tfrt_test.async.noop"(%sum) : 1
  // CHECK: DenseHostTensor dtype = i32, shape = [2], values = [6, 8]
  %ch1 = "corert.print_tensorhandle"(%last, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}

// An op that fails inside the chain: the ops after it pass its error on,
// and it is reported once.
// FUSED-LABEL: func.func @failing_op_inside
// FUSED: "corert.execute_sequence"
// FUSED-SAME: op_names = ["tfrt_test.create_dense_tensor", "tfrt_test.add", "tfrt_test.error.tensor", "tfrt_test.add"]
// CHECK-LABEL: --- Running 'failing_op_inside'
// CHECK-NEXT: 'failing_op_inside' returned <<error: error from test.error.tensor implementation>>
func.func @failing_op_inside() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %e = corert.executeop(%cpu) "tfrt_test.error.tensor"(%b) : 1
  %f = corert.executeop(%cpu) "tfrt_test.add"(%e, %e) : 1
  tfrt.return %f : !corert.tensorhandle
}

// A shape error in the middle, and an op no handler has.
// FUSED-LABEL: func.func @shape_error_inside
// FUSED: "corert.execute_sequence"
// FUSED-SAME: op_names = ["tfrt_test.create_dense_tensor", "tfrt_test.add", "tfrt_test.add", "tfrt_test.add"]
// CHECK-LABEL: --- Running 'shape_error_inside'
// CHECK-NEXT: 'shape_error_inside' returned <<error: arguments have incompatible shapes [2] and [3]>>
func.func @shape_error_inside() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [3], values = [1 : i32]} : 1
  %c = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %d = corert.executeop(%cpu) "tfrt_test.add"(%c, %b) : 1
  %e = corert.executeop(%cpu) "tfrt_test.add"(%d, %d) : 1
  tfrt.return %e : !corert.tensorhandle
}

// CHECK-LABEL: --- Running 'unknown_op_inside'
// CHECK-NEXT: 'unknown_op_inside' returned <<error: tfrt_test.no_such_op was not supported by NullOpHandler.>>

// Each error is reported once, after the runs.
// CHECK: runtime error: error from test.error.tensor implementation
// CHECK-NOT: runtime error
// CHECK: runtime error: arguments have incompatible shapes [2] and [3]
// CHECK-NOT: runtime error
// CHECK: runtime error: tfrt_test.no_such_op was not supported by NullOpHandler.
// CHECK-NOT: runtime error
func.func @unknown_op_inside() -> !corert.tensorhandle {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %c = corert.executeop(%cpu) "tfrt_test.no_such_op"(%b) : 1
  tfrt.return %c : !corert.tensorhandle
}
