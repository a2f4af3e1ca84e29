// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor --test_init_function=setup --functions=second,first %t.bef 2>&1 | FileCheck %s
// RUN: not bef_executor --functions=missing %t.bef 2>&1 | FileCheck %s --check-prefix=MISSING
// RUN: not bef_executor --work_queue_type=bogus %t.bef 2>&1 | FileCheck %s --check-prefix=QUEUE
// RUN: bef_executor %s 2>&1 | FileCheck %s --check-prefix=MLIR
// RUN: cat %t.bef | bef_executor --functions=first - | FileCheck %s --check-prefix=STDIN

// CHECK: --- Running 'setup'
// CHECK-NEXT: string = setting up
// CHECK-NEXT: --- Running 'second'
// CHECK-NEXT: 'second' returned 2
// CHECK-NEXT: --- Running 'first'
// CHECK-NEXT: 'first' returned 1
// CHECK-NOT: setting up

// MISSING: error: no function named 'missing'
// QUEUE: error: invalid work queue type 'bogus'

// .mlir input is converted in-process.
// MLIR: --- Running 'first'
// MLIR: --- Running 'second'
// MLIR: --- Running 'setup'

// STDIN: 'first' returned 1

func.func @first() -> i32 {
  %x = tfrt.constant.i32 1
  tfrt.return %x : i32
}

func.func @second() -> i32 {
  %x = tfrt.constant.i32 2
  tfrt.return %x : i32
}

func.func @setup() {
  %ch0 = tfrt.new.chain
  %s = "tfrt_test.get_string"() { value = "setting up" } : () -> !tfrt.string
  %ch1 = "tfrt_test.print_string"(%s, %ch0) : (!tfrt.string, !tfrt.chain) -> !tfrt.chain
  tfrt.return
}
