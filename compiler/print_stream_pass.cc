// -tfrt-print-stream: shows StreamAnalysis's result as remarks, so lit tests
// can check it with -verify-diagnostics (TFRT's mlir_tests/compiler).
#include "asyncrt/compiler/passes.h"
#include "asyncrt/compiler/stream_analysis.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

class PrintStreamPass
    : public mlir::PassWrapper<PrintStreamPass,
                               mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(PrintStreamPass)

  llvm::StringRef getArgument() const final { return "tfrt-print-stream"; }
  llvm::StringRef getDescription() const final {
    return "Emit the stream of every op as a remark (tests StreamAnalysis)";
  }

  void runOnOperation() override {
    mlir::func::FuncOp func = getOperation();
    if (func.isDeclaration()) return;
    const auto& analysis = getAnalysis<StreamAnalysis>();
    // The function itself stands for the root (its entry).
    EmitStream(analysis.GetRootStream(), func.getLoc());
    for (mlir::Operation& op : func.getBody().front()) {
      EmitStream(analysis.GetStream(&op), op.getLoc());
    }
    markAllAnalysesPreserved();
  }

 private:
  static void EmitStream(const Stream& stream, mlir::Location loc) {
    mlir::emitRemark(loc) << "stream id: " << stream.id()
                          << ", stream cost: " << stream.cost()
                          << ", parent stream: " << stream.parent_id();
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreatePrintStreamPass() {
  return std::make_unique<PrintStreamPass>();
}

void RegisterPrintStreamPass() { mlir::PassRegistration<PrintStreamPass>(); }

}  // namespace asyncrt::compiler
