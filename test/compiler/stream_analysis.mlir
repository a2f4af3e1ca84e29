// StreamAnalysis on the cases of TFRT's mlir_tests/compiler/stream_analysis.mlir.
// Every function and every op of its body gets a remark with its stream.
//
// tfrt_test.test_cost in its untyped form takes and returns chains. The ids
// and costs are TFRT's.
// RUN: asyncrt-opt -tfrt-print-stream -verify-diagnostics %s

module attributes {tfrt.cost_threshold = 10 : i64} {

// The function's own threshold (5) wins over the module's (10).
// stream 0 = root 1 + %a0, %a1, %a2, %result 4 x 5 + return 1 = 22
// stream 1 = %b0, %b1, %b2 3 x 5 = 15
// expected-remark@+1 {{stream id: 0, stream cost: 22, parent stream: -1}}
func.func @stream(%a: i32, %b: i32) -> i32 attributes {tfrt.cost_threshold = 5} {
  // A data-dependent chain of ops stays in one stream, however expensive.
  // expected-remark@+1 {{stream id: 0, stream cost: 22, parent stream: -1}}
  %a0 = tfrt.constant.i32 1
  // expected-remark@+1 {{stream id: 0, stream cost: 22, parent stream: -1}}
  %a1 = "tfrt.add.i32"(%a, %a0) : (i32, i32) -> i32
  // expected-remark@+1 {{stream id: 0, stream cost: 22, parent stream: -1}}
  %a2 = "tfrt.add.i32"(%a, %a1) : (i32, i32) -> i32

  // So does this one, in a second stream started by the root.
  // expected-remark@+1 {{stream id: 1, stream cost: 15, parent stream: 0}}
  %b0 = tfrt.constant.i32 2
  // expected-remark@+1 {{stream id: 1, stream cost: 15, parent stream: 0}}
  %b1 = "tfrt.add.i32"(%b, %b0) : (i32, i32) -> i32
  // expected-remark@+1 {{stream id: 1, stream cost: 15, parent stream: 0}}
  %b2 = "tfrt.add.i32"(%b, %b1) : (i32, i32) -> i32

  // Both operands are as far from the root; the first one wins.
  // expected-remark@+1 {{stream id: 0, stream cost: 22, parent stream: -1}}
  %result = "tfrt.add.i32"(%a2, %b2) : (i32, i32) -> i32

  // expected-remark@+1 {{stream id: 0, stream cost: 22, parent stream: -1}}
  tfrt.return %result : i32
}

// Independent ops at the threshold each get a stream. Ids follow creation
// (reverse block order), so %1 gets 2 and %2 gets 1.
// expected-remark@+1 {{stream id: 0, stream cost: 12, parent stream: -1}}
func.func @no_merge() -> (i32, i32, i32) {
  // expected-remark@+1 {{stream id: 0, stream cost: 12, parent stream: -1}}
  %0 = tfrt.constant.i32 0
  // expected-remark@+1 {{stream id: 2, stream cost: 10, parent stream: 0}}
  %1 = tfrt.constant.i32 1
  // expected-remark@+1 {{stream id: 1, stream cost: 10, parent stream: 0}}
  %2 = tfrt.constant.i32 2
  // expected-remark@+1 {{stream id: 0, stream cost: 12, parent stream: -1}}
  tfrt.return %0, %1, %2 : i32, i32, i32
}

// Cheap independent ops are grouped until a group reaches the threshold.
// stream 0 = root 1 + %ch3 11 + %ch5 4 + %ch6 1 + return 1 = 18
// stream 4 = %ch1, %ch2, %ch4 3 x 4 = 12
// expected-remark@+1 {{stream id: 0, stream cost: 18, parent stream: -1}}
func.func @merge(%ch0: !tfrt.chain) -> !tfrt.chain {
  // expected-remark@+1 {{stream id: 4, stream cost: 12, parent stream: 0}}
  %ch1 = tfrt_test.test_cost %ch0 {id = 0 : i64, _tfrt_cost = 4 : i64}
  // expected-remark@+1 {{stream id: 4, stream cost: 12, parent stream: 0}}
  %ch2 = tfrt_test.test_cost %ch0 {id = 1 : i64, _tfrt_cost = 4 : i64}
  // expected-remark@+1 {{stream id: 0, stream cost: 18, parent stream: -1}}
  %ch3 = tfrt_test.test_cost %ch0 {id = 2 : i64, _tfrt_cost = 11 : i64}
  // expected-remark@+1 {{stream id: 4, stream cost: 12, parent stream: 0}}
  %ch4 = tfrt_test.test_cost %ch0 {id = 3 : i64, _tfrt_cost = 4 : i64}
  // The cheap leftover (%ch5 alone) joins the root's stream.
  // expected-remark@+1 {{stream id: 0, stream cost: 18, parent stream: -1}}
  %ch5 = tfrt_test.test_cost %ch0 {id = 4 : i64, _tfrt_cost = 4 : i64}

  // %ch3 is on the most expensive path from the root, so it triggers %ch6.
  // expected-remark@+1 {{stream id: 0, stream cost: 18, parent stream: -1}}
  %ch6 = tfrt.merge.chains %ch1, %ch2, %ch3, %ch4, %ch5 : !tfrt.chain, !tfrt.chain, !tfrt.chain, !tfrt.chain, !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 18, parent stream: -1}}
  tfrt.return %ch6 : !tfrt.chain
}

// tfrt.upper_cost_threshold: an op does not join a stream that already
// costs that much, even its own data successor's.
// expected-remark@+1 {{stream id: 1, stream cost: 17, parent stream: -1}}
func.func @merge_limit(%ch0: !tfrt.chain) -> !tfrt.chain attributes {tfrt.upper_cost_threshold = 17} {
  // expected-remark@+1 {{stream id: 1, stream cost: 17, parent stream: -1}}
  %ch1 = tfrt_test.test_cost %ch0 {id = 0 : i64, _tfrt_cost = 8 : i64}
  // expected-remark@+1 {{stream id: 1, stream cost: 17, parent stream: -1}}
  %ch2 = tfrt_test.test_cost %ch1 {id = 1 : i64, _tfrt_cost = 8 : i64}
  // expected-remark@+1 {{stream id: 0, stream cost: 17, parent stream: 1}}
  %ch3 = tfrt_test.test_cost %ch2 {id = 2 : i64, _tfrt_cost = 8 : i64}
  // expected-remark@+1 {{stream id: 0, stream cost: 17, parent stream: 1}}
  %ch4 = tfrt_test.test_cost %ch3 {id = 3 : i64, _tfrt_cost = 8 : i64}
  // expected-remark@+1 {{stream id: 0, stream cost: 17, parent stream: 1}}
  tfrt.return %ch4 : !tfrt.chain
}

// tfrt.merge_inter_dependent_streams: cheap sibling streams linked by an
// edge outside the schedule tree (%ch2 -> %ch3, %ch5 -> %ch6/%ch7) merge
// first. Without it the root would join {%ch1, %ch2, %ch3} instead.
// expected-remark@+1 {{stream id: 0, stream cost: 16, parent stream: -1}}
func.func @merge_inter_dependent_streams(%ch0: !tfrt.chain) -> !tfrt.chain attributes {tfrt.merge_inter_dependent_streams = true} {
  // expected-remark@+1 {{stream id: 3, stream cost: 11, parent stream: 0}}
  %ch1 = tfrt_test.test_cost %ch0 {id = 1 : i64, _tfrt_cost = 5 : i64}
  // expected-remark@+1 {{stream id: 3, stream cost: 11, parent stream: 0}}
  %ch2 = tfrt_test.test_cost %ch0 {id = 2 : i64, _tfrt_cost = 5 : i64}
  // expected-remark@+1 {{stream id: 3, stream cost: 11, parent stream: 0}}
  %ch3 = tfrt.merge.chains %ch1, %ch2 : !tfrt.chain, !tfrt.chain

  // expected-remark@+1 {{stream id: 0, stream cost: 16, parent stream: -1}}
  %ch4 = tfrt_test.test_cost %ch0 {id = 3 : i64, _tfrt_cost = 5 : i64}
  // expected-remark@+1 {{stream id: 0, stream cost: 16, parent stream: -1}}
  %ch5 = tfrt_test.test_cost %ch0 {id = 4 : i64, _tfrt_cost = 5 : i64}
  // expected-remark@+1 {{stream id: 0, stream cost: 16, parent stream: -1}}
  %ch6 = tfrt.merge.chains %ch4, %ch5 : !tfrt.chain, !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 16, parent stream: -1}}
  %ch7 = tfrt.merge.chains %ch4, %ch5 : !tfrt.chain, !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 16, parent stream: -1}}
  %ch8 = tfrt.merge.chains %ch6, %ch7 : !tfrt.chain, !tfrt.chain

  // expected-remark@+1 {{stream id: 0, stream cost: 16, parent stream: -1}}
  %ch9 = tfrt.merge.chains %ch3, %ch8 : !tfrt.chain, !tfrt.chain
  // expected-remark@+1 {{stream id: 0, stream cost: 16, parent stream: -1}}
  tfrt.return %ch9 : !tfrt.chain
}

}
