// corert.executeop runs the same registry ops as eager code: shape
// functions, async ops, errors at the op that made them, logging.
// RUN: bef_executor --test_init_function=register_handlers %s 2>&1 | FileCheck %s

func.func @register_handlers() {
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  corert.register_op_handler %cpu "cpu"
  %log = "corert.create_logging_op_handler"(%cpu) {sync_log_results = 0 : i32} : (!corert.ophandler) -> !corert.ophandler
  corert.register_op_handler %log "log"
  tfrt.return
}

// CHECK-LABEL: --- Running 'add_and_reduce'
func.func @add_and_reduce() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2, 3], values = [1 : i32, 2 : i32, 3 : i32, 4 : i32, 5 : i32, 6 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  // CHECK: DenseHostTensor dtype = i32, shape = [2, 3], values = [2, 4, 6, 8, 10, 12]
  %ch1 = "corert.print_tensorhandle"(%b, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %m = corert.executeop(%cpu) "tfrt_test.argmax"(%b) {axis = 1 : i32} : 1
  // CHECK: DenseHostTensor dtype = i32, shape = [2], values = [2, 2]
  %ch2 = "corert.print_tensorhandle"(%m, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %r = corert.executeop(%cpu) "tfrt_test.reduce_mean"(%b) {axis = 0 : i32} : 1
  // CHECK: DenseHostTensor dtype = i32, shape = [3], values = [5, 7, 9]
  %ch3 = "corert.print_tensorhandle"(%r, %ch2) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch3 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'scalar_async_and_print'
func.func @scalar_async_and_print() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %s = corert.executeop(%cpu) "tfrt_test.create_from_scalar"() {shape = [3], value = 7 : i32} : 1
  %later = corert.executeop(%cpu) "tfrt_test.async.noop_no_md"(%s) : 1
  %sum = corert.executeop(%cpu) "tfrt_test.add"(%later, %s) : 1
  // CHECK: ScalarHostTensor dtype = i32, shape = [3], value = 14
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tfrt_test.print"(%sum) : 0
  tfrt.return %ch1 : !tfrt.chain
}

// The graph kernel's one-pass path (one result, computed arguments) with
// an op whose result arrives later, and with an op that fails: the error
// is reported once, at that op, not at the op it flows into.
// CHECK-LABEL: --- Running 'async_result_with_shape_function'
func.func @async_result_with_shape_function() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [3 : i32, 4 : i32]} : 1
  %later = corert.executeop(%cpu) "tfrt_test.async.noop"(%a) : 1
  %sum = corert.executeop(%cpu) "tfrt_test.add"(%later, %later) : 1
  // CHECK: DenseHostTensor dtype = i32, shape = [2], values = [6, 8]
  %ch1 = "corert.print_tensorhandle"(%sum, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'failing_op_in_a_chain'
func.func @failing_op_in_a_chain() {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1 : i32]} : 1
  // expected-error @+1 {{runtime error: error from test.error.tensor implementation}}
  %e = corert.executeop(%cpu) "tfrt_test.error.tensor"(%a) : 1
  %f = corert.executeop(%cpu) "tfrt_test.add"(%e, %e) : 1
  tfrt.return
}

// CHECK-LABEL: --- Running 'shape_error'
func.func @shape_error() {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [3], values = [1 : i32]} : 1
  // expected-error @+1 {{runtime error: arguments have incompatible shapes [2] and [3]}}
  %c = corert.executeop(%cpu) "tfrt_test.add"(%a, %b) : 1
  tfrt.return
}

// CHECK-LABEL: --- Running 'logging'
func.func @logging() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %log = corert.get_op_handler %ch0 "log"
  // CHECK: [0] dispatch 'tfrt_test.create_dense_tensor' 0 arguments, 1 result, OpAttrs contains 2 entries:
  // CHECK-NEXT:   'shape' type=I64 value=[2]
  // CHECK-NEXT:   'values' type=F32 value=[1.500000e+00]
  %a = corert.executeop(%log) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1.5 : f32]} : 1
  // CHECK: [1] dispatch 'tfrt_test.relu' 1 argument, 1 result, no attributes
  %b = corert.executeop(%log) "tfrt_test.relu"(%a) : 1
  // CHECK: DenseHostTensor dtype = f32, shape = [2], values = [1.500000e+00, 1.500000e+00]
  %ch1 = "corert.print_tensorhandle"(%b, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'unknown_op'
func.func @unknown_op() {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  // expected-error @+1 {{runtime error: tf.nope was not supported by NullOpHandler.}}
  %ch1 = corert.executeop.seq(%cpu, %ch0) "tf.nope"()
  tfrt.return
}
