// Input of bef_corruption_test.py: calls, a region, attributes of several
// kinds (dense float and complex elements, a compiled module's symbol),
// kernel streams (the cost threshold), an error path.
module attributes {tfrt.cost_threshold = 10 : i64} {

module @kernel attributes {tfrt.compiled} {
  func.func @main() {
    return
  }
}

func.func @callee(%x: i32) -> i32 {
  %y = tfrt.add.i32 %x, %x
  tfrt.return %y : i32
}

func.func @main() -> (i32, i32) {
  %ch0 = tfrt.new.chain
  %c = tfrt.constant.i32 3
  %r = tfrt.call @callee(%c) : (i32) -> i32
  %t = tfrt.constant.i1 1
  %s = tfrt.if %t, %r : (i32) -> (i32) {
    tfrt.return %r : i32
  } else {
    tfrt.return %r : i32
  }
  %str = "tfrt_test.get_string"() {value = "text"} : () -> !tfrt.string
  %ch1 = "tfrt_test.print_string"(%str, %ch0) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  %a, %b, %f = "tfrt_test.flat"() {value = [["x", [1 : i32]], [2.0 : f32]]} : () -> (!tfrt.string, i32, f32)
  %ch2 = "tfrt.new.chain"() {unit = @kernel::@main} : () -> !tfrt.chain
  %d = corert.const_dense_tensor dense<[(1.0, 2.0)]> : tensor<1xcomplex<f32>>
  %e = corert.const_dense_tensor dense<[0.5, 1.5]> : tensor<2xf32>
  tfrt.return %s, %b : i32, i32
}

}
