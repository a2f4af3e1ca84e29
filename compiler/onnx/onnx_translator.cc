// The "onnx" program translator: an ONNX model to BEF (import, the model
// pipeline, the BEF converter). Linking asyncrt::onnx_translator (always
// linked) is what lets a Runtime load .onnx models.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/compiler/onnx_importer.h"
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/register_dialects.h"
#include "asyncrt/runtime/program_translator.h"
#include "asyncrt/support/static_registration.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"

namespace asyncrt {
namespace {

absl::StatusOr<std::vector<uint8_t>> TranslateOnnxToBef(
    absl::string_view bytes, absl::string_view name) {
  mlir::DialectRegistry registry;
  RegisterAllDialects(registry);
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  std::string diagnostics;
  mlir::ScopedDiagnosticHandler handler(
      &context, [&](mlir::Diagnostic& diagnostic) {
        llvm::raw_string_ostream os(diagnostics);
        if (!diagnostics.empty()) os << "\n";
        os << diagnostic.getLocation() << ": " << diagnostic;
        return mlir::success();
      });
  auto failed = [&]() {
    return absl::InvalidArgumentError(
        diagnostics.empty() ? absl::StrCat("cannot compile '", name, "'")
                            : diagnostics);
  };
  mlir::OwningOpRef<mlir::ModuleOp> module =
      ImportOnnxModel(llvm::StringRef(bytes.data(), bytes.size()),
                      llvm::StringRef(name.data(), name.size()), &context);
  if (!module) return failed();
  mlir::FailureOr<std::vector<uint8_t>> bef =
      compiler::CompileModelToBef(*module);
  if (mlir::failed(bef)) return failed();
  return *std::move(bef);
}

}  // namespace

ASYNCRT_STATIC_REGISTRATION(RegisterProgramTranslator("onnx",
                                                      TranslateOnnxToBef));

}  // namespace asyncrt
