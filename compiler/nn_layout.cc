// -nn-assign-layouts: keeps oneDNN's layouts between the ops that take
// them (see passes.h).
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

// The ops on oneDNN that read a OneDnnTensor as it is (the runtime's
// kOpAcceptsRegisteredHost ops) and can produce one.
bool IsLayoutOp(mlir::Operation* op) {
  return mlir::isa<nn::ConvOp, nn::MaxPoolOp, nn::AveragePoolOp,
                   nn::GlobalAveragePoolOp>(op);
}

// Whether `use` reads its value in oneDNN's layout without a reorder of
// its own: a convolution's input or fused sum, a pooling's input. (A
// convolution's weights and bias are constants, read plain.)
bool TakesOneDnnLayout(mlir::OpOperand& use) {
  mlir::Operation* user = use.getOwner();
  if (mlir::isa<nn::ConvOp>(user)) {
    return use.getOperandNumber() == 0 || use.getOperandNumber() == 3;
  }
  return IsLayoutOp(user) && use.getOperandNumber() == 0;
}

class NnAssignLayoutsPass
    : public mlir::PassWrapper<NnAssignLayoutsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnAssignLayoutsPass)

  llvm::StringRef getArgument() const final { return "nn-assign-layouts"; }
  llvm::StringRef getDescription() const final {
    return "Keep oneDNN's layouts between convolutions and pooling "
           "(result_layout = \"onednn\")";
  }

  void runOnOperation() override {
    mlir::Builder builder(&getContext());
    mlir::StringAttr onednn = builder.getStringAttr("onednn");
    getOperation().walk([&](mlir::Operation* op) {
      if (!IsLayoutOp(op) || op->hasAttr("result_layout")) return;
      mlir::Value result = op->getResult(0);
      if (result.use_empty()) return;
      for (mlir::OpOperand& use : result.getUses()) {
        if (!TakesOneDnnLayout(use)) return;
      }
      op->setAttr("result_layout", onednn);
    });
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnAssignLayoutsPass() {
  return std::make_unique<NnAssignLayoutsPass>();
}

void RegisterNnAssignLayoutsPass() {
  mlir::PassRegistration<NnAssignLayoutsPass>();
}

}  // namespace asyncrt::compiler
