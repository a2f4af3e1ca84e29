// Parser and verifier errors of the corert dialects, one case per split.
// RUN: asyncrt-opt %s -split-input-file -verify-diagnostics

func.func @operand_not_tensorhandle(%arg: i32) { // expected-note {{prior use here}}
  %ch = tfrt.new.chain
  %cpu = corert.get_op_handler %ch "cpu"
  // expected-error @+1 {{expects different type than prior uses: '!corert.tensorhandle' vs 'i32'}}
  %res0 = corert.executeop(%cpu) "some.op"(%arg) : 1
  tfrt.return
}

// -----

func.func @op_attrs_not_pairs(%cpu: !corert.ophandler) {
  // expected-error @+1 {{'corert.executeop' op each op_attr should be a key-value pair, where the key is a string}}
  %res0 = "corert.executeop"(%cpu) {op_name = "some.op", op_attrs = [1 : i32]} : (!corert.ophandler) -> !corert.tensorhandle
  tfrt.return
}

// -----

func.func @op_func_attrs_not_pairs(%cpu: !corert.ophandler, %ch: !tfrt.chain) {
  // expected-error @+1 {{'corert.executeop.seq' op each op_func_attr should be a key-value pair, where the key is a string}}
  %ch1 = "corert.executeop.seq"(%cpu, %ch) {op_name = "some.op", op_attrs = [], op_func_attrs = [[1, @f]]} : (!corert.ophandler, !tfrt.chain) -> !tfrt.chain
  tfrt.return
}

// -----

func.func @crt_op_attrs_not_pairs(%op: !corert.op) {
  // expected-error @+1 {{'corert.execute_crt_op' op each op_attr should be a key-value pair, where the key is a string}}
  "corert.execute_crt_op"(%op) {op_attrs = [["a"]]} : (!corert.op) -> ()
  tfrt.return
}

// -----

func.func @sync_op_attrs_not_pairs(%cpu: !corert.ophandler) attributes {tfrt.sync} {
  // expected-error @+1 {{'corert_sync.executeop' op each op_attr should be a key-value pair, where the key is a string}}
  "corert_sync.executeop"(%cpu) {op_name = "some.op", op_attrs = [[1, 2]]} : (!corert.ophandler) -> ()
  tfrt.return
}

// -----

func.func @result_not_tensorhandle(%cpu: !corert.ophandler) {
  // expected-error @+1 {{'corert.executeop' op result #0 must be variadic of !corert.tensorhandle type, but got 'i32'}}
  %r = "corert.executeop"(%cpu) {op_name = "some.op", op_attrs = [], op_func_attrs = []} : (!corert.ophandler) -> i32
  tfrt.return
}

// -----

func.func @negative_result_count(%cpu: !corert.ophandler) {
  // expected-error @+1 {{expected a non-negative number of results, got -1}}
  corert.executeop(%cpu) "some.op"() : -1
  tfrt.return
}

// -----

func.func @twice(%cpu: !corert.ophandler) {
  // expected-error @+1 {{function attribute 'f' given twice}}
  corert.executeop(%cpu) "some.op"() {f = @twice} {f = @twice}
  tfrt.return
}

// -----

func.func @sync_has_no_func_attrs(%cpu: !corert.ophandler) attributes {tfrt.sync} {
  // The second dictionary (function attributes) is corert.executeop's only.
  // expected-error @+1 {{expected operation name in quotes}}
  corert_sync.executeop(%cpu) "some.op"() {a = 1} {f = @sync_has_no_func_attrs} : 1
  tfrt.return
}

// -----

func.func @f(%ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32) {
  tfrt.return %ch, %x : !tfrt.chain, i32
}

func.func @cond_wrong_type(%c: !corert.tensorhandle, %ch: !tfrt.chain, %x: !corert.tensorhandle) {
  // expected-error @+1 {{'corert.cond' op expects @f to have type (!tfrt.chain, !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle), but it has type (!tfrt.chain, i32) -> (!tfrt.chain, i32)}}
  %ch1, %r = corert.cond %c @f @f (%ch, %x) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  tfrt.return
}

// -----

func.func @cond_missing(%c: !corert.tensorhandle, %ch: !tfrt.chain) {
  // expected-error @+1 {{'corert.cond' op 'missing' does not reference a valid function}}
  %ch1 = corert.cond %c @missing @missing (%ch) : () -> ()
  tfrt.return
}

// -----

func.func @cond_fn(%ch: !tfrt.chain) -> (!tfrt.chain, !corert.tensorhandle) {
  %cpu = corert.get_op_handler %ch "cpu"
  %t = corert.executeop(%cpu) "x"() : 1
  tfrt.return %ch, %t : !tfrt.chain, !corert.tensorhandle
}

func.func @while_cond_args(%ch: !tfrt.chain, %x: !corert.tensorhandle) {
  // expected-error @+1 {{'corert.while' op expects @cond_fn to take (!tfrt.chain, !corert.tensorhandle), but it takes (!tfrt.chain)}}
  %ch1, %r = corert.while @cond_fn @cond_fn (%ch, %x) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  tfrt.return
}

// -----

func.func @body(%ch: !tfrt.chain, %x: !corert.tensorhandle) -> !tfrt.chain {
  tfrt.return %ch : !tfrt.chain
}

func.func @while_body_results(%ch: !tfrt.chain, %x: !corert.tensorhandle) {
  // expected-error @+1 {{'corert.while' op expects @body to have type (!tfrt.chain, !corert.tensorhandle) -> (!tfrt.chain, !corert.tensorhandle), but it has type (!tfrt.chain, !corert.tensorhandle) -> (!tfrt.chain)}}
  %ch1, %r = corert.while @body @body (%ch, %x) : (!corert.tensorhandle) -> (!corert.tensorhandle)
  tfrt.return
}

// -----

func.func @composite_missing() {
  // expected-error @+1 {{'corert.make_composite_op' op 'nothing' does not reference a valid function}}
  %op = corert.make_composite_op @nothing
  tfrt.return
}

// -----

func.func @set_i32_wrong_value(%a: !corert.opattrs, %ch: !tfrt.chain) {
  // expected-error @+1 {{'corert.op_attrs_set.i32' op attribute 'value' failed to satisfy constraint: 32-bit signless integer attribute}}
  %ch1 = corert.op_attrs_set.i32 %a, %ch {key = "k", value = 1.0 : f32}
  tfrt.return
}

// -----

func.func @bad_shape_attr() {
  // expected-error @+1 {{expected '>'}}
  "corert.test"() {a = #corert.shape<1 2>} : () -> ()
  tfrt.return
}

// -----

func.func @transfer_without_device(%th: !corert.tensorhandle) {
  // expected-error @+1 {{'corert.transfer' op needs a device and a tensor type operand, or 'device' and 'formats' attributes}}
  %0 = corert.transfer %th {device = "CPU:0"}
  tfrt.return
}

// -----

func.func @transfer_with_both_forms(%th: !corert.tensorhandle, %dev: !tfrt.device, %tt: !tfrt.tensor_type) {
  // expected-error @+1 {{'corert.transfer' op takes either device operands or 'device' and 'formats' attributes, not both}}
  %0 = corert.transfer %th, %dev, %tt {device = "CPU:0", formats = 1}
  tfrt.return
}

// -----

func.func @transfer_operand_types(%th: !corert.tensorhandle, %dev: !tfrt.device) {
  // expected-error @+1 {{'corert.transfer' op expects a !tfrt.device and a !tfrt.tensor_type operand after the tensor handle}}
  %0 = "corert.transfer"(%th, %dev) : (!corert.tensorhandle, !tfrt.device) -> !corert.tensorhandle
  tfrt.return
}
