// Round trip of every tfrt op in custom form: parse, print, parse again.
// RUN: asyncrt-opt -allow-unregistered-dialect %s | asyncrt-opt -allow-unregistered-dialect | FileCheck %s
// The generic form round-trips too.
// RUN: asyncrt-opt -allow-unregistered-dialect %s --mlir-print-op-generic | asyncrt-opt -allow-unregistered-dialect | FileCheck %s

// CHECK-LABEL: func @chains
// CHECK-SAME: (%[[A:.*]]: !tfrt.chain, %[[X:.*]]: i32) -> !tfrt.chain
func.func @chains(%a: !tfrt.chain, %x: i32) -> !tfrt.chain {
  // CHECK-NEXT: %[[NEW:.*]] = tfrt.new.chain
  %new = tfrt.new.chain
  // CHECK-NEXT: %[[M:.*]] = tfrt.merge.chains %[[A]], %[[NEW]], %[[X]] : !tfrt.chain, !tfrt.chain, i32
  %m = tfrt.merge.chains %a, %new, %x : !tfrt.chain, !tfrt.chain, i32
  // CHECK-NEXT: tfrt.return %[[M]] : !tfrt.chain
  tfrt.return %m : !tfrt.chain
}

// CHECK-LABEL: func @string_type
// CHECK-SAME: (%{{.*}}: !tfrt.string) -> !tfrt.string
func.func @string_type(%s: !tfrt.string) -> !tfrt.string {
  tfrt.return %s : !tfrt.string
}

// Types of the tfrt namespace that only kernels know stay opaque.
// CHECK-LABEL: func @opaque_type
// CHECK-SAME: (%{{.*}}: !tfrt.test.resource) -> !tfrt.test.resource
func.func @opaque_type(%r: !tfrt.test.resource) -> !tfrt.test.resource {
  tfrt.return %r : !tfrt.test.resource
}

// CHECK-LABEL: func @constants
func.func @constants() {
  // CHECK-NEXT: tfrt.constant.i1 false
  %0 = tfrt.constant.i1 false
  // CHECK-NEXT: tfrt.constant.i1 true
  %1 = tfrt.constant.i1 1
  // CHECK-NEXT: tfrt.constant.i32 -7
  %2 = tfrt.constant.i32 -7
  // CHECK-NEXT: tfrt.constant.i64 8589934592
  %3 = tfrt.constant.i64 8589934592
  // CHECK-NEXT: tfrt.constant.ui32 4294967295
  %4 = tfrt.constant.ui32 4294967295
  // CHECK-NEXT: tfrt.constant.f32 2.500000e-01
  %5 = tfrt.constant.f32 0.25
  // CHECK-NEXT: tfrt.constant.f64 1.560000e+02
  %6 = tfrt.constant.f64 156.0
  // CHECK-NEXT: tfrt.return
  tfrt.return
}

// CHECK-LABEL: func @integer_arithmetic
// CHECK-SAME: (%[[A:.*]]: i32, %[[B:.*]]: i32, %[[C:.*]]: i64, %[[D:.*]]: i64, %[[CH:.*]]: !tfrt.chain)
func.func @integer_arithmetic(%a: i32, %b: i32, %c: i64, %d: i64,
                              %ch: !tfrt.chain) -> (i32, i64, i1, i1) {
  // CHECK-NEXT: %{{.*}} = tfrt.add.i32 %[[A]], %[[B]]
  %0 = tfrt.add.i32 %a, %b
  // CHECK-NEXT: %{{.*}} = tfrt.add.i64 %[[C]], %[[D]]
  %1 = tfrt.add.i64 %c, %d
  // CHECK-NEXT: %{{.*}} = tfrt.multiply.i32 %[[A]], %[[B]]
  %2 = tfrt.multiply.i32 %a, %b
  // CHECK-NEXT: %{{.*}} = tfrt.multiply.i64 %[[C]], %[[D]]
  %3 = tfrt.multiply.i64 %c, %d
  // CHECK-NEXT: %{{.*}} = tfrt.minimum.i32 %[[A]], %[[B]]
  %4 = tfrt.minimum.i32 %a, %b
  // CHECK-NEXT: %{{.*}} = tfrt.minimum.i64 %[[C]], %[[D]]
  %5 = tfrt.minimum.i64 %c, %d
  // CHECK-NEXT: %[[Q:.*]]:2 = tfrt.div.i32 %[[A]], %[[B]]
  %q, %r = tfrt.div.i32 %a, %b
  // CHECK-NEXT: %{{.*}} = tfrt.equal.i32 %[[A]], %[[B]]
  %6 = tfrt.equal.i32 %a, %b
  // CHECK-NEXT: %{{.*}} = tfrt.equal.i64 %[[C]], %[[D]]
  %7 = tfrt.equal.i64 %c, %d
  // CHECK-NEXT: %{{.*}} = tfrt.lessequal.i32 %[[A]], %[[B]]
  %8 = tfrt.lessequal.i32 %a, %b
  // A kernel may take one extra trailing chain.
  // CHECK-NEXT: %[[LE:.*]] = tfrt.lessequal.i64 %[[C]], %[[D]], %[[CH]]
  %9 = "tfrt.lessequal.i64"(%c, %d, %ch) : (i64, i64, !tfrt.chain) -> i1
  // CHECK-NEXT: tfrt.return %[[Q]]#1, %{{.*}}, %{{.*}}, %[[LE]] : i32, i64, i1, i1
  tfrt.return %r, %1, %6, %9 : i32, i64, i1, i1
}

// CHECK-LABEL: func @float_arithmetic
// CHECK-SAME: (%[[A:.*]]: f32, %[[B:.*]]: f32, %[[C:.*]]: f64, %[[D:.*]]: f64)
func.func @float_arithmetic(%a: f32, %b: f32, %c: f64, %d: f64) {
  // CHECK-NEXT: tfrt.add.f32 %[[A]], %[[B]]
  %0 = tfrt.add.f32 %a, %b
  // CHECK-NEXT: tfrt.add.f64 %[[C]], %[[D]]
  %1 = tfrt.add.f64 %c, %d
  // Written in generic form, as TFRT programs do.
  // CHECK-NEXT: tfrt.div.f32 %[[A]], %[[B]]
  %2 = "tfrt.div.f32"(%a, %b) : (f32, f32) -> f32
  // CHECK-NEXT: tfrt.div.f64 %[[C]], %[[D]]
  %3 = "tfrt.div.f64"(%c, %d) : (f64, f64) -> f64
  // CHECK-NEXT: tfrt.minimum.f32 %[[A]], %[[B]]
  %4 = "tfrt.minimum.f32"(%a, %b) : (f32, f32) -> f32
  // CHECK-NEXT: tfrt.minimum.f64 %[[C]], %[[D]]
  %5 = "tfrt.minimum.f64"(%c, %d) : (f64, f64) -> f64
  // CHECK-NEXT: tfrt.multiply.f32 %[[A]], %[[B]]
  %6 = "tfrt.multiply.f32"(%a, %b) : (f32, f32) -> f32
  // CHECK-NEXT: tfrt.multiply.f64 %[[C]], %[[D]]
  %7 = "tfrt.multiply.f64"(%c, %d) : (f64, f64) -> f64
  tfrt.return
}

// CHECK-LABEL: func @casts
// CHECK-SAME: (%[[I:.*]]: i64, %[[F:.*]]: f32, %[[D:.*]]: f64)
func.func @casts(%i: i64, %f: f32, %d: f64) -> (f32, i64, f64, i64) {
  // CHECK-NEXT: %[[R0:.*]] = tfrt.cast.i64_to_f32 %[[I]]
  %0 = "tfrt.cast.i64_to_f32"(%i) : (i64) -> f32
  // CHECK-NEXT: %[[R1:.*]] = tfrt.cast.f32_to_i64 %[[F]]
  %1 = "tfrt.cast.f32_to_i64"(%f) : (f32) -> i64
  // CHECK-NEXT: %[[R2:.*]] = tfrt.cast.i64_to_f64 %[[I]]
  %2 = "tfrt.cast.i64_to_f64"(%i) : (i64) -> f64
  // CHECK-NEXT: %[[R3:.*]] = tfrt.cast.f64_to_i64 %[[D]]
  %3 = "tfrt.cast.f64_to_i64"(%d) : (f64) -> i64
  // CHECK-NEXT: tfrt.return %[[R0]], %[[R1]], %[[R2]], %[[R3]] : f32, i64, f64, i64
  tfrt.return %0, %1, %2, %3 : f32, i64, f64, i64
}

// CHECK-LABEL: func @prints
// CHECK-SAME: (%[[B:.*]]: i1, %[[I:.*]]: i32, %[[L:.*]]: i64, %[[F:.*]]: f32, %[[D:.*]]: f64)
func.func @prints(%b: i1, %i: i32, %l: i64, %f: f32, %d: f64) -> !tfrt.chain {
  // CHECK-NEXT: %[[CH0:.*]] = tfrt.new.chain
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: %[[CH1:.*]] = tfrt.print.i1 %[[B]], %[[CH0]]
  %ch1 = tfrt.print.i1 %b, %ch0
  // CHECK-NEXT: %[[CH2:.*]] = tfrt.print.i32 %[[I]], %[[CH1]]
  %ch2 = tfrt.print.i32 %i, %ch1
  // CHECK-NEXT: %[[CH3:.*]] = tfrt.print.i64 %[[L]], %[[CH2]]
  %ch3 = tfrt.print.i64 %l, %ch2
  // CHECK-NEXT: %[[CH4:.*]] = tfrt.print.f32 %[[F]], %[[CH3]]
  %ch4 = tfrt.print.f32 %f, %ch3
  // CHECK-NEXT: %[[CH5:.*]] = tfrt.print.f64 %[[D]], %[[CH4]]
  %ch5 = tfrt.print.f64 %d, %ch4
  // An unused print result is still printed (and kept).
  // CHECK-NEXT: tfrt.print.i32 %[[I]], %[[CH5]]
  tfrt.print.i32 %i, %ch5
  tfrt.return %ch5 : !tfrt.chain
}

func.func @add_one(%x: i32) -> i32 {
  %one = tfrt.constant.i32 1
  %y = tfrt.add.i32 %x, %one
  tfrt.return %y : i32
}

func.func @two_results(%x: i32) -> (i32, !tfrt.chain) {
  %ch = tfrt.new.chain
  tfrt.return %x, %ch : i32, !tfrt.chain
}

func.func @no_results() {
  tfrt.return
}

// CHECK-LABEL: func @calls
// CHECK-SAME: (%[[X:.*]]: i32)
func.func @calls(%x: i32) -> i32 {
  // CHECK-NEXT: %[[Y:.*]] = tfrt.call @add_one(%[[X]]) : (i32) -> i32
  %y = tfrt.call @add_one(%x) : (i32) -> i32
  // CHECK-NEXT: %{{.*}}:2 = tfrt.call @two_results(%[[Y]]) : (i32) -> (i32, !tfrt.chain)
  %z:2 = tfrt.call @two_results(%y) : (i32) -> (i32, !tfrt.chain)
  // CHECK-NEXT: tfrt.call @no_results() : () -> ()
  tfrt.call @no_results() : () -> ()
  // CHECK-NEXT: tfrt.return %[[Y]] : i32
  tfrt.return %y : i32
}

// Function attributes of the BEF tools, and the cost annotation on ops.
// CHECK-LABEL: func.func private @native_add(i32, i32) -> i32 attributes {tfrt.native}
func.func private @native_add(%a: i32, %b: i32) -> i32 attributes {tfrt.native}

// CHECK-LABEL: func @sync_function
// CHECK-SAME: attributes {tfrt.cost_threshold = 10 : i64, tfrt.sync}
func.func @sync_function(%x: i32) -> i32 attributes {tfrt.sync, tfrt.cost_threshold = 10 : i64} {
  // CHECK-NEXT: tfrt.add.i32 %{{.*}}, %{{.*}} {_tfrt_cost = 3 : i64}
  %y = tfrt.add.i32 %x, %x {_tfrt_cost = 3 : i64}
  tfrt.return %y : i32
}

// CHECK-LABEL: func @if(
// CHECK-SAME: %[[C:.*]]: i1, %[[A:.*]]: i32, %[[B:.*]]: i32)
func.func @if(%c: i1, %a: i32, %b: i32) -> i32 {
  // The regions name their arguments after the operands.
  // CHECK-NEXT: %[[R:.*]] = tfrt.if %[[C]], %[[A]], %[[B]] : (i32, i32) -> (i32) {
  // CHECK-NEXT:   %[[S:.*]] = tfrt.add.i32 %[[A]], %[[B]]
  // CHECK-NEXT:   tfrt.return %[[S]] : i32
  // CHECK-NEXT: } else {
  // CHECK-NEXT:   tfrt.return %[[B]] : i32
  // CHECK-NEXT: }
  %r = tfrt.if %c, %a, %b : (i32, i32) -> i32 {
    %s = tfrt.add.i32 %a, %b
    tfrt.return %s : i32
  } else {
    tfrt.return %b : i32
  }
  // Without else and results; the implicit else is not printed.
  // CHECK-NEXT: tfrt.if %[[C]] : () -> () {
  // CHECK-NEXT:   tfrt.return
  // CHECK-NEXT: }
  // CHECK-NEXT: tfrt.if %[[C]], %[[A]] attributes {_tfrt_cost = 2 : i64} : (i32) -> () {
  // CHECK-NEXT:   %{{.*}} = tfrt.new.chain
  // CHECK-NEXT:   tfrt.return
  // CHECK-NEXT: }
  tfrt.if %c : () -> () {
    tfrt.return
  }
  tfrt.if %c, %a attributes {_tfrt_cost = 2 : i64} : (i32) -> () {
    %ch = tfrt.new.chain
    tfrt.return
  }
  // CHECK-NEXT: tfrt.return %[[R]] : i32
  tfrt.return %r : i32
}

// CHECK-LABEL: func @repeat
// CHECK-SAME: (%[[N:.*]]: i32, %[[F:.*]]: f32, %[[CH:.*]]: !tfrt.chain)
func.func @repeat(%n: i32, %f: f32, %ch: !tfrt.chain) -> (i32, f32) {
  // The trip count may also be carried.
  // CHECK-NEXT: %[[R:.*]]:2 = tfrt.repeat.i32 %[[N]], %[[N]], %[[F]] : i32, f32 {
  // CHECK-NEXT:   %[[G:.*]] = tfrt.add.f32 %[[F]], %[[F]]
  // CHECK-NEXT:   tfrt.return %[[N]], %[[G]] : i32, f32
  // CHECK-NEXT: }
  %r:2 = tfrt.repeat.i32 %n, %n, %f : i32, f32 {
    %g = tfrt.add.f32 %f, %f
    tfrt.return %n, %g : i32, f32
  }
  // CHECK-NEXT: tfrt.repeat.i32 %[[N]] {
  // CHECK-NEXT:   tfrt.return
  // CHECK-NEXT: }
  tfrt.repeat.i32 %n {
    tfrt.return
  }
  // Regions nest; each sees only its own arguments.
  // CHECK-NEXT: %{{.*}} = tfrt.repeat.i32 %[[N]], %[[CH]] : !tfrt.chain {
  // CHECK-NEXT:   %[[T:.*]] = tfrt.constant.i1 true
  // CHECK-NEXT:   %{{.*}} = tfrt.if %[[T]], %[[CH]] : (!tfrt.chain) -> (!tfrt.chain) {
  %c = tfrt.repeat.i32 %n, %ch : !tfrt.chain {
    %t = tfrt.constant.i1 true
    %next = tfrt.if %t, %ch : (!tfrt.chain) -> (!tfrt.chain) {
      %x = tfrt.constant.i32 0
      %ch1 = tfrt.print.i32 %x, %ch
      tfrt.return %ch1 : !tfrt.chain
    } else {
      tfrt.return %ch : !tfrt.chain
    }
    tfrt.return %next : !tfrt.chain
  }
  // CHECK: tfrt.return %[[R]]#0, %[[R]]#1 : i32, f32
  tfrt.return %r#0, %r#1 : i32, f32
}

// CHECK-LABEL: func @parallel_for
// CHECK-SAME: (%[[S:.*]]: i32, %[[E:.*]]: i32, %[[BS:.*]]: i32, %[[X:.*]]: f32)
func.func @parallel_for(%s: i32, %e: i32, %bs: i32, %x: f32) -> !tfrt.chain {
  // The body sees the block bounds under the names of the bounds.
  // CHECK-NEXT: %{{.*}} = tfrt.parallel_for.i32 %[[S]] to %[[E]] fixed %[[BS]], %[[X]] : f32 {
  // CHECK-NEXT:   "use"(%[[S]], %[[E]], %[[X]]) : (i32, i32, f32) -> ()
  // CHECK-NEXT:   tfrt.return
  // CHECK-NEXT: }
  %0 = tfrt.parallel_for.i32 %s to %e fixed %bs, %x : f32 {
    "use"(%s, %e, %x) : (i32, i32, f32) -> ()
    tfrt.return
  }
  // CHECK-NEXT: %[[DONE:.*]] = tfrt.parallel_for.i32 %[[S]] to %[[E]] fixed %[[BS]] {
  // CHECK-NEXT:   %[[CH:.*]] = tfrt.new.chain
  // CHECK-NEXT:   tfrt.return %[[CH]] : !tfrt.chain
  // CHECK-NEXT: }
  %1 = tfrt.parallel_for.i32 %s to %e fixed %bs {
    %ch = tfrt.new.chain
    tfrt.return %ch : !tfrt.chain
  }
  tfrt.return %1 : !tfrt.chain
}

func.func @block(%start: i32, %end: i32, %x: f32) -> !tfrt.chain {
  %ch = tfrt.new.chain
  tfrt.return %ch : !tfrt.chain
}

func.func @sync_block(%start: i32, %end: i32) {
  tfrt.return
}

// CHECK-LABEL: func @parallel_call
// CHECK-SAME: (%[[S:.*]]: i32, %[[E:.*]]: i32, %[[BS:.*]]: i32, %[[X:.*]]: f32)
func.func @parallel_call(%s: i32, %e: i32, %bs: i32, %x: f32) -> !tfrt.chain {
  // CHECK-NEXT: tfrt.parallel_call.i32 %[[S]] to %[[E]] fixed %[[BS]] @block(%[[X]]) : f32
  %0 = tfrt.parallel_call.i32 %s to %e fixed %bs @block(%x) : f32
  // CHECK-NEXT: tfrt.parallel_call.i32 %[[S]] to %[[E]] fixed %[[BS]] @sync_block()
  %1 = tfrt.parallel_call.i32 %s to %e fixed %bs @sync_block()
  tfrt.return %0 : !tfrt.chain
}

func.func @identity(%x: i32) -> i32 {
  tfrt.return %x : i32
}

func.func @double(%x: i32) -> i32 {
  %y = tfrt.add.i32 %x, %x
  tfrt.return %y : i32
}

// CHECK-LABEL: func @cond_and_case
// CHECK-SAME: (%[[C:.*]]: i1, %[[I:.*]]: i32, %[[X:.*]]: i32)
func.func @cond_and_case(%c: i1, %i: i32, %x: i32) -> (i32, i32) {
  // CHECK-NEXT: %{{.*}} = tfrt.cond %[[C]] @identity @double(%[[X]]) : (i32) -> (i32)
  %0 = tfrt.cond %c @identity @double (%x) : (i32) -> (i32)
  // CHECK-NEXT: %{{.*}} = tfrt.case %[[I]] [@identity, @double](%[[X]]) : (i32) -> (i32)
  %1 = tfrt.case %i [@identity, @double] (%x) : (i32) -> (i32)
  tfrt.return %0, %1 : i32, i32
}

func.func @chained_double(%ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32) {
  %y = tfrt.add.i32 %x, %x
  tfrt.return %ch, %y : !tfrt.chain, i32
}

// TFRT's chained form: the leading chain operand and result are not in the
// type lists, and it prints the same way.
// CHECK-LABEL: func @chained_case
// CHECK-SAME: (%[[I:.*]]: i32, %[[CH:.*]]: !tfrt.chain, %[[X:.*]]: i32)
func.func @chained_case(%i: i32, %ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32) {
  // CHECK-NEXT: %[[R:.*]]:2 = tfrt.case %[[I]] [@chained_double](%[[CH]], %[[X]]) : (i32) -> (i32)
  %ch1, %y = tfrt.case %i [@chained_double] (%ch, %x) : (i32) -> (i32)
  // CHECK-NEXT: tfrt.case %[[I]] [@chained_double](%[[R]]#0, %[[R]]#1) : (i32) -> (i32)
  %ch2, %z = tfrt.case %i [@chained_double] (%ch1, %y) : (!tfrt.chain, i32) -> (!tfrt.chain, i32)
  tfrt.return %ch2, %z : !tfrt.chain, i32
}

func.func @while_body(%ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32, i1) {
  %b = tfrt.constant.i1 false
  tfrt.return %ch, %x, %b : !tfrt.chain, i32, i1
}

// CHECK-LABEL: func @while(
// CHECK-SAME: %[[C:.*]]: i1, %[[CH:.*]]: !tfrt.chain, %[[X:.*]]: i32)
func.func @while(%c: i1, %ch: !tfrt.chain, %x: i32) -> (!tfrt.chain, i32) {
  // CHECK-NEXT: %{{.*}}:2 = tfrt.while %[[C]] @while_body(%[[CH]], %[[X]]) parallel_iterations(4) : (!tfrt.chain, i32) -> (!tfrt.chain, i32)
  %0:2 = tfrt.while %c @while_body(%ch, %x) parallel_iterations(4) : (!tfrt.chain, i32) -> (!tfrt.chain, i32)
  tfrt.return %0#0, %0#1 : !tfrt.chain, i32
}

// CHECK-LABEL: func @once
// CHECK-SAME: (%[[X:.*]]: i32)
func.func @once(%x: i32) -> i32 {
  // CHECK-NEXT: %{{.*}} = tfrt.once @add_one(%[[X]]) : (i32) -> (i32)
  %0 = tfrt.once @add_one(%x) : (i32) -> (i32)
  tfrt.return %0 : i32
}

// Ops the dialect does not define are kernels named in generic form.
// CHECK-LABEL: func @unknown_tfrt_op
func.func @unknown_tfrt_op(%x: i32) -> i32 {
  // CHECK-NEXT: %{{.*}} = "tfrt.async_add.i32"(%{{.*}}, %{{.*}}) : (i32, i32) -> i32
  %0 = "tfrt.async_add.i32"(%x, %x) : (i32, i32) -> i32
  tfrt.return %0 : i32
}
