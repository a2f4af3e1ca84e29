// asyncrt-translate: mlir-translate style conversions between MLIR and BEF.
//
//   asyncrt-translate -mlir-to-bef prog.mlir -o prog.bef
//   asyncrt-translate -bef-to-mlir prog.bef
//   asyncrt-translate -import-onnx model.onnx   (nn dialect, to asyncrt-opt)
//
// Supports -split-input-file and -verify-diagnostics (MLIR's diagnostic
// verifier) for tests of the converter's errors. Ops of unregistered
// dialects are accepted: they become kernels of the same name.
#include <string>

#include "asyncrt/bef_converter/bef_to_mlir.h"
#include "asyncrt/bef_converter/mlir_to_bef.h"
#ifdef ASYNCRT_HAVE_ONNX_IMPORTER
#include "asyncrt/compiler/onnx_importer.h"
#endif
#include "asyncrt/dialects/register_dialects.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Support/FileUtilities.h"
#include "mlir/Support/ToolUtilities.h"

namespace {

namespace cl = llvm::cl;

cl::opt<std::string> input_filename(cl::Positional, cl::desc("<input file>"),
                                    cl::init("-"));
cl::opt<std::string> output_filename("o", cl::desc("Output filename"),
                                     cl::value_desc("filename"), cl::init("-"));
cl::opt<bool> mlir_to_bef("mlir-to-bef",
                          cl::desc("Translate an MLIR module to BEF"));
cl::opt<bool> bef_to_mlir("bef-to-mlir",
                          cl::desc("Translate a BEF file back to MLIR"));
cl::opt<bool> import_onnx(
    "import-onnx",
    cl::desc("Import an ONNX model into the nn dialect (MLIR text)"));
cl::opt<int64_t> default_dimension(
    "onnx-default-dimension",
    cl::desc("The size of symbolic ONNX input dimensions (default 1)"),
    cl::init(1));
cl::opt<bool> disable_optional_sections(
    "disable-optional-sections",
    cl::desc("Leave out the optional BEF sections (debug info, location "
             "names)"));
cl::opt<bool> split_input_file(
    "split-input-file",
    cl::desc("Split the input on '// -----' and translate each chunk"));
cl::opt<bool> verify_diagnostics(
    "verify-diagnostics",
    cl::desc("Check diagnostics against expected-* comments"));
cl::opt<bool> allow_unregistered_dialect(
    "allow-unregistered-dialect",
    cl::desc(
        "Accepted for compatibility: unregistered ops are always allowed"));

mlir::LogicalResult TranslateChunk(std::unique_ptr<llvm::MemoryBuffer> buffer,
                                   llvm::raw_ostream& os) {
  mlir::DialectRegistry registry;
  asyncrt::RegisterAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.allowUnregisteredDialects();
  // Diagnostics point at source lines; the op dump MLIR would attach is
  // noise for users and would break -verify-diagnostics expectations.
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr source_mgr;
  source_mgr.AddNewSourceBuffer(std::move(buffer), llvm::SMLoc());

  auto translate = [&]() -> mlir::LogicalResult {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        mlir::parseSourceFile<mlir::ModuleOp>(source_mgr, &context);
    if (!module) return mlir::failure();
    auto bytes = asyncrt::ConvertMlirToBef(*module, disable_optional_sections);
    if (mlir::failed(bytes)) return mlir::failure();
    os.write(reinterpret_cast<const char*>(bytes->data()), bytes->size());
    return mlir::success();
  };

  if (!verify_diagnostics) {
    mlir::SourceMgrDiagnosticHandler handler(source_mgr, &context);
    return translate();
  }
  mlir::SourceMgrDiagnosticVerifierHandler handler(source_mgr, &context);
  (void)translate();  // Failures are what the expectations describe.
  return handler.verify();
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  mlir::registerAsmPrinterCLOptions();
  mlir::registerMLIRContextCLOptions();
  cl::ParseCommandLineOptions(argc, argv, "AsyncRT MLIR <-> BEF translator\n");
  if (int{mlir_to_bef} + int{bef_to_mlir} + int{import_onnx} != 1) {
    llvm::errs() << "error: choose one translation: -mlir-to-bef, "
                    "-bef-to-mlir or -import-onnx\n";
    return 1;
  }
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(input_filename, &error);
  if (!input) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(output_filename, &error);
  if (!output) {
    llvm::errs() << "error: " << error << "\n";
    return 1;
  }
  if (import_onnx) {
#ifdef ASYNCRT_HAVE_ONNX_IMPORTER
    mlir::DialectRegistry registry;
    asyncrt::RegisterAllDialects(registry);
    mlir::MLIRContext context(registry);
    context.printOpOnDiagnostic(false);
    llvm::SourceMgr source_mgr;
    mlir::SourceMgrDiagnosticHandler handler(source_mgr, &context);
    asyncrt::OnnxImportOptions options;
    options.default_dimension = default_dimension;
    mlir::OwningOpRef<mlir::ModuleOp> module = asyncrt::ImportOnnxModel(
        input->getBuffer(), input_filename, &context, options);
    if (!module) return 1;
    module->print(output->os());
    output->keep();
    return 0;
#else
    llvm::errs() << "error: this asyncrt-translate has no ONNX importer "
                    "(configure with libonnx-dev installed)\n";
    return 1;
#endif
  }
  if (bef_to_mlir) {
    mlir::DialectRegistry registry;
    asyncrt::RegisterAllDialects(registry);
    mlir::MLIRContext context(registry);
    context.allowUnregisteredDialects();
    context.loadAllAvailableDialects();
    llvm::SourceMgr source_mgr;
    mlir::SourceMgrDiagnosticHandler handler(source_mgr, &context);
    auto bytes = absl::MakeConstSpan(
        reinterpret_cast<const uint8_t*>(input->getBufferStart()),
        input->getBufferSize());
    mlir::OwningOpRef<mlir::ModuleOp> module =
        asyncrt::ConvertBefToMlir(bytes, &context);
    if (!module) return 1;
    module->print(output->os());
    output->keep();
    return 0;
  }
  mlir::LogicalResult result =
      split_input_file ? mlir::splitAndProcessBuffer(
                             std::move(input), TranslateChunk, output->os())
                       : TranslateChunk(std::move(input), output->os());
  if (mlir::failed(result)) return 1;
  output->keep();
  return 0;
}
