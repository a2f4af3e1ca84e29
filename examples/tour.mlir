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
  // The loop body sees the loop values under the names passed in.
  %sum = tfrt.constant.i32 0
  %i = tfrt.constant.i32 0
  %total, %last = tfrt.repeat.i32 %count, %sum, %i : i32, i32 {
    %one = tfrt.constant.i32 1
    %next = tfrt.add.i32 %i, %one
    %sq = tfrt.call @square(%next) : (i32) -> i32
    %acc = "tfrt_test.async_add.i32"(%sum, %sq) : (i32, i32) -> i32
    tfrt.return %acc, %next : i32, i32
  }
  tfrt.return %total : i32
}

// Several results, and a print ordered by its chain.
func.func @divide() -> (i32, i32, !tfrt.chain) {
  %x = tfrt.constant.i32 84
  %two = tfrt.constant.i32 2
  %q, %r = tfrt.div.i32 %x, %two
  %ch0 = tfrt.new.chain
  %ch1 = tfrt.print.i32 %q, %ch0
  // Returning the print's chain makes callers wait for the print.
  tfrt.return %q, %r, %ch1 : i32, i32, !tfrt.chain
}
