//===- ts_ops.td - Tensor shape ops ------------------------*- tablegen -*-===//
//
// `ts.*`: building, comparing, converting and printing shapes. Op names and
// syntax follow TFRT's. Printing ops take an optional chain (TFRT's older
// programs leave it out) and return a chain.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TENSOR_TS_OPS_TD_
#define ASYNCRT_DIALECTS_TENSOR_TS_OPS_TD_

include "asyncrt/dialects/tensor/tensor_base.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

class Ts_Op<string mnemonic, list<Trait> traits = []>
    : Op<Ts_Dialect, mnemonic, traits>;

defvar Ts_OptionalInChain = Optional<Tfrt_ChainType>;

def Ts_BuildShapeOp : Ts_Op<"build_shape", [Pure]> {
  let summary = "a shape from the `value` dimensions";
  let description = [{
    ```mlir
    %s = ts.build_shape [1 : i64, 57 : i64]
    ```
  }];
  let arguments = (ins I64ArrayAttr:$value);
  let results = (outs Ts_ShapeType:$output);
  let assemblyFormat = "$value attr-dict";
}

def Ts_BuildPartialShapeOp : Ts_Op<"build_partial_shape", [Pure]> {
  let summary = "a partial shape from `value` (-1: unknown dimension)";
  let description = [{
    ```mlir
    %s = ts.build_partial_shape [-1 : i64, 57 : i64]
    ```
  }];
  let arguments = (ins I64ArrayAttr:$value);
  let results = (outs Ts_PartialShapeType:$output);
  let assemblyFormat = "$value attr-dict";
}

def Ts_BuildUnrankedPartialShapeOp
    : Ts_Op<"build_unranked_partial_shape", [Pure]> {
  let summary = "a partial shape of unknown rank";
  let results = (outs Ts_PartialShapeType:$output);
  let assemblyFormat = "attr-dict";
}

def Ts_EqualShapeOp : Ts_Op<"equal_shape", [Pure]> {
  let summary = "whether two shapes are equal";
  let description = [{
    ```mlir
    %eq = ts.equal_shape %a, %b
    ```
  }];
  let arguments = (ins Ts_ShapeType:$lhs, Ts_ShapeType:$rhs,
                       Ts_OptionalInChain:$in_chain);
  let results = (outs I1:$result);
  let assemblyFormat = "$lhs `,` $rhs (`,` $in_chain^)? attr-dict";
}

def Ts_GetDimensionOp : Ts_Op<"get_dimension", [Pure]> {
  let summary = "the dimension at an index";
  let arguments = (ins Ts_ShapeType:$shape, I32:$index);
  let results = (outs I64:$result);
  let assemblyFormat = "$shape `,` $index attr-dict";
}

def Ts_GetNumElementsOp : Ts_Op<"get_num_elements", [Pure]> {
  let summary = "the number of elements of a shape";
  let arguments = (ins Ts_ShapeType:$shape, Ts_OptionalInChain:$in_chain);
  let results = (outs I64:$result);
  let assemblyFormat = "$shape (`,` $in_chain^)? attr-dict";
}

class Ts_PrintOp<string mnemonic, Type type, string example>
    : Ts_Op<mnemonic> {
  let summary = "prints a shape";
  let description = "```mlir\n" # example # "\n```";
  let arguments = (ins type:$shape, Ts_OptionalInChain:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$shape (`,` $in_chain^)? attr-dict";
}

def Ts_PrintShapeOp : Ts_PrintOp<"print_shape", Ts_ShapeType,
    "%ch1 = ts.print_shape %s, %ch0  // shape = [1, 57]">;
def Ts_PrintPartialShapeOp : Ts_PrintOp<"print_partial_shape",
    Ts_PartialShapeType,
    "%ch1 = ts.print_partial_shape %s, %ch0  // partial_tensor_shape = [-1, 57]">;

def Ts_ToShapeOp : Ts_Op<"to_shape"> {
  let summary = "a partial shape with all dimensions known, as a shape";
  let description = [{
    Fails at run time with `Unknown dimensions at following indices = [...]`.
  }];
  let arguments = (ins Ts_PartialShapeType:$shape);
  let results = (outs Ts_ShapeType:$output);
  let assemblyFormat = "$shape attr-dict";
}

def Ts_ToPartialShapeOp : Ts_Op<"to_partial_shape", [Pure]> {
  let summary = "a shape as a partial shape";
  let arguments = (ins Ts_ShapeType:$shape);
  let results = (outs Ts_PartialShapeType:$output);
  let assemblyFormat = "$shape attr-dict";
}

class Ts_AsFixedRankShapeOp<int rank>
    : Ts_Op<"as_fixed_rank_shape." # rank> {
  let summary = "a shape of rank " # rank # " as a fixed-rank shape";
  let description = [{
    ```mlir
    %f = ts.as_fixed_rank_shape.3 %s   // !ts.fixed_rank_shape.3
    ```
  }];
  let arguments = (ins Ts_ShapeType:$shape);
  let results = (outs Ts_FixedRankShapeType<rank>:$output);
  let assemblyFormat = "$shape attr-dict";
}

class Ts_PrintFixedRankShapeOp<int rank>
    : Ts_PrintOp<"print_fixed_rank_shape." # rank,
                 Ts_FixedRankShapeType<rank>,
                 "ts.print_fixed_rank_shape." # rank #
                 " %f  // fixed_rank_shape = [...]">;

foreach rank = [0, 1, 2, 3, 4] in {
  def Ts_AsFixedRankShapeOp_#rank : Ts_AsFixedRankShapeOp<rank>;
  def Ts_PrintFixedRankShapeOp_#rank : Ts_PrintFixedRankShapeOp<rank>;
}

#endif  // ASYNCRT_DIALECTS_TENSOR_TS_OPS_TD_
