// corert.executeop prepares its op and freezes its attributes on the first
// run and reuses them: the same kernel run many times, and run on another
// handler than the one it was prepared for, still computes the right thing.
// RUN: bef_executor --test_init_function=register_handlers %s 2>&1 | FileCheck %s

func.func @register_handlers() {
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  corert.register_op_handler %cpu "cpu"
  corert.register_op_handler %null "null"
  tfrt.return
}

func.func @double(%h: !corert.ophandler, %x: !corert.tensorhandle) -> !corert.tensorhandle {
  // Only when called with the null handler, in 'other_handler':
  // expected-error @+1 {{runtime error: tfrt_test.add was not supported by NullOpHandler.}}
  %y = corert.executeop(%h) "tfrt_test.add"(%x, %x) : 1
  tfrt.return %y : !corert.tensorhandle
}

// CHECK-LABEL: --- Running 'repeated'
func.func @repeated() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %one = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [2], values = [1 : i32]} : 1
  %n = tfrt.constant.i32 5
  // x = x + 2x, five times: 3^5 = 243.
  %r, %h = tfrt.repeat.i32 %n, %one, %cpu : !corert.tensorhandle, !corert.ophandler {
    %d = tfrt.call @double(%cpu, %one) : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
    %s = corert.executeop(%cpu) "tfrt_test.add"(%one, %d) : 1
    tfrt.return %s, %cpu : !corert.tensorhandle, !corert.ophandler
  }
  // CHECK: DenseHostTensor dtype = i32, shape = [2], values = [243, 243]
  %ch1 = "corert.print_tensorhandle"(%r, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'other_handler'
func.func @other_handler() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %cpu = corert.get_op_handler %ch0 "cpu"
  %null = corert.get_op_handler %ch0 "null"
  %one = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() {shape = [1], values = [21 : i32]} : 1
  %a = tfrt.call @double(%cpu, %one) : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  // CHECK: DenseHostTensor dtype = i32, shape = [1], values = [42]
  %ch1 = "corert.print_tensorhandle"(%a, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  // The same executeop kernel, now on the null handler: its error is reported
  // at that op (the expected-error in @double) and flows to %b alone.
  %b = tfrt.call @double(%null, %one) : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  %c = tfrt.call @double(%cpu, %a) : (!corert.ophandler, !corert.tensorhandle) -> !corert.tensorhandle
  // CHECK: DenseHostTensor dtype = i32, shape = [1], values = [84]
  %ch2 = "corert.print_tensorhandle"(%c, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch2 : !tfrt.chain
}
