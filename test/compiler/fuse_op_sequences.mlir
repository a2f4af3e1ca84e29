// -corert-fuse-op-sequences: a chain of corert.executeop on one handler,
// each result read only by the next op, becomes one
// corert.execute_sequence; anything else stays as it is.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -corert-fuse-op-sequences %s | FileCheck %s
// The fused program round-trips through its generic form:
// RUN: asyncrt-opt -corert-fuse-op-sequences %s | asyncrt-opt | FileCheck %s

// Values from outside are numbered first (%b once though read twice), then
// each op's result; the op's last result replaces the chain's.
// CHECK-LABEL: func.func @chain
// CHECK-SAME: (%[[CPU:.*]]: !corert.ophandler, %[[A:.*]]: !corert.tensorhandle, %[[B:.*]]: !corert.tensorhandle)
// CHECK-NEXT: %[[R:.*]] = "corert.execute_sequence"(%[[CPU]], %[[A]], %[[B]])
// CHECK-SAME: op_attrs = {{\[}}[], {{\[}}["axis", 1 : i32]], []]
// CHECK-SAME: op_names = ["tfrt_test.add", "tfrt_test.argmax", "tfrt_test.add"]
// CHECK-SAME: op_operand_counts = [2 : i32, 1 : i32, 2 : i32]
// CHECK-SAME: op_operands = [0 : i32, 1 : i32, 2 : i32, 3 : i32, 1 : i32]
// CHECK-NEXT: tfrt.return %[[R]]
func.func @chain(%cpu: !corert.ophandler, %a: !corert.tensorhandle,
                 %b: !corert.tensorhandle) -> !corert.tensorhandle {
  %x = corert.executeop(%cpu) "tfrt_test.add"(%a, %b) : 1
  %y = corert.executeop(%cpu) "tfrt_test.argmax"(%x) {axis = 1 : i32} : 1
  %z = corert.executeop(%cpu) "tfrt_test.add"(%y, %b) : 1
  tfrt.return %z : !corert.tensorhandle
}

// %x is read by two ops: the chain starts after it. An op reading its
// predecessor twice continues the chain.
// CHECK-LABEL: func.func @shared_value
// CHECK-NEXT: %[[X:.*]] = corert.executeop(%{{.*}}) "tfrt_test.add"(%arg1, %arg1)
// CHECK-NEXT: %[[S:.*]] = "corert.execute_sequence"(%arg0, %[[X]])
// CHECK-SAME: op_operands = [0 : i32, 0 : i32, 1 : i32, 1 : i32, 2 : i32, 0 : i32]
// CHECK-NEXT: tfrt.return %[[S]], %[[X]]
func.func @shared_value(%cpu: !corert.ophandler, %a: !corert.tensorhandle)
    -> (!corert.tensorhandle, !corert.tensorhandle) {
  %x = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %y = corert.executeop(%cpu) "tfrt_test.add"(%x, %x) : 1
  %z = corert.executeop(%cpu) "tfrt_test.add"(%y, %y) : 1
  %w = corert.executeop(%cpu) "tfrt_test.add"(%z, %x) : 1
  tfrt.return %w, %x : !corert.tensorhandle, !corert.tensorhandle
}

// Not fused: another handler, an op of two results, an op with function
// attributes, an op ordered by a chain, and a lone op.
// CHECK-LABEL: func.func @not_fused
// CHECK-NOT: corert.execute_sequence
// CHECK: tfrt.return
func.func @not_fused(%cpu: !corert.ophandler, %other: !corert.ophandler,
                     %a: !corert.tensorhandle, %ch: !tfrt.chain)
    -> (!corert.tensorhandle, !corert.tensorhandle, !tfrt.chain) {
  %x = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %y = corert.executeop(%other) "tfrt_test.add"(%x, %a) : 1
  %p, %q = corert.executeop(%cpu) "tfrt_test.split"(%y) : 2
  %f = corert.executeop(%cpu) "tfrt_test.call"(%p) {} {fn = @chain} : 1
  %ch1, %g = corert.executeop.seq(%cpu, %ch) "tfrt_test.add"(%f, %q) : 1
  %h = corert.executeop(%cpu) "tfrt_test.add"(%g, %g) : 1
  tfrt.return %h, %q, %ch1 : !corert.tensorhandle, !corert.tensorhandle, !tfrt.chain
}

// An op fed by two chain heads continues the first one's chain only.
// CHECK-LABEL: func.func @two_heads
// CHECK-NEXT: %[[B:.*]] = corert.executeop(%arg0) "tfrt_test.create_dense_tensor"()
// CHECK-NEXT: %[[S:.*]] = "corert.execute_sequence"(%arg0, %[[B]])
// CHECK-SAME: op_names = ["tfrt_test.create_dense_tensor", "tfrt_test.add", "tfrt_test.add"]
// CHECK-SAME: op_operands = [1 : i32, 0 : i32, 2 : i32, 2 : i32]
// CHECK-NEXT: tfrt.return %[[S]]
func.func @two_heads(%cpu: !corert.ophandler) -> !corert.tensorhandle {
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1 : i32]} : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [2 : i32]} : 1
  %c = corert.executeop(%cpu) "tfrt_test.add"(%a, %b) : 1
  %d = corert.executeop(%cpu) "tfrt_test.add"(%c, %c) : 1
  tfrt.return %d : !corert.tensorhandle
}
