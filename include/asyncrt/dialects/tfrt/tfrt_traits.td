//===- tfrt_traits.td - Traits read by the BEF converter ---*- tablegen -*-===//
//
// What the compiler and the consistency test need to know about an op is
// declared on the op, not matched by name:
//
//   TFRT_CompileOnly                 the op never runs as a kernel (function
//                                    terminators); it has no kernel of its
//                                    name, and every other op of our
//                                    dialects has one
//                                    (compiler/op_kernel_consistency_test.cc).
//   TFRT_NonStrict                   the op's kernel is registered
//                                    non-strict (KernelStrictness): it starts
//                                    before its operands are available.
//   TFRT_RegionOperandsOpInterface   which operands the op passes to its
//                                    regions; the leading others (conditions,
//                                    trip counts, loop bounds) are control
//                                    operands the regions cannot use.
//
// Included by tfrt_dialect.td, so every dialect's ops see them. Its own
// tablegen run generates the interface (tfrt_interfaces.{h,cc}.inc).
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TFRT_TFRT_TRAITS_TD_
#define ASYNCRT_DIALECTS_TFRT_TFRT_TRAITS_TD_

include "mlir/IR/OpBase.td"

// C++: asyncrt/dialects/tfrt/tfrt_traits.h.
class TFRT_OpTrait<string name> : NativeOpTrait<name> {
  let cppNamespace = "::asyncrt::tfrt::OpTrait";
}

// Never executed: no kernel is registered under the op's name.
def TFRT_CompileOnly : TFRT_OpTrait<"CompileOnly">;

// The kernel is registered with KernelStrictness::kNonStrict.
def TFRT_NonStrict : TFRT_OpTrait<"NonStrict">;

def TFRT_RegionOperandsOpInterface
    : OpInterface<"RegionOperandsOpInterface"> {
  let description = [{
    An op with regions whose trailing operands are the regions' data. When
    a region declares no block arguments, the BEF converter passes it these
    operands as trailing function arguments; the operands before them
    (conditions, trip counts, loop bounds) are not passed. Ops without the
    interface pass all their operands.
  }];
  let cppNamespace = "::asyncrt::tfrt";
  let methods = [
    InterfaceMethod<
      "The operands the op's regions receive.",
      "::mlir::OperandRange", "getRegionOperands">,
  ];
}

#endif  // ASYNCRT_DIALECTS_TFRT_TFRT_TRAITS_TD_
