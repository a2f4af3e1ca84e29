//===- corert_ops.td - Ops of the corert dialect -----------*- tablegen -*-===//
//
// Op names, attribute names and syntax follow TFRT's corert dialect, so that
// TFRT programs parse unchanged. Ops that programs write only in generic form
// have no custom syntax and print generically.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_CORERT_CORERT_OPS_TD_
#define ASYNCRT_DIALECTS_CORERT_CORERT_OPS_TD_

include "asyncrt/dialects/corert/corert_base.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class CoreRT_Op<string mnemonic, list<Trait> traits = []>
    : Op<CoreRT_Dialect, mnemonic, traits>;

defvar CoreRT_OptionalInChain = Optional<Tfrt_ChainType>;

// `custom<ParenTypes>`: a parenthesized, possibly empty type list (ODS's
// `(` type($x) `)` rejects `()`).

//===----------------------------------------------------------------------===//
// Op handlers
//===----------------------------------------------------------------------===//

def CoreRT_CreateNullOpHandlerOp : CoreRT_Op<"create_null_op_handler"> {
  let summary = "an op handler that fails every op";
  let description = [{
    Every op fails with `OP was not supported by NullOpHandler.`.

    ```mlir
    %null = corert.create_null_op_handler
    ```
  }];
  let results = (outs CoreRT_OpHandlerType:$op_handler);
  let assemblyFormat = "attr-dict";
}

def CoreRT_CreateCpuOpHandlerOp : CoreRT_Op<"create_cpu_op_handler"> {
  let summary = "the CPU op handler; ops it lacks go to `fallback`";
  let description = [{
    ```mlir
    %cpu = corert.create_cpu_op_handler %null
    ```
  }];
  let arguments = (ins CoreRT_OpHandlerType:$fallback);
  let results = (outs CoreRT_OpHandlerType:$op_handler);
  let assemblyFormat = "$fallback attr-dict";
}

def CoreRT_CreateLoggingOpHandlerOp
    : CoreRT_Op<"create_logging_op_handler"> {
  let summary = "logs each op dispatched to `fallback`";
  let description = [{
    `sync_log_results` (integer or bool, default false): wait for and log the
    results of each op.

    ```mlir
    %log = corert.create_logging_op_handler %cpu {sync_log_results = 1}
    ```
  }];
  let arguments = (ins CoreRT_OpHandlerType:$fallback,
                       OptionalAttr<APIntAttr>:$sync_log_results);
  let results = (outs CoreRT_OpHandlerType:$op_handler);
  let assemblyFormat = "$fallback attr-dict";
}

def CoreRT_RegisterOpHandlerOp : CoreRT_Op<"register_op_handler"> {
  let summary = "makes an op handler available under a name";
  let description = [{
    ```mlir
    %ch = corert.register_op_handler %cpu "cpu"
    ```
  }];
  let arguments = (ins CoreRT_OpHandlerType:$op_handler,
                       StrAttr:$op_handler_name);
  let results = (outs Tfrt_ChainType:$out_op_chain);
  let assemblyFormat = "$op_handler $op_handler_name attr-dict";
}

def CoreRT_GetOpHandlerOp : CoreRT_Op<"get_op_handler", [Pure]> {
  let summary = "the op handler registered under a name";
  let description = [{
    Fails at run time with `op_handler not found: NAME`.

    ```mlir
    %cpu = corert.get_op_handler %ch "cpu"
    ```
  }];
  let arguments = (ins Tfrt_ChainType:$in_op_chain,
                       StrAttr:$op_handler_name);
  let results = (outs CoreRT_OpHandlerType:$op_handler);
  let assemblyFormat = "$in_op_chain $op_handler_name attr-dict";
}

def CoreRT_ArenaOpHandlerOp : CoreRT_Op<"arena_op_handler",
    [MemoryEffects<[MemAlloc]>]> {
  let summary = "an op handler with planned memory for one call (AsyncRT)";
  let description = [{
    An AsyncRT extension that `-nn-to-corert` emits for a function with a
    buffer plan (`nn.arena_size`, from `-nn-plan-buffers`): each call makes
    one arena of `size` bytes, and an op run through the result that has an
    `_buffer_offset` (and `_buffer_size`) computes its result at that offset in it
    instead of in a new allocation. Other ops run as on `op_handler`. Not
    pure: each call needs its own arena.

    ```mlir
    %planned = corert.arena_op_handler %cpu {size = 4096 : i64}
    ```
  }];
  let arguments = (ins CoreRT_OpHandlerType:$op_handler,
                       ConfinedAttr<I64Attr, [IntNonNegative]>:$size);
  let results = (outs CoreRT_OpHandlerType:$planned_op_handler);
  let assemblyFormat = "$op_handler attr-dict";
}

//===----------------------------------------------------------------------===//
// Executing ops
//===----------------------------------------------------------------------===//

class CoreRT_ExecuteOpBase<string mnemonic, list<Trait> traits = []>
    : CoreRT_Op<mnemonic, traits> {
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def CoreRT_ExecuteOp : CoreRT_ExecuteOpBase<"executeop"> {
  let summary = "runs op `op_name` on an op handler";
  let description = [{
    ```mlir
    %r = corert.executeop(%cpu) "tfrt_test.add"(%a, %b) {transpose_a = false} : 1
    %r = corert.executeop(%cpu) "my.call"(%a) {x = 1 : i32} {f = @fn} : 1
    ```

    The trailing number is the number of results (none when left out). The
    first attribute dictionary becomes `op_attrs`, an array of
    `["key", value]` pairs in the order written; symbol-reference values
    there, and every entry of an optional second dictionary, go to
    `op_func_attrs` the same way. Generic form:

    ```mlir
    %r = "corert.executeop"(%cpu, %a, %b) {op_attrs = [["transpose_a", false]],
        op_func_attrs = [], op_name = "tfrt_test.add"}
        : (!corert.ophandler, !corert.tensorhandle, !corert.tensorhandle)
        -> !corert.tensorhandle
    ```

    `op_func_attrs` may be absent in generic form (no function attributes).
  }];
  let arguments = (ins CoreRT_OpHandlerType:$op_handler,
                       Variadic<CoreRT_TensorHandleType>:$args,
                       ArrayAttr:$op_attrs,
                       OptionalAttr<ArrayAttr>:$op_func_attrs,
                       StrAttr:$op_name);
  let results = (outs Variadic<CoreRT_TensorHandleType>:$results);
}

def CoreRT_ExecuteOpSeqOp : CoreRT_ExecuteOpBase<"executeop.seq"> {
  let summary = "corert.executeop ordered by a chain";
  let description = [{
    Starts once `in_op_chain` is available; `out_op_chain` is available once
    the op has run.

    ```mlir
    %ch1, %r = corert.executeop.seq(%cpu, %ch0) "tfrt_test.add"(%a, %b) : 1
    %ch2 = corert.executeop.seq(%cpu, %ch1) "tfrt_test.print"(%r)
    ```
  }];
  let arguments = (ins CoreRT_OpHandlerType:$op_handler,
                       Tfrt_ChainType:$in_op_chain,
                       Variadic<CoreRT_TensorHandleType>:$args,
                       ArrayAttr:$op_attrs,
                       OptionalAttr<ArrayAttr>:$op_func_attrs,
                       StrAttr:$op_name);
  let results = (outs Tfrt_ChainType:$out_op_chain,
                      Variadic<CoreRT_TensorHandleType>:$results);
}

def CoreRT_MakeCompositeOpOp : CoreRT_Op<"make_composite_op",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "an op that runs function `fn` (for corert.execute_crt_op)";
  let description = [{
    ```mlir
    %op = corert.make_composite_op @matmul_fn
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$fn);
  let results = (outs CoreRT_OpType:$op);
  let assemblyFormat = "$fn attr-dict";
}

def CoreRT_ExecuteCrtOp : CoreRT_Op<"execute_crt_op"> {
  let summary = "runs a prepared op (`!corert.op`)";
  let description = [{
    Generic form only, as in TFRT:

    ```mlir
    %r = "corert.execute_crt_op"(%op, %a) {op_attrs = [], op_func_attrs = []}
        : (!corert.op, !corert.tensorhandle) -> !corert.tensorhandle
    ```
  }];
  let arguments = (ins CoreRT_OpType:$op,
                       Variadic<CoreRT_TensorHandleType>:$args,
                       ArrayAttr:$op_attrs,
                       OptionalAttr<ArrayAttr>:$op_func_attrs);
  let results = (outs Variadic<CoreRT_TensorHandleType>:$results);
  let hasVerifier = 1;
}

def CoreRT_ExecuteSequenceOp : CoreRT_Op<"execute_sequence"> {
  let summary = "runs a chain of ops as one kernel (AsyncRT)";
  let description = [{
    An AsyncRT extension that `-corert-fuse-op-sequences` emits for a chain
    of `corert.executeop` on one handler in which each op's result is used
    only by the next op: the ops run one after another inside this kernel,
    so the executor schedules one kernel instead of one per op, and the
    values between them never become registers.

    `args` are the values the ops take from outside the chain. Op `i` is
    `op_names[i]` with the attributes `op_attrs[i]` (as `corert.executeop`'s
    `op_attrs`); its operands are the next `op_operand_counts[i]` entries of
    `op_operands`, each an index into the values so far: `args` first, then
    each op's result in order. The result is the last op's. Errors and
    results that arrive later behave as in the chain of `corert.executeop`
    it replaces; an error is reported once, at this op.

    ```mlir
    // %y = relu(%x + %b)
    %y = "corert.execute_sequence"(%cpu, %x, %b) {
        op_names = ["tfrt_test.add", "tfrt_test.relu"],
        op_attrs = [[], []],
        op_operand_counts = [2 : i32, 1 : i32],
        op_operands = [0 : i32, 1 : i32, 2 : i32]}
        : (!corert.ophandler, !corert.tensorhandle, !corert.tensorhandle)
        -> !corert.tensorhandle
    ```
  }];
  let arguments = (ins CoreRT_OpHandlerType:$op_handler,
                       Variadic<CoreRT_TensorHandleType>:$args,
                       StrArrayAttr:$op_names,
                       ArrayAttr:$op_attrs,
                       I32ArrayAttr:$op_operand_counts,
                       I32ArrayAttr:$op_operands);
  let results = (outs CoreRT_TensorHandleType:$result);
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Control flow
//===----------------------------------------------------------------------===//

def CoreRT_CondOp : CoreRT_Op<"cond",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls `a_true_fn` or `b_false_fn` by a tensorhandle's truth";
  let description = [{
    Both functions take (chain, operands...) and return (chain, results...).

    ```mlir
    %ch1, %r = corert.cond %c @t @f (%ch0, %a, %b) : (!corert.tensorhandle, !corert.tensorhandle) -> (!corert.tensorhandle)
    ```
  }];
  let arguments = (ins CoreRT_TensorHandleType:$cond,
                       FlatSymbolRefAttr:$a_true_fn,
                       FlatSymbolRefAttr:$b_false_fn,
                       Tfrt_ChainType:$in_op_chain,
                       Variadic<AnyType>:$fn_operands);
  let results = (outs Tfrt_ChainType:$out_op_chain,
                      Variadic<AnyType>:$fn_outputs);
  let assemblyFormat = [{
    $cond $a_true_fn $b_false_fn `(` $in_op_chain (`,` $fn_operands^)? `)`
    attr-dict `:` custom<ParenTypes>(type($fn_operands)) `->`
    custom<ParenTypes>(type($fn_outputs))
  }];
}

def CoreRT_WhileOp : CoreRT_Op<"while",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls `b_body_fn` while `a_cond_fn` returns true";
  let description = [{
    Both functions take (chain, operands...); `a_cond_fn` returns (chain,
    condition tensorhandle), `b_body_fn` returns (chain, results...), which
    are the next iteration's operands.

    ```mlir
    %ch1, %r = corert.while @cond @body (%ch0, %a) : (!corert.tensorhandle) -> (!corert.tensorhandle)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$a_cond_fn,
                       FlatSymbolRefAttr:$b_body_fn,
                       Tfrt_ChainType:$in_op_chain,
                       Variadic<AnyType>:$fn_operands);
  let results = (outs Tfrt_ChainType:$out_op_chain,
                      Variadic<AnyType>:$fn_outputs);
  let assemblyFormat = [{
    $a_cond_fn $b_body_fn `(` $in_op_chain (`,` $fn_operands^)? `)`
    attr-dict `:` custom<ParenTypes>(type($fn_operands)) `->`
    custom<ParenTypes>(type($fn_outputs))
  }];
}

//===----------------------------------------------------------------------===//
// Tensors and tensor handles
//===----------------------------------------------------------------------===//

def CoreRT_ConstDenseTensorOp : CoreRT_Op<"const_dense_tensor", [Pure]> {
  let summary = "a constant dense host tensor handle";
  let description = [{
    ```mlir
    %th = corert.const_dense_tensor dense<[0, 1, 2]> : tensor<3xi32>
    ```
  }];
  let arguments = (ins ElementsAttr:$value);
  let results = (outs CoreRT_TensorHandleType:$result);
  let assemblyFormat = "$value attr-dict";
}

def CoreRT_ConstDenseTensorOnOp
    : CoreRT_Op<"const_dense_tensor_on", [Pure]> {
  let summary = "a constant dense tensor handle on a device";
  let description = [{
    The constant copied to `device` on the first call and kept with the
    program for every later call (a model's weights on a GPU are not copied
    per call); on the host, as `corert.const_dense_tensor`.

    ```mlir
    %th = corert.const_dense_tensor_on %gpu dense<[0, 1, 2]> : tensor<3xi32>
    ```
  }];
  let arguments = (ins CoreRT_DeviceType:$device, ElementsAttr:$value);
  let results = (outs CoreRT_TensorHandleType:$result);
  let assemblyFormat = "$device $value attr-dict";
}

def CoreRT_SyntheticDenseTensorOnOp
    : CoreRT_Op<"synthetic_dense_tensor_on", [Pure]> {
  let summary = "pseudo-random weights on a device, for benchmarks";
  let description = [{
    A tensor of `shape` and `dtype` (f16, bf16, f32) holding deterministic
    pseudo-random values drawn from `seed`: uniform in +-1/sqrt(fan-in)
    for rank 2 and more (fan-in: every dimension but the first), in
    [0.5, 1.5] below. Made on the first call and kept with the program
    (copied to `device` once), as `corert.const_dense_tensor_on`.
    `asyncrt-compile --synthetic-weights` uses it in place of a model's
    large constants, so that a benchmark's BEF holds no weights.

    ```mlir
    %w = corert.synthetic_dense_tensor_on %gpu {dtype = "f16", seed = 3 : i64, shape = [64, 3, 7, 7]}
    ```
  }];
  let arguments = (ins CoreRT_DeviceType:$device, I64ArrayAttr:$shape,
                   StrAttr:$dtype, I64Attr:$seed);
  let results = (outs CoreRT_TensorHandleType:$result);
  let assemblyFormat = "$device attr-dict";
}

def CoreRT_CapturedCallOp : CoreRT_Op<"captured_call", [Pure]> {
  let summary = "calls a device-only function, replayed as a device graph";
  let description = [{
    Calls `callee` with `arguments`, tensor handles on `device`, for its
    results on `device`. `callee`'s work must all be on `device` (its ops,
    and constants copied there), which `asyncrt-compile --device=...`
    makes sure of when it outlines a model's device work. On a device with
    graphs (the CUDA plug-in), the first call with given shapes and dtypes
    runs as usual (cuDNN's autotuning, constants copied), the second is
    recorded as a device graph (a CUDA graph) and every later one replays
    it: the arguments are copied into the graph's inputs, one launch runs
    every op, and its outputs are copied out. Elsewhere, or for a function
    that cannot be recorded, it is a plain call.

    ```mlir
    %y = corert.captured_call %gpu, %x {callee = @main_on_device}
        : (!corert.tensorhandle) -> !corert.tensorhandle
    ```
  }];
  let arguments = (ins CoreRT_DeviceType:$device,
                   Variadic<CoreRT_TensorHandleType>:$arguments,
                   FlatSymbolRefAttr:$callee);
  let results = (outs Variadic<CoreRT_TensorHandleType>:$results);
  let assemblyFormat = [{
    $device (`,` $arguments^)? attr-dict `:` functional-type($arguments, $results)
  }];
}

def CoreRT_ConstStringTensorOp : CoreRT_Op<"const_string_tensor", [Pure]> {
  let summary = "a constant string host tensor handle";
  let description = [{
    One value is repeated over the whole shape.

    ```mlir
    %th = corert.const_string_tensor {shape = [2], value = ["a", "b"]}
    ```
  }];
  let arguments = (ins I64ArrayAttr:$shape, StrArrayAttr:$value);
  let results = (outs CoreRT_TensorHandleType:$result);
  let assemblyFormat = "attr-dict";
}

class CoreRT_CreateDenseTensorOp<string dtype>
    : CoreRT_Op<"create_dense_tensor." # dtype, [Pure]> {
  let summary = "a constant " # dtype # " dense host tensor handle";
  let description = [{
    `value` holds one element (repeated over the shape) or one per element,
    of the op's dtype; complex elements are (real, imaginary) pairs of their
    float type.

    ```mlir
    %th = corert.create_dense_tensor.ui64 {shape = [1], value = [2 : ui64]}
    %c = corert.create_dense_tensor.complex64 {shape = [1],
                                               value = [1.0 : f32, 2.0 : f32]}
    ```
  }];
  let arguments = (ins I64ArrayAttr:$shape, ArrayAttr:$value);
  let results = (outs CoreRT_TensorHandleType:$result);
  let assemblyFormat = "attr-dict";
}

// `bool` and `i1` both mean a one-byte boolean, as in tfrt_dht.
defvar CoreRT_DTypes = ["ui8", "ui16", "ui32", "ui64", "bool", "i1", "i8",
                        "i16", "i32", "i64", "bf16", "f16", "f32", "f64",
                        "complex64", "complex128"];

foreach dtype = CoreRT_DTypes in {
  def CoreRT_CreateDenseTensorOp_#dtype : CoreRT_CreateDenseTensorOp<dtype>;
}

def CoreRT_PrintTensorHandleOp : CoreRT_Op<"print_tensorhandle"> {
  let summary = "prints the tensor of a handle once available";
  let description = [{
    ```mlir
    %ch1 = corert.print_tensorhandle %th, %ch0
    ```
  }];
  let arguments = (ins CoreRT_TensorHandleType:$tensorhandle,
                       Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$tensorhandle `,` $in_chain attr-dict";
}

def CoreRT_TensorHandleToShapeOp : CoreRT_Op<"tensorhandle_to_shape"> {
  let summary = "the shape of a tensor handle";
  let arguments = (ins CoreRT_TensorHandleType:$tensorhandle,
                       CoreRT_OptionalInChain:$in_chain);
  let results = (outs Ts_ShapeType:$shape);
  let assemblyFormat = "$tensorhandle (`,` $in_chain^)? attr-dict";
}

def CoreRT_TensorHandleToHtOp : CoreRT_Op<"tensorhandle_to_ht"> {
  let summary = "the host tensor of a tensor handle";
  let arguments = (ins CoreRT_TensorHandleType:$tensorhandle,
                       CoreRT_OptionalInChain:$in_chain);
  let results = (outs TfrtTensor_TensorType:$tensor);
  let assemblyFormat = "$tensorhandle (`,` $in_chain^)? attr-dict";
}

def CoreRT_HtToTensorHandleOp : CoreRT_Op<"ht_to_tensorhandle"> {
  let summary = "a tensor handle of a host tensor (on the CPU)";
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       CoreRT_OptionalInChain:$in_chain);
  let results = (outs CoreRT_TensorHandleType:$tensorhandle);
  let assemblyFormat = "$tensor (`,` $in_chain^)? attr-dict";
}

def CoreRT_TensorHandleToInt32Op : CoreRT_Op<"tensorhandle_to_int32"> {
  let summary = "the single i32 value of a tensor handle";
  let description = [{
    ```mlir
    %i = corert.tensorhandle_to_int32 %th
    ```
  }];
  let arguments = (ins CoreRT_TensorHandleType:$src);
  let results = (outs I32:$result);
  let assemblyFormat = "$src attr-dict";
}

//===----------------------------------------------------------------------===//
// Devices and transfers
//===----------------------------------------------------------------------===//

def CoreRT_GetDstTensorTypeOp : CoreRT_Op<"get_dst_tensor_type"> {
  let summary = "the tensor type to use for a handle on a device";
  let description = [{
    ```mlir
    %tt = corert.get_dst_tensor_type %th, %device
    ```
  }];
  let arguments = (ins CoreRT_TensorHandleType:$src_tensor_handle,
                       CoreRT_DeviceType:$dst_device);
  let results = (outs CoreRT_TfrtTensorTypeType:$result);
  let assemblyFormat = "$src_tensor_handle `,` $dst_device attr-dict";
}

def CoreRT_TransferOp : CoreRT_Op<"transfer"> {
  let summary = "a tensor handle copied to a device as a tensor type";
  let description = [{
    ```mlir
    %dst = corert.transfer %th, %device, %tt
    ```
    TFRT's earlier form names the device and a bitmask of acceptable tensor
    formats (bit 0: dense host) as attributes:
    ```mlir
    %dst = corert.transfer %th {device = "CPU:0", formats = 1 : i64}
    ```
  }];
  let arguments = (ins CoreRT_TensorHandleType:$src,
                       Variadic<AnyType>:$device_and_tensor_type,
                       OptionalAttr<StrAttr>:$device,
                       OptionalAttr<I64Attr>:$formats);
  let results = (outs CoreRT_TensorHandleType:$result);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def CoreRT_TransferInferredTensorTypeOp
    : CoreRT_Op<"transfer_inferred_tensortype"> {
  let summary = "corert.transfer with the tensor type inferred";
  let arguments = (ins CoreRT_TensorHandleType:$src,
                       CoreRT_DeviceType:$device);
  let results = (outs CoreRT_TensorHandleType:$result);
  let assemblyFormat = "$src `,` $device attr-dict";
}

//===----------------------------------------------------------------------===//
// Op attributes built at run time
//===----------------------------------------------------------------------===//

def CoreRT_CreateOpAttrsOp : CoreRT_Op<"create_op_attrs"> {
  let summary = "an empty, mutable set of op attributes";
  let results = (outs CoreRT_OpAttrsType:$attrs);
  let assemblyFormat = "attr-dict";
}

class CoreRT_OpAttrsSetOp<string mnemonic, Attr value_attr>
    : CoreRT_Op<mnemonic> {
  let summary = "sets attribute `key` to `value`";
  let description = [{
    ```mlir
    %ch1 = corert.op_attrs_set.i32 %attrs, %ch0 {key = "a", value = 1 : i32}
    ```
  }];
  let arguments = (ins CoreRT_OpAttrsType:$attrs, Tfrt_ChainType:$in_chain,
                       StrAttr:$key, value_attr:$value);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$attrs `,` $in_chain attr-dict";
}

def CoreRT_OpAttrsSetBoolOp
    : CoreRT_OpAttrsSetOp<"op_attrs_set.bool", BoolAttr>;
def CoreRT_OpAttrsSetI32Op : CoreRT_OpAttrsSetOp<"op_attrs_set.i32", I32Attr>;
def CoreRT_OpAttrsSetI64Op : CoreRT_OpAttrsSetOp<"op_attrs_set.i64", I64Attr>;
def CoreRT_OpAttrsSetF32Op : CoreRT_OpAttrsSetOp<"op_attrs_set.f32", F32Attr>;
def CoreRT_OpAttrsSetF64Op : CoreRT_OpAttrsSetOp<"op_attrs_set.f64", F64Attr>;
def CoreRT_OpAttrsSetDTypeOp
    : CoreRT_OpAttrsSetOp<"op_attrs_set.dtype", TypeAttr>;
def CoreRT_OpAttrsSetDenseOp
    : CoreRT_OpAttrsSetOp<"op_attrs_set.dense", ElementsAttr>;
def CoreRT_OpAttrsSetAggregateOp
    : CoreRT_OpAttrsSetOp<"op_attrs_set.aggregate", ArrayAttr>;
def CoreRT_OpAttrsSetShapeOp
    : CoreRT_OpAttrsSetOp<"op_attrs_set.shape", CoreRT_ShapeAttr>;
def CoreRT_OpAttrsSetStrOp : CoreRT_OpAttrsSetOp<"op_attrs_set.str", StrAttr>;
def CoreRT_OpAttrsSetArrayI32Op
    : CoreRT_OpAttrsSetOp<"op_attrs_set_array.i32", I32ArrayAttr>;
def CoreRT_OpAttrsSetArrayI64Op
    : CoreRT_OpAttrsSetOp<"op_attrs_set_array.i64", I64ArrayAttr>;
def CoreRT_OpAttrsSetArrayF32Op
    : CoreRT_OpAttrsSetOp<"op_attrs_set_array.f32", F32ArrayAttr>;
def CoreRT_OpAttrsSetArrayF64Op
    : CoreRT_OpAttrsSetOp<"op_attrs_set_array.f64", F64ArrayAttr>;
def CoreRT_OpAttrsSetArrayBoolOp
    : CoreRT_OpAttrsSetOp<"op_attrs_set_array.bool", BoolArrayAttr>;

#endif  // ASYNCRT_DIALECTS_CORERT_CORERT_OPS_TD_
