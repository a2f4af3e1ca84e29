// -corert-fuse-op-sequences: a chain of corert.executeop on one op handler,
// each op's result read only by the next op, becomes one
// corert.execute_sequence (see passes.h).
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/corert/corert_dialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

// An op the sequence kernel runs as corert.executeop would: one result and
// no function attributes (those name functions of the program, which the
// sequence's attributes cannot).
bool Fusible(mlir::Operation* op) {
  auto execute = llvm::dyn_cast<corert::ExecuteOp>(op);
  if (!execute || execute.getResults().size() != 1) return false;
  mlir::ArrayAttr function_attrs = execute.getOpFuncAttrsAttr();
  return !function_attrs || function_attrs.empty();
}

// The op that alone reads `op`'s result (perhaps more than once), if it
// continues a chain from `op`: fusible, in the same block, on the same
// handler. Null otherwise.
corert::ExecuteOp NextInChain(corert::ExecuteOp op) {
  mlir::Value result = op.getResults()[0];
  if (result.use_empty()) return nullptr;
  mlir::Operation* user = *result.getUsers().begin();
  for (mlir::Operation* other : result.getUsers()) {
    if (other != user) return nullptr;
  }
  if (!Fusible(user) || user->getBlock() != op->getBlock()) return nullptr;
  auto next = llvm::cast<corert::ExecuteOp>(user);
  if (next.getOpHandler() != op.getOpHandler()) return nullptr;
  return next;
}

class FuseOpSequencesPass
    : public mlir::PassWrapper<FuseOpSequencesPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(FuseOpSequencesPass)

  llvm::StringRef getArgument() const final {
    return "corert-fuse-op-sequences";
  }
  llvm::StringRef getDescription() const final {
    return "Run chains of corert.executeop as one corert.execute_sequence";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<corert::CoreRTDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<llvm::SmallVector<corert::ExecuteOp>> chains;
    llvm::DenseSet<mlir::Operation*> taken;
    // Blocks in order: a chain's first op comes before the rest, so
    // growing each chain from the first fusible op not yet taken finds
    // every chain whole.
    getOperation()->walk([&](mlir::Block* block) {
      for (mlir::Operation& op : *block) {
        if (!Fusible(&op) || taken.contains(&op)) continue;
        llvm::SmallVector<corert::ExecuteOp> chain = {
            llvm::cast<corert::ExecuteOp>(op)};
        // An op may continue the chain of an earlier op that also feeds
        // it (%x = f(%a); %b = g(); %y = h(%x, %b)): h is f's, not g's.
        while (corert::ExecuteOp next = NextInChain(chain.back())) {
          if (taken.contains(next)) break;
          chain.push_back(next);
        }
        if (chain.size() < 2) continue;
        for (corert::ExecuteOp member : chain) taken.insert(member);
        chains.push_back(std::move(chain));
      }
    });
    for (llvm::ArrayRef<corert::ExecuteOp> chain : chains) Fuse(chain);
  }

 private:
  // Replaces `chain` by one corert.execute_sequence where its last op was:
  // every operand is defined before its own op, so before the last one,
  // and only the last op's result is read outside the chain.
  void Fuse(llvm::ArrayRef<corert::ExecuteOp> chain) {
    mlir::MLIRContext* context = &getContext();
    mlir::Builder attrs(context);
    llvm::SetVector<mlir::Value> arguments;  // From outside the chain.
    llvm::DenseMap<mlir::Value, int32_t> index;  // Of the chain's results.
    for (corert::ExecuteOp op : chain) {
      for (mlir::Value operand : op.getArgs()) {
        if (!index.contains(operand)) arguments.insert(operand);
      }
      index[op.getResults()[0]] = 0;  // Numbered below.
    }
    int32_t next_index = static_cast<int32_t>(arguments.size());
    for (auto [i, argument] : llvm::enumerate(arguments)) {
      index[argument] = static_cast<int32_t>(i);
    }
    llvm::SmallVector<mlir::Attribute> names, op_attrs, counts, operands;
    llvm::SmallVector<mlir::Location> locations;
    for (corert::ExecuteOp op : chain) {
      names.push_back(op.getOpNameAttr());
      op_attrs.push_back(op.getOpAttrsAttr());
      counts.push_back(attrs.getI32IntegerAttr(op.getArgs().size()));
      for (mlir::Value operand : op.getArgs()) {
        operands.push_back(attrs.getI32IntegerAttr(index[operand]));
      }
      index[op.getResults()[0]] = next_index++;
      locations.push_back(op.getLoc());
    }
    corert::ExecuteOp last = chain.back();
    mlir::OpBuilder builder(last);
    auto sequence = builder.create<corert::ExecuteSequenceOp>(
        mlir::FusedLoc::get(context, locations),
        last.getResults()[0].getType(), last.getOpHandler(),
        arguments.getArrayRef(), attrs.getArrayAttr(names),
        attrs.getArrayAttr(op_attrs), attrs.getArrayAttr(counts),
        attrs.getArrayAttr(operands));
    last.getResults()[0].replaceAllUsesWith(sequence.getResult());
    for (corert::ExecuteOp op : llvm::reverse(chain)) op.erase();
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateFuseOpSequencesPass() {
  return std::make_unique<FuseOpSequencesPass>();
}

void RegisterFuseOpSequencesPass() {
  mlir::PassRegistration<FuseOpSequencesPass>();
}

}  // namespace asyncrt::compiler
