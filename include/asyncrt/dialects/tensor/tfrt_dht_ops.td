//===- tfrt_dht_ops.td - Dense host tensor ops -------------*- tablegen -*-===//
//
// `tfrt_dht.*`: dense host tensors. Op names and syntax follow TFRT's; one op
// per element type (and rank) because each is a kernel of that name.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TENSOR_TFRT_DHT_OPS_TD_
#define ASYNCRT_DIALECTS_TENSOR_TFRT_DHT_OPS_TD_

include "asyncrt/dialects/tensor/tensor_base.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Dht_Dialect : Dialect {
  let name = "tfrt_dht";
  let summary = "dense host tensors, source compatible with TFRT's `tfrt_dht`";
  let cppNamespace = "::asyncrt::tfrt_dht";
  let usePropertiesForAttributes = 0;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect",
                           "::asyncrt::tfrt_tensor::TfrtTensorDialect",
                           "::asyncrt::ht::HtDialect",
                           "::asyncrt::ts::TsDialect"];
}

class Dht_Op<string mnemonic, list<Trait> traits = []>
    : Op<Dht_Dialect, mnemonic, traits>;

// Element types of the per-dtype ops (TFRT's names: `bool` and `i1` both
// mean a one-byte boolean).
defvar Dht_DTypes = ["bool", "i1", "i8", "i16", "i32", "i64", "ui8", "ui16",
                     "ui32", "ui64", "f16", "bf16", "f32", "f64", "complex64",
                     "complex128"];
// Ranks of the per-rank ops (TFRT's kernels go up to 6).
defvar Dht_Ranks = [0, 1, 2, 3, 4, 5, 6];

class Dht_CreateUninitializedTensorOp<string dtype, int rank>
    : Dht_Op<"create_uninitialized_tensor." # dtype # "." # rank> {
  let summary = "an uninitialized " # dtype # " tensor of rank " # rank;
  let description = [{
    ```mlir
    %t = tfrt_dht.create_uninitialized_tensor.i32.2 [3 : i64, 2 : i64]
    ```
  }];
  // One dimension per rank.
  let arguments = (ins ConfinedAttr<I64ArrayAttr, [ArrayCount<rank>]>:$shape);
  let results = (outs TfrtTensor_TensorType:$tensor);
  let assemblyFormat = "$shape attr-dict";
}

class Dht_FillTensorWithConstantOp<string dtype>
    : Dht_Op<"fill_tensor_with_constant." # dtype> {
  let summary = "sets every element to `value`";
  let description = [{
    ```mlir
    %ch1 = tfrt_dht.fill_tensor_with_constant.i32 %t, %ch0 0 : i32
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       Tfrt_ChainType:$in_chain, AnyAttr:$value);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$tensor `,` $in_chain $value attr-dict";
}

class Dht_SetTensorWithConstantValuesOp<string dtype>
    : Dht_Op<"set_tensor_with_constant_values." # dtype> {
  let summary = "sets the elements to `values` (complex: real, imag pairs)";
  let description = [{
    ```mlir
    %ch1 = tfrt_dht.set_tensor_with_constant_values.i32 %t, %ch0 [1 : i32, 2 : i32]
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       Tfrt_ChainType:$in_chain, ArrayAttr:$values);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$tensor `,` $in_chain $values attr-dict";
}

class Dht_SetTensorWithValuesOp<string dtype>
    : Dht_Op<"set_tensor_with_values." # dtype> {
  let summary = "sets the elements to the scalar operands";
  let description = [{
    ```mlir
    %ch1 = tfrt_dht.set_tensor_with_values.i64 %t, %ch0, %a, %b : i64, i64
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       Tfrt_ChainType:$in_chain, Variadic<AnyType>:$values);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = [{
    $tensor `,` $in_chain (`,` $values^ `:` type($values))? attr-dict
  }];
}

class Dht_MakeTensorOp<string dtype> : Dht_Op<"make_tensor." # dtype> {
  let summary = "a tensor over a host buffer (shares its memory)";
  let description = [{
    ```mlir
    %t, %ch1 = tfrt_dht.make_tensor.f32 %buf, %shape, %ch0
    ```
  }];
  let arguments = (ins Ht_HostBufferType:$buffer, Ts_ShapeType:$shape,
                       Tfrt_ChainType:$in_chain);
  // Unnamed, so that they print as %0:2 (see tfrt.div.i32).
  let results = (outs TfrtTensor_TensorType, Tfrt_ChainType);
  let assemblyFormat = "$buffer `,` $shape `,` $in_chain attr-dict";
}

class Dht_CompareOp<string mnemonic, string what>
    : Dht_Op<mnemonic> {
  let summary = "whether two tensors are " # what;
  let description = [{
    ```mlir
    %eq, %ch1 = tfrt_dht.tensor_equal.i32 %a, %b, %ch0
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$lhs,
                       TfrtTensor_TensorType:$rhs, Tfrt_ChainType:$in_chain);
  // Unnamed, so that they print as %0:2 (see tfrt.div.i32).
  let results = (outs I1, Tfrt_ChainType);
  let assemblyFormat = "$lhs `,` $rhs `,` $in_chain attr-dict";
}

foreach dtype = Dht_DTypes in {
  foreach rank = Dht_Ranks in {
    def Dht_CreateUninitializedTensorOp_#dtype#_#rank
        : Dht_CreateUninitializedTensorOp<dtype, rank>;
  }
  def Dht_FillTensorWithConstantOp_#dtype
      : Dht_FillTensorWithConstantOp<dtype>;
  def Dht_SetTensorWithConstantValuesOp_#dtype
      : Dht_SetTensorWithConstantValuesOp<dtype>;
  def Dht_SetTensorWithValuesOp_#dtype : Dht_SetTensorWithValuesOp<dtype>;
  def Dht_MakeTensorOp_#dtype : Dht_MakeTensorOp<dtype>;
  def Dht_TensorEqualOp_#dtype
      : Dht_CompareOp<"tensor_equal." # dtype, "equal">;
}

// Floating-point comparison: the plain op allows |a - b| <= 1e-8 +
// 1e-5 * |b| per element; the `.Nulp` variants allow elements at most N
// units in the last place apart (N representable values of the dtype;
// NaN is close to nothing, +0 and -0 are equal).
foreach dtype = ["f16", "bf16", "f32", "f64"] in {
  def Dht_TensorAllCloseOp_#dtype
      : Dht_CompareOp<"tensor_allclose." # dtype, "close">;
  foreach ulp = ["3ulp", "1000ulp", "2000ulp", "100000ulp"] in {
    def Dht_TensorAllCloseOp_#ulp#_#dtype
        : Dht_CompareOp<"tensor_allclose." # ulp # "." # dtype,
                        "within " # ulp>;
  }
}

def Dht_PrintTensorOp : Dht_Op<"print_tensor"> {
  let summary = "prints a host tensor, then a newline";
  let description = [{
    ```mlir
    %ch1 = tfrt_dht.print_tensor %t, %ch0
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$tensor `,` $in_chain attr-dict";
}

def Dht_PrintTensorShapeOp : Dht_Op<"print_tensor_shape"> {
  let summary = "prints a shape";
  let arguments = (ins Ts_ShapeType:$shape, Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$shape `,` $in_chain attr-dict";
}

def Dht_GetTensorShapeOp : Dht_Op<"get_tensor_shape", [Pure]> {
  let summary = "the shape of a tensor";
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       Optional<Tfrt_ChainType>:$in_chain);
  let results = (outs Ts_ShapeType:$shape);
  let assemblyFormat = "$tensor (`,` $in_chain^)? attr-dict";
}

def Dht_AllocateBufferOp : Dht_Op<"allocate_buffer"> {
  let summary = "a host buffer of `size` bytes aligned to `alignment`";
  let description = [{
    ```mlir
    %buf = tfrt_dht.allocate_buffer %size, %alignment
    ```
  }];
  let arguments = (ins I64:$size, I64:$alignment,
                       Optional<Tfrt_ChainType>:$in_chain);
  let results = (outs Ht_HostBufferType:$buffer);
  let assemblyFormat = "$size `,` $alignment (`,` $in_chain^)? attr-dict";
}

def Dht_GetBufferOp : Dht_Op<"get_buffer"> {
  let summary = "the host buffer behind a dense host tensor";
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       Tfrt_ChainType:$in_chain);
  // Unnamed, so that they print as %0:2 (see tfrt.div.i32).
  let results = (outs Ht_HostBufferType, Tfrt_ChainType);
  let assemblyFormat = "$tensor `,` $in_chain attr-dict";
}

def Dht_GetBufferSliceOp : Dht_Op<"get_buffer_slice"> {
  let summary = "`size` bytes of a buffer from `offset` (shares its memory)";
  let arguments = (ins Ht_HostBufferType:$parent, I64:$offset, I64:$size);
  let results = (outs Ht_HostBufferType:$buffer);
  let assemblyFormat = "$parent `,` $offset `,` $size attr-dict";
}

def Dht_PrintBufferOp : Dht_Op<"print_buffer"> {
  let summary = "prints `HostBuffer<pointer=0x..., size=N>`";
  let arguments = (ins Ht_HostBufferType:$buffer, Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$buffer `,` $in_chain attr-dict";
}

#endif  // ASYNCRT_DIALECTS_TENSOR_TFRT_DHT_OPS_TD_
