//===- vt_ops.td - Value-tracking test kernels -------------*- tablegen -*-===//
//
// `vt.*`: kernels over a value type that prints when it is constructed,
// moved and destroyed, for tests of how the executor stores kernel results
// (testing/test_kernels.cc). Written in generic form.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TFRT_TEST_VT_OPS_TD_
#define ASYNCRT_DIALECTS_TFRT_TEST_VT_OPS_TD_

include "asyncrt/dialects/tfrt/tfrt_types.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/OpBase.td"

def Vt_Dialect : Dialect {
  let name = "vt";
  let summary = "value-tracking test kernels";
  let cppNamespace = "::asyncrt::vt";
  let usePropertiesForAttributes = 0;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect"];
}

def Vt_ValueType : TypeDef<Vt_Dialect, "Value"> {
  let mnemonic = "value";
  let summary = "!vt.value type";
  let description = "An i32 that reports its lifetime.";
}

class Vt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Vt_Dialect, mnemonic, traits>;

// Not Pure: constructing and destroying values prints.
def Vt_ConstantOp : Vt_Op<"constant"> {
  let summary = "a value holding `value`";
  let arguments = (ins I32Attr:$value);
  let results = (outs Vt_ValueType:$result);
}

def Vt_AddOp : Vt_Op<"add"> {
  let summary = "a new value holding lhs + rhs";
  let arguments = (ins Vt_ValueType:$lhs, Vt_ValueType:$rhs);
  let results = (outs Vt_ValueType:$result);
}

def Vt_PrintOp : Vt_Op<"print"> {
  let summary = "prints the value";
  let arguments = (ins Vt_ValueType:$value, Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

#endif  // ASYNCRT_DIALECTS_TFRT_TEST_VT_OPS_TD_
