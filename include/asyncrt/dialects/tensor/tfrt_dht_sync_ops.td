//===- tfrt_dht_sync_ops.td - Synchronous dense host tensor ops -*- tablegen -*-===//
//
// `tfrt_dht_sync.*`: the synchronous kernels of `tfrt.sync` functions. No
// chains; values are ready when the op returns.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TENSOR_TFRT_DHT_SYNC_OPS_TD_
#define ASYNCRT_DIALECTS_TENSOR_TFRT_DHT_SYNC_OPS_TD_

include "asyncrt/dialects/tensor/tensor_base.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def DhtSync_Dialect : Dialect {
  let name = "tfrt_dht_sync";
  let summary = "synchronous dense host tensor kernels (TFRT's `tfrt_dht_sync`)";
  let cppNamespace = "::asyncrt::tfrt_dht_sync";
  let usePropertiesForAttributes = 0;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect",
                           "::asyncrt::tfrt_tensor::TfrtTensorDialect",
                           "::asyncrt::ht::HtDialect",
                           "::asyncrt::ts::TsDialect"];
}

class DhtSync_Op<string mnemonic, list<Trait> traits = []>
    : Op<DhtSync_Dialect, mnemonic, traits>;

defvar DhtSync_DTypes = ["bool", "i1", "i8", "i16", "i32", "i64", "ui8",
                         "ui16", "ui32", "ui64", "f16", "bf16", "f32", "f64",
                         "complex64", "complex128"];

class DhtSync_CreateUninitializedTensorOp<string dtype, int rank>
    : DhtSync_Op<"create_uninitialized_tensor." # dtype # "." # rank> {
  let summary = "an uninitialized " # dtype # " tensor of rank " # rank;
  let description = [{
    ```mlir
    %t = tfrt_dht_sync.create_uninitialized_tensor.i32.2 [3 : i64, 2 : i64]
    ```
  }];
  // One dimension per rank.
  let arguments = (ins ConfinedAttr<I64ArrayAttr, [ArrayCount<rank>]>:$shape);
  let results = (outs TfrtTensor_TensorType:$tensor);
  let assemblyFormat = "$shape attr-dict";
}

class DhtSync_SetTensorWithConstantValuesOp<string dtype>
    : DhtSync_Op<"set_tensor_with_constant_values." # dtype> {
  let summary = "sets the elements to `values`";
  let description = [{
    ```mlir
    tfrt_dht_sync.set_tensor_with_constant_values.i32 %t [1 : i32, 2 : i32]
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$tensor, ArrayAttr:$values);
  let assemblyFormat = "$tensor $values attr-dict";
}

class DhtSync_MakeTensorOp<string dtype>
    : DhtSync_Op<"make_tensor." # dtype> {
  let summary = "a tensor over a host buffer (shares its memory)";
  let arguments = (ins Ht_HostBufferType:$buffer, Ts_ShapeType:$shape);
  let results = (outs TfrtTensor_TensorType:$tensor);
  let assemblyFormat = "$buffer `,` $shape attr-dict";
}

class DhtSync_FillTensorWithConstantOp<string dtype>
    : DhtSync_Op<"fill_tensor_with_constant." # dtype> {
  let summary = "sets every element to `value`";
  let description = [{
    ```mlir
    tfrt_dht_sync.fill_tensor_with_constant.i32 %t 0 : i32
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$tensor, AnyAttr:$value);
  let assemblyFormat = "$tensor $value attr-dict";
}

class DhtSync_SetTensorWithValuesOp<string dtype>
    : DhtSync_Op<"set_tensor_with_values." # dtype> {
  let summary = "sets the elements to the scalar operands";
  let description = [{
    ```mlir
    tfrt_dht_sync.set_tensor_with_values.i64 %t, %a, %b : i64, i64
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       Variadic<AnyType>:$values);
  let assemblyFormat = [{
    $tensor (`,` $values^ `:` type($values))? attr-dict
  }];
}

class DhtSync_CompareOp<string mnemonic, string what> : DhtSync_Op<mnemonic> {
  let summary = "whether two tensors are " # what # " (see tfrt_dht)";
  let description = [{
    ```mlir
    %eq = tfrt_dht_sync.tensor_equal.i32 %a, %b
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$lhs,
                       TfrtTensor_TensorType:$rhs);
  let results = (outs I1:$result);
  let assemblyFormat = "$lhs `,` $rhs attr-dict";
}

foreach dtype = DhtSync_DTypes in {
  foreach rank = [0, 1, 2, 3, 4, 5, 6] in {
    def DhtSync_CreateUninitializedTensorOp_#dtype#_#rank
        : DhtSync_CreateUninitializedTensorOp<dtype, rank>;
  }
  def DhtSync_FillTensorWithConstantOp_#dtype
      : DhtSync_FillTensorWithConstantOp<dtype>;
  def DhtSync_SetTensorWithConstantValuesOp_#dtype
      : DhtSync_SetTensorWithConstantValuesOp<dtype>;
  def DhtSync_SetTensorWithValuesOp_#dtype
      : DhtSync_SetTensorWithValuesOp<dtype>;
  def DhtSync_MakeTensorOp_#dtype : DhtSync_MakeTensorOp<dtype>;
  def DhtSync_TensorEqualOp_#dtype
      : DhtSync_CompareOp<"tensor_equal." # dtype, "equal">;
}

foreach dtype = ["f32", "f64"] in {
  def DhtSync_TensorAllCloseOp_#dtype
      : DhtSync_CompareOp<"tensor_allclose." # dtype, "close">;
}

def DhtSync_PrintTensorOp : DhtSync_Op<"print_tensor"> {
  let summary = "prints a host tensor, then a newline";
  let description = [{
    ```mlir
    tfrt_dht_sync.print_tensor %t
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$tensor);
  let assemblyFormat = "$tensor attr-dict";
}

def DhtSync_GetTensorShapeOp : DhtSync_Op<"get_tensor_shape", [Pure]> {
  let summary = "the shape of a tensor";
  let arguments = (ins TfrtTensor_TensorType:$tensor);
  let results = (outs Ts_ShapeType:$shape);
  let assemblyFormat = "$tensor attr-dict";
}

def DhtSync_GetBufferOp : DhtSync_Op<"get_buffer"> {
  let summary = "the host buffer behind a dense host tensor";
  let arguments = (ins TfrtTensor_TensorType:$tensor);
  let results = (outs Ht_HostBufferType:$buffer);
  let assemblyFormat = "$tensor attr-dict";
}

def DhtSync_PrintBufferOp : DhtSync_Op<"print_buffer"> {
  let summary = "prints `HostBuffer<pointer=0x..., size=N>`";
  let arguments = (ins Ht_HostBufferType:$buffer);
  let assemblyFormat = "$buffer attr-dict";
}

def DhtSync_AllocateBufferOp : DhtSync_Op<"allocate_buffer"> {
  let summary = "a host buffer of `size` bytes aligned to `alignment`";
  let arguments = (ins I64:$size, I64:$alignment);
  let results = (outs Ht_HostBufferType:$buffer);
  let assemblyFormat = "$size `,` $alignment attr-dict";
}

def DhtSync_GetBufferSliceOp : DhtSync_Op<"get_buffer_slice"> {
  let summary = "`size` bytes of a buffer from `offset` (shares its memory)";
  let arguments = (ins Ht_HostBufferType:$parent, I64:$offset, I64:$size);
  let results = (outs Ht_HostBufferType:$buffer);
  let assemblyFormat = "$parent `,` $offset `,` $size attr-dict";
}

#endif  // ASYNCRT_DIALECTS_TENSOR_TFRT_DHT_SYNC_OPS_TD_
