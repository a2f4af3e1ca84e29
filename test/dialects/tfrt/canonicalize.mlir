// Canonicalization of tfrt.merge.chains.
// RUN: asyncrt-opt %s -canonicalize -split-input-file | FileCheck %s

// A merge of a single chain is that chain, when the chain has other uses.
// CHECK-LABEL: func @single_chain
// CHECK-SAME: (%[[CH:.*]]: !tfrt.chain)
// CHECK-NOT: tfrt.merge.chains
// CHECK: tfrt.return %[[CH]], %[[CH]] : !tfrt.chain, !tfrt.chain
func.func @single_chain(%ch: !tfrt.chain) -> (!tfrt.chain, !tfrt.chain) {
  %out = tfrt.merge.chains %ch : !tfrt.chain
  tfrt.return %out, %ch : !tfrt.chain, !tfrt.chain
}

// -----

// Repeated inputs are dropped.
// CHECK-LABEL: func @repeated_inputs
// CHECK-SAME: (%[[A:.*]]: !tfrt.chain, %[[X:.*]]: i32)
// CHECK-NEXT: %[[M:.*]] = tfrt.merge.chains %[[A]], %[[X]] : !tfrt.chain, i32
// CHECK-NEXT: tfrt.return %[[M]]
func.func @repeated_inputs(%a: !tfrt.chain, %x: i32) -> !tfrt.chain {
  %out = tfrt.merge.chains %a, %x, %a, %x : !tfrt.chain, i32, !tfrt.chain, i32
  tfrt.return %out : !tfrt.chain
}

// -----

// As in TFRT, a merge that is its chain's only use stays.
// CHECK-LABEL: func @only_use
// CHECK-SAME: (%[[CH:.*]]: !tfrt.chain)
// CHECK-NEXT: %[[M:.*]] = tfrt.merge.chains %[[CH]] : !tfrt.chain
// CHECK-NEXT: tfrt.return %[[M]] : !tfrt.chain
func.func @only_use(%ch: !tfrt.chain) -> !tfrt.chain {
  %out = tfrt.merge.chains %ch : !tfrt.chain
  tfrt.return %out : !tfrt.chain
}

// -----

// Repeats of one chain reduce to one input.
// CHECK-LABEL: func @repeated_chain
// CHECK-SAME: (%[[A:.*]]: !tfrt.chain)
// CHECK-NEXT: %[[M:.*]] = tfrt.merge.chains %[[A]] : !tfrt.chain
// CHECK-NEXT: tfrt.return %[[M]] : !tfrt.chain
func.func @repeated_chain(%a: !tfrt.chain) -> !tfrt.chain {
  %out = tfrt.merge.chains %a, %a, %a : !tfrt.chain, !tfrt.chain, !tfrt.chain
  tfrt.return %out : !tfrt.chain
}

// -----

// Chains from tfrt.new.chain are always available: they cannot delay the
// merge.
// CHECK-LABEL: func @new_chain_inputs
// CHECK-SAME: (%[[A:.*]]: !tfrt.chain, %[[X:.*]]: i32)
// CHECK-NEXT: %[[M:.*]] = tfrt.merge.chains %[[X]], %[[A]] : i32, !tfrt.chain
// CHECK-NEXT: tfrt.return %[[M]]
func.func @new_chain_inputs(%a: !tfrt.chain, %x: i32) -> !tfrt.chain {
  %new = tfrt.new.chain
  %out = tfrt.merge.chains %new, %x, %a : !tfrt.chain, i32, !tfrt.chain
  tfrt.return %out : !tfrt.chain
}

// -----

// A merge of only new chains is a new chain.
// CHECK-LABEL: func @only_new_chains
// CHECK-NEXT: %[[N:.*]] = tfrt.new.chain
// CHECK-NEXT: tfrt.return %[[N]] : !tfrt.chain
func.func @only_new_chains() -> !tfrt.chain {
  %a = tfrt.new.chain
  %b = tfrt.new.chain
  %out = tfrt.merge.chains %a, %b : !tfrt.chain, !tfrt.chain
  tfrt.return %out : !tfrt.chain
}

// -----

// A merge that waits on a value (not a chain) stays.
// CHECK-LABEL: func @single_value
// CHECK-SAME: (%[[X:.*]]: i32)
// CHECK-NEXT: %[[M:.*]] = tfrt.merge.chains %[[X]] : i32
// CHECK-NEXT: tfrt.return %[[M]]
func.func @single_value(%x: i32) -> !tfrt.chain {
  %out = tfrt.merge.chains %x : i32
  tfrt.return %out : !tfrt.chain
}

// -----

// Canonicalization keeps side effects: prints stay, unused pure ops go.
// CHECK-LABEL: func @side_effects
// CHECK-NEXT: %[[CH:.*]] = tfrt.new.chain
// CHECK-NEXT: %[[X:.*]] = tfrt.constant.i32 1
// CHECK-NEXT: tfrt.print.i32 %[[X]], %[[CH]]
// CHECK-NEXT: tfrt.return
func.func @side_effects() {
  %ch = tfrt.new.chain
  %x = tfrt.constant.i32 1
  %unused = tfrt.add.i32 %x, %x
  tfrt.print.i32 %x, %ch
  tfrt.return
}
