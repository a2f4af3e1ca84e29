// Trace scopes by level: default shows functions, verbose adds core runtime
// ops, debug adds every kernel, the executor's ready loop and an op's shape
// and dispatch steps (with the op's name scope from its location).
// Checks the fast executor's trace scopes (its ready loop): not a property of the semantics.
// UNSUPPORTED: reference-executor
// RUN: asyncrt-translate -mlir-to-bef %s -o %t.bef
// RUN: bef_executor --enable_tracing --tracing_level=debug %t.bef | FileCheck %s --check-prefix=DEBUG
// RUN: bef_executor --enable_tracing --tracing_level=verbose %t.bef | FileCheck %s --check-prefix=VERBOSE
// RUN: bef_executor --enable_tracing %t.bef | FileCheck %s --check-prefix=DEFAULT
// RUN: bef_executor %t.bef | FileCheck %s --check-prefix=OFF
// RUN: not bef_executor --enable_tracing --tracing_level=loud %t.bef 2>&1 | FileCheck %s --check-prefix=BAD

// BAD: error: invalid tracing level 'loud' (default, verbose or debug)

// DEBUG-LABEL: --- Running 'kernels'
// DEBUG-NEXT: Scope:Bef Executor
// DEBUG-NEXT: Scope:Function: kernels
// DEBUG-NEXT: Scope:BEFExecutor::ProcessReadyKernels
// DEBUG-NEXT: Scope:tfrt.new.chain
// DEBUG-NEXT: End Scope
// DEBUG-NEXT: Scope:tfrt_test.print_hello
// DEBUG-NEXT: hello host executor!
// DEBUG-NEXT: End Scope
// DEBUG-NEXT: End Scope
// DEBUG-NEXT: End Scope
// DEBUG-NEXT: End Scope
// DEFAULT-LABEL: --- Running 'kernels'
// DEFAULT-NEXT: Scope:Bef Executor
// DEFAULT-NEXT: Scope:Function: kernels
// DEFAULT-NEXT: hello host executor!
// DEFAULT-NEXT: End Scope
// DEFAULT-NEXT: End Scope
// OFF-NOT: Scope
// OFF-NOT: End Scope
func.func @kernels() {
  %ch0 = tfrt.new.chain
  %ch1 = "tfrt_test.print_hello"(%ch0) : (!tfrt.chain) -> !tfrt.chain
  tfrt.return
}

// DEBUG-LABEL: --- Running 'ops'
// DEBUG: Scope:corert.executeop
// DEBUG-NEXT: Scope:tfrt_test.create_dense_tensor#op_handler=cpu#
// DEBUG-NEXT: Scope:RunMetadataFunction
// DEBUG-NEXT: End Scope
// DEBUG-NEXT: Scope:RunDispatchFunction: tfrt_test.create_dense_tensor#op_name=tfrt_test.create_dense_tensor,long_name=scope/make,Inputs=(),Results=(i32 [2]),Attributes=OpAttrs contains 2 entries:
// DEBUG-NEXT: 'shape' type=I64 value=[2]
// DEBUG-NEXT: 'values' type=I32 value=[1, 2]
// DEBUG-NEXT: #
// DEBUG-NEXT: End Scope
// DEBUG-NEXT: End Scope
// DEBUG-NEXT: End Scope
// DEBUG: Scope:RunDispatchFunction: tfrt_test.add#op_name=tfrt_test.add,Inputs=(i32 [2];i32 [2]),Results=(i32 [2]),Attributes=OpAttrs is empty
// VERBOSE-LABEL: --- Running 'ops'
// VERBOSE-NOT: Scope:corert.executeop
// VERBOSE: Scope:tfrt_test.create_dense_tensor#op_handler=cpu#
// VERBOSE-NEXT: End Scope
// VERBOSE-NEXT: Scope:tfrt_test.add#op_handler=cpu#
// VERBOSE-NEXT: End Scope
// DEFAULT-LABEL: --- Running 'ops'
// DEFAULT-NOT: op_handler
// DEFAULT: 'ops' returned
func.func @ops() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"()
    { shape = [2], values = [1 : i32, 2 : i32] } : 1 loc("scope/make")
  %b = corert.executeop(%cpu) "tfrt_test.add"(%a, %a) : 1
  %ch1 = "corert.print_tensorhandle"(%b, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}
