// The program embedding_test runs: compiled to BEF by asyncrt-translate.
func.func @main(%x: i32, %y: i32) -> i32 {
  %product = "tfrt.multiply.i32"(%x, %y) : (i32, i32) -> i32
  %one = tfrt.constant.i32 1
  %sum = tfrt.add.i32 %product, %one
  tfrt.return %sum : i32
}
