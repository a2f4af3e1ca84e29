// Round trip of the tfrt_test ops with custom syntax, and of unknown
// tfrt_test ops in generic form.
// RUN: asyncrt-opt %s | asyncrt-opt | FileCheck %s
// RUN: asyncrt-opt %s --mlir-print-op-generic | asyncrt-opt | FileCheck %s

// CHECK-LABEL: func @count3
// CHECK-SAME: (%[[X:.*]]: i32, %[[Y:.*]]: i64)
func.func @count3(%x: i32, %y: i64) -> (i32, i64) {
  // CHECK-NEXT: %[[A:.*]]:3 = tfrt_test.count3.i32 %[[X]]
  %a, %b, %c = tfrt_test.count3.i32 %x
  // CHECK-NEXT: %[[B:.*]]:3 = tfrt_test.count3.i64 %[[Y]]
  %d:3 = tfrt_test.count3.i64 %y
  // CHECK-NEXT: tfrt.return %[[A]]#2, %[[B]]#1 : i32, i64
  tfrt.return %c, %d#1 : i32, i64
}

// CHECK-LABEL: func @get_string
func.func @get_string() -> !tfrt.string {
  // CHECK-NEXT: %[[S:.*]] = tfrt_test.get_string {value = "bark"}
  %s = "tfrt_test.get_string"() {value = "bark"} : () -> !tfrt.string
  // CHECK-NEXT: tfrt.return %[[S]] : !tfrt.string
  tfrt.return %s : !tfrt.string
}

// CHECK-LABEL: func @do_async
// CHECK-SAME: (%[[A:.*]]: i32, %[[B:.*]]: i32)
func.func @do_async(%a: i32, %b: i32) -> i32 {
  // The region names its arguments after the operands.
  // CHECK-NEXT: %[[R:.*]] = tfrt_test.do.async %[[A]], %[[B]] : (i32, i32) -> (i32) {
  // CHECK-NEXT:   %[[S:.*]] = tfrt.add.i32 %[[A]], %[[B]]
  // CHECK-NEXT:   tfrt.return %[[S]] : i32
  // CHECK-NEXT: }
  %r = tfrt_test.do.async %a, %b : (i32, i32) -> (i32) {
    %s = tfrt.add.i32 %a, %b
    tfrt.return %s : i32
  }
  // CHECK-NEXT: tfrt_test.do.async : () -> () {
  // CHECK-NEXT:   %[[CH:.*]] = tfrt.new.chain
  // CHECK-NEXT:   %{{.*}} = "tfrt_test.print_hello"(%[[CH]]) : (!tfrt.chain) -> !tfrt.chain
  // CHECK-NEXT:   tfrt.return
  // CHECK-NEXT: }
  tfrt_test.do.async : () -> () {
    %ch = tfrt.new.chain
    "tfrt_test.print_hello"(%ch) : (!tfrt.chain) -> !tfrt.chain
    tfrt.return
  }
  // CHECK-NEXT: tfrt.return %[[R]] : i32
  tfrt.return %r : i32
}

// CHECK-LABEL: func @benchmark
// CHECK-SAME: (%[[C:.*]]: i32, %[[D:.*]]: f32)
func.func @benchmark(%c: i32, %d: f32) {
  // CHECK-NEXT: %{{.*}} = tfrt_test.benchmark "add.i32"() duration_secs = 1, max_count = 100, num_warmup_runs = 10 {
  // CHECK-NEXT:   %[[K:.*]] = tfrt.constant.i32 42
  // CHECK-NEXT:   %[[X:.*]] = tfrt.add.i32 %[[K]], %[[K]]
  // CHECK-NEXT:   tfrt.return %[[X]] : i32
  // CHECK-NEXT: }
  tfrt_test.benchmark "add.i32"() duration_secs = 1, max_count = 100, num_warmup_runs = 10
  {
    %k = tfrt.constant.i32 42
    %x = tfrt.add.i32 %k, %k
    tfrt.return %x : i32
  }
  // Settings in any order; num_warmup_runs may be left out.
  // CHECK-NEXT: %{{.*}} = tfrt_test.benchmark "mixed"(%[[C]] : i32, %[[D]] : f32) duration_secs = 2, max_count = 5 {
  // CHECK-NEXT:   %[[F:.*]] = tfrt.add.f32 %[[D]], %[[D]]
  // CHECK-NEXT:   tfrt.return %[[F]] : f32
  // CHECK-NEXT: }
  tfrt_test.benchmark "mixed"(%c : i32, %d : f32) max_count = 5, duration_secs = 2 {
    %f = tfrt.add.f32 %d, %d
    tfrt.return %f : f32
  }
  tfrt.return
}

func.func @fibonacci(%a: i32, %b: i32) attributes {tfrt.sync} {
  tfrt.return
}

// CHECK-LABEL: func @sync_benchmark
// CHECK-SAME: (%[[A:.*]]: i32)
func.func @sync_benchmark(%a: i32) attributes {tfrt.sync} {
  // CHECK-NEXT: tfrt_test.sync_benchmark @fibonacci(%[[A]] : i32, %[[A]] : i32) duration_secs = 1, max_count = 1000000, num_warmup_runs = 10
  tfrt_test.sync_benchmark @fibonacci(%a : i32, %a : i32)
      duration_secs = 1, max_count = 1000000, num_warmup_runs = 10
  tfrt.return
}

// CHECK-LABEL: func @test_cost
// CHECK-SAME: (%[[X:.*]]: i32)
func.func @test_cost(%x: i32) -> i32 {
  // CHECK-NEXT: %[[R:.*]] = tfrt_test.test_cost %[[X]] {_tfrt_cost = 100 : i64, id = 0 : i64} : i32
  %r = tfrt_test.test_cost %x {id = 0 : i64, _tfrt_cost = 100 : i64} : i32
  tfrt.return %r : i32
}

// Test kernels without a definition are accepted in generic form, with
// their own types.
// CHECK-LABEL: func @unknown_ops
func.func @unknown_ops() -> !tfrt.chain {
  // CHECK-NEXT: %[[CH:.*]] = tfrt.new.chain
  %ch0 = tfrt.new.chain
  // CHECK-NEXT: %[[RES:.*]]:2 = "tfrt_test.allocate_resource"(%[[CH]]) : (!tfrt.chain) -> (!tfrt.test.resource, !tfrt.chain)
  %res, %ch1 = "tfrt_test.allocate_resource"(%ch0) : (!tfrt.chain) -> (!tfrt.test.resource, !tfrt.chain)
  // CHECK-NEXT: %[[ATOM:.*]] = "tfrt_test.atomic.create.i32"() : () -> !tfrt_test.atomic.i32
  %atom = "tfrt_test.atomic.create.i32"() : () -> !tfrt_test.atomic.i32
  // CHECK-NEXT: "tfrt_test.deallocate_resource"(%[[RES]]#0, %[[RES]]#1)
  %ch2 = "tfrt_test.deallocate_resource"(%res, %ch1) : (!tfrt.test.resource, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}

// CHECK-LABEL: func @print_typed_attr
func.func @print_typed_attr(%ch: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: %[[A:.*]] = tfrt_test.print_typed_attr %{{.*}} {value = 1 : i64}
  %a = tfrt_test.print_typed_attr %ch {value = 1 : i64}
  // CHECK-NEXT: tfrt_test.print_typed_attr %[[A]] {value = false}
  %b = tfrt_test.print_typed_attr %a {value = false}
  tfrt.return %b : !tfrt.chain
}

// The untyped form takes and returns chains (TFRT's stream analysis tests).
// CHECK-LABEL: func @test_cost_chains
// CHECK-SAME: (%[[CH:.*]]: !tfrt.chain)
func.func @test_cost_chains(%ch: !tfrt.chain) -> !tfrt.chain {
  // CHECK-NEXT: %[[R:.*]] = tfrt_test.test_cost %[[CH]] {_tfrt_cost = 4 : i64, id = 1 : i64}
  // CHECK-NEXT: tfrt.return %[[R]] : !tfrt.chain
  %r = tfrt_test.test_cost %ch {id = 1 : i64, _tfrt_cost = 4 : i64}
  tfrt.return %r : !tfrt.chain
}
