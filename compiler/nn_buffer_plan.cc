// -nn-plan-buffers: a compile-time buffer plan for a function's
// intermediate tensors (see passes.h).
//
// Which values may share bytes is decided from the dataflow alone, not from
// the order ops are written in: AsyncRT's executor runs an op as soon as
// its operands are ready, so two ops that do not depend on each other may
// run in either order or at once. Value B may take bytes of value A only if
// B's producer depends (through operands) on A's producer and on every op
// that reads A or a view of A: then A's last reader has finished before B
// is written, in every schedule.
//
// Placement is greedy by size (as TFLite's and ONNX Runtime's planners):
// larger values first, each at the lowest offset whose bytes no placed
// value it conflicts with holds. A convolution or matmul over a fused sum
// that it reads last is placed over that sum when it fits, so oneDNN adds
// into it in place as it did without a plan.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "llvm/ADT/BitVector.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

constexpr int64_t kSlotAlignment = 64;  // kTensorAlignment at run time.

int64_t AlignUp(int64_t bytes) {
  return (bytes + kSlotAlignment - 1) / kSlotAlignment * kSlotAlignment;
}

bool IsNnOp(mlir::Operation* op) {
  return op->getDialect() != nullptr && op->getDialect()->getNamespace() == "nn";
}

// nn ops whose run-time result is a view of an operand's buffer
// (backends/cpu/nn: ShareBuffer) or that have several results: never
// planned; their results extend their operands' lifetimes.
bool IsViewOrMultiResultOp(mlir::Operation* op) {
  return mlir::isa<nn::ReshapeOp, nn::FlattenOp, nn::SqueezeOp,
                   nn::UnsqueezeOp, nn::CastOp, nn::SplitOp, nn::ConstantOp,
                   nn::RuntimeOp>(op) ||
         op->getNumResults() != 1;
}

// Bytes the run time needs for `op`'s result, or nullopt if it is not
// planned: a single-result nn op that computes a new tensor of static
// shape and a numeric element type. A result kept in oneDNN's layout
// (result_layout = "onednn") may be channel-blocked by 16 (nChw16c), so
// its channels are counted rounded up to 16.
std::optional<int64_t> PlannedBytes(mlir::Operation* op) {
  if (!IsNnOp(op) || IsViewOrMultiResultOp(op) || op->getNumRegions() != 0) {
    return std::nullopt;
  }
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
  if (!type || !type.hasStaticShape() || !type.getElementType().isIntOrFloat()) {
    return std::nullopt;
  }
  const int64_t element_bytes =
      std::max<int64_t>(1, (type.getElementTypeBitWidth() + 7) / 8);
  llvm::SmallVector<int64_t> dims(type.getShape());
  if (auto layout = op->getAttrOfType<mlir::StringAttr>("result_layout");
      layout && layout.getValue() == "onednn" && dims.size() >= 2) {
    dims[1] = (dims[1] + 15) / 16 * 16;
  }
  int64_t bytes = element_bytes;
  for (int64_t dim : dims) bytes *= dim;
  return AlignUp(bytes);
}

// The fused sum a convolution or matmul adds into its result (operand 3),
// or null.
mlir::Value FusedSum(mlir::Operation* op) {
  if (!mlir::isa<nn::ConvOp, nn::MatMulOp>(op) || op->getNumOperands() < 4) {
    return nullptr;
  }
  return op->getOperand(3);
}

class NnPlanBuffersPass
    : public mlir::PassWrapper<NnPlanBuffersPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnPlanBuffersPass)

  llvm::StringRef getArgument() const final { return "nn-plan-buffers"; }
  llvm::StringRef getDescription() const final {
    return "Plan one arena per call for a function's intermediate tensors";
  }

  void runOnOperation() override {
    for (auto function : getOperation().getOps<mlir::func::FuncOp>()) {
      if (!function.isDeclaration() && function.getBody().hasOneBlock()) {
        Plan(function);
      }
    }
  }

 private:
  struct Candidate {
    mlir::Operation* op;
    int64_t index;  // Of `op` in the block.
    int64_t bytes;
    llvm::BitVector kill;  // Ops that must finish before its bytes are free.
    // Reaches the function's results, a region or an op of another dialect.
    bool escapes = false;
    int64_t offset = -1;
  };

  void Plan(mlir::func::FuncOp function) {
    mlir::Block& block = function.getBody().front();
    llvm::DenseMap<mlir::Operation*, int64_t> index_of;
    for (mlir::Operation& op : block) {
      index_of[&op] = static_cast<int64_t>(index_of.size());
    }
    const int64_t num_ops = static_cast<int64_t>(index_of.size());

    // ancestors[i]: the ops op i depends on through operands, transitively.
    std::vector<llvm::BitVector> ancestors(num_ops, llvm::BitVector(num_ops));
    // The candidates each value may be a view of (itself, if planned).
    llvm::DenseMap<mlir::Value, llvm::SmallVector<int32_t, 2>> views_of;
    std::vector<Candidate> candidates;
    for (mlir::Operation& op : block) {
      const int64_t i = index_of[&op];
      llvm::SmallVector<int32_t, 2> sources;
      for (mlir::Value operand : op.getOperands()) {
        if (mlir::Operation* def = operand.getDefiningOp();
            def && def->getBlock() == &block) {
          ancestors[i] |= ancestors[index_of[def]];
          ancestors[i].set(index_of[def]);
        }
        if (auto it = views_of.find(operand); it != views_of.end()) {
          for (int32_t c : it->second) {
            candidates[c].kill.set(i);
            if (!llvm::is_contained(sources, c)) sources.push_back(c);
          }
        }
      }
      if (std::optional<int64_t> bytes = PlannedBytes(&op)) {
        Candidate candidate{&op, i, *bytes, llvm::BitVector(num_ops)};
        candidate.kill.set(i);
        views_of[op.getResult(0)] = {static_cast<int32_t>(candidates.size())};
        candidates.push_back(std::move(candidate));
        continue;
      }
      // Any other nn op may return (a view of) any operand: its results
      // keep the operands' candidates alive. Values that reach the
      // function's results, a region or an op of another dialect (a call
      // may still read its arguments after its results are ready) escape
      // the plan.
      const bool escapes = !IsNnOp(&op) || op.getNumRegions() > 0;
      for (int32_t c : sources) candidates[c].escapes |= escapes;
      for (mlir::Value result : op.getResults()) views_of[result] = sources;
    }
    // A use from a nested region (an op of another block) of a candidate
    // or of a view of it is not ordered by the block's dataflow: such
    // values are not planned.
    for (const auto& [value, sources] : views_of) {
      if (llvm::any_of(value.getUsers(), [&](mlir::Operation* user) {
            return user->getBlock() != &block;
          })) {
        for (int32_t c : sources) candidates[c].escapes = true;
      }
    }
    llvm::erase_if(candidates,
                   [](const Candidate& candidate) { return candidate.escapes; });
    if (candidates.empty()) return;

    // Whether every op in a's kill set is an ancestor of b's producer (or,
    // with `counting_b`, b's producer itself).
    auto done_before = [&](const Candidate& a, const Candidate& b,
                           bool counting_b) {
      llvm::BitVector rest = a.kill;
      rest.reset(ancestors[b.index]);
      if (counting_b) rest.reset(b.index);
      return rest.none();
    };
    // Neither's bytes are free for the other: they may be live at once.
    auto conflict = [&](const Candidate& a, const Candidate& b) {
      return !done_before(a, b, false) && !done_before(b, a, false);
    };
    // b may take a's exact bytes in place: b reads a as its fused sum and
    // is a's last reader.
    auto in_place = [&](const Candidate& a, const Candidate& b) {
      return FusedSum(b.op) == a.op->getResult(0) && a.bytes >= b.bytes &&
             done_before(a, b, true);
    };

    std::vector<int32_t> order(candidates.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    llvm::stable_sort(order, [&](int32_t a, int32_t b) {
      return candidates[a].bytes > candidates[b].bytes;
    });
    std::vector<int32_t> placed;
    int64_t arena_size = 0;
    for (int32_t c : order) {
      Candidate& candidate = candidates[c];
      // The placed values whose bytes it must not touch, by offset; and
      // the fused sum it may take in place.
      llvm::SmallVector<int32_t> blocking;
      std::optional<int32_t> sum;
      for (int32_t p : placed) {
        if (in_place(candidates[p], candidate)) {
          sum = p;
        } else if (conflict(candidates[p], candidate)) {
          blocking.push_back(p);
        }
      }
      auto fits_at = [&](int64_t offset) {
        return llvm::none_of(blocking, [&](int32_t p) {
          return candidates[p].offset < offset + candidate.bytes &&
                 offset < candidates[p].offset + candidates[p].bytes;
        });
      };
      int64_t offset = -1;
      if (sum && fits_at(candidates[*sum].offset)) {
        offset = candidates[*sum].offset;
      } else {
        if (sum) blocking.push_back(*sum);
        llvm::sort(blocking, [&](int32_t a, int32_t b) {
          return candidates[a].offset < candidates[b].offset;
        });
        // The smallest gap between blocking values that fits, else the end.
        int64_t best_gap = INT64_MAX;
        int64_t cursor = 0;
        for (int32_t p : blocking) {
          const int64_t gap = candidates[p].offset - cursor;
          if (gap >= candidate.bytes && gap < best_gap) {
            best_gap = gap;
            offset = cursor;
          }
          cursor = std::max(cursor, candidates[p].offset + candidates[p].bytes);
        }
        if (offset < 0) offset = cursor;
      }
      candidate.offset = offset;
      arena_size = std::max(arena_size, offset + candidate.bytes);
      placed.push_back(c);
    }

    mlir::Builder builder(&getContext());
    for (const Candidate& candidate : candidates) {
      candidate.op->setAttr("_buffer_offset",
                            builder.getI64IntegerAttr(candidate.offset));
      candidate.op->setAttr("_buffer_size",
                            builder.getI64IntegerAttr(candidate.bytes));
    }
    function->setAttr("nn.arena_size", builder.getI64IntegerAttr(arena_size));
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnPlanBuffersPass() {
  return std::make_unique<NnPlanBuffersPass>();
}

void RegisterNnPlanBuffersPass() { mlir::PassRegistration<NnPlanBuffersPass>(); }

}  // namespace asyncrt::compiler
