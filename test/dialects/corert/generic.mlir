// corert.executeop in custom form is the generic op with op_attrs
// (["key", value] pairs in the order written), op_func_attrs and op_name.
// RUN: asyncrt-opt %s --mlir-print-op-generic | FileCheck %s

func.func @callee() {
  tfrt.return
}

func.func @executeop(%h: !corert.ophandler, %a: !corert.tensorhandle,
                     %b: !corert.tensorhandle, %ch: !tfrt.chain) {
  // CHECK: "corert.executeop"(%{{.*}}, %{{.*}}, %{{.*}}) {op_attrs = {{\[\[}}"transpose_a", false], ["shape", [1, 2]]], op_func_attrs = [], op_name = "tfrt_test.add"} : (!corert.ophandler, !corert.tensorhandle, !corert.tensorhandle) -> !corert.tensorhandle
  %r = corert.executeop(%h) "tfrt_test.add"(%a, %b) {transpose_a = false, shape = [1, 2]} : 1
  // CHECK: "corert.executeop"(%{{.*}}) {op_attrs = {{\[\[}}"z", 1 : i32], ["a", "s"]], op_func_attrs = {{\[\[}}"f", @callee], ["g", @callee]], op_name = "x"} : (!corert.ophandler) -> ()
  corert.executeop(%h) "x"() {z = 1 : i32, f = @callee, a = "s"} {g = @callee}
  // CHECK: "corert.executeop.seq"(%{{.*}}, %{{.*}}, %{{.*}}) {op_attrs = [], op_func_attrs = [], op_name = "tfrt_test.print"} : (!corert.ophandler, !tfrt.chain, !corert.tensorhandle) -> !tfrt.chain
  %ch1 = corert.executeop.seq(%h, %ch) "tfrt_test.print"(%r)
  // CHECK: "corert.executeop.seq"(%{{.*}}, %{{.*}}) {op_attrs = [], op_func_attrs = [], op_name = "y"} : (!corert.ophandler, !tfrt.chain) -> (!tfrt.chain, !corert.tensorhandle, !corert.tensorhandle)
  %ch2, %x:2 = corert.executeop.seq(%h, %ch1) "y"() : 2
  tfrt.return
}

func.func @sync(%h: !corert.ophandler) attributes {tfrt.sync} {
  // CHECK: "corert_sync.executeop"(%{{.*}}) {op_attrs = {{\[\[}}"b", 1], ["a", 2]], op_name = "z"} : (!corert.ophandler) -> !corert.tensorhandle
  %r = corert_sync.executeop(%h) "z"() {b = 1, a = 2} : 1
  tfrt.return
}
