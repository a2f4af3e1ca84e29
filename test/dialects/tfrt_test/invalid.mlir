// Verifier and parser errors of the tfrt_test ops.
// RUN: asyncrt-opt %s -split-input-file -verify-diagnostics

func.func @do_async_return_type(%x: i32) {
  %r = tfrt_test.do.async %x : (i32) -> (f32) {
    // expected-error @+1 {{'tfrt.return' op operand types don't match 'tfrt_test.do.async' result types: (i32) vs (f32)}}
    tfrt.return %x : i32
  }
  tfrt.return
}

// -----

func.func @benchmark_returns_nothing() {
  %done = tfrt_test.benchmark "nothing"() duration_secs = 1, max_count = 1 {
    // expected-error @+1 {{'tfrt.return' op must return exactly one value from 'tfrt_test.benchmark', but returns 0}}
    tfrt.return
  }
  tfrt.return
}

// -----

func.func @benchmark_missing_setting() {
  // expected-error @+1 {{expected 'max_count = <integer>'}}
  tfrt_test.benchmark "x"() duration_secs = 1 {
    %k = tfrt.constant.i32 1
    tfrt.return %k : i32
  }
  tfrt.return
}

// -----

func.func @benchmark_unknown_setting() {
  // expected-error @+1 {{unknown benchmark setting 'iterations'}}
  tfrt_test.benchmark "x"() duration_secs = 1, iterations = 3 {
    %k = tfrt.constant.i32 1
    tfrt.return %k : i32
  }
  tfrt.return
}

// -----

func.func @target(%x: i32) attributes {tfrt.sync} {
  tfrt.return
}

func.func @sync_benchmark_operands(%x: f32) attributes {tfrt.sync} {
  // expected-error @+1 {{'tfrt_test.sync_benchmark' op expects @target to take (f32), but it takes (i32)}}
  tfrt_test.sync_benchmark @target(%x : f32) duration_secs = 1, max_count = 1
  tfrt.return
}

// -----

func.func @count3_type(%x: i64) {
  // expected-error @+1 {{'tfrt_test.count3.i32' op operand #0 must be 32-bit signless integer, but got 'i64'}}
  %a:3 = "tfrt_test.count3.i32"(%x) : (i64) -> (i64, i64, i64)
  tfrt.return
}

// -----

func.func @zero_cost(%x: i32) -> i32 {
  // expected-error @+1 {{'tfrt_test.test_cost' op cost value must be larger than 0}}
  %r = tfrt_test.test_cost %x {id = 0 : i64, _tfrt_cost = 0 : i64} : i32
  tfrt.return %r : i32
}
