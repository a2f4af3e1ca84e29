// -nn-fuse: folds what follows a convolution into it (see passes.h).
#include <limits>
#include <string>

#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace asyncrt::compiler {
namespace {

// The convolution that produces `value` for nobody else, with no
// activation fused yet; null otherwise.
nn::ConvOp SoleConvProducer(mlir::Value value) {
  auto conv = value.getDefiningOp<nn::ConvOp>();
  if (!conv || !conv->hasOneUse() || conv->hasAttr("activation")) {
    return nullptr;
  }
  return conv;
}

float FloatOr(mlir::Operation* op, llvm::StringRef name, float fallback) {
  if (auto attr = op->getAttrOfType<mlir::FloatAttr>(name)) {
    return static_cast<float>(attr.getValueAsDouble());
  }
  return fallback;
}

// relu / leaky_relu / clip (conv) -> conv {activation}.
struct FuseActivation : public mlir::RewritePattern {
  explicit FuseActivation(mlir::MLIRContext* context)
      : RewritePattern(mlir::Pattern::MatchAnyOpTypeTag(), /*benefit=*/1,
                       context) {}

  mlir::LogicalResult matchAndRewrite(
      mlir::Operation* op, mlir::PatternRewriter& rewriter) const override {
    if (!mlir::isa<nn::ReluOp, nn::LeakyReluOp, nn::ClipOp>(op)) {
      return mlir::failure();
    }
    nn::ConvOp conv = SoleConvProducer(op->getOperand(0));
    if (!conv || conv.getType() != op->getResult(0).getType()) {
      return mlir::failure();
    }
    rewriter.modifyOpInPlace(conv, [&] {
      if (mlir::isa<nn::ReluOp>(op)) {
        conv->setAttr("activation", rewriter.getStringAttr("relu"));
      } else if (mlir::isa<nn::LeakyReluOp>(op)) {
        conv->setAttr("activation", rewriter.getStringAttr("leaky_relu"));
        conv->setAttr("activation_alpha",
                      rewriter.getF32FloatAttr(FloatOr(op, "alpha", 0.01f)));
      } else {
        conv->setAttr("activation", rewriter.getStringAttr("clip"));
        conv->setAttr("activation_alpha",
                      rewriter.getF32FloatAttr(FloatOr(
                          op, "min", -std::numeric_limits<float>::max())));
        conv->setAttr("activation_beta",
                      rewriter.getF32FloatAttr(FloatOr(
                          op, "max", std::numeric_limits<float>::max())));
      }
    });
    rewriter.replaceOp(op, conv.getResult());
    return mlir::success();
  }
};

// add(conv(x, w[, b]), y) -> conv(x, w, b, y): y, of the result's shape,
// becomes the convolution's fused sum (a residual connection).
struct FuseResidualAdd : public mlir::OpRewritePattern<nn::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::AddOp add, mlir::PatternRewriter& rewriter) const override {
    for (int i = 0; i < 2; ++i) {
      nn::ConvOp conv = SoleConvProducer(add->getOperand(i));
      mlir::Value residual = add->getOperand(1 - i);
      if (!conv || conv->getNumOperands() > 3 ||
          residual.getType() != add.getType() ||
          conv.getType() != add.getType()) {
        continue;
      }
      llvm::SmallVector<mlir::Value> operands(conv->getOperands());
      if (operands.size() == 2) {  // A zero bias keeps the operand order.
        auto weights =
            mlir::cast<mlir::RankedTensorType>(operands[1].getType());
        auto bias_type = mlir::RankedTensorType::get({weights.getDimSize(0)},
                                                     weights.getElementType());
        rewriter.setInsertionPoint(conv);
        operands.push_back(nn::ConstantOp::create(
            rewriter, conv.getLoc(), bias_type,
            mlir::DenseElementsAttr::get(bias_type,
                                         rewriter.getF32FloatAttr(0.0f)),
            nullptr));
      }
      operands.push_back(residual);
      // At the add: every operand (the residual too) is defined before it.
      rewriter.setInsertionPoint(add);
      mlir::OperationState state(conv.getLoc(), conv->getName());
      state.addOperands(operands);
      state.addAttributes(conv->getAttrs());
      state.addTypes(conv.getType());
      mlir::Operation* fused = rewriter.create(state);
      rewriter.replaceOp(add, fused->getResults());
      rewriter.eraseOp(conv);
      return mlir::success();
    }
    return mlir::failure();
  }
};

class NnFusionPass
    : public mlir::PassWrapper<NnFusionPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnFusionPass)

  llvm::StringRef getArgument() const final { return "nn-fuse"; }
  llvm::StringRef getDescription() const final {
    return "Fuse residual adds and activations into nn.conv (oneDNN "
           "post-ops)";
  }

  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<FuseActivation, FuseResidualAdd>(&getContext());
    if (mlir::failed(
            mlir::applyPatternsGreedily(getOperation(), std::move(patterns)))) {
      signalPassFailure();
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnFusionPass() {
  return std::make_unique<NnFusionPass>();
}

void RegisterNnFusionPass() { mlir::PassRegistration<NnFusionPass>(); }

}  // namespace asyncrt::compiler
