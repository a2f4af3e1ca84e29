// StreamAnalysis: default options, declarations, the upper threshold with no
// stream left to join, and merging along chain edges.
// RUN: asyncrt-opt -tfrt-print-stream -split-input-file -verify-diagnostics %s

// No tfrt.cost_threshold anywhere: the threshold is 1, so every op is
// "expensive" and nothing independent merges.

// Only the return: it hangs off the root, which joins its stream.
// expected-remark@+1 {{stream id: 0, stream cost: 2, parent stream: -1}}
func.func @only_return() {
  // expected-remark@+1 {{stream id: 0, stream cost: 2, parent stream: -1}}
  tfrt.return
}

// Ops without _tfrt_cost cost the threshold (1). %b feeds the return but
// %a is first among equals, so %a triggers it; %b is a stream of its own.
// expected-remark@+1 {{stream id: 0, stream cost: 3, parent stream: -1}}
func.func @default_threshold() -> (i32, i32) {
  // expected-remark@+1 {{stream id: 0, stream cost: 3, parent stream: -1}}
  %a = tfrt.constant.i32 1
  // expected-remark@+1 {{stream id: 1, stream cost: 1, parent stream: 0}}
  %b = tfrt.constant.i32 2
  // expected-remark@+1 {{stream id: 0, stream cost: 3, parent stream: -1}}
  tfrt.return %a, %b : i32, i32
}

// A declaration has no body: no remark.
func.func private @declaration(i32) -> i32

// -----

// Every child stream of the root is at the upper threshold, so the root
// starts a stream of its own (created last: id 1).
// expected-remark@+1 {{stream id: 1, stream cost: 1, parent stream: -1}}
func.func @upper_limit_new_stream(%x: i32) -> i32 attributes {tfrt.cost_threshold = 3, tfrt.upper_cost_threshold = 4} {
  // expected-remark@+1 {{stream id: 0, stream cost: 7, parent stream: 1}}
  %a = "tfrt.add.i32"(%x, %x) {_tfrt_cost = 4 : i64} : (i32, i32) -> i32
  // expected-remark@+1 {{stream id: 0, stream cost: 7, parent stream: 1}}
  %b = "tfrt.add.i32"(%a, %a) {_tfrt_cost = 2 : i64} : (i32, i32) -> i32
  // expected-remark@+1 {{stream id: 0, stream cost: 7, parent stream: 1}}
  tfrt.return %b : i32
}

// -----

// The module's threshold applies to functions without their own. Chain
// edges count as dependencies: the root's child stream {%w1, %m, %r} is
// linked to {%w3, %n} by the chain %n -> %r and absorbs it first; %w2 and
// %w4 are then grouped. (Counting only non-chain edges would group in block
// order instead: {%w1, %w2, %m, %r} and {%w3, %w4, %n}.)
module attributes {tfrt.cost_threshold = 10 : i64} {
// expected-remark@+1 {{stream id: 0, stream cost: 15, parent stream: -1}}
func.func @chain_edges(%ch0: !tfrt.chain) -> !tfrt.chain attributes {tfrt.merge_inter_dependent_streams = true} {
  // expected-remark@+1 {{stream id: 0, stream cost: 15, parent stream: -1}}
  %w1 = "tfrt_test.work"(%ch0) {_tfrt_cost = 5 : i64} : (!tfrt.chain) -> !tfrt.chain
  // expected-remark@+1 {{stream id: 3, stream cost: 10, parent stream: 0}}
  %w2 = "tfrt_test.work"(%ch0) {_tfrt_cost = 5 : i64} : (!tfrt.chain) -> !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 15, parent stream: -1}}
  %m = tfrt.merge.chains %w1, %w2 : !tfrt.chain, !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 15, parent stream: -1}}
  %w3 = "tfrt_test.work"(%ch0) {_tfrt_cost = 5 : i64} : (!tfrt.chain) -> !tfrt.chain
  // expected-remark@+1 {{stream id: 3, stream cost: 10, parent stream: 0}}
  %w4 = "tfrt_test.work"(%ch0) {_tfrt_cost = 5 : i64} : (!tfrt.chain) -> !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 15, parent stream: -1}}
  %n = tfrt.merge.chains %w3, %w4 : !tfrt.chain, !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 15, parent stream: -1}}
  %r = tfrt.merge.chains %m, %n : !tfrt.chain, !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 15, parent stream: -1}}
  tfrt.return %r : !tfrt.chain
}
}
