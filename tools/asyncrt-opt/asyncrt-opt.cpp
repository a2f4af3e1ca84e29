// asyncrt-opt: mlir-opt for AsyncRT's dialects (TFRT programs call it
// tfrt_opt). Parses, verifies, runs the requested passes and prints.
//
//   asyncrt-opt -allow-unregistered-dialect -inline -canonicalize in.mlir
//   asyncrt-opt -tfrt-print-stream -verify-diagnostics in.mlir
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/register_dialects.h"
#include "mlir/IR/DialectRegistry.h"
#include "mlir/Tools/mlir-opt/MlirOptMain.h"
#include "mlir/Transforms/Passes.h"

int main(int argc, char** argv) {
  // Only the generic passes that make sense on tfrt programs; registering
  // all of MLIR's would bloat the binary and --help.
  mlir::registerCanonicalizerPass();
  mlir::registerCSEPass();
  mlir::registerInlinerPass();
  mlir::registerSymbolDCEPass();
  // TFRT's test passes.
  asyncrt::compiler::RegisterPrintStreamPass();
#ifdef ASYNCRT_HAVE_MODEL_COMPILER
  // The model compiler's passes.
  asyncrt::compiler::RegisterNnFusionPass();
  asyncrt::compiler::RegisterNnFuseElementwisePass();
  asyncrt::compiler::RegisterNnAssignLayoutsPass();
  asyncrt::compiler::RegisterNnPlanBuffersPass();
  asyncrt::compiler::RegisterNnToCoreRtPass();
  asyncrt::compiler::RegisterOutlineDeviceGraphsPass();
  asyncrt::compiler::RegisterFuseOpSequencesPass();
  asyncrt::compiler::RegisterNnAssignDevicePass();
  asyncrt::compiler::RegisterNnConvertPrecisionPass();
  asyncrt::compiler::RegisterNnChannelsLastPass();
  asyncrt::compiler::RegisterNnFuseAttentionPass();
  asyncrt::compiler::RegisterNnFuseQkvPass();
  asyncrt::compiler::RegisterModelPipeline();
#endif

  mlir::DialectRegistry registry;
  asyncrt::RegisterAllDialects(registry);
  return mlir::asMainReturnCode(
      mlir::MlirOptMain(argc, argv, "AsyncRT optimizer driver\n", registry));
}
