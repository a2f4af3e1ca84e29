// -nn-fuse-elementwise: chains of f32 elementwise ops become one
// nn.fused_elementwise (see passes.h).
#include <algorithm>
#include <optional>

#include "asyncrt/backends/fused_elementwise.h"
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

bool IsStaticF32(mlir::Type type) {
  auto ranked = mlir::dyn_cast<mlir::RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() && ranked.getElementType().isF32();
}

// The instruction `op` becomes, if it can join a fused chain: an nn op the
// fused op computes, without attributes (no placement, no options), on f32
// operands each of its result's type or of one element.
std::optional<nn::FusedElementwiseOpcode> FusibleOp(mlir::Operation* op) {
  if (op->getDialect() == nullptr || op->getDialect()->getNamespace() != "nn" ||
      op->getNumResults() != 1 || !op->getAttrs().empty()) {
    return std::nullopt;
  }
  llvm::StringRef name = op->getName().getStringRef();
  std::optional<nn::FusedElementwiseOpcode> fused =
      nn::FindFusedElementwiseOp(std::string_view(name.data(), name.size()));
  if (!fused || static_cast<int>(op->getNumOperands()) != fused->arity) {
    return std::nullopt;
  }
  mlir::Type result = op->getResult(0).getType();
  if (!IsStaticF32(result)) return std::nullopt;
  for (mlir::Type operand : op->getOperandTypes()) {
    if (!IsStaticF32(operand)) return std::nullopt;
    if (operand != result &&
        mlir::cast<mlir::RankedTensorType>(operand).getNumElements() != 1) {
      return std::nullopt;
    }
  }
  return fused;
}

class NnFuseElementwisePass
    : public mlir::PassWrapper<NnFuseElementwisePass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnFuseElementwisePass)

  llvm::StringRef getArgument() const final { return "nn-fuse-elementwise"; }
  llvm::StringRef getDescription() const final {
    return "Fuse chains of f32 elementwise nn ops into nn.fused_elementwise";
  }

  void runOnOperation() override {
    for (auto function : getOperation().getOps<mlir::func::FuncOp>()) {
      if (function.isDeclaration()) continue;
      FoldReluIntoBatchNorm(function);
      Fuse(function);
    }
  }

 private:
  // relu(batch_normalization(x)), the normalization read by nobody else,
  // becomes the normalization with `activation = "relu"`: one pass over
  // the tensor instead of two (a DenseNet's pre-activation after each
  // concatenation). The host's kernels take the attribute; this pass runs
  // only in the host's pipeline.
  void FoldReluIntoBatchNorm(mlir::func::FuncOp function) {
    llvm::SmallVector<nn::ReluOp> relus;
    function.walk([&](nn::ReluOp relu) { relus.push_back(relu); });
    for (nn::ReluOp relu : relus) {
      auto norm = relu->getOperand(0).getDefiningOp<nn::BatchNormalizationOp>();
      if (!norm || !norm->hasOneUse() || norm->hasAttr("activation") ||
          !relu->getAttrs().empty() ||
          norm->getResult(0).getType() != relu->getResult(0).getType()) {
        continue;
      }
      norm->setAttr("activation", mlir::StringAttr::get(&getContext(), "relu"));
      relu->getResult(0).replaceAllUsesWith(norm->getResult(0));
      relu->erase();
    }
  }

  void Fuse(mlir::func::FuncOp function) {
    llvm::SmallVector<mlir::Operation*> ops;
    for (mlir::Block& block : function.getBody()) {
      for (mlir::Operation& op : block) ops.push_back(&op);
    }
    llvm::DenseSet<mlir::Operation*> fused;
    // From the last op back: each fusible op not yet taken roots a chain
    // that grows through its operands' producers.
    for (mlir::Operation* root : llvm::reverse(ops)) {
      if (fused.contains(root) || !FusibleOp(root)) continue;
      mlir::Type type = root->getResult(0).getType();
      llvm::SetVector<mlir::Operation*> group;
      group.insert(root);
      // A producer joins when it is fusible, of the root's full type, in
      // the root's block, and read only by the group (nothing else needs
      // its value); joining may admit another, hence the fixed point.
      for (bool grew = true; grew;) {
        grew = false;
        for (size_t i = 0; i < group.size(); ++i) {
          for (mlir::Value operand : group[i]->getOperands()) {
            mlir::Operation* producer = operand.getDefiningOp();
            if (producer == nullptr || group.contains(producer) ||
                fused.contains(producer) ||
                producer->getBlock() != root->getBlock() ||
                producer->getResult(0).getType() != type ||
                !FusibleOp(producer)) {
              continue;
            }
            if (llvm::all_of(producer->getUsers(), [&](mlir::Operation* user) {
                  return group.contains(user);
                })) {
              group.insert(producer);
              grew = true;
            }
          }
        }
      }
      if (group.size() < 2) continue;
      llvm::SmallVector<mlir::Operation*> members(group.begin(), group.end());
      std::sort(members.begin(), members.end(),
                [](mlir::Operation* a, mlir::Operation* b) {
                  return a->isBeforeInBlock(b);
                });
      // Inputs: values from outside the group, in order of first use.
      llvm::SetVector<mlir::Value> inputs;
      llvm::DenseMap<mlir::Value, int64_t> input_index;
      llvm::DenseMap<mlir::Operation*, int64_t> index_of;
      for (mlir::Operation* member : members) {
        for (mlir::Value operand : member->getOperands()) {
          if (!group.contains(operand.getDefiningOp()) &&
              inputs.insert(operand)) {
            input_index[operand] = static_cast<int64_t>(inputs.size()) - 1;
          }
        }
      }
      llvm::SmallVector<int64_t> opcodes;
      llvm::SmallVector<int64_t> operands;
      for (mlir::Operation* member : members) {
        opcodes.push_back(FusibleOp(member)->opcode);
        for (unsigned i = 0; i < 2; ++i) {
          if (i >= member->getNumOperands()) {
            operands.push_back(-1);
            continue;
          }
          mlir::Value operand = member->getOperand(i);
          mlir::Operation* producer = operand.getDefiningOp();
          operands.push_back(group.contains(producer)
                                 ? static_cast<int64_t>(inputs.size()) +
                                       index_of[producer]
                                 : input_index[operand]);
        }
        index_of[member] = static_cast<int64_t>(index_of.size());
      }
      mlir::OpBuilder builder(root);
      mlir::OperationState state(root->getLoc(), "nn.fused_elementwise");
      state.addOperands(inputs.getArrayRef());
      state.addTypes(type);
      state.addAttribute("ops", builder.getI64ArrayAttr(opcodes));
      state.addAttribute("operands", builder.getI64ArrayAttr(operands));
      mlir::Operation* chain = builder.create(state);
      root->getResult(0).replaceAllUsesWith(chain->getResult(0));
      for (mlir::Operation* member : llvm::reverse(members)) {
        fused.insert(member);
        member->erase();
      }
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnFuseElementwisePass() {
  return std::make_unique<NnFuseElementwisePass>();
}

void RegisterNnFuseElementwisePass() {
  mlir::PassRegistration<NnFuseElementwisePass>();
}

}  // namespace asyncrt::compiler
