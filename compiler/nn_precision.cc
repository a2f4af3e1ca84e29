// -nn-convert-precision: runs a model's f32 computation in f16 or bf16
// (see passes.h).
#include <cstring>
#include <string>
#include <vector>

#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "asyncrt/tensor/dtype.h"
#include "llvm/ADT/DenseMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

class NnConvertPrecisionPass
    : public mlir::PassWrapper<NnConvertPrecisionPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnConvertPrecisionPass)

  NnConvertPrecisionPass() = default;
  NnConvertPrecisionPass(const NnConvertPrecisionPass& other)
      : PassWrapper(other) {}
  explicit NnConvertPrecisionPass(std::string dtype) { dtype_ = dtype; }

  llvm::StringRef getArgument() const final { return "nn-convert-precision"; }
  llvm::StringRef getDescription() const final {
    return "Compute a model's f32 ops in f16 or bf16, keeping its f32 "
           "signature";
  }

  void runOnOperation() override {
    mlir::MLIRContext* context = &getContext();
    if (dtype_ == "f16") {
      narrow_ = mlir::Float16Type::get(context);
    } else if (dtype_ == "bf16") {
      narrow_ = mlir::BFloat16Type::get(context);
    } else {
      getOperation().emitError()
          << "nn-convert-precision: dtype must be f16 or bf16, not '" << dtype_
          << "'";
      return signalPassFailure();
    }
    for (auto function : getOperation().getOps<mlir::func::FuncOp>()) {
      if (function.isDeclaration()) continue;
      if (mlir::failed(Convert(function))) return signalPassFailure();
    }
  }

 private:
  mlir::Type Narrowed(mlir::Type type) const {
    auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
    if (!tensor || !tensor.getElementType().isF32()) return type;
    return tensor.clone(narrow_);
  }

  static bool IsF32Tensor(mlir::Type type) {
    auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(type);
    return tensor && tensor.getElementType().isF32();
  }

  // nn.cast of `value` to the element type `to`.
  mlir::Value Cast(mlir::OpBuilder& builder, mlir::Location loc,
                   mlir::Value value, mlir::Type to) const {
    auto type = mlir::cast<mlir::RankedTensorType>(value.getType());
    mlir::OperationState state(loc, "nn.cast");
    state.addOperands(value);
    state.addAttribute("to", mlir::TypeAttr::get(to));
    state.addTypes(type.clone(to));
    return builder.create(state)->getResult(0);
  }

  // The f32 constant's value in the narrow type, as a dense resource (or
  // inline where the original was).
  mlir::FailureOr<mlir::ElementsAttr> NarrowedConstant(
      mlir::ElementsAttr value) const {
    std::optional<std::vector<char>> bytes =
        nn::ElementBytes(value, DType::kF32);
    if (!bytes) return mlir::failure();
    const size_t count = bytes->size() / sizeof(float);
    std::vector<uint16_t> narrow(count);
    for (size_t i = 0; i < count; ++i) {
      float f;
      std::memcpy(&f, bytes->data() + i * sizeof(float), sizeof(float));
      narrow[i] = narrow_.isF16() ? Half::FromFloat(f).bits
                                  : BFloat16::FromFloat(f).bits;
    }
    auto type = mlir::cast<mlir::RankedTensorType>(Narrowed(value.getType()));
    llvm::ArrayRef<char> raw(reinterpret_cast<const char*>(narrow.data()),
                             narrow.size() * sizeof(uint16_t));
    return nn::ElementsFromBytes(
        type, raw, "narrowed",
        mlir::isa<mlir::DenseResourceElementsAttr>(value));
  }

  mlir::LogicalResult Convert(mlir::func::FuncOp function) {
    mlir::MLIRContext* context = &getContext();
    mlir::OpBuilder builder(context);
    mlir::Block& block = function.getBody().front();
    mlir::Type f32 = mlir::Float32Type::get(context);

    // Arguments stay f32 (the caller's); the body reads narrowed copies.
    builder.setInsertionPointToStart(&block);
    for (mlir::BlockArgument argument : block.getArguments()) {
      if (!IsF32Tensor(argument.getType()) || argument.use_empty()) continue;
      mlir::Value narrowed =
          Cast(builder, function.getLoc(), argument, narrow_);
      argument.replaceAllUsesExcept(narrowed, narrowed.getDefiningOp());
    }

    for (mlir::Operation& op : llvm::make_early_inc_range(block)) {
      if (op.getDialect() == nullptr ||
          op.getDialect()->getNamespace() != "nn") {
        continue;
      }
      if (auto constant = mlir::dyn_cast<nn::ConstantOp>(op)) {
        if (!IsF32Tensor(constant.getType())) continue;
        mlir::FailureOr<mlir::ElementsAttr> narrowed =
            NarrowedConstant(constant.getValue());
        if (mlir::failed(narrowed)) {
          return op.emitError("nn-convert-precision: cannot read constant");
        }
        op.setAttr("value", *narrowed);
        op.getResult(0).setType(narrowed->getType());
        continue;
      }
      // The model's own casts to f32 compute in the narrow type too.
      if (op.getName().getStringRef() == "nn.cast") {
        if (auto to = op.getAttrOfType<mlir::TypeAttr>("to");
            to && to.getValue().isF32()) {
          op.setAttr("to", mlir::TypeAttr::get(narrow_));
        }
      }
      // Result types from the runtime's shape function on the narrowed
      // operands; an op that does not take them computes in f32 between
      // casts.
      std::string error;
      mlir::FailureOr<llvm::SmallVector<mlir::Type>> types =
          nn::InferResultTypes(context, op.getName().getStringRef(),
                               op.getOperandTypes(), op.getAttrDictionary(),
                               op.getNumResults(), error);
      if (mlir::succeeded(types)) {
        for (auto [result, type] : llvm::zip(op.getResults(), *types)) {
          result.setType(type);
        }
        continue;
      }
      builder.setInsertionPoint(&op);
      for (mlir::OpOperand& operand : op.getOpOperands()) {
        auto type =
            mlir::dyn_cast<mlir::RankedTensorType>(operand.get().getType());
        if (type && type.getElementType() == narrow_) {
          operand.set(Cast(builder, op.getLoc(), operand.get(), f32));
        }
      }
      builder.setInsertionPointAfter(&op);
      for (mlir::Value result : op.getResults()) {
        if (!IsF32Tensor(result.getType()) || result.use_empty()) continue;
        mlir::Value narrowed = Cast(builder, op.getLoc(), result, narrow_);
        result.replaceAllUsesExcept(narrowed, narrowed.getDefiningOp());
      }
    }

    // Results go back to the caller in f32.
    auto ret = mlir::cast<mlir::func::ReturnOp>(block.getTerminator());
    builder.setInsertionPoint(ret);
    for (mlir::OpOperand& operand : ret->getOpOperands()) {
      auto type =
          mlir::dyn_cast<mlir::RankedTensorType>(operand.get().getType());
      if (type && type.getElementType() == narrow_) {
        operand.set(Cast(builder, ret.getLoc(), operand.get(), f32));
      }
    }
    return mlir::success();
  }

  mlir::Type narrow_;
  Option<std::string> dtype_{*this, "dtype", llvm::cl::desc("f16 or bf16"),
                             llvm::cl::init("f16")};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnConvertPrecisionPass(std::string dtype) {
  return std::make_unique<NnConvertPrecisionPass>(std::move(dtype));
}

void RegisterNnConvertPrecisionPass() {
  mlir::PassRegistration<NnConvertPrecisionPass>();
}

}  // namespace asyncrt::compiler
