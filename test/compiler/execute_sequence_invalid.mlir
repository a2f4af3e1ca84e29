// corert.execute_sequence's verifier: attributes that do not describe a
// chain of ops are errors at compile time.
// RUN: asyncrt-opt -split-input-file -verify-diagnostics %s

func.func @forward_reference(%cpu: !corert.ophandler, %a: !corert.tensorhandle) -> !corert.tensorhandle {
  // expected-error @+1 {{op 0 uses value 1, which is not an argument or an earlier op's result}}
  %r = "corert.execute_sequence"(%cpu, %a) {op_names = ["tfrt_test.add"], op_attrs = [[]], op_operand_counts = [2 : i32], op_operands = [0 : i32, 1 : i32]} : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  tfrt.return %r : !corert.tensorhandle
}

// -----

func.func @counts(%cpu: !corert.ophandler, %a: !corert.tensorhandle) -> !corert.tensorhandle {
  // expected-error @+1 {{op_operand_counts do not match op_operands}}
  %r = "corert.execute_sequence"(%cpu, %a) {op_names = ["tfrt_test.add"], op_attrs = [[]], op_operand_counts = [2 : i32], op_operands = [0 : i32]} : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  tfrt.return %r : !corert.tensorhandle
}

// -----

func.func @attrs_per_op(%cpu: !corert.ophandler, %a: !corert.tensorhandle) -> !corert.tensorhandle {
  // expected-error @+1 {{needs op_attrs and op_operand_counts for each of 2 ops}}
  %r = "corert.execute_sequence"(%cpu, %a) {op_names = ["tfrt_test.add", "tfrt_test.add"], op_attrs = [[]], op_operand_counts = [2 : i32, 2 : i32], op_operands = [0 : i32, 0 : i32, 1 : i32, 1 : i32]} : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  tfrt.return %r : !corert.tensorhandle
}

// -----

func.func @no_ops(%cpu: !corert.ophandler, %a: !corert.tensorhandle) -> !corert.tensorhandle {
  // expected-error @+1 {{needs at least one op}}
  %r = "corert.execute_sequence"(%cpu, %a) {op_names = [], op_attrs = [], op_operand_counts = [], op_operands = []} : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  tfrt.return %r : !corert.tensorhandle
}

// -----

func.func @pairs(%cpu: !corert.ophandler, %a: !corert.tensorhandle) -> !corert.tensorhandle {
  // expected-error @+1 {{each op_attr should be a key-value pair, where the key is a string}}
  %r = "corert.execute_sequence"(%cpu, %a) {op_names = ["tfrt_test.add"], op_attrs = [[[1 : i32, 2 : i32]]], op_operand_counts = [2 : i32], op_operands = [0 : i32, 0 : i32]} : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  tfrt.return %r : !corert.tensorhandle
}
