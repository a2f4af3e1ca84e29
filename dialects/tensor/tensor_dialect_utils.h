// Helpers shared by the host tensor dialects (dialects/tensor/*.cc).
#ifndef ASYNCRT_DIALECTS_TENSOR_TENSOR_DIALECT_UTILS_H_
#define ASYNCRT_DIALECTS_TENSOR_TENSOR_DIALECT_UTILS_H_

#include "asyncrt/dialects/kernel_inliner.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/IR/Dialect.h"
#include "mlir/IR/DialectImplementation.h"
#include "mlir/Transforms/InliningUtils.h"

namespace asyncrt::tensor_dialects {

// Parses a type whose whole spec is one of `mnemonics` with the generated
// parser; anything else becomes an opaque type of `dialect` (unknown types
// are allowed). The generated parser alone would consume the mnemonic of an
// unknown type such as `fixed_rank_shape.3` and leave the rest behind.
template <typename GeneratedParser>
mlir::Type ParseKnownOrOpaque(const mlir::Dialect& dialect,
                              mlir::DialectAsmParser& parser,
                              llvm::ArrayRef<llvm::StringRef> mnemonics,
                              GeneratedParser generated_parser) {
  llvm::StringRef spec = parser.getFullSymbolSpec();
  if (llvm::is_contained(mnemonics, spec)) {
    llvm::StringRef mnemonic;
    mlir::Type type;
    mlir::OptionalParseResult result =
        generated_parser(parser, &mnemonic, type);
    if (result.has_value() && succeeded(*result)) return type;
    return {};
  }
  return dialect.Dialect::parseType(parser);
}

}  // namespace asyncrt::tensor_dialects

#endif  // ASYNCRT_DIALECTS_TENSOR_TENSOR_DIALECT_UTILS_H_
