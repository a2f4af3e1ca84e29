//===- tfrt_dialect.td - The tfrt dialect ------------------*- tablegen -*-===//
//
// The `tfrt` dialect: chains, constants, arithmetic, printing, calls and
// control flow. Op names and textual syntax follow TFRT's so that programs
// written for TFRT parse unchanged (docs/dialects.md).
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_TFRT_TFRT_DIALECT_TD_
#define ASYNCRT_DIALECTS_TFRT_TFRT_DIALECT_TD_

include "mlir/IR/OpBase.td"
include "mlir/IR/AttrTypeBase.td"
include "mlir/IR/DialectBase.td"
include "asyncrt/dialects/tfrt/tfrt_traits.td"

def Tfrt_Dialect : Dialect {
  let name = "tfrt";
  let summary = "AsyncRT host dialect, source compatible with TFRT's `tfrt`";
  let description = [{
    Every registered op is executed by the kernel of the same name
    (`tfrt.add.i32` runs the kernel registered as "tfrt.add.i32"), unless
    it is marked `TFRT_CompileOnly` (`tfrt.return`). Ops this
    dialect does not know are accepted as well, so that programs may name any
    `tfrt.*` kernel in generic form; so are unknown `!tfrt.*` types, which
    stay opaque.

    Regions of the control-flow ops (`tfrt.if`, `tfrt.repeat.i32`,
    `tfrt.parallel_for.i32`) are isolated from above: each becomes a BEF
    function whose arguments are the op's data operands. In the text the
    region refers to those arguments by the operands' own names.
  }];
  let cppNamespace = "::asyncrt::tfrt";
  // Inherent attributes stay in the attribute dictionary (no properties):
  // the BEF converter encodes every attribute by name, and the generic form
  // keeps TFRT's `{value = 1 : i32}` spelling.
  let usePropertiesForAttributes = 0;
  // Custom type parser: unknown `!tfrt.*` types become opaque types.
  let useDefaultTypePrinterParser = 0;
  // `tfrt.native`, `tfrt.sync`, `tfrt.cost_threshold` on functions.
  let hasOperationAttrVerify = 1;
  let extraClassDeclaration = [{
    ::mlir::Type parseType(::mlir::DialectAsmParser &parser) const override;
    void printType(::mlir::Type type,
                   ::mlir::DialectAsmPrinter &printer) const override;

   private:
    void registerTypes();
  }];
}

// Base class of the tfrt ops.
class Tfrt_Op<string mnemonic, list<Trait> traits = []>
    : Op<Tfrt_Dialect, mnemonic, traits>;

#endif  // ASYNCRT_DIALECTS_TFRT_TFRT_DIALECT_TD_
