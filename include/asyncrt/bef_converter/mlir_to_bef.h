// MLIR to BEF: compiles a module of func.func ops to a BEF file.
//
// Every func.func becomes a BEF function; every region of an op becomes an
// anonymous BEF function emitted just before the function that encloses it.
// Each op other than tfrt.return becomes a kernel named after the op. A
// region's block arguments become its function's arguments; a region
// without block arguments (of an unregistered op) may instead use its op's
// data operands, which then become the arguments.
//
// Errors (missing tfrt.return, external functions, undefined callees,
// attributes BEF cannot encode, sync-function return rules) are emitted as
// MLIR diagnostics at the offending op, so -verify-diagnostics can check
// them.
#ifndef ASYNCRT_BEF_CONVERTER_MLIR_TO_BEF_H_
#define ASYNCRT_BEF_CONVERTER_MLIR_TO_BEF_H_

#include <cstdint>
#include <vector>

#include "mlir/IR/BuiltinOps.h"
#include "mlir/Support/LogicalResult.h"

namespace asyncrt {

// On failure the diagnostics have been emitted through the module's context.
mlir::FailureOr<std::vector<uint8_t>> ConvertMlirToBef(
    mlir::ModuleOp module, bool disable_optional_sections = false);

}  // namespace asyncrt

#endif  // ASYNCRT_BEF_CONVERTER_MLIR_TO_BEF_H_
