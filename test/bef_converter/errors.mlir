// RUN: asyncrt-translate -mlir-to-bef -split-input-file -verify-diagnostics %s

func.func @no_return() -> i32 {
  // expected-error @+1 {{all functions need to have a tfrt.return}}
  %x = "test.op"() : () -> i32
}

// -----

// expected-error @+1 {{external functions are not allowed}}
func.func private @declared_only() -> i32

// -----

func.func @bad_symbol() {
  // expected-error @+1 {{function @nowhere not defined}}
  "test.op"() { target = @nowhere } : () -> ()
  tfrt.return
}

// -----

func.func @tensor_type_attribute() {
  // expected-error @+1 {{BEF files cannot encode the 'kind' attribute}}
  "test.op"() { kind = tensor<2xi32> } : () -> ()
  tfrt.return
}

// -----

func.func @sync_returns_argument(%x: i32) -> i32 attributes {tfrt.sync} {
  // expected-error @+1 {{return value 0 is an argument in a sync function}}
  tfrt.return %x : i32
}

// -----

func.func @sync_returns_twice() -> (i32, i32) attributes {tfrt.sync} {
  %x = tfrt.constant.i32 1
  // expected-error @+1 {{return value 1 is duplicated in a sync function}}
  tfrt.return %x, %x : i32, i32
}
