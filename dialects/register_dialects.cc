#include "asyncrt/dialects/register_dialects.h"

#include "asyncrt/dialects/corert/corert_dialect.h"
#ifdef ASYNCRT_HAVE_NN_DIALECT
#include "asyncrt/dialects/nn/nn_dialect.h"
#endif
#include "asyncrt/dialects/tensor/tensor_dialects.h"
#include "asyncrt/dialects/tfrt/tfrt_dialect.h"
#include "asyncrt/dialects/tfrt_test/tfrt_test_dialect.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace asyncrt {

void RegisterAllDialects(mlir::DialectRegistry& registry) {
  registry.insert<tfrt::TfrtDialect, mlir::func::FuncDialect>();
  // Test kernels (tfrt_tutorial and vt: TFRT's own test namespaces).
  registry.insert<tfrt_test::TfrtTestDialect,
                  tfrt_tutorial::TfrtTutorialDialect, vt::VtDialect>();
  // Host tensors and shapes.
  registry.insert<tfrt_tensor::TfrtTensorDialect, t::TDialect, ht::HtDialect,
                  ts::TsDialect, tfrt_dht::DhtDialect,
                  tfrt_dht_sync::DhtSyncDialect, tfrt_sht::ShtDialect,
                  coo::CooDialect>();
  // Core runtime.
  registry.insert<corert::CoreRTDialect, corert_sync::CoreRTSyncDialect>();
#ifdef ASYNCRT_HAVE_NN_DIALECT
  // Model-level neural-network ops (the ONNX importer's output).
  registry.insert<nn::NNDialect>();
#endif
  // Without it -inline leaves calls into func.func bodies alone.
  mlir::func::registerInlinerExtension(registry);
}

}  // namespace asyncrt
