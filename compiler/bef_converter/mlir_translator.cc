// The "mlir" program translator: MLIR text to BEF through every AsyncRT
// dialect and the BEF converter. Linking asyncrt::mlir_translator (always
// linked) is what lets a Runtime load .mlir programs.
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "asyncrt/bef_converter/mlir_to_bef.h"
#include "asyncrt/dialects/register_dialects.h"
#include "asyncrt/runtime/program_translator.h"
#include "asyncrt/support/static_registration.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"

namespace asyncrt {
namespace {

absl::StatusOr<std::vector<uint8_t>> TranslateMlirToBef(
    absl::string_view text, absl::string_view buffer_name) {
  mlir::DialectRegistry registry;
  RegisterAllDialects(registry);
  // One context per program: translation runs on any thread, concurrently.
  mlir::MLIRContext context(registry, mlir::MLIRContext::Threading::DISABLED);
  context.allowUnregisteredDialects();
  llvm::SourceMgr source_mgr;
  source_mgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(text.data(), text.size()),
          llvm::StringRef(buffer_name.data(), buffer_name.size())),
      llvm::SMLoc());
  std::string diagnostics;
  llvm::raw_string_ostream os(diagnostics);
  mlir::SourceMgrDiagnosticHandler handler(source_mgr, &context, os);
  mlir::OwningOpRef<mlir::ModuleOp> module =
      mlir::parseSourceFile<mlir::ModuleOp>(source_mgr, &context);
  mlir::FailureOr<std::vector<uint8_t>> bytes = mlir::failure();
  if (module) bytes = ConvertMlirToBef(*module);
  if (mlir::failed(bytes)) {
    os.flush();
    while (!diagnostics.empty() && diagnostics.back() == '\n') {
      diagnostics.pop_back();
    }
    return absl::InvalidArgumentError(diagnostics);
  }
  return *std::move(bytes);
}

}  // namespace

ASYNCRT_STATIC_REGISTRATION(RegisterProgramTranslator("mlir",
                                                      TranslateMlirToBef));

}  // namespace asyncrt
