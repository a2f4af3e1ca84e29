//===- corert_sync_ops.td - The corert_sync dialect --------*- tablegen -*-===//
//
// Synchronous core runtime kernels, for `tfrt.sync` functions. Types are
// corert's.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_CORERT_CORERT_SYNC_OPS_TD_
#define ASYNCRT_DIALECTS_CORERT_CORERT_SYNC_OPS_TD_

include "asyncrt/dialects/corert/corert_base.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def CoreRTSync_Dialect : Dialect {
  let name = "corert_sync";
  let summary = "synchronous core runtime kernels (TFRT's `corert_sync`)";
  let cppNamespace = "::asyncrt::corert_sync";
  let usePropertiesForAttributes = 0;
  let dependentDialects = ["::asyncrt::corert::CoreRTDialect"];
}

class CoreRTSync_Op<string mnemonic, list<Trait> traits = []>
    : Op<CoreRTSync_Dialect, mnemonic, traits>;

def CoreRTSync_GetOpHandlerOp : CoreRTSync_Op<"get_op_handler", [Pure]> {
  let summary = "the op handler registered under a name";
  let description = [{
    ```mlir
    %cpu = corert_sync.get_op_handler "cpu"
    ```
  }];
  let arguments = (ins StrAttr:$device_name);
  let results = (outs CoreRT_OpHandlerType:$op_handler);
  let assemblyFormat = "$device_name attr-dict";
}

def CoreRTSync_RegisterOpHandlerOp
    : CoreRTSync_Op<"register_op_handler"> {
  let summary = "makes an op handler available under a name";
  let arguments = (ins CoreRT_OpHandlerType:$op_handler,
                       StrAttr:$op_handler_name);
  let assemblyFormat = "$op_handler $op_handler_name attr-dict";
}

def CoreRTSync_ExecuteOp : CoreRTSync_Op<"executeop"> {
  let summary = "runs op `op_name` on an op handler, synchronously";
  let description = [{
    As `corert.executeop`, without function attributes:

    ```mlir
    %r = corert_sync.executeop(%cpu) "tfrt_test.matmul"(%a, %b) {transpose_a = false} : 1
    ```
  }];
  let arguments = (ins CoreRT_OpHandlerType:$op_handler,
                       Variadic<CoreRT_TensorHandleType>:$args,
                       ArrayAttr:$op_attrs,
                       StrAttr:$op_name);
  let results = (outs Variadic<CoreRT_TensorHandleType>:$results);
  let hasCustomAssemblyFormat = 1;
  let hasVerifier = 1;
}

def CoreRTSync_PrintTensorHandleOp : CoreRTSync_Op<"print_tensorhandle"> {
  let summary = "prints the tensor of a handle";
  let description = [{
    ```mlir
    corert_sync.print_tensorhandle %th
    ```
  }];
  let arguments = (ins CoreRT_TensorHandleType:$tensorhandle);
  let assemblyFormat = "$tensorhandle attr-dict";
}

def CoreRTSync_ConstDenseTensorOp
    : CoreRTSync_Op<"const_dense_tensor", [Pure]> {
  let summary = "a constant dense host tensor handle";
  let arguments = (ins ElementsAttr:$value);
  let results = (outs CoreRT_TensorHandleType:$result);
  let assemblyFormat = "$value attr-dict";
}

foreach dtype = ["ui8", "ui16", "ui32", "ui64", "bool", "i1", "i8", "i16",
                 "i32", "i64", "bf16", "f16", "f32", "f64", "complex64",
                 "complex128"] in {
  def CoreRTSync_CreateDenseTensorOp_#dtype
      : CoreRTSync_Op<"create_dense_tensor." # dtype, [Pure]> {
    let summary = "a constant " # dtype # " dense host tensor handle";
    let description = "As `corert.create_dense_tensor." # dtype # "`.";
    let arguments = (ins I64ArrayAttr:$shape, ArrayAttr:$value);
    let results = (outs CoreRT_TensorHandleType:$result);
    let assemblyFormat = "attr-dict";
  }
}

#endif  // ASYNCRT_DIALECTS_CORERT_CORERT_SYNC_OPS_TD_
