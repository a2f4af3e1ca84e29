// -nn-assign-device: placement as an attribute the compiler assigns (see
// passes.h); -nn-to-corert turns it into per-device op handlers and
// explicit transfers.
#include <string>

#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "llvm/ADT/StringRef.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {

bool IsShortDeviceName(llvm::StringRef name) {
  auto [type, index] = name.split(':');
  if (type.empty() || index.empty() || !(type[0] >= 'A' && type[0] <= 'Z')) {
    return false;
  }
  for (char c : type) {
    if (!((c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_')) {
      return false;
    }
  }
  for (char c : index) {
    if (c < '0' || c > '9') return false;
  }
  return true;
}

namespace {

class NnAssignDevicePass
    : public mlir::PassWrapper<NnAssignDevicePass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnAssignDevicePass)

  NnAssignDevicePass() = default;
  NnAssignDevicePass(const NnAssignDevicePass& other) : PassWrapper(other) {}
  explicit NnAssignDevicePass(std::string device) { device_ = device; }

  llvm::StringRef getArgument() const final { return "nn-assign-device"; }
  llvm::StringRef getDescription() const final {
    return "Place every nn op that has no nn.device on a device";
  }

  void runOnOperation() override {
    if (!IsShortDeviceName(device_)) {
      getOperation().emitError()
          << "nn-assign-device: '" << device_
          << "' is not a device name like CPU:0 or SIM:0";
      return signalPassFailure();
    }
    mlir::StringAttr device =
        mlir::StringAttr::get(&getContext(), device_.getValue());
    getOperation().walk([&](mlir::Operation* op) {
      // Constants stay on the host: the lowering copies them where they
      // are used.
      if (op->getDialect() == nullptr ||
          op->getDialect()->getNamespace() != "nn" ||
          mlir::isa<nn::ConstantOp>(op) || op->hasAttr(kDeviceAttribute)) {
        return;
      }
      op->setAttr(kDeviceAttribute, device);
    });
  }

 private:
  Option<std::string> device_{
      *this, "device",
      llvm::cl::desc("The device's short name (SIM:0, CPU:0)"),
      llvm::cl::init("CPU:0")};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnAssignDevicePass(std::string device) {
  return std::make_unique<NnAssignDevicePass>(std::move(device));
}

void RegisterNnAssignDevicePass() {
  mlir::PassRegistration<NnAssignDevicePass>();
}

}  // namespace asyncrt::compiler
