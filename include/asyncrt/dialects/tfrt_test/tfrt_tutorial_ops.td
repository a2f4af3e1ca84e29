//===- tfrt_tutorial_ops.td - TFRT's tutorial kernels ------*- tablegen -*-===//
//
// `tfrt_tutorial.*`: the coordinate kernels of TFRT's tutorial
// (testing/test_kernels.cc), written in generic form.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TFRT_TEST_TFRT_TUTORIAL_OPS_TD_
#define ASYNCRT_DIALECTS_TFRT_TEST_TFRT_TUTORIAL_OPS_TD_

include "asyncrt/dialects/tfrt/tfrt_types.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def TfrtTutorial_Dialect : Dialect {
  let name = "tfrt_tutorial";
  let summary = "the kernels of TFRT's tutorial";
  let cppNamespace = "::asyncrt::tfrt_tutorial";
  let usePropertiesForAttributes = 0;
  let useDefaultTypePrinterParser = 1;
  let dependentDialects = ["::asyncrt::tfrt::TfrtDialect"];
}

def TfrtTutorial_CoordinateType
    : TypeDef<TfrtTutorial_Dialect, "Coordinate"> {
  let mnemonic = "coordinate";
  let summary = "!tfrt_tutorial.coordinate type";
  let description = "A pair of i32 (x, y).";
}

class TfrtTutorial_Op<string mnemonic, list<Trait> traits = []>
    : Op<TfrtTutorial_Dialect, mnemonic, traits>;

def TfrtTutorial_CreateCoordinateOp
    : TfrtTutorial_Op<"create_coordinate", [Pure]> {
  let summary = "a coordinate from two i32 operands, or from `x` and `y`";
  let description = [{
    ```mlir
    %c = "tfrt_tutorial.create_coordinate"(%x, %y)
        : (i32, i32) -> !tfrt_tutorial.coordinate
    %d = "tfrt_tutorial.create_coordinate"() {x = 2 : i32, y = 4 : i32}
        : () -> !tfrt_tutorial.coordinate
    ```
  }];
  let arguments = (ins Variadic<I32>:$xy, OptionalAttr<I32Attr>:$x,
                       OptionalAttr<I32Attr>:$y);
  let results = (outs TfrtTutorial_CoordinateType:$coordinate);
  let hasVerifier = 1;
}

def TfrtTutorial_PrintCoordinateOp : TfrtTutorial_Op<"print_coordinate"> {
  let summary = "prints `(x, y)`";
  let arguments = (ins TfrtTutorial_CoordinateType:$coordinate,
                       Tfrt_ChainType:$in_chain);
  let results = (outs Tfrt_ChainType:$out_chain);
}

#endif  // ASYNCRT_DIALECTS_TFRT_TEST_TFRT_TUTORIAL_OPS_TD_
