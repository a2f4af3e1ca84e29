// A small AsyncRT program: `make run` compiles it to BEF and runs it with
//   build/bin/asyncrt-translate -mlir-to-bef examples/tour.mlir -o build/tour.bef
//   build/bin/bef_executor --work_queue_type=mstd:2 build/tour.bef

func.func @hello() {
  %ch0 = tfrt.new.chain
  %ch1 = "tfrt_test.print_hello"(%ch0) : (!tfrt.chain) -> !tfrt.chain
  tfrt.return
}

func.func @square(%x: i32) -> i32 {
  %y = "tfrt.multiply.i32"(%x, %x) : (i32, i32) -> i32
  tfrt.return %y : i32
}

// Sum of squares 1..10, with the additions computed on the work queue.
func.func @sum_of_squares() -> i32 {
  %count = tfrt.constant.i32 10
  %zero = tfrt.constant.i32 0
  %sum, %i = tfrt.repeat.i32 %count, %zero, %zero : i32, i32 {
    %one = tfrt.constant.i32 1
    %next = tfrt.add.i32 %i, %one
    %sq = tfrt.call @square(%next) : (i32) -> i32
    %total = "tfrt_test.async_add.i32"(%sum, %sq) : (i32, i32) -> i32
    tfrt.return %total, %next : i32, i32
  }
  tfrt.return %sum : i32
}

// Errors are values: they flow to the results and skip the kernels that
// depend on them.
func.func @safe_divide() -> (i32, i32) {
  %x = tfrt.constant.i32 84
  %two = tfrt.constant.i32 2
  %q, %r = tfrt.div.i32 %x, %two
  %ch0 = tfrt.new.chain
  %ch1 = tfrt.print.i32 %q, %ch0
  tfrt.return %q, %r : i32, i32
}
