// Every test kernel is an op of its dialect (tfrt_test, tfrt_tutorial, vt):
// programs that name one in generic form are verified.
// RUN: asyncrt-opt %s -split-input-file -verify-diagnostics

func.func @print_bool_takes_an_i1(%ch: !tfrt.chain, %x: i32) {
  // expected-error @+1 {{'tfrt_test.print_bool' op operand #1 must be 1-bit signless integer, but got 'i32'}}
  %r = "tfrt_test.print_bool"(%ch, %x) : (!tfrt.chain, i32) -> !tfrt.chain
  tfrt.return
}

// -----

func.func @get_string_needs_its_value() {
  // expected-error @+1 {{'tfrt_test.get_string' op requires attribute 'value'}}
  %s = "tfrt_test.get_string"() {name = "misnamed"} : () -> !tfrt.string
  tfrt.return
}

// -----

func.func @share_to_two_keeps_the_type(%x: i32) {
  // expected-error @+1 {{'tfrt_test.share_to_two' op results must have the operand's type 'i32', but one is 'i64'}}
  %a, %b = "tfrt_test.share_to_two"(%x) : (i32) -> (i32, i64)
  tfrt.return
}

// -----

func.func @slice_inplace_takes_tensors(%t: !t.tensor, %ch: !tfrt.chain, %x: i32) {
  // expected-error @+1 {{'tfrt_test.slice_inplace.f32.2' op operand #1 must be !tfrt_tensor.tensor type, but got 'i32'}}
  %r = "tfrt_test.slice_inplace.f32.2"(%t, %x, %ch, %t) : (!t.tensor, i32, !tfrt.chain, !t.tensor) -> !tfrt.chain
  tfrt.return
}

// -----

func.func @coordinate_from_operands_or_attributes(%x: i32) {
  // expected-error @+1 {{'tfrt_tutorial.create_coordinate' op takes two i32 operands or the 'x' and 'y' attributes}}
  %c = "tfrt_tutorial.create_coordinate"(%x) {y = 1 : i32} : (i32) -> !tfrt_tutorial.coordinate
  tfrt.return
}

// -----

func.func @vt_add_takes_values(%x: i32) {
  // expected-error @+1 {{'vt.add' op operand #0 must be !vt.value type, but got 'i32'}}
  %v = "vt.add"(%x, %x) : (i32, i32) -> !vt.value
  tfrt.return
}

// -----

func.func @sync_tensor_equal_returns_no_chain(%a: !t.tensor) {
  // expected-error @+1 {{'tfrt_dht_sync.tensor_equal.i32' op requires one result}}
  %eq, %ch = "tfrt_dht_sync.tensor_equal.i32"(%a, %a) : (!t.tensor, !t.tensor) -> (i1, !tfrt.chain)
  tfrt.return
}
