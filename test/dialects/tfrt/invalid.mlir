// Verifier and parser errors of the tfrt dialect, one case per split.
// RUN: asyncrt-opt %s -split-input-file -verify-diagnostics -allow-unregistered-dialect

//===--- tfrt.return ---===//

func.func @return_too_many(%x: i32) {
  // expected-error @+1 {{'tfrt.return' op has 1 operands, but enclosing function returns 0 (@return_too_many)}}
  tfrt.return %x : i32
}

// -----

func.func @return_wrong_type(%x: f32) -> i32 {
  // expected-error @+1 {{'tfrt.return' op type of return operand 0 ('f32') doesn't match function result type ('i32') in function @return_wrong_type}}
  tfrt.return %x : f32
}

// -----

func.func @return_in_if_else(%c: i1, %x: i32, %y: f32) -> i32 {
  %r = tfrt.if %c, %x, %y : (i32, f32) -> i32 {
    tfrt.return %x : i32
  } else {
    // expected-error @+1 {{'tfrt.return' op operand types don't match 'tfrt.if' result types: (f32) vs (i32)}}
    tfrt.return %y : f32
  }
  tfrt.return %r : i32
}

// -----

func.func @return_in_repeat(%n: i32, %x: i32) -> i32 {
  %r = tfrt.repeat.i32 %n, %x : i32 {
    // expected-error @+1 {{'tfrt.return' op operand types don't match 'tfrt.repeat.i32' result types: () vs (i32)}}
    tfrt.return
  }
  tfrt.return %r : i32
}

// -----

func.func @return_in_parallel_for(%s: i32, %e: i32, %b: i32) {
  %done = tfrt.parallel_for.i32 %s to %e fixed %b {
    // expected-error @+1 {{'tfrt.return' op must return nothing or a single !tfrt.chain from 'tfrt.parallel_for.i32', but returns (i32)}}
    tfrt.return %s : i32
  }
  tfrt.return
}

//===--- tfrt.if ---===//

// -----

func.func @if_results_without_else(%c: i1, %x: i32) -> i32 {
  // expected-error @+1 {{expected 'else': a 'tfrt.if' with results needs both regions}}
  %r = tfrt.if %c, %x : (i32) -> (i32) {
    tfrt.return %x : i32
  }
  tfrt.return %r : i32
}

// -----

func.func @if_condition_not_i1(%x: i32) {
  // expected-note @-1 {{prior use here}}
  // expected-error @+1 {{use of value '%x' expects different type than prior uses: 'i1' vs 'i32'}}
  tfrt.if %x : () -> () {
    tfrt.return
  }
  tfrt.return
}

// -----

func.func @if_region_arguments(%c: i1, %x: i32) {
  // expected-error @+1 {{'tfrt.if' op then region takes (f32), but the op passes (i32)}}
  "tfrt.if"(%c, %x) ({
  ^bb0(%a: f32):
    tfrt.return
  }, {
  ^bb0(%a: i32):
    tfrt.return
  }) : (i1, i32) -> ()
  tfrt.return
}

// -----

func.func @if_region_not_terminated(%c: i1) {
  // expected-error @+1 {{'tfrt.if' op expects its else region to end in tfrt.return}}
  "tfrt.if"(%c) ({
    tfrt.return
  }, {
    "test.terminator"() : () -> ()
  }) : (i1) -> ()
  tfrt.return
}

// -----

func.func @if_uses_value_from_above(%c: i1, %x: i32) {
  tfrt.if %c : () -> () {
    // Regions see only their arguments.
    // expected-error @+1 {{use of undeclared SSA value name}}
    %y = tfrt.add.i32 %x, %x
    tfrt.return
  }
  tfrt.return
}

//===--- tfrt.repeat.i32 ---===//

// -----

func.func @repeat_result_types(%n: i32, %x: i32) {
  // expected-error @+1 {{'tfrt.repeat.i32' op loop-carried operands (i32) and results (f32) must have the same types}}
  %r = "tfrt.repeat.i32"(%n, %x) ({
  ^bb0(%a: i32):
    tfrt.return %a : i32
  }) : (i32, i32) -> f32
  tfrt.return
}

//===--- Calls ---===//

// -----

func.func @call_missing_callee(%x: i32) {
  // expected-error @+1 {{'tfrt.call' op 'missing' does not reference a valid function}}
  tfrt.call @missing(%x) : (i32) -> ()
  tfrt.return
}

// -----

func.func @callee(%x: i32) -> i32 {
  tfrt.return %x : i32
}

func.func @call_wrong_type(%x: f32) -> i32 {
  // expected-error @+1 {{'tfrt.call' op expects @callee to have type (f32) -> (i32), but it has type (i32) -> (i32)}}
  %r = tfrt.call @callee(%x) : (f32) -> i32
  tfrt.return %r : i32
}

// -----

func.func @identity(%x: i32) -> i32 {
  tfrt.return %x : i32
}

func.func @to_f32(%x: i32) -> f32 {
  %f = tfrt.constant.f32 1.0
  tfrt.return %f : f32
}

func.func @cond_branch_types(%c: i1, %x: i32) -> i32 {
  // expected-error @+1 {{'tfrt.cond' op expects @to_f32 to have type (i32) -> (i32), but it has type (i32) -> (f32)}}
  %r = tfrt.cond %c @identity @to_f32 (%x) : (i32) -> (i32)
  tfrt.return %r : i32
}

// -----

func.func @case_without_branches(%i: i32) {
  // expected-error @+1 {{'tfrt.case' op requires at least one branch}}
  tfrt.case %i [] () : () -> ()
  tfrt.return
}

// -----

func.func @body(%x: i32) -> i32 {
  tfrt.return %x : i32
}

func.func @while_body_without_condition(%c: i1, %x: i32) -> i32 {
  // expected-error @+1 {{'tfrt.while' op expects @body to have type (i32) -> (i32, i1), but it has type (i32) -> (i32)}}
  %r = tfrt.while %c @body(%x) parallel_iterations(1) : (i32) -> (i32)
  tfrt.return %r : i32
}

// -----

func.func @body(%x: i32) -> (f32, i1) {
  %f = tfrt.constant.f32 1.0
  %b = tfrt.constant.i1 false
  tfrt.return %f, %b : f32, i1
}

func.func @while_result_types(%c: i1, %x: i32) {
  // expected-error @+1 {{'tfrt.while' op operands (i32) and results (f32) must have the same types}}
  %r = tfrt.while %c @body(%x) parallel_iterations(1) : (i32) -> (f32)
  tfrt.return
}

// -----

func.func @init() -> i32 {
  %x = tfrt.constant.i32 1
  tfrt.return %x : i32
}

func.func @once_wrong_type() {
  // expected-error @+1 {{'tfrt.once' op expects @init to have type () -> (i64), but it has type () -> (i32)}}
  %r = tfrt.once @init() : () -> (i64)
  tfrt.return
}

// -----

func.func @block(%start: i32, %x: f32) -> !tfrt.chain {
  %ch = tfrt.new.chain
  tfrt.return %ch : !tfrt.chain
}

func.func @parallel_call_signature(%s: i32, %e: i32, %b: i32, %x: f32) {
  // expected-error @+1 {{'tfrt.parallel_call.i32' op expects @block to have type (i32, i32, f32) -> (!tfrt.chain), but it has type (i32, f32) -> (!tfrt.chain)}}
  %done = tfrt.parallel_call.i32 %s to %e fixed %b @block(%x) : f32
  tfrt.return
}

//===--- Kernel ops ---===//

// -----

func.func @merge_nothing() {
  // expected-error @+1 {{'tfrt.merge.chains' op requires at least one input}}
  %ch = "tfrt.merge.chains"() : () -> !tfrt.chain
  tfrt.return
}

// -----

func.func @constant_attribute_type() {
  // expected-error @+1 {{'tfrt.constant.i32' op attribute 'value' failed to satisfy constraint: 32-bit signless integer attribute}}
  %x = "tfrt.constant.i32"() {value = 1 : i64} : () -> i32
  tfrt.return
}

// -----

func.func @add_operand_type(%a: i64) {
  // expected-error @+1 {{'tfrt.add.i32' op operand #0 must be 32-bit signless integer, but got 'i64'}}
  %x = "tfrt.add.i32"(%a, %a) : (i64, i64) -> i32
  tfrt.return
}

// -----

func.func @extra_operand_not_a_chain(%a: i32) {
  // Only a chain may trail the declared operands.
  // expected-error @+1 {{'tfrt.add.i32' op operand #2 must be control dependence token, but got 'i32'}}
  %x = "tfrt.add.i32"(%a, %a, %a) : (i32, i32, i32) -> i32
  tfrt.return
}

// -----

func.func @print_without_chain(%a: i32) {
  // expected-error @+1 {{'tfrt.print.i32' op operand #1 must be control dependence token, but got 'i32'}}
  %ch = "tfrt.print.i32"(%a, %a) : (i32, i32) -> !tfrt.chain
  tfrt.return
}

//===--- Function attributes ---===//

// -----

// expected-error @+1 {{'tfrt.sync' must be a unit attribute}}
func.func @sync_not_unit() attributes {tfrt.sync = 1 : i32} {
  tfrt.return
}

// -----

// expected-error @+1 {{'tfrt.cost_threshold' must be an integer attribute}}
func.func @cost_threshold_not_integer() attributes {tfrt.cost_threshold = "high"} {
  tfrt.return
}

// -----

func.func @native_on_an_op() {
  // expected-error @+1 {{'tfrt.native' is only valid on functions}}
  %x = tfrt.constant.i32 1 {tfrt.native}
  tfrt.return
}

// -----

func.func @cost_threshold_on_an_op() {
  // expected-error @+1 {{'tfrt.cost_threshold' is only valid on functions and modules}}
  %x = tfrt.constant.i32 1 {tfrt.cost_threshold = 10 : i64}
  tfrt.return
}

// -----

// expected-error @+1 {{'tfrt.cost_threshold' must be an integer attribute}}
module attributes {tfrt.cost_threshold = "high"} {
}
