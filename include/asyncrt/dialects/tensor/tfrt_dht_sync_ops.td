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

foreach dtype = DhtSync_DTypes in {
  foreach rank = [0, 1, 2, 3, 4, 5] in {
    def DhtSync_CreateUninitializedTensorOp_#dtype#_#rank
        : DhtSync_CreateUninitializedTensorOp<dtype, rank>;
  }
  def DhtSync_SetTensorWithConstantValuesOp_#dtype
      : DhtSync_SetTensorWithConstantValuesOp<dtype>;
  def DhtSync_MakeTensorOp_#dtype : DhtSync_MakeTensorOp<dtype>;
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
