// -nn-assign-layouts: keeps oneDNN's layouts between the ops that take
// them (see passes.h).
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "llvm/ADT/EquivalenceClasses.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

// Whether `op` is x * s scaling the channels of x (a squeeze-and-excite
// block's gate): f32 of static shapes, x [N, C, H, W] and s [N or 1, C, 1,
// 1], either operand. The runtime runs it as oneDNN's binary primitive on
// the layouts both come in (backends/cpu/nn/onednn_binary.cc).
bool IsChannelScale(mlir::Operation* op) {
  if (!mlir::isa<nn::MulOp>(op)) return false;
  auto type = [](mlir::Value value) {
    auto ranked = mlir::dyn_cast<mlir::RankedTensorType>(value.getType());
    return ranked && ranked.hasStaticShape() && ranked.getRank() == 4 &&
                   ranked.getElementType().isF32()
               ? ranked
               : mlir::RankedTensorType();
  };
  for (int i = 0; i < 2; ++i) {
    auto x = type(op->getOperand(i)), s = type(op->getOperand(1 - i));
    if (x && s && x == op->getResult(0).getType() &&
        (s.getDimSize(0) == x.getDimSize(0) || s.getDimSize(0) == 1) &&
        s.getDimSize(1) == x.getDimSize(1) && s.getDimSize(2) == 1 &&
        s.getDimSize(3) == 1) {
      return true;
    }
  }
  return false;
}

// Whether `op` joins 4-D f32 tensors of static shapes along the channels
// (an Inception module's or a fire module's branches, a DenseNet block's
// features). The runtime runs it as oneDNN's concat primitive on the
// layouts its parts come in (backends/cpu/nn/onednn_concat.cc).
bool IsChannelConcat(mlir::Operation* op) {
  if (!mlir::isa<nn::ConcatOp>(op) || op->getNumResults() != 1) return false;
  auto axis = op->getAttrOfType<mlir::IntegerAttr>("axis");
  if (!axis || (axis.getInt() != 1 && axis.getInt() != -3)) return false;
  auto is_f32_image = [](mlir::Value value) {
    auto ranked = mlir::dyn_cast<mlir::RankedTensorType>(value.getType());
    return ranked && ranked.hasStaticShape() && ranked.getRank() == 4 &&
           ranked.getElementType().isF32();
  };
  return is_f32_image(op->getResult(0)) &&
         llvm::all_of(op->getOperands(), is_f32_image);
}

// Whether `op` is a batch normalization or a relu of a 4-D f32 tensor of
// static shape (a DenseNet's pre-activation after each concatenation).
// The runtime runs it as oneDNN's primitive on the layout its input comes
// in (backends/cpu/nn/onednn_channelwise.cc).
bool IsChannelwise(mlir::Operation* op) {
  if (!mlir::isa<nn::BatchNormalizationOp, nn::ReluOp>(op) ||
      op->getNumResults() != 1) {
    return false;
  }
  auto x = mlir::dyn_cast<mlir::RankedTensorType>(op->getOperand(0).getType());
  return x && x.hasStaticShape() && x.getRank() == 4 &&
         x.getElementType().isF32() && x == op->getResult(0).getType();
}

// The ops on oneDNN that read a OneDnnTensor as it is (the runtime's
// kOpAcceptsRegisteredHost ops) and can produce one.
bool IsLayoutOp(mlir::Operation* op) {
  return mlir::isa<nn::ConvOp, nn::MaxPoolOp, nn::AveragePoolOp,
                   nn::GlobalAveragePoolOp>(op) ||
         IsChannelScale(op) || IsChannelConcat(op) || IsChannelwise(op);
}

// Whether `use` reads its value in oneDNN's layout without a reorder of
// its own: a convolution's input or fused sum, a pooling's, batch
// normalization's or relu's input, either operand of a channel scaling,
// every part of a channel concatenation. (A convolution's weights and
// bias and a batch normalization's statistics are constants, read plain.)
bool TakesOneDnnLayout(mlir::OpOperand& use) {
  mlir::Operation* user = use.getOwner();
  if (mlir::isa<nn::ConvOp>(user)) {
    return use.getOperandNumber() == 0 || use.getOperandNumber() == 3;
  }
  if (IsChannelScale(user) || IsChannelConcat(user)) return true;
  return IsLayoutOp(user) && use.getOperandNumber() == 0;
}

int64_t IntAttrOr(mlir::Operation* op, llvm::StringRef name, int64_t value) {
  if (auto attr = op->getAttrOfType<mlir::IntegerAttr>(name)) {
    return attr.getInt();
  }
  return value;
}

// Whether every element of the integer array attribute `name` is 1 (true
// when it is absent: ONNX's default strides and dilations).
bool AllOnes(mlir::Operation* op, llvm::StringRef name) {
  auto array = op->getAttrOfType<mlir::ArrayAttr>(name);
  if (!array) return true;
  return llvm::all_of(array, [](mlir::Attribute element) {
    auto value = mlir::dyn_cast<mlir::IntegerAttr>(element);
    return value && value.getInt() == 1;
  });
}

// The weights' shape (M x C x kH x kW) of an ungrouped 2-D convolution
// with static weights; empty for other ops.
llvm::ArrayRef<int64_t> UngroupedConv2dWeights(mlir::Operation* op) {
  auto conv = mlir::dyn_cast<nn::ConvOp>(op);
  if (!conv || IntAttrOr(op, "group", 1) != 1) return {};
  auto w = mlir::dyn_cast<mlir::RankedTensorType>(conv.getW().getType());
  if (!w || !w.hasStaticShape() || w.getRank() != 4) return {};
  return w.getShape();
}

// Whether the runtime may run `op` with Winograd kernels: an ungrouped 2-D
// 3x3 convolution, stride 1, no dilation, over channels in multiples of 16
// (the runtime's ConvAlgorithm makes the final choice on the machine).
bool IsWinogradCandidate(mlir::Operation* op) {
  llvm::ArrayRef<int64_t> w = UngroupedConv2dWeights(op);
  return !w.empty() && w[0] % 16 == 0 && w[1] % 16 == 0 && w[2] == 3 &&
         w[3] == 3 && AllOnes(op, "strides") && AllOnes(op, "dilations");
}

// An ungrouped 1x1 convolution.
bool IsPointwise(mlir::Operation* op) {
  llvm::ArrayRef<int64_t> w = UngroupedConv2dWeights(op);
  return !w.empty() && w[2] == 1 && w[3] == 1;
}

// A depthwise 2-D convolution: one group per input channel.
bool IsDepthwise(mlir::Operation* op) {
  auto conv = mlir::dyn_cast<nn::ConvOp>(op);
  if (!conv) return false;
  auto w = mlir::dyn_cast<mlir::RankedTensorType>(conv.getW().getType());
  const int64_t group = IntAttrOr(op, "group", 1);
  return group > 1 && w && w.hasStaticShape() && w.getRank() == 4 &&
         w.getDimSize(1) == 1;
}

class NnAssignLayoutsPass
    : public mlir::PassWrapper<NnAssignLayoutsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnAssignLayoutsPass)

  NnAssignLayoutsPass() = default;
  explicit NnAssignLayoutsPass(bool winograd) { winograd_ = winograd; }
  NnAssignLayoutsPass(const NnAssignLayoutsPass& other)
      : PassWrapper(other) {}

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
    if (!winograd_) {
      // Direct convolutions only.
      mlir::StringAttr direct = builder.getStringAttr("direct");
      getOperation().walk([&](nn::ConvOp conv) {
        if (!conv->hasAttr("algorithm")) conv->setAttr("algorithm", direct);
      });
    }
    MarkBlockedChains();
  }

 private:
  Option<bool> winograd_{
      *this, "winograd",
      llvm::cl::desc("Let 3x3 convolutions run Winograd kernels (default); "
                     "false sets algorithm = \"direct\" on every "
                     "convolution and keeps nhwc for chains without a "
                     "depthwise convolution"),
      llvm::cl::init(true)};

  // Chains (ops joined by values kept in oneDNN's layout) compute in
  // channel-blocked layouts (`compute_layout = "blocked"`) where that is
  // faster than oneDNN's own choice (nhwc):
  // - a chain holding a Winograd candidate, on its candidates and 1x1
  //   convolutions: Winograd computes in blocked layouts only, and 1x1
  //   convolutions run as fast in them, so a bottleneck block stays in one
  //   layout. Its other convolutions (strided 3x3, a 7x7 stem) keep nhwc,
  //   where oneDNN 2.6's kernels were 15-35% faster on ResNet-50's, more
  //   than the reorders at their edges cost.
  // - a chain holding a depthwise convolution (MobileNet's inverted
  //   residuals), on every convolution: oneDNN 2.6's blocked depthwise
  //   kernels are 15-40% faster than its nhwc ones at 28x28 and above, and
  //   its blocked 1x1 kernels up to 2x faster for few channels (16 -> 96
  //   at 112x112), so MobileNetV2 runs 8% faster on one thread and 15% on
  //   two, with no reorder inside (docs/performance.md).
  void MarkBlockedChains() {
    llvm::EquivalenceClasses<mlir::Operation*> chains;
    mlir::StringAttr onednn =
        mlir::StringAttr::get(&getContext(), "onednn");
    getOperation().walk([&](mlir::Operation* op) {
      if (!IsLayoutOp(op)) return;
      chains.insert(op);
      if (op->getAttr("result_layout") != onednn) return;
      for (mlir::Operation* user : op->getResult(0).getUsers()) {
        chains.unionSets(op, user);
      }
    });
    mlir::StringAttr blocked =
        mlir::StringAttr::get(&getContext(), "blocked");
    for (const auto* chain : chains) {
      if (!chain->isLeader()) continue;
      auto members = chains.members(*chain);
      auto winograd = [&](mlir::Operation* op) {
        return winograd_ && IsWinogradCandidate(op);
      };
      const bool depthwise = llvm::any_of(members, IsDepthwise);
      if (!depthwise && llvm::none_of(members, winograd)) continue;
      for (mlir::Operation* op : members) {
        const bool wants_blocked =
            mlir::isa<nn::ConvOp>(op) &&
            (depthwise || winograd(op) || IsPointwise(op));
        if (wants_blocked && !op->hasAttr("compute_layout")) {
          op->setAttr("compute_layout", blocked);
        }
      }
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnAssignLayoutsPass(bool winograd) {
  return std::make_unique<NnAssignLayoutsPass>(winograd);
}

void RegisterNnAssignLayoutsPass() {
  mlir::PassRegistration<NnAssignLayoutsPass>();
}

}  // namespace asyncrt::compiler
