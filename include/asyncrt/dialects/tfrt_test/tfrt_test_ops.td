//===- tfrt_test_ops.td - The tfrt_test dialect ------------*- tablegen -*-===//
//
// Test kernels (kernels/test/). Most are written in generic form and need no
// definition: the dialect accepts unknown ops. Defined here are the ops that
// programs write in custom form or that need verification.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TFRT_TEST_TFRT_TEST_OPS_TD_
#define ASYNCRT_DIALECTS_TFRT_TEST_TFRT_TEST_OPS_TD_

include "asyncrt/dialects/tfrt/tfrt_types.td"
include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/OpBase.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TfrtTest_Dialect : Dialect {
  let name = "tfrt_test";
  let summary = "test kernels, source compatible with TFRT's `tfrt_test`";
  let cppNamespace = "::asyncrt::tfrt_test";
  let usePropertiesForAttributes = 0;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect"];
}

class TfrtTest_Op<string mnemonic, list<Trait> traits = []>
    : Op<TfrtTest_Dialect, mnemonic, traits>;

class TfrtTest_Count3Op<string suffix, Type type>
    : TfrtTest_Op<"count3." # suffix, [Pure]> {
  let summary = "x + 1, x + 2, x + 3";
  let description = [{
    ```mlir
    %a, %b, %c = tfrt_test.count3.i32 %x
    ```
  }];
  let arguments = (ins type:$input);
  // Unnamed: they print as %0:3 (see tfrt.div.i32).
  let results = (outs type, type, type);
  let assemblyFormat = "$input attr-dict";
}
def TfrtTest_Count3I32Op : TfrtTest_Count3Op<"i32", I32>;
def TfrtTest_Count3I64Op : TfrtTest_Count3Op<"i64", I64>;

def TfrtTest_GetStringOp : TfrtTest_Op<"get_string", [Pure]> {
  let summary = "a !tfrt.string holding the `value` attribute";
  let arguments = (ins StrAttr:$value);
  let results = (outs Tfrt_StringType:$result);
  let assemblyFormat = "attr-dict";
}

def TfrtTest_PrintTypedAttrOp : TfrtTest_Op<"print_typed_attr"> {
  let summary = "prints the `value` attribute as `TYPE: value`";
  let description = [{
    `I1: 0`, `I32: 7`, `I64: 1`, `F32: 5.000000e-01`, `F64: ...`.

    ```mlir
    %out = tfrt_test.print_typed_attr %in {value = 1 : i64}
    ```
  }];
  let arguments = (ins Tfrt_ChainType:$in_ch, TypedAttrInterface:$value);
  let results = (outs Tfrt_ChainType:$out_ch);
  let assemblyFormat = "$in_ch attr-dict";
}

def TfrtTest_TestCostOp : TfrtTest_Op<"test_cost"> {
  let summary = "prints `id: N`; `_tfrt_cost` must be positive";
  let description = [{
    ```mlir
    %r = tfrt_test.test_cost %x {id = 0 : i64, _tfrt_cost = 100 : i64} : i32
    %ch1 = tfrt_test.test_cost %ch0 {id = 1 : i64, _tfrt_cost = 4 : i64}
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$args, I64Attr:$id,
                       I64Attr:$_tfrt_cost);
  // i32 with operand types; chain in the untyped (chain) form.
  let results = (outs AnyTypeOf<[I32, Tfrt_ChainType]>:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def TfrtTest_DoAsyncOp : TfrtTest_Op<"do.async", [IsolatedFromAbove]> {
  let summary = "runs the region on the work queue";
  let description = [{
    The region takes the operands as arguments (named like the operands) and
    returns the op's results.

    ```mlir
    %r = tfrt_test.do.async %a, %b : (i32, i32) -> (i32) {
      %s = tfrt.add.i32 %a, %b
      tfrt.return %s : i32
    }
    tfrt_test.do.async : () -> () {
      tfrt.return
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def TfrtTest_BenchmarkOp : TfrtTest_Op<"benchmark", [IsolatedFromAbove]> {
  let summary = "times the region and prints `BM:<name>:...` statistics";
  let description = [{
    Runs the region `num_warmup_runs` times (default 1), then until
    `duration_secs` pass or `max_count` runs are done. The region takes the
    operands as arguments (named like the operands) and returns one value.

    ```mlir
    tfrt_test.benchmark "add.i32"(%c : i32) duration_secs = 1, max_count = 100, num_warmup_runs = 10 {
      %x = tfrt.add.i32 %c, %c
      tfrt.return %x : i32
    }
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$args, StrAttr:$name,
                       I32Attr:$duration_secs, I32Attr:$max_count,
                       DefaultValuedOptionalAttr<I32Attr, "1">:$num_warmup_runs);
  let results = (outs Tfrt_ChainType:$done);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def TfrtTest_SyncBenchmarkOp : TfrtTest_Op<"sync_benchmark",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "times a synchronous (`tfrt.sync`) function";
  let description = [{
    ```mlir
    tfrt_test.sync_benchmark @fib(%a : i32) duration_secs = 1, max_count = 100, num_warmup_runs = 10
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$target_fn, Variadic<AnyType>:$args,
                       I32Attr:$duration_secs, I32Attr:$max_count,
                       DefaultValuedOptionalAttr<I32Attr, "1">:$num_warmup_runs);
  let hasCustomAssemblyFormat = 1;
}

#endif  // ASYNCRT_DIALECTS_TFRT_TEST_TFRT_TEST_OPS_TD_
