#include "asyncrt/dialects/register_dialects.h"

#include "asyncrt/dialects/tfrt/tfrt_dialect.h"
#include "asyncrt/dialects/tfrt_test/tfrt_test_dialect.h"
#include "mlir/Dialect/Func/Extensions/InlinerExtension.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"

namespace asyncrt {

void RegisterAllDialects(mlir::DialectRegistry& registry) {
  registry.insert<tfrt::TfrtDialect, tfrt_test::TfrtTestDialect,
                  mlir::func::FuncDialect>();
  // Without it -inline leaves calls into func.func bodies alone.
  mlir::func::registerInlinerExtension(registry);
}

}  // namespace asyncrt
