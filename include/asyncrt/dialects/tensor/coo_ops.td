//===- coo_ops.td - COO sparse host tensor ops -------------*- tablegen -*-===//

#ifndef ASYNCRT_DIALECTS_TENSOR_COO_OPS_TD_
#define ASYNCRT_DIALECTS_TENSOR_COO_OPS_TD_

include "asyncrt/dialects/tensor/tensor_base.td"

def Coo_Dialect : Dialect {
  let name = "coo";
  let summary = "COO sparse host tensors, source compatible with TFRT's `coo`";
  let cppNamespace = "::asyncrt::coo";
  let usePropertiesForAttributes = 0;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect",
                           "::asyncrt::tfrt_tensor::TfrtTensorDialect"];
}

class Coo_Op<string mnemonic, list<Trait> traits = []>
    : Op<Coo_Dialect, mnemonic, traits>;

class Coo_ConvertOp<string mnemonic, string what> : Coo_Op<mnemonic> {
  let summary = what;
  let description = [{
    ```mlir
    %coo, %ch1 = coo.convert_dht_to_coo.i32.2 %dht, %ch0
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$input,
                       Tfrt_ChainType:$in_chain);
  // Unnamed, so that they print as %0:2 (see tfrt.div.i32).
  let results = (outs TfrtTensor_TensorType, Tfrt_ChainType);
  let assemblyFormat = "$input `,` $in_chain attr-dict";
}

class Coo_TensorEqualOp<string dtype, int rank>
    : Coo_Op<"tensor_equal." # dtype # "." # rank> {
  let summary = "whether two COO tensors are equal";
  let description = [{
    ```mlir
    %eq, %ch1 = coo.tensor_equal.i32.2 %a, %b, %ch0
    ```
  }];
  let arguments = (ins TfrtTensor_TensorType:$lhs,
                       TfrtTensor_TensorType:$rhs, Tfrt_ChainType:$in_chain);
  // Unnamed, so that they print as %0:2 (see tfrt.div.i32).
  let results = (outs I1, Tfrt_ChainType);
  let assemblyFormat = "$lhs `,` $rhs `,` $in_chain attr-dict";
}

// One kernel per dtype and rank (kernels/tensor/tensor_kernels.cc): keep
// the two lists in step.
foreach dtype = ["i32", "i64", "f32", "f64"] in {
  foreach rank = [0, 1, 2, 3, 4] in {
    def Coo_ConvertDhtToCooOp_#dtype#_#rank
        : Coo_ConvertOp<"convert_dht_to_coo." # dtype # "." # rank,
                        "a dense host tensor as a COO tensor">;
    def Coo_ConvertCooToDhtOp_#dtype#_#rank
        : Coo_ConvertOp<"convert_coo_to_dht." # dtype # "." # rank,
                        "a COO tensor as a dense host tensor">;
    def Coo_TensorEqualOp_#dtype#_#rank : Coo_TensorEqualOp<dtype, rank>;
  }
}

def Coo_PrintTensorOp : Coo_Op<"print_tensor"> {
  let summary = "prints a COO tensor";
  let arguments = (ins TfrtTensor_TensorType:$tensor,
                       Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
  let assemblyFormat = "$tensor `,` $in_chain attr-dict";
}

#endif  // ASYNCRT_DIALECTS_TENSOR_COO_OPS_TD_
