// BEF to MLIR: rebuilds the module a BEF file was compiled from.
//
// Kernels become ops of the same name with their attributes; region bodies
// become regions again. Needs the file's DebugInfo section (register types):
// files written with --disable-optional-sections cannot be translated back.
#ifndef ASYNCRT_BEF_CONVERTER_BEF_TO_MLIR_H_
#define ASYNCRT_BEF_CONVERTER_BEF_TO_MLIR_H_

#include <cstdint>

#include "absl/types/span.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace asyncrt {

// Null on failure, after emitting diagnostics through `context`. The
// context must have the dialects of the kernels loaded, or allow
// unregistered dialects.
mlir::OwningOpRef<mlir::ModuleOp> ConvertBefToMlir(
    absl::Span<const uint8_t> bytes, mlir::MLIRContext* context);

}  // namespace asyncrt

#endif  // ASYNCRT_BEF_CONVERTER_BEF_TO_MLIR_H_
