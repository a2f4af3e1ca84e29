//===- tfrt_ops.td - Ops of the tfrt dialect ---------------*- tablegen -*-===//
//
// Every op here is executed by the kernel registered under the op's full
// name (kernels/tfrt/*_kernels.cc), except those marked TFRT_CompileOnly;
// compiler/op_kernel_consistency_test.cc keeps the two lists in step.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TFRT_TFRT_OPS_TD_
#define ASYNCRT_DIALECTS_TFRT_TFRT_OPS_TD_

include "asyncrt/dialects/tfrt/tfrt_dialect.td"
include "asyncrt/dialects/tfrt/tfrt_types.td"
include "mlir/IR/SymbolInterfaces.td"
include "mlir/Interfaces/CallInterfaces.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

// `custom<ParenTypes>`: a parenthesized, possibly empty type list; ODS's
// `(` type($x) `)` rejects `()`.

// Kernels may take one trailing chain they do not otherwise use
// (docs: "A kernel may receive one extra trailing !tfrt.chain operand").
defvar OptionalInChain = Optional<Tfrt_ChainType>;

//===----------------------------------------------------------------------===//
// Chains
//===----------------------------------------------------------------------===//

def Tfrt_NewChainOp : Tfrt_Op<"new.chain", [Pure]> {
  let summary = "makes an available chain";
  let description = [{
    ```mlir
    %ch = tfrt.new.chain
    ```
  }];
  let results = (outs Tfrt_ChainType:$chain);
  let assemblyFormat = "attr-dict";
}

def Tfrt_MergeChainsOp : Tfrt_Op<"merge.chains", [Pure]> {
  let summary = "a chain that is available once all inputs are";
  let description = [{
    Inputs may be of any type; only their availability matters.

    ```mlir
    %ch = tfrt.merge.chains %a, %b : !tfrt.chain, i32
    ```

    Canonicalization drops repeated inputs and inputs made by
    `tfrt.new.chain` (always available); a merge of a single chain folds to
    that chain.
  }];
  let arguments = (ins Variadic<AnyType>:$inputs);
  let results = (outs Tfrt_ChainType:$chain);
  let assemblyFormat = "$inputs attr-dict `:` type($inputs)";
  let hasVerifier = 1;
  let hasFolder = 1;
  let hasCanonicalizer = 1;
}

//===----------------------------------------------------------------------===//
// Constants
//===----------------------------------------------------------------------===//

class Tfrt_ConstantOp<string suffix, Type type, Attr attr>
    : Tfrt_Op<"constant." # suffix, [Pure]> {
  let summary = "a " # suffix # " constant";
  let description = [{
    ```mlir
    %x = tfrt.constant.i32 42
    ```
  }];
  let arguments = (ins attr:$value);
  let results = (outs type:$result);
  let assemblyFormat = "$value attr-dict";
}

def Tfrt_F16Attr : FloatAttrBase<F16, "16-bit float attribute">;

def Tfrt_ConstantI1Op : Tfrt_ConstantOp<"i1", I1, I1Attr>;
def Tfrt_ConstantI32Op : Tfrt_ConstantOp<"i32", I32, I32Attr>;
def Tfrt_ConstantI64Op : Tfrt_ConstantOp<"i64", I64, I64Attr>;
def Tfrt_ConstantUI32Op : Tfrt_ConstantOp<"ui32", UI32, UI32Attr>;
def Tfrt_ConstantF16Op : Tfrt_ConstantOp<"f16", F16, Tfrt_F16Attr>;
def Tfrt_ConstantF32Op : Tfrt_ConstantOp<"f32", F32, F32Attr>;
def Tfrt_ConstantF64Op : Tfrt_ConstantOp<"f64", F64, F64Attr>;

// `_s`: the kernels of `tfrt.sync` functions (they run anywhere: each
// finishes before it returns).
class Tfrt_SyncConstantOp<string suffix, Type type, Attr attr>
    : Tfrt_ConstantOp<suffix, type, attr> {
  let opName = "constant_s." # suffix;
}
def Tfrt_ConstantSI1Op : Tfrt_SyncConstantOp<"i1", I1, I1Attr>;
def Tfrt_ConstantSI32Op : Tfrt_SyncConstantOp<"i32", I32, I32Attr>;
def Tfrt_ConstantSI64Op : Tfrt_SyncConstantOp<"i64", I64, I64Attr>;
def Tfrt_ConstantSF16Op : Tfrt_SyncConstantOp<"f16", F16, Tfrt_F16Attr>;
def Tfrt_ConstantSF32Op : Tfrt_SyncConstantOp<"f32", F32, F32Attr>;
def Tfrt_ConstantSF64Op : Tfrt_SyncConstantOp<"f64", F64, F64Attr>;

// Attribute names follow TFRT's: `re` and `im`.
class Tfrt_ComplexConstantOp<string suffix, Type part, Attr part_attr>
    : Tfrt_Op<"constant." # suffix, [Pure]> {
  let summary = "a " # suffix # " constant";
  let description = [{
    ```mlir
    %c = "tfrt.constant.complex64"() {re = 1.5 : f32, im = -2.0 : f32}
        : () -> complex<f32>
    ```
  }];
  let arguments = (ins part_attr:$re, part_attr:$im);
  let results = (outs Complex<part>:$result);
}
def Tfrt_ConstantComplex64Op
    : Tfrt_ComplexConstantOp<"complex64", F32, F32Attr>;
def Tfrt_ConstantComplex128Op
    : Tfrt_ComplexConstantOp<"complex128", F64, F64Attr>;

//===----------------------------------------------------------------------===//
// Arithmetic and comparison
//===----------------------------------------------------------------------===//

// `tfrt.<name>.<suffix> %lhs, %rhs` with an optional trailing chain.
class Tfrt_BinaryOp<string name, string suffix, Type type, Type result_type,
                    list<Trait> traits = [Pure]>
    : Tfrt_Op<name # "." # suffix, traits> {
  let arguments = (ins type:$lhs, type:$rhs, OptionalInChain:$in_chain);
  let results = (outs result_type:$result);
  let assemblyFormat = "$lhs `,` $rhs (`,` $in_chain^)? attr-dict";
}

class Tfrt_AddOp<string suffix, Type type>
    : Tfrt_BinaryOp<"add", suffix, type, type> {
  let summary = "lhs + rhs (integers wrap)";
}
def Tfrt_AddI32Op : Tfrt_AddOp<"i32", I32>;
def Tfrt_AddI64Op : Tfrt_AddOp<"i64", I64>;
def Tfrt_AddF32Op : Tfrt_AddOp<"f32", F32>;
def Tfrt_AddF64Op : Tfrt_AddOp<"f64", F64>;

class Tfrt_MultiplyOp<string suffix, Type type>
    : Tfrt_BinaryOp<"multiply", suffix, type, type> {
  let summary = "lhs * rhs (integers wrap)";
}
def Tfrt_MultiplyI32Op : Tfrt_MultiplyOp<"i32", I32>;
def Tfrt_MultiplyI64Op : Tfrt_MultiplyOp<"i64", I64>;
def Tfrt_MultiplyF32Op : Tfrt_MultiplyOp<"f32", F32>;
def Tfrt_MultiplyF64Op : Tfrt_MultiplyOp<"f64", F64>;

class Tfrt_MinusOp<string suffix, Type type>
    : Tfrt_BinaryOp<"minus", suffix, type, type> {
  let summary = "lhs - rhs (integers wrap)";
}
def Tfrt_MinusI32Op : Tfrt_MinusOp<"i32", I32>;
def Tfrt_MinusI64Op : Tfrt_MinusOp<"i64", I64>;

// Sync versions for `tfrt.sync` functions.
class Tfrt_SyncAddOp<string suffix, Type type>
    : Tfrt_BinaryOp<"add_s", suffix, type, type> {
  let summary = "lhs + rhs (integers wrap), in a tfrt.sync function";
}
def Tfrt_AddSI32Op : Tfrt_SyncAddOp<"i32", I32>;
def Tfrt_AddSI64Op : Tfrt_SyncAddOp<"i64", I64>;
def Tfrt_AddSF32Op : Tfrt_SyncAddOp<"f32", F32>;
def Tfrt_AddSF64Op : Tfrt_SyncAddOp<"f64", F64>;

class Tfrt_SyncMultiplyOp<string suffix, Type type>
    : Tfrt_BinaryOp<"mul_s", suffix, type, type> {
  let summary = "lhs * rhs (integers wrap), in a tfrt.sync function";
}
def Tfrt_MulSI32Op : Tfrt_SyncMultiplyOp<"i32", I32>;
def Tfrt_MulSI64Op : Tfrt_SyncMultiplyOp<"i64", I64>;
def Tfrt_MulSF32Op : Tfrt_SyncMultiplyOp<"f32", F32>;
def Tfrt_MulSF64Op : Tfrt_SyncMultiplyOp<"f64", F64>;

class Tfrt_MinimumOp<string suffix, Type type>
    : Tfrt_BinaryOp<"minimum", suffix, type, type> {
  let summary = "min(lhs, rhs)";
}
def Tfrt_MinimumI32Op : Tfrt_MinimumOp<"i32", I32>;
def Tfrt_MinimumI64Op : Tfrt_MinimumOp<"i64", I64>;
def Tfrt_MinimumF32Op : Tfrt_MinimumOp<"f32", F32>;
def Tfrt_MinimumF64Op : Tfrt_MinimumOp<"f64", F64>;

// Division can fail at run time (`Divide by zero`), so it is not
// speculatable; an unused one may still be erased.
class Tfrt_DivIntegerOp<string suffix, Type type>
    : Tfrt_Op<"div." # suffix, [NoMemoryEffect]> {
  let summary = "quotient and remainder; error `Divide by zero` if rhs is 0";
  let description = [{
    ```mlir
    %q, %r = tfrt.div.i32 %a, %b
    ```
  }];
  let arguments = (ins type:$lhs, type:$rhs, OptionalInChain:$in_chain);
  // Unnamed so that they print as %0:2, like TFRT's (named results of
  // multi-result ops get ODS-made asm names).
  let results = (outs type, type);
  let assemblyFormat = "$lhs `,` $rhs (`,` $in_chain^)? attr-dict";
}
def Tfrt_DivI32Op : Tfrt_DivIntegerOp<"i32", I32>;
def Tfrt_DivI64Op : Tfrt_DivIntegerOp<"i64", I64>;

class Tfrt_DivFloatOp<string suffix, Type type>
    : Tfrt_BinaryOp<"div", suffix, type, type, [NoMemoryEffect]> {
  let summary = "lhs / rhs; error `Divide by zero` if rhs is 0";
}
def Tfrt_DivF32Op : Tfrt_DivFloatOp<"f32", F32>;
def Tfrt_DivF64Op : Tfrt_DivFloatOp<"f64", F64>;

class Tfrt_EqualOp<string suffix, Type type>
    : Tfrt_BinaryOp<"equal", suffix, type, I1> {
  let summary = "lhs == rhs";
}
def Tfrt_EqualI32Op : Tfrt_EqualOp<"i32", I32>;
def Tfrt_EqualI64Op : Tfrt_EqualOp<"i64", I64>;

class Tfrt_LessEqualOp<string suffix, Type type>
    : Tfrt_BinaryOp<"lessequal", suffix, type, I1> {
  let summary = "lhs <= rhs";
}
def Tfrt_LessEqualI32Op : Tfrt_LessEqualOp<"i32", I32>;
def Tfrt_LessEqualI64Op : Tfrt_LessEqualOp<"i64", I64>;

class Tfrt_CastOp<string from, string to, Type from_type, Type to_type>
    : Tfrt_Op<"cast." # from # "_to_" # to, [Pure]> {
  let summary = "static_cast from " # from # " to " # to;
  let arguments = (ins from_type:$input, OptionalInChain:$in_chain);
  let results = (outs to_type:$result);
  let assemblyFormat = "$input (`,` $in_chain^)? attr-dict";
}
def Tfrt_CastI64ToF32Op : Tfrt_CastOp<"i64", "f32", I64, F32>;
def Tfrt_CastF32ToI64Op : Tfrt_CastOp<"f32", "i64", F32, I64>;
def Tfrt_CastI64ToF64Op : Tfrt_CastOp<"i64", "f64", I64, F64>;
def Tfrt_CastF64ToI64Op : Tfrt_CastOp<"f64", "i64", F64, I64>;

//===----------------------------------------------------------------------===//
// Printing
//===----------------------------------------------------------------------===//

// No side-effect trait: printing must never be erased or reordered.
class Tfrt_PrintOp<string suffix, Type type> : Tfrt_Op<"print." # suffix> {
  let summary = "prints the value once the chain is available";
  let description = [{
    ```mlir
    %ch1 = tfrt.print.i32 %x, %ch0
    ```
  }];
  let arguments = (ins type:$value, Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$value `,` $in_chain attr-dict";
}
def Tfrt_PrintI1Op : Tfrt_PrintOp<"i1", I1>;
def Tfrt_PrintI32Op : Tfrt_PrintOp<"i32", I32>;
def Tfrt_PrintI64Op : Tfrt_PrintOp<"i64", I64>;
def Tfrt_PrintF32Op : Tfrt_PrintOp<"f32", F32>;
def Tfrt_PrintF64Op : Tfrt_PrintOp<"f64", F64>;
def Tfrt_PrintF16Op : Tfrt_PrintOp<"f16", F16> {
  let summary = "prints `f16 = BITS`, the half's bit pattern, as TFRT does";
}
def Tfrt_PrintComplex64Op : Tfrt_PrintOp<"complex64", Complex<F32>>;
def Tfrt_PrintComplex128Op : Tfrt_PrintOp<"complex128", Complex<F64>>;

//===----------------------------------------------------------------------===//
// Devices
//===----------------------------------------------------------------------===//

// Opaque, as in TFRT (corert's ops take it too).
def Tfrt_DeviceType : OpaqueType<"tfrt", "device", "!tfrt.device type">;

def Tfrt_GetDeviceOp : Tfrt_Op<"get_device"> {
  let summary = "the device registered under `device_name`";
  let description = [{
    Kernel in kernels/core_runtime. Fails at run time with `no device NAME`.

    ```mlir
    %cpu = "tfrt.get_device"(%ch) {device_name = "CPU:0"}
        : (!tfrt.chain) -> !tfrt.device
    ```
  }];
  let arguments = (ins Tfrt_ChainType:$in_chain, StrAttr:$device_name);
  let results = (outs Tfrt_DeviceType:$device);
}

//===----------------------------------------------------------------------===//
// Functions: call, return
//===----------------------------------------------------------------------===//

def Tfrt_CallOp : Tfrt_Op<"call",
    [TFRT_NonStrict, CallOpInterface,
     DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls a BEF or native (`tfrt.native`) function";
  let description = [{
    ```mlir
    %r = tfrt.call @f(%a) : (i32) -> i32
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee,
                       Variadic<AnyType>:$operands,
                       OptionalAttr<DictArrayAttr>:$arg_attrs,
                       OptionalAttr<DictArrayAttr>:$res_attrs);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $callee `(` $operands `)` attr-dict `:` functional-type($operands, results)
  }];
  let extraClassDeclaration = [{
    // CallOpInterface.
    ::mlir::CallInterfaceCallable getCallableForCallee() {
      return getCalleeAttr();
    }
    void setCalleeFromCallable(::mlir::CallInterfaceCallable callee) {
      (*this)->setAttr(getCalleeAttrName(),
                       ::llvm::cast<::mlir::SymbolRefAttr>(callee));
    }
    ::mlir::Operation::operand_range getArgOperands() { return getOperands(); }
    ::mlir::MutableOperandRange getArgOperandsMutable() {
      return getOperandsMutable();
    }
  }];
}

def Tfrt_ReturnOp
    : Tfrt_Op<"return", [TFRT_CompileOnly, Pure, Terminator]> {
  let summary = "results of a function or of a region";
  let description = [{
    Ends every function body and every region of the control-flow ops. Its
    operand types must equal the function's result types, or the enclosing
    op's result types (`tfrt.parallel_for.i32`: nothing or one chain).

    ```mlir
    tfrt.return %a, %b : i32, !tfrt.chain
    tfrt.return
    ```
  }];
  let arguments = (ins Variadic<AnyType>:$operands);
  let builders = [OpBuilder<(ins), [{ build($_builder, $_state, ::mlir::ValueRange()); }]>];
  let assemblyFormat = "($operands^ `:` type($operands))? attr-dict";
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Control flow with regions
//===----------------------------------------------------------------------===//

def Tfrt_IfOp : Tfrt_Op<"if", [TFRT_NonStrict, IsolatedFromAbove,
    DeclareOpInterfaceMethods<TFRT_RegionOperandsOpInterface>]> {
  let summary = "runs the then or the else region";
  let description = [{
    Both regions take the operands after the condition as arguments (named
    like the operands) and return the op's results.

    ```mlir
    %r = tfrt.if %cond, %x : (i32) -> (i32) {
      tfrt.return %x : i32
    } else {
      %y = tfrt.add.i32 %x, %x
      tfrt.return %y : i32
    }
    ```

    The `else` region may be left out when the op has no results; it then
    returns nothing.
  }];
  let arguments = (ins I1:$cond, Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$then_region,
                        SizedRegion<1>:$else_region);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Tfrt_RepeatI32Op : Tfrt_Op<"repeat.i32", [TFRT_NonStrict,
    IsolatedFromAbove,
    DeclareOpInterfaceMethods<TFRT_RegionOperandsOpInterface>]> {
  let summary = "runs the body trip_count times, carrying values";
  let description = [{
    The body takes the loop-carried values (named like the operands after
    the trip count) and returns their next values; the op returns those of
    the last iteration. Checks for cancellation between iterations.

    ```mlir
    %r:2 = tfrt.repeat.i32 %n, %a, %b : i32, f32 {
      tfrt.return %a, %b : i32, f32
    }
    tfrt.repeat.i32 %n {
      tfrt.return
    }
    ```
  }];
  let arguments = (ins I32:$trip_count, Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def Tfrt_ParallelForI32Op : Tfrt_Op<"parallel_for.i32", [IsolatedFromAbove,
    DeclareOpInterfaceMethods<TFRT_RegionOperandsOpInterface>]> {
  let summary = "runs the body on blocks of [start, end) in parallel";
  let description = [{
    The body takes the block's start and end (named like `%start`/`%end`)
    and the remaining operands. It returns nothing (synchronous body) or a
    chain (asynchronous body); the op's chain is available once every block
    is done.

    ```mlir
    %done = tfrt.parallel_for.i32 %start to %end fixed %block_size, %x : i32 {
      tfrt.return
    }
    ```
  }];
  let arguments = (ins I32:$start, I32:$end, I32:$block_size,
                       Variadic<AnyType>:$args);
  let results = (outs Tfrt_ChainType:$done);
  let regions = (region SizedRegion<1>:$body);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

//===----------------------------------------------------------------------===//
// Control flow through named functions
//===----------------------------------------------------------------------===//

def Tfrt_ParallelCallI32Op : Tfrt_Op<"parallel_call.i32",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "tfrt.parallel_for.i32 with the body as a named function";
  let description = [{
    The callee takes (block start, block end, args...) and returns nothing or
    a chain.

    ```mlir
    %done = tfrt.parallel_call.i32 %start to %end fixed %block_size @body(%x) : i32
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$callee, I32:$start, I32:$end,
                       I32:$block_size, Variadic<AnyType>:$args);
  let results = (outs Tfrt_ChainType:$done);
  let assemblyFormat = [{
    $start `to` $end `fixed` $block_size $callee `(` $args `)` attr-dict
    (`:` type($args)^)?
  }];
}

def Tfrt_CondOp : Tfrt_Op<"cond",
    [TFRT_NonStrict, DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls the true or the false function";
  let description = [{
    The attribute names keep TFRT's `a_`/`b_` prefixes: BEF stores attributes
    sorted by name, and the kernel takes the true branch first.

    ```mlir
    %r = tfrt.cond %c @then @else (%a) : (i32) -> (i32)
    ```
  }];
  let arguments = (ins I1:$cond, FlatSymbolRefAttr:$a_true_fn,
                       FlatSymbolRefAttr:$b_false_fn,
                       Variadic<AnyType>:$fn_operands);
  let results = (outs Variadic<AnyType>:$outputs);
  let assemblyFormat = [{
    $cond $a_true_fn $b_false_fn `(` $fn_operands `)` attr-dict `:`
    custom<ParenTypes>(type($fn_operands)) `->` custom<ParenTypes>(type($outputs))
  }];
}

def Tfrt_CaseOp : Tfrt_Op<"case",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls branch number `branch_index` (out of range: the last)";
  let description = [{
    ```mlir
    %r = tfrt.case %i [@b0, @b1] (%a) : (i32) -> (i32)
    ```

    TFRT's chained form threads a chain through the branch and leaves it
    out of the type lists: one operand more than operand types means the
    first operand and the first result are `!tfrt.chain`.

    ```mlir
    %ch1, %r = tfrt.case %i [@b0, @b1] (%ch0, %a) : (i32) -> (i32)
    ```
  }];
  let arguments = (ins I32:$branch_index, FlatSymbolRefArrayAttr:$branches,
                       Variadic<AnyType>:$branch_operands);
  let results = (outs Variadic<AnyType>:$branch_outputs);
  let assemblyFormat = [{
    $branch_index $branches `(` $branch_operands `)` attr-dict `:`
    custom<CaseTypes>(ref($branch_operands), type($branch_operands),
                      type($branch_outputs))
  }];
}

def Tfrt_WhileOp : Tfrt_Op<"while",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls body_fn while its trailing i1 result is true";
  let description = [{
    `cond` decides whether the first iteration runs. The body takes the
    loop values and returns their next values followed by an i1.

    ```mlir
    %r = tfrt.while %c @body(%a) parallel_iterations(1) : (i32) -> (i32)
    ```
  }];
  let arguments = (ins I1:$cond, Variadic<AnyType>:$args,
                       FlatSymbolRefAttr:$body_fn,
                       I64Attr:$parallel_iterations);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $cond $body_fn `(` $args `)` attr-dict
    `parallel_iterations` `(` $parallel_iterations `)` `:`
    custom<ParenTypes>(type($args)) `->` custom<ParenTypes>(type($results))
  }];
  let hasVerifier = 1;
}

def Tfrt_OnceOp : Tfrt_Op<"once",
    [DeclareOpInterfaceMethods<SymbolUserOpInterface>]> {
  let summary = "calls the function once per resource context, then reuses";
  let description = [{
    ```mlir
    %r = tfrt.once @init(%x) : (i32) -> (i32)
    ```
  }];
  let arguments = (ins FlatSymbolRefAttr:$function,
                       Variadic<AnyType>:$args);
  let results = (outs Variadic<AnyType>:$results);
  let assemblyFormat = [{
    $function `(` $args `)` attr-dict `:`
    custom<ParenTypes>(type($args)) `->` custom<ParenTypes>(type($results))
  }];
}

#endif  // ASYNCRT_DIALECTS_TFRT_TFRT_OPS_TD_
