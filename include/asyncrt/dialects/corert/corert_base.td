//===- corert_base.td - corert dialects, types, attributes -*- tablegen -*-===//
//
// The `corert` dialect (op-by-op execution through op handlers) and its
// types and attribute; `corert_sync` shares them. No ops here.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_CORERT_CORERT_BASE_TD_
#define ASYNCRT_DIALECTS_CORERT_CORERT_BASE_TD_

include "asyncrt/dialects/tensor/tensor_base.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/OpBase.td"

def CoreRT_Dialect : Dialect {
  let name = "corert";
  let summary = "the core runtime, source compatible with TFRT's `corert`";
  let description = [{
    `corert.executeop` runs an op (by name) on an op handler over tensor
    handles. Unknown `corert.*` ops and types are accepted (generic form,
    opaque types).
  }];
  let cppNamespace = "::asyncrt::corert";
  let usePropertiesForAttributes = 0;
  let useDefaultTypePrinterParser = 0;
  let useDefaultAttributePrinterParser = 1;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect",
                           "::asyncrt::tfrt_tensor::TfrtTensorDialect",
                           "::asyncrt::ts::TsDialect"];
  let extraClassDeclaration = [{
    ::mlir::Type parseType(::mlir::DialectAsmParser &parser) const override;
    void printType(::mlir::Type type,
                   ::mlir::DialectAsmPrinter &printer) const override;

   private:
    void registerTypes();
    void registerAttributes();
  }];
}

class CoreRT_Type<string name, string type_mnemonic, string type_summary>
    : TypeDef<CoreRT_Dialect, name> {
  let mnemonic = type_mnemonic;
  let summary = type_summary;
}

def CoreRT_TensorHandleType
    : CoreRT_Type<"TensorHandle", "tensorhandle",
                  "!corert.tensorhandle type"> {
  let description = "A tensor (future) with its metadata and device.";
}
def CoreRT_OpHandlerType
    : CoreRT_Type<"OpHandler", "ophandler", "!corert.ophandler type">;
def CoreRT_OpType : CoreRT_Type<"Op", "op", "!corert.op type"> {
  let description = "A prepared op (`corert.make_composite_op`).";
}
def CoreRT_OpAttrsType
    : CoreRT_Type<"OpAttrs", "opattrs", "!corert.opattrs type">;
def CoreRT_OpAttrsRefType
    : CoreRT_Type<"OpAttrsRef", "opattrs_ref", "!corert.opattrs_ref type">;
def CoreRT_StringType
    : CoreRT_Type<"String", "string", "!corert.string type">;
def CoreRT_ResourceType
    : CoreRT_Type<"Resource", "resource", "!corert.resource type">;
// Quantized element types, used as dtype attribute values.
def CoreRT_Quint8Type : CoreRT_Type<"Quint8", "quint8", "!corert.quint8 type">;
def CoreRT_Quint16Type
    : CoreRT_Type<"Quint16", "quint16", "!corert.quint16 type">;
def CoreRT_Qint8Type : CoreRT_Type<"Qint8", "qint8", "!corert.qint8 type">;
def CoreRT_Qint16Type : CoreRT_Type<"Qint16", "qint16", "!corert.qint16 type">;
def CoreRT_Qint32Type : CoreRT_Type<"Qint32", "qint32", "!corert.qint32 type">;
def CoreRT_VariantType
    : CoreRT_Type<"Variant", "variant", "!corert.variant type">;

// `#corert.shape<1x?x3>`, `#corert.shape<>` (rank 0), `#corert.shape<*>`.
def CoreRT_ShapeAttr : AttrDef<CoreRT_Dialect, "Shape"> {
  let mnemonic = "shape";
  let summary = "a tensor shape: dimensions (-1 unknown) or unranked";
  let parameters = (ins "bool":$ranked,
                        ArrayRefParameter<"int64_t", "dimensions">:$dims);
  let hasCustomAssemblyFormat = 1;
  let builders = [
    AttrBuilder<(ins), [{ return $_get($_ctxt, false, ::llvm::ArrayRef<int64_t>()); }]>,
    AttrBuilder<(ins "::llvm::ArrayRef<int64_t>":$dims),
                [{ return $_get($_ctxt, true, dims); }]>,
  ];
}

// Types of TFRT's device ops, left opaque in the tfrt dialect.
def CoreRT_DeviceType : OpaqueType<"tfrt", "device", "!tfrt.device type">;
def CoreRT_TfrtTensorTypeType
    : OpaqueType<"tfrt", "tensor_type", "!tfrt.tensor_type type">;

#endif  // ASYNCRT_DIALECTS_CORERT_CORERT_BASE_TD_
