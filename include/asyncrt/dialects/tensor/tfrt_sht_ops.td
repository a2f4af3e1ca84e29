//===- tfrt_sht_ops.td - String host tensor ops ------------*- tablegen -*-===//

#ifndef ASYNCRT_DIALECTS_TENSOR_TFRT_SHT_OPS_TD_
#define ASYNCRT_DIALECTS_TENSOR_TFRT_SHT_OPS_TD_

include "asyncrt/dialects/tensor/tensor_base.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def Sht_Dialect : Dialect {
  let name = "tfrt_sht";
  let summary = "string host tensors, source compatible with TFRT's `tfrt_sht`";
  let cppNamespace = "::asyncrt::tfrt_sht";
  let usePropertiesForAttributes = 0;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect",
                           "::asyncrt::tfrt_tensor::TfrtTensorDialect"];
}

def Sht_CreateTensorOp : Op<Sht_Dialect, "create_tensor", [Pure]> {
  let summary = "a string host tensor of `shape` holding `values`";
  let description = [{
    ```mlir
    %t = tfrt_sht.create_tensor {shape = [2], values = ["a", "b"]}
    ```
  }];
  let arguments = (ins I64ArrayAttr:$shape, StrArrayAttr:$values);
  let results = (outs TfrtTensor_TensorType:$tensor);
  let assemblyFormat = "attr-dict";
}

#endif  // ASYNCRT_DIALECTS_TENSOR_TFRT_SHT_OPS_TD_
