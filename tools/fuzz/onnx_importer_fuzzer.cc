// libFuzzer target for the ONNX importer: any byte string must import into
// a module that verifies or fail with a diagnostic, never crash, hang or
// leak. Built with clang (-fsanitize=fuzzer,address) by
// tools/fuzz/run_onnx_fuzzer.sh, which seeds it with the importer's sample
// models.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "asyncrt/compiler/onnx_importer.h"
#include "asyncrt/dialects/register_dialects.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // One context for every input (making one registers every dialect);
  // each import builds its own module in it.
  static mlir::MLIRContext* context = [] {
    mlir::DialectRegistry registry;
    asyncrt::RegisterAllDialects(registry);
    auto* made = new mlir::MLIRContext(registry);
    made->loadAllAvailableDialects();
    return made;
  }();
  bool diagnosed = false;
  mlir::ScopedDiagnosticHandler handler(context, [&](mlir::Diagnostic&) {
    diagnosed = true;
    return mlir::success();
  });
  mlir::OwningOpRef<mlir::ModuleOp> module = asyncrt::ImportOnnxModel(
      llvm::StringRef(reinterpret_cast<const char*>(data), size),
      "fuzz.onnx", context);
  // A failed import says why; an imported module is valid.
  if (!module && !diagnosed) std::abort();
  if (module && mlir::failed(mlir::verify(*module))) std::abort();
  return 0;
}
