//===- tensor_base.td - Host tensor dialects and types -----*- tablegen -*-===//
//
// The dialects of host tensors and shapes, and their types. Included by the
// *_ops.td files of this directory; defines no ops, so that each op list is
// generated once.
//
//   tfrt_tensor  !tfrt_tensor.tensor   a host tensor (any kind)
//   t            !t.tensor             TFRT's older spelling of the same type
//   ht           !ht.host_buffer       a host buffer
//   ts           !ts.shape, !ts.partial_shape, !ts.fixed_rank_shape.N (opaque)
//
// Every dialect accepts ops and types it does not define (generic form).
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TENSOR_TENSOR_BASE_TD_
#define ASYNCRT_DIALECTS_TENSOR_TENSOR_BASE_TD_

include "asyncrt/dialects/tfrt/tfrt_types.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/OpBase.td"

// Dialects whose unknown types stay opaque: the generated parser would
// consume the mnemonic of an unknown type and leave the rest behind, so
// parseType/printType are written by hand (see tensor_dialects.cc).
class AsyncRT_TensorFamilyDialect<string dialect_name, string ns>
    : Dialect {
  let name = dialect_name;
  let cppNamespace = ns;
  let usePropertiesForAttributes = 0;
  let useDefaultTypePrinterParser = 0;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect"];
  let extraClassDeclaration = [{
    ::mlir::Type parseType(::mlir::DialectAsmParser &parser) const override;
    void printType(::mlir::Type type,
                   ::mlir::DialectAsmPrinter &printer) const override;
  }];
}

def TfrtTensor_Dialect
    : AsyncRT_TensorFamilyDialect<"tfrt_tensor", "::asyncrt::tfrt_tensor"> {
  let summary = "the host tensor type `!tfrt_tensor.tensor`";
}

def T_Dialect : AsyncRT_TensorFamilyDialect<"t", "::asyncrt::t"> {
  let summary = "`!t.tensor`, TFRT's older name of `!tfrt_tensor.tensor`";
  let description = [{
    Defines no type of its own: `!t.tensor` parses as `!tfrt_tensor.tensor`,
    so that ops written with either spelling use the same values (custom
    forms such as `tfrt_dht.print_tensor %t, %ch` need one operand type).
  }];
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect",
                           "::asyncrt::tfrt_tensor::TfrtTensorDialect"];
}

def Ht_Dialect : AsyncRT_TensorFamilyDialect<"ht", "::asyncrt::ht"> {
  let summary = "the host buffer type `!ht.host_buffer`";
}

def Ts_Dialect : AsyncRT_TensorFamilyDialect<"ts", "::asyncrt::ts"> {
  let summary = "tensor shapes, source compatible with TFRT's `ts`";
}

class TensorFamily_Type<Dialect dialect, string name, string type_mnemonic,
                        string type_summary>
    : TypeDef<dialect, name> {
  let mnemonic = type_mnemonic;
  // TFRT's wording: "result #0 must be !ts.shape type".
  let summary = type_summary;
}

def TfrtTensor_TensorType
    : TensorFamily_Type<TfrtTensor_Dialect, "Tensor", "tensor",
                        "!tfrt_tensor.tensor type"> {
  let description = [{
    A host tensor: dense (`DenseHostTensor`), string, COO or scalar host
    tensor. Also written `!t.tensor`.
  }];
}

def Ht_HostBufferType
    : TensorFamily_Type<Ht_Dialect, "HostBuffer", "host_buffer",
                        "!ht.host_buffer type">;

def Ts_ShapeType
    : TensorFamily_Type<Ts_Dialect, "Shape", "shape", "!ts.shape type"> {
  let description = "A tensor shape with known rank and dimensions.";
}

def Ts_PartialShapeType
    : TensorFamily_Type<Ts_Dialect, "PartialShape", "partial_shape",
                        "!ts.partial_shape type"> {
  let description = [{
    A shape of unknown rank, or of known rank with unknown dimensions (-1).
  }];
}

// `!ts.fixed_rank_shape.N`: an opaque type, as in TFRT.
class Ts_FixedRankShapeType<int rank>
    : OpaqueType<"ts", "fixed_rank_shape." # rank,
                 "!ts.fixed_rank_shape." # rank # " type">;

#endif  // ASYNCRT_DIALECTS_TENSOR_TENSOR_BASE_TD_
