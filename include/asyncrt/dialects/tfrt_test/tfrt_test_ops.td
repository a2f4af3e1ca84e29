//===- tfrt_test_ops.td - The tfrt_test dialect ------------*- tablegen -*-===//
//
// Test kernels (testing/*_kernels.cc): every kernel registered under a
// tfrt_test name is an op here (compiler/op_kernel_consistency_test.cc).
// Programs write most of them in generic form; those have no custom syntax
// and print generically.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TFRT_TEST_TFRT_TEST_OPS_TD_
#define ASYNCRT_DIALECTS_TFRT_TEST_TFRT_TEST_OPS_TD_

include "asyncrt/dialects/corert/corert_base.td"
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
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect",
                           "::asyncrt::tfrt_tensor::TfrtTensorDialect",
                           "::asyncrt::corert::CoreRTDialect"];
}

class TfrtTest_Op<string mnemonic, list<Trait> traits = []>
    : Op<TfrtTest_Dialect, mnemonic, traits>;

defvar TfrtTest_OptionalInChain = Optional<Tfrt_ChainType>;

// Types only the test kernels know; opaque, as in TFRT.
def TfrtTest_ResourceType
    : OpaqueType<"tfrt", "test.resource", "!tfrt.test.resource type">;
// Programs spell it either way.
def TfrtTest_AtomicI32Type : AnyTypeOf<[
    OpaqueType<"tfrt_test", "atomic.i32", "!tfrt_test.atomic.i32 type">,
    OpaqueType<"test", "atomic.i32", "!test.atomic.i32 type">]>;

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

//===----------------------------------------------------------------------===//
// Printing and strings
//===----------------------------------------------------------------------===//

def TfrtTest_PrintHelloOp : TfrtTest_Op<"print_hello"> {
  let summary = "prints `hello host executor!`";
  let arguments = (ins Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_PrintStringOp : TfrtTest_Op<"print_string"> {
  let summary = "prints `string = VALUE`";
  let arguments = (ins Tfrt_StringType:$value, Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_AppendStringOp : TfrtTest_Op<"append_string", [Pure]> {
  let summary = "lhs followed by rhs";
  let arguments = (ins Tfrt_StringType:$lhs, Tfrt_StringType:$rhs);
  let results = (outs Tfrt_StringType:$result);
}

def TfrtTest_PrintBoolOp : TfrtTest_Op<"print_bool"> {
  let summary = "prints `true` or `false`";
  let arguments = (ins Tfrt_ChainType:$in_chain, I1:$value);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_LoggingOp : TfrtTest_Op<"logging"> {
  let summary = "logs the string at each level on stderr";
  let arguments = (ins Tfrt_StringType:$text, Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_PrintDebugInfoOp : TfrtTest_Op<"print_debug_info"> {
  let summary = "prints the kernel's name scope (its location's name)";
  let arguments = (ins Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_UniqueLocOp : TfrtTest_Op<"unique_loc"> {
  let summary = "fails if another kernel of the request ran at its location";
  let arguments = (ins StrAttr:$name);
  let results = (outs Tfrt_ChainType:$out_chain);
}

//===----------------------------------------------------------------------===//
// Values
//===----------------------------------------------------------------------===//

class TfrtTest_CopyWithDelayOp<string mnemonic, Type type>
    : TfrtTest_Op<mnemonic> {
  let summary = "the operand, available after a short sleep";
  let arguments = (ins type:$input, TfrtTest_OptionalInChain:$in_chain);
  let results = (outs type:$output);
}
def TfrtTest_CopyWithDelayI32Op
    : TfrtTest_CopyWithDelayOp<"copy.with_delay.i32", I32>;
def TfrtTest_CopyWithDelayI64Op
    : TfrtTest_CopyWithDelayOp<"copy.with_delay.i64", I64>;
def TfrtTest_AsyncCopyWithDelayI32Op
    : TfrtTest_CopyWithDelayOp<"async_copy.with_delay.i32", I32>;

def TfrtTest_AsyncAddI32Op : TfrtTest_Op<"async_add.i32"> {
  let summary = "lhs + rhs, computed on the work queue";
  let arguments = (ins I32:$lhs, I32:$rhs, TfrtTest_OptionalInChain:$in_chain);
  let results = (outs I32:$result);
}

class TfrtTest_AsyncConstantOp<string suffix, Type type, Attr attr>
    : TfrtTest_Op<"async_constant." # suffix> {
  let summary = "`value`, made available on the work queue";
  let arguments = (ins attr:$value);
  let results = (outs type:$result);
}
def TfrtTest_AsyncConstantI1Op : TfrtTest_AsyncConstantOp<"i1", I1, I1Attr>;
def TfrtTest_AsyncConstantI32Op
    : TfrtTest_AsyncConstantOp<"i32", I32, I32Attr>;

class TfrtTest_AsyncCopyOp<string mnemonic, string how>
    : TfrtTest_Op<mnemonic> {
  let summary = "the operand, " # how;
  let arguments = (ins I32:$input, TfrtTest_OptionalInChain:$in_chain);
  let results = (outs I32:$output);
}
def TfrtTest_AsyncCopyI32Op
    : TfrtTest_AsyncCopyOp<"async_copy.i32", "copied on the work queue">;
def TfrtTest_AsyncCopy2I32Op
    : TfrtTest_AsyncCopyOp<"async_copy_2.i32",
                           "copied after two hops through the work queue">;

def TfrtTest_IdentityOp : TfrtTest_Op<"identity"> {
  let summary = "the operands after the chain, once the chain is available";
  let arguments = (ins Tfrt_ChainType:$in_chain, Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$outputs);
}

def TfrtTest_MultiArgResultOp : TfrtTest_Op<"multi_arg_result"> {
  let summary = "the operands";
  let arguments = (ins Variadic<AnyType>:$inputs);
  let results = (outs Variadic<AnyType>:$outputs);
}

// Results of multi-result ops are unnamed here, so that they print as %0:2
// (see tfrt.div.i32).

def TfrtTest_ShareToTwoOp : TfrtTest_Op<"share_to_two"> {
  let summary = "the operand, twice (one async value)";
  let arguments = (ins AnyType:$input);
  let results = (outs AnyType, AnyType);
  let hasVerifier = 1;
}

def TfrtTest_FlatOp : TfrtTest_Op<"flat"> {
  let summary = "the strings, i32 and f32 of `value`, flattened in order";
  let arguments = (ins ArrayAttr:$value);
  let results = (outs Variadic<AnyType>:$outputs);
}

def TfrtTest_AsChainOp : TfrtTest_Op<"as_chain"> {
  let summary = "a chain, once the operand is available";
  let arguments = (ins AnyType:$input);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_GetUniquenessOp : TfrtTest_Op<"get_uniqueness"> {
  let summary = "whether the operand's async value has no other reference";
  let arguments = (ins AnyType:$input);
  let results = (outs I1:$unique);
}

def TfrtTest_MakeIndirectOp : TfrtTest_Op<"make_indirect",
    [AllTypesMatch<["input", "output"]>]> {
  let summary = "the operand, through a new indirect async value";
  let arguments = (ins AnyType:$input);
  let results = (outs AnyType:$output);
}

def TfrtTest_GetThreadIdOp : TfrtTest_Op<"get_thread_id"> {
  let summary = "0 off the work queue's workers, else the worker's number";
  let arguments = (ins Tfrt_ChainType:$in_chain);
  let results = (outs I32:$id);
}

def TfrtTest_AsyncValueGetOp : TfrtTest_Op<"async_value_get"> {
  let summary = "checks AsyncValue::get through a payload's bases";
  let results = (outs Tfrt_StringType:$trace);
}

def TfrtTest_AsyncValueRefOp : TfrtTest_Op<"async_value_ref"> {
  let summary = "checks AsyncValueRef's states";
  let results = (outs Tfrt_StringType:$trace);
}

//===----------------------------------------------------------------------===//
// Errors and cancellation
//===----------------------------------------------------------------------===//

def TfrtTest_FailOp : TfrtTest_Op<"fail"> {
  let summary = "fails with `something bad happened`";
  let results = (outs AnyType:$result);
}

def TfrtTest_PartialFailOp : TfrtTest_Op<"partial_fail"> {
  let summary = "1, and an error `something bad happened`";
  // The first and the failed one.
  let results = (outs I32, I32);
}

def TfrtTest_ReportErrorAsyncOp : TfrtTest_Op<"report_error_async"> {
  let summary = "an error reported later, from the work queue";
  let results = (outs I32:$result);
}

class TfrtTest_ReportErrorLaterOp<string mnemonic, string how>
    : TfrtTest_Op<mnemonic> {
  let summary = "0 for 0; otherwise an error reported later " # how;
  let arguments = (ins I32:$input);
  let results = (outs I32:$result);
}
def TfrtTest_ReportErrorConcreteAsyncOp
    : TfrtTest_ReportErrorLaterOp<"report_error_concrete_async",
                                  "in the result">;
def TfrtTest_ReportErrorIndirectAsyncOp
    : TfrtTest_ReportErrorLaterOp<"report_error_indirect_async",
                                  "through an indirect value">;

def TfrtTest_ErrorChainOp : TfrtTest_Op<"error_chain"> {
  let summary = "a chain that is the error `error chain`";
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_CancelOp : TfrtTest_Op<"cancel"> {
  let summary = "cancels the request; returns 0";
  let arguments = (ins Tfrt_ChainType:$in_chain);
  let results = (outs I32, Tfrt_ChainType);
}

//===----------------------------------------------------------------------===//
// Resources, memory, timing and atomics
//===----------------------------------------------------------------------===//

def TfrtTest_AllocateResourceOp : TfrtTest_Op<"allocate_resource"> {
  let summary = "a resource that prints when it is made and destroyed";
  let arguments = (ins Tfrt_ChainType:$in_chain);
  let results = (outs TfrtTest_ResourceType, Tfrt_ChainType);
}

def TfrtTest_DeallocateResourceOp : TfrtTest_Op<"deallocate_resource"> {
  let summary = "destroys the resource";
  let arguments = (ins TfrtTest_ResourceType:$resource,
                       Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_UseSampleSharedContextOp
    : TfrtTest_Op<"use_sample_shared_context"> {
  let summary = "the name of the host's sample shared context";
  let arguments = (ins Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_StringType, Tfrt_ChainType);
}

def TfrtTest_MemoryLeakOneInt32Op : TfrtTest_Op<"memory_leak_one_int32"> {
  let summary = "leaks 4 bytes through the host allocator";
}

def TfrtTest_UsleepOp : TfrtTest_Op<"usleep"> {
  let summary = "sleeps on the blocking pool, then prints; no result";
  let arguments = (ins I32:$microseconds);
}

def TfrtTest_BlockingUsleepOp : TfrtTest_Op<"blocking.usleep"> {
  let summary = "a chain available after sleeping on the blocking pool";
  let arguments = (ins I32:$microseconds, TfrtTest_OptionalInChain:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_QuiesceOp : TfrtTest_Op<"quiesce"> {
  let summary = "waits until the work queue has nothing left to run";
}

def TfrtTest_AtomicCreateI32Op : TfrtTest_Op<"atomic.create.i32"> {
  let summary = "a shared atomic i32, 0";
  let results = (outs TfrtTest_AtomicI32Type:$atomic);
}

def TfrtTest_AtomicIncI32Op : TfrtTest_Op<"atomic.inc.i32"> {
  let summary = "adds 1";
  let arguments = (ins TfrtTest_AtomicI32Type:$atomic,
                       TfrtTest_OptionalInChain:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_AtomicAddI32Op : TfrtTest_Op<"atomic.add.i32"> {
  let summary = "adds `value`";
  let arguments = (ins TfrtTest_AtomicI32Type:$atomic, I32:$value,
                       TfrtTest_OptionalInChain:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_AtomicGetI32Op : TfrtTest_Op<"atomic.get.i32"> {
  let summary = "the value, and a chain if the program asks for one";
  let arguments = (ins TfrtTest_AtomicI32Type:$atomic,
                       TfrtTest_OptionalInChain:$in_chain);
  let results = (outs I32, Optional<Tfrt_ChainType>);
}

//===----------------------------------------------------------------------===//
// Sync kernels (for tfrt.sync functions)
//===----------------------------------------------------------------------===//

class TfrtTest_SyncErrorOp<string mnemonic> : TfrtTest_Op<mnemonic> {
  let summary = "the error `something bad happened`";
  let results = (outs AnyType:$result);
}
def TfrtTest_FailSOp : TfrtTest_SyncErrorOp<"fail_s">;
def TfrtTest_ErrorSOp : TfrtTest_SyncErrorOp<"error_s">;

class TfrtTest_SyncSumOp<string mnemonic> : TfrtTest_Op<mnemonic, [Pure]> {
  let summary = "the sum of the operands (wraps)";
  let arguments = (ins I32:$first, Variadic<I32>:$rest);
  let results = (outs I32:$sum);
}
def TfrtTest_SyncSumOp : TfrtTest_SyncSumOp<"sync_sum">;
def TfrtTest_SyncSum2Op : TfrtTest_SyncSumOp<"sync_sum2">;

def TfrtTest_SyncSumAttributesOp
    : TfrtTest_Op<"sync_sum_attributes", [Pure]> {
  let summary = "the sum of every i32 attribute, whatever its name";
  let results = (outs I32:$sum);
}

class TfrtTest_InvokeSyncFunctionOp<string signature, dag results_dag>
    : TfrtTest_Op<"invoke_sync_function." # signature> {
  let summary = "calls the tfrt.sync function `fn` and returns its results";
  let arguments = (ins I32:$lhs, I32:$rhs, FlatSymbolRefAttr:$fn);
  let results = results_dag;
}
def TfrtTest_InvokeSyncFunctionI32I32I32Op
    : TfrtTest_InvokeSyncFunctionOp<"i32_i32.i32", (outs I32:$result)>;
def TfrtTest_InvokeSyncFunctionI32I32I32I32Op
    : TfrtTest_InvokeSyncFunctionOp<"i32_i32.i32_i32",
                                    (outs I32, I32)>;

//===----------------------------------------------------------------------===//
// Tensors, tensor handles and op attributes (testing/test_tensor_kernels.cc)
//===----------------------------------------------------------------------===//

class TfrtTest_ConstDenseAttrOp<string mnemonic>
    : TfrtTest_Op<mnemonic, [Pure]> {
  let summary = "a dense host tensor holding `value`";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs TfrtTensor_TensorType:$tensor);
}
def TfrtTest_ConstDenseAttrOp : TfrtTest_ConstDenseAttrOp<"const_dense_attr">;
def TfrtTest_SyncConstDenseAttrOp
    : TfrtTest_ConstDenseAttrOp<"sync.const_dense_attr">;

// One per dtype and rank (testing/test_tensor_kernels.cc), as coo's.
class TfrtTest_SliceInPlaceOp<string dtype, int rank>
    : TfrtTest_Op<"slice_inplace." # dtype # "." # rank> {
  let summary = "copies the block of `input` at `begin` into `output`";
  let description = [{
    `begin` is a rank-1 i64 tensor, one start per dimension; the block has
    the output's shape.
  }];
  let arguments = (ins TfrtTensor_TensorType:$input,
                       TfrtTensor_TensorType:$begin, Tfrt_ChainType:$in_chain,
                       TfrtTensor_TensorType:$output);
  let results = (outs Tfrt_ChainType:$out_chain);
}
foreach dtype = ["i32", "i64", "f32", "f64"] in {
  foreach rank = [0, 1, 2, 3, 4] in {
    def TfrtTest_SliceInPlaceOp_#dtype#_#rank
        : TfrtTest_SliceInPlaceOp<dtype, rank>;
  }
}

def TfrtTest_ErrorTensorHandleOp : TfrtTest_Op<"error_tensorhandle"> {
  let summary = "a tensor handle that is the error `invalid tensorhandle`";
  let results = (outs CoreRT_TensorHandleType:$handle);
}

def TfrtTest_OpAttrsPrintOp : TfrtTest_Op<"corert.op_attrs_print"> {
  let summary = "prints a mutable op attribute set";
  let arguments = (ins CoreRT_OpAttrsType:$attrs, Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

def TfrtTest_OpAttrsFreezeOp : TfrtTest_Op<"corert.op_attrs_freeze"> {
  let summary = "an immutable copy of an op attribute set";
  let arguments = (ins CoreRT_OpAttrsType:$attrs, Tfrt_ChainType:$in_chain);
  let results = (outs CoreRT_OpAttrsRefType, Tfrt_ChainType);
}

def TfrtTest_OpAttrsRefPrintOp : TfrtTest_Op<"corert.op_attrs_ref_print"> {
  let summary = "prints an immutable op attribute set";
  let arguments = (ins CoreRT_OpAttrsRefType:$attrs, Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

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
