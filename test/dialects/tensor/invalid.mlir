// Verifier errors of the host tensor dialects, one case per split.
// RUN: asyncrt-opt %s -split-input-file -verify-diagnostics

func.func @build_shape_result() {
  // expected-error @+1 {{'ts.build_shape' op result #0 must be !ts.shape type, but got 'i64'}}
  %a = "ts.build_shape"() {value = [1 : i64]} : () -> i64
  tfrt.return
}

// -----

func.func @build_shape_not_i64() {
  // expected-error @+1 {{'ts.build_shape' op attribute 'value' failed to satisfy constraint: 64-bit integer array attribute}}
  %a = ts.build_shape [1 : i32]
  tfrt.return
}

// -----

func.func @create_uninitialized_tensor_rank() {
  // expected-error @+1 {{'tfrt_dht.create_uninitialized_tensor.i32.2' op attribute 'shape' failed to satisfy constraint: 64-bit integer array attribute with exactly 2 elements}}
  %a = tfrt_dht.create_uninitialized_tensor.i32.2 [3 : i64]
  tfrt.return
}

// -----

func.func @sync_create_uninitialized_tensor_rank() attributes {tfrt.sync} {
  // expected-error @+1 {{'tfrt_dht_sync.create_uninitialized_tensor.f32.0' op attribute 'shape' failed to satisfy constraint: 64-bit integer array attribute with exactly 0 elements}}
  %a = tfrt_dht_sync.create_uninitialized_tensor.f32.0 [1 : i64]
  tfrt.return
}

// -----

func.func @print_tensor_operand(%x: i32, %c: !tfrt.chain) {
  // expected-error @+1 {{'tfrt_dht.print_tensor' op operand #0 must be !tfrt_tensor.tensor type, but got 'i32'}}
  %c1 = "tfrt_dht.print_tensor"(%x, %c) : (i32, !tfrt.chain) -> !tfrt.chain
  tfrt.return
}

// -----

func.func @fixed_rank_shape_type(%s: !ts.shape) {
  // expected-error @+1 {{'ts.as_fixed_rank_shape.2' op result #0 must be !ts.fixed_rank_shape.2 type, but got '!ts.fixed_rank_shape.3'}}
  %f = "ts.as_fixed_rank_shape.2"(%s) : (!ts.shape) -> !ts.fixed_rank_shape.3
  tfrt.return
}

// -----

func.func @sht_values() {
  // expected-error @+1 {{'tfrt_sht.create_tensor' op attribute 'values' failed to satisfy constraint: string array attribute}}
  %t = tfrt_sht.create_tensor {shape = [1], values = [1]}
  tfrt.return
}
