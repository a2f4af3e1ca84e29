// -nn-fuse: folds what follows a convolution or matmul into it (see
// passes.h).
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>
#include <string>

#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/PatternMatch.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"
#include "mlir/Transforms/GreedyPatternRewriteDriver.h"

namespace asyncrt::compiler {
namespace {

// The value of a one-element (or splat) f32 constant, or nullopt.
std::optional<float> ScalarConstant(mlir::Value value) {
  auto constant = value.getDefiningOp<nn::ConstantOp>();
  if (!constant) return std::nullopt;
  auto dense = mlir::dyn_cast<mlir::DenseFPElementsAttr>(constant.getValue());
  if (!dense || !dense.isSplat() || !dense.getElementType().isF32()) {
    return std::nullopt;
  }
  return dense.getSplatValue<float>();
}

// The convolution or matmul that produces `value` for nobody else, with no
// activation fused yet (what follows it can become a post-op); null
// otherwise.
mlir::Operation* SolePostOpProducer(mlir::Value value) {
  mlir::Operation* producer = value.getDefiningOp();
  if (!producer || !mlir::isa<nn::ConvOp, nn::MatMulOp>(producer) ||
      !producer->hasOneUse() || producer->hasAttr("activation")) {
    return nullptr;
  }
  return producer;
}

float FloatOr(mlir::Operation* op, llvm::StringRef name, float fallback) {
  if (auto attr = op->getAttrOfType<mlir::FloatAttr>(name)) {
    return static_cast<float>(attr.getValueAsDouble());
  }
  return fallback;
}

// relu / leaky_relu / clip / gelu / sigmoid / tanh of a convolution or
// matmul, and its
// product with or quotient by a constant scalar, become the producer's
// `activation` (a oneDNN eltwise post-op; "linear" for the scaling).
struct FuseActivation : public mlir::RewritePattern {
  explicit FuseActivation(mlir::MLIRContext* context)
      : RewritePattern(mlir::Pattern::MatchAnyOpTypeTag(), /*benefit=*/1,
                       context) {}

  mlir::LogicalResult matchAndRewrite(
      mlir::Operation* op, mlir::PatternRewriter& rewriter) const override {
    mlir::Value input;
    std::optional<float> scale;
    if (mlir::isa<nn::ReluOp, nn::LeakyReluOp, nn::ClipOp, nn::GeluOp,
                  nn::SigmoidOp, nn::TanhOp>(op)) {
      input = op->getOperand(0);
    } else if (mlir::isa<nn::DivOp>(op)) {
      input = op->getOperand(0);
      std::optional<float> divisor = ScalarConstant(op->getOperand(1));
      if (!divisor || *divisor == 0.0f) return mlir::failure();
      scale = 1.0f / *divisor;
    } else if (mlir::isa<nn::MulOp>(op)) {
      for (int i = 0; i < 2 && !scale; ++i) {
        scale = ScalarConstant(op->getOperand(i));
        input = op->getOperand(1 - i);
      }
      if (!scale) return mlir::failure();
    } else {
      return mlir::failure();
    }
    mlir::Operation* producer = SolePostOpProducer(input);
    if (!producer || producer->getResult(0).getType() !=
                         op->getResult(0).getType()) {
      return mlir::failure();
    }
    rewriter.modifyOpInPlace(producer, [&] {
      auto set = [&](llvm::StringRef name, mlir::Attribute value) {
        producer->setAttr(name, value);
      };
      if (mlir::isa<nn::ReluOp>(op)) {
        set("activation", rewriter.getStringAttr("relu"));
      } else if (mlir::isa<nn::LeakyReluOp>(op)) {
        set("activation", rewriter.getStringAttr("leaky_relu"));
        set("activation_alpha",
            rewriter.getF32FloatAttr(FloatOr(op, "alpha", 0.01f)));
      } else if (mlir::isa<nn::ClipOp>(op)) {
        set("activation", rewriter.getStringAttr("clip"));
        set("activation_alpha",
            rewriter.getF32FloatAttr(
                FloatOr(op, "min", -std::numeric_limits<float>::max())));
        set("activation_beta",
            rewriter.getF32FloatAttr(
                FloatOr(op, "max", std::numeric_limits<float>::max())));
      } else if (mlir::isa<nn::GeluOp>(op)) {
        set("activation", rewriter.getStringAttr("gelu"));
      } else if (mlir::isa<nn::SigmoidOp>(op)) {
        set("activation", rewriter.getStringAttr("sigmoid"));
      } else if (mlir::isa<nn::TanhOp>(op)) {
        set("activation", rewriter.getStringAttr("tanh"));
      } else {
        set("activation", rewriter.getStringAttr("linear"));
        set("activation_alpha", rewriter.getF32FloatAttr(*scale));
      }
    });
    rewriter.replaceOp(op, producer->getResult(0));
    return mlir::success();
  }
};

// add(conv(x, w[, b]), y) -> conv(x, w, b, y), and the same for matmul: y,
// of the result's shape, becomes the producer's fused sum (a residual
// connection).
struct FuseResidualAdd : public mlir::OpRewritePattern<nn::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::AddOp add, mlir::PatternRewriter& rewriter) const override {
    for (int i = 0; i < 2; ++i) {
      mlir::Operation* producer = SolePostOpProducer(add->getOperand(i));
      mlir::Value residual = add->getOperand(1 - i);
      auto type = mlir::dyn_cast<mlir::RankedTensorType>(add.getType());
      if (!producer || !type || type.getRank() == 0 ||
          producer->getNumOperands() > 3 ||
          residual.getType() != add.getType() ||
          producer->getResult(0).getType() != add.getType()) {
        continue;
      }
      llvm::SmallVector<mlir::Value> operands(producer->getOperands());
      if (operands.size() == 2) {  // A zero bias keeps the operand order.
        // One value per output channel (conv: the weights' first
        // dimension) or column (matmul: the result's last).
        const int64_t size =
            mlir::isa<nn::ConvOp>(producer)
                ? mlir::cast<mlir::RankedTensorType>(operands[1].getType())
                      .getDimSize(0)
                : type.getShape().back();
        auto bias_type =
            mlir::RankedTensorType::get({size}, type.getElementType());
        rewriter.setInsertionPoint(producer);
        operands.push_back(nn::ConstantOp::create(
            rewriter, producer->getLoc(), bias_type,
            mlir::DenseElementsAttr::get(bias_type,
                                         rewriter.getF32FloatAttr(0.0f)),
            nullptr));
      }
      operands.push_back(residual);
      // At the add: every operand (the residual too) is defined before it.
      rewriter.setInsertionPoint(add);
      mlir::OperationState state(producer->getLoc(), producer->getName());
      state.addOperands(operands);
      state.addAttributes(producer->getAttrs());
      state.addTypes(producer->getResult(0).getType());
      mlir::Operation* fused = rewriter.create(state);
      rewriter.replaceOp(add, fused->getResults());
      rewriter.eraseOp(producer);
      return mlir::success();
    }
    return mlir::failure();
  }
};

bool Near(std::optional<float> value, float expected) {
  return value && std::abs(*value - expected) <= 1e-5f * std::abs(expected);
}

// The operand of a commutative binary op that `match` accepts, with the
// other operand; false if neither does.
template <typename Match>
bool EitherOperand(mlir::Operation* op, Match match, mlir::Value& other) {
  for (int i = 0; i < 2; ++i) {
    if (match(op->getOperand(i))) {
      other = op->getOperand(1 - i);
      return true;
    }
  }
  return false;
}

// The gate of `mul` = x * gate(x) (either operand order): a `GateOp` that
// only `mul` reads, over x of mul's type, for which `accept(gate)` holds.
// Sets `x`; null when there is none.
template <typename GateOp, typename Accept>
GateOp MatchGate(nn::MulOp mul, mlir::Value& x, Accept accept) {
  for (int i = 0; i < 2; ++i) {
    auto gate = mul->getOperand(i).getDefiningOp<GateOp>();
    mlir::Value other = mul->getOperand(1 - i);
    if (gate && gate->getOperand(0) == other && gate->hasOneUse() &&
        other.getType() == mul.getType() && accept(gate)) {
      x = other;
      return gate;
    }
  }
  return nullptr;
}

// Makes `mul` = x * gate(x) the `activation` of the convolution or matmul
// computing x, when `mul` and `gate` are its only readers and it has no
// activation yet; false, with nothing changed, otherwise.
bool FoldGateIntoProducer(mlir::PatternRewriter& rewriter, nn::MulOp mul,
                          mlir::Value x, mlir::Operation* gate,
                          llvm::StringRef activation) {
  mlir::Operation* producer = x.getDefiningOp();
  if (!producer || !mlir::isa<nn::ConvOp, nn::MatMulOp>(producer) ||
      producer->hasAttr("activation") ||
      !llvm::all_of(producer->getUsers(), [&](mlir::Operation* user) {
        return user == mul.getOperation() || user == gate;
      })) {
    return false;
  }
  rewriter.modifyOpInPlace(producer, [&] {
    producer->setAttr("activation", rewriter.getStringAttr(activation));
  });
  rewriter.replaceOp(mul, x);
  rewriter.eraseOp(gate);
  return true;
}

// mul(x, hard_sigmoid(x)) with hard_sigmoid's alpha 1/6 and beta 1/2 (how
// PyTorch exports hardswish before opset 14, MobileNetV3's activation) ->
// hard_swish(x): the activation of x's convolution or matmul when nothing
// else reads x (oneDNN's hardswish post-op), else one nn.hard_swish.
struct FuseHardSwish : public mlir::OpRewritePattern<nn::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::MulOp mul, mlir::PatternRewriter& rewriter) const override {
    mlir::Value x;
    auto sigmoid =
        MatchGate<nn::HardSigmoidOp>(mul, x, [](nn::HardSigmoidOp gate) {
          return Near(FloatOr(gate, "alpha", 0.2f), 1.0f / 6.0f) &&
                 Near(FloatOr(gate, "beta", 0.5f), 0.5f);
        });
    if (!sigmoid) return mlir::failure();
    if (!FoldGateIntoProducer(rewriter, mul, x, sigmoid, "hard_swish")) {
      mlir::OperationState state(mul->getLoc(),
                                 nn::HardSwishOp::getOperationName());
      state.addOperands(x);
      state.addTypes(mul.getType());
      rewriter.replaceOp(mul, rewriter.create(state)->getResults());
      rewriter.eraseOp(sigmoid);
    }
    return mlir::success();
  }
};

// mul(x, sigmoid(x)) (SiLU, how PyTorch exports EfficientNet's and
// EfficientNetV2's activation) -> the `swish` activation of x's convolution
// or matmul when nothing else reads x (oneDNN's swish post-op, one pass
// over the result instead of a reorder, a sigmoid and a product). Where x
// has other readers the pair stays for -nn-fuse-elementwise.
struct FuseSwish : public mlir::OpRewritePattern<nn::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::MulOp mul, mlir::PatternRewriter& rewriter) const override {
    mlir::Value x;
    auto sigmoid =
        MatchGate<nn::SigmoidOp>(mul, x, [](nn::SigmoidOp) { return true; });
    return mlir::success(
        sigmoid && FoldGateIntoProducer(rewriter, mul, x, sigmoid, "swish"));
  }
};

// add(matmul(x, w), bias) with bias a constant of one value per column
// -> matmul(x, w, bias) (a linear layer, as torch exports it on 3-D input).
struct FuseMatmulBias : public mlir::OpRewritePattern<nn::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::AddOp add, mlir::PatternRewriter& rewriter) const override {
    for (int i = 0; i < 2; ++i) {
      auto matmul = add->getOperand(i).getDefiningOp<nn::MatMulOp>();
      mlir::Value bias = add->getOperand(1 - i);
      auto bias_type = mlir::dyn_cast<mlir::RankedTensorType>(bias.getType());
      auto type = mlir::dyn_cast<mlir::RankedTensorType>(add.getType());
      if (!matmul || !matmul->hasOneUse() || matmul->getNumOperands() != 2 ||
          !bias.getDefiningOp<nn::ConstantOp>() || !bias_type || !type ||
          bias_type.getRank() != 1 || type.getRank() < 1 ||
          bias_type.getDimSize(0) != type.getShape().back() ||
          matmul.getType() != add.getType()) {
        continue;
      }
      rewriter.setInsertionPoint(add);
      mlir::OperationState state(matmul.getLoc(), matmul->getName());
      state.addOperands({matmul->getOperand(0), matmul->getOperand(1), bias});
      state.addAttributes(matmul->getAttrs());
      state.addTypes(type);
      rewriter.replaceOp(add, rewriter.create(state)->getResults());
      rewriter.eraseOp(matmul);
      return mlir::success();
    }
    return mlir::failure();
  }
};

// The f32 values of an nn.constant (inline or a dense resource), or
// nullopt.
std::optional<std::vector<float>> F32Constant(mlir::Value value) {
  auto constant = value.getDefiningOp<nn::ConstantOp>();
  if (!constant) return std::nullopt;
  auto elements = mlir::dyn_cast<mlir::ElementsAttr>(constant.getValue());
  if (!elements || !elements.getElementType().isF32()) return std::nullopt;
  std::optional<std::vector<char>> bytes =
      nn::ElementBytes(elements, DType::kF32);
  if (!bytes) return std::nullopt;
  std::vector<float> values(bytes->size() / sizeof(float));
  std::memcpy(values.data(), bytes->data(), bytes->size());
  return values;
}

// An nn.constant of `values` with `type`: inline when small, else a dense
// resource (named after `hint`), as the importer stores them.
mlir::Value MakeF32Constant(mlir::PatternRewriter& rewriter,
                            mlir::Location loc, mlir::RankedTensorType type,
                            llvm::ArrayRef<float> values,
                            llvm::StringRef hint) {
  llvm::ArrayRef<char> bytes(reinterpret_cast<const char*>(values.data()),
                             values.size() * sizeof(float));
  return nn::ConstantOp::create(
      rewriter, loc, type, nn::ElementsFromBytes(type, bytes, hint), nullptr);
}

// batch_normalization(conv(x, w[, b]), scale, bias, mean, variance), all
// constant -> conv(x, w * s, (b - mean) * s + bias) with
// s = scale / sqrt(variance + epsilon) per output channel.
struct FoldBatchNormIntoConv
    : public mlir::OpRewritePattern<nn::BatchNormalizationOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::BatchNormalizationOp norm,
      mlir::PatternRewriter& rewriter) const override {
    mlir::Operation* producer = SolePostOpProducer(norm->getOperand(0));
    auto conv = mlir::dyn_cast_or_null<nn::ConvOp>(producer);
    if (!conv || conv->getNumOperands() > 3 ||
        conv.getType() != norm.getType()) {
      return mlir::failure();
    }
    auto w_type =
        mlir::dyn_cast<mlir::RankedTensorType>(conv->getOperand(1).getType());
    std::optional<std::vector<float>> w = F32Constant(conv->getOperand(1));
    if (!w_type || !w) return mlir::failure();
    const int64_t filters = w_type.getDimSize(0);
    std::vector<float> b(filters, 0.0f);
    if (conv->getNumOperands() == 3) {
      std::optional<std::vector<float>> given =
          F32Constant(conv->getOperand(2));
      if (!given || given->size() != static_cast<size_t>(filters)) {
        return mlir::failure();
      }
      b = *given;
    }
    std::vector<float> params[4];  // scale, bias, mean, variance.
    for (int i = 0; i < 4; ++i) {
      std::optional<std::vector<float>> values =
          F32Constant(norm->getOperand(i + 1));
      if (!values || values->size() != static_cast<size_t>(filters)) {
        return mlir::failure();
      }
      params[i] = *std::move(values);
    }
    const float epsilon = FloatOr(norm, "epsilon", 1e-5f);
    const size_t per_filter = w->size() / filters;
    for (int64_t m = 0; m < filters; ++m) {
      const float s = params[0][m] / std::sqrt(params[3][m] + epsilon);
      for (size_t i = 0; i < per_filter; ++i) (*w)[m * per_filter + i] *= s;
      b[m] = (b[m] - params[2][m]) * s + params[1][m];
    }
    rewriter.setInsertionPoint(conv);
    mlir::Value weights =
        MakeF32Constant(rewriter, conv.getLoc(), w_type, *w, "folded_weights");
    mlir::Value bias = MakeF32Constant(
        rewriter, conv.getLoc(),
        mlir::RankedTensorType::get({filters}, w_type.getElementType()), b,
        "folded_bias");
    mlir::OperationState state(conv.getLoc(), conv->getName());
    state.addOperands({conv->getOperand(0), weights, bias});
    state.addAttributes(conv->getAttrs());
    state.addTypes(conv.getType());
    mlir::Operation* folded = rewriter.create(state);
    rewriter.replaceOp(norm, folded->getResults());
    rewriter.eraseOp(conv);
    return mlir::success();
  }
};

// GELU as exported from torch.nn.GELU(): x * (1 + erf(x / sqrt(2))) * 0.5
// (either order of the products) -> nn.gelu(x).
struct FuseGelu : public mlir::OpRewritePattern<nn::MulOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::MulOp root, mlir::PatternRewriter& rewriter) const override {
    mlir::Value product;
    if (!EitherOperand(
            root, [](mlir::Value v) { return Near(ScalarConstant(v), 0.5f); },
            product)) {
      return mlir::failure();
    }
    auto mul = product.getDefiningOp<nn::MulOp>();
    if (!mul) return mlir::failure();
    for (int i = 0; i < 2; ++i) {
      mlir::Value x = mul->getOperand(i);
      auto plus_one = mul->getOperand(1 - i).getDefiningOp<nn::AddOp>();
      mlir::Value erf_value;
      if (!plus_one ||
          !EitherOperand(
              plus_one,
              [](mlir::Value v) { return Near(ScalarConstant(v), 1.0f); },
              erf_value)) {
        continue;
      }
      auto erf = erf_value.getDefiningOp<nn::ErfOp>();
      auto div = erf ? erf->getOperand(0).getDefiningOp<nn::DivOp>() : nullptr;
      if (!div || div->getOperand(0) != x ||
          !Near(ScalarConstant(div->getOperand(1)), 1.41421356f) ||
          x.getType() != root.getType()) {
        continue;
      }
      rewriter.replaceOpWithNewOp<nn::GeluOp>(root, root.getType(), x);
      return mlir::success();
    }
    return mlir::failure();
  }
};

// The `axes` of a reduction as one normalized axis, or nullopt.
std::optional<int64_t> SingleAxis(mlir::Operation* reduce, int64_t rank) {
  auto axes = reduce->getAttrOfType<mlir::ArrayAttr>("axes");
  if (!axes || axes.size() != 1) return std::nullopt;
  auto axis = mlir::dyn_cast<mlir::IntegerAttr>(axes[0]);
  if (!axis) return std::nullopt;
  int64_t value = axis.getInt();
  return value < 0 ? value + rank : value;
}

// Layer normalization over the last axis as exported from torch.nn
// .LayerNorm at opset 13: d = x - mean(x); y = d / sqrt(mean(d ** 2) + eps)
// * gamma + beta -> nn.layer_normalization(x, gamma, beta).
struct FuseLayerNorm : public mlir::OpRewritePattern<nn::AddOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::AddOp root, mlir::PatternRewriter& rewriter) const override {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(root.getType());
    if (!type || type.getRank() < 1) return mlir::failure();
    const int64_t rank = type.getRank();
    const int64_t channels = type.getShape().back();
    auto is_vector = [&](mlir::Value v) {
      auto t = mlir::dyn_cast<mlir::RankedTensorType>(v.getType());
      return v.getDefiningOp<nn::ConstantOp>() && t && t.getRank() == 1 &&
             t.getDimSize(0) == channels;
    };
    for (int i = 0; i < 2; ++i) {
      mlir::Value beta = root->getOperand(i);
      auto scale = root->getOperand(1 - i).getDefiningOp<nn::MulOp>();
      mlir::Value normalized;
      if (!is_vector(beta) || !scale ||
          !EitherOperand(scale, is_vector, normalized)) {
        continue;
      }
      mlir::Value gamma = scale->getOperand(0) == normalized
                              ? scale->getOperand(1)
                              : scale->getOperand(0);
      auto div = normalized.getDefiningOp<nn::DivOp>();
      auto centered =
          div ? div->getOperand(0).getDefiningOp<nn::SubOp>() : nullptr;
      auto sqrt =
          div ? div->getOperand(1).getDefiningOp<nn::SqrtOp>() : nullptr;
      if (!centered || !sqrt) continue;
      mlir::Value x = centered->getOperand(0);
      auto mean = centered->getOperand(1).getDefiningOp<nn::ReduceMeanOp>();
      if (!mean || mean->getOperand(0) != x || x.getType() != type ||
          SingleAxis(mean, rank) != rank - 1) {
        continue;
      }
      auto plus_eps = sqrt->getOperand(0).getDefiningOp<nn::AddOp>();
      mlir::Value variance_value;
      std::optional<float> epsilon;
      if (!plus_eps || !EitherOperand(
                           plus_eps,
                           [&](mlir::Value v) {
                             epsilon = ScalarConstant(v);
                             return epsilon.has_value();
                           },
                           variance_value)) {
        continue;
      }
      auto variance = variance_value.getDefiningOp<nn::ReduceMeanOp>();
      auto square = variance
                        ? variance->getOperand(0).getDefiningOp<nn::PowOp>()
                        : nullptr;
      if (!square || square->getOperand(0) != centered.getResult() ||
          !Near(ScalarConstant(square->getOperand(1)), 2.0f) ||
          SingleAxis(variance, rank) != rank - 1) {
        continue;
      }
      mlir::OperationState state(root.getLoc(), "nn.layer_normalization");
      state.addOperands({x, gamma, beta});
      state.addAttribute("axis", rewriter.getI64IntegerAttr(-1));
      state.addAttribute("epsilon", rewriter.getF32FloatAttr(*epsilon));
      state.addTypes(type);
      rewriter.replaceOp(root, rewriter.create(state)->getResults());
      return mlir::success();
    }
    return mlir::failure();
  }
};

// A pad of nothing (every pad 0: ONNX exports of DenseNet put one before
// each transition's average pooling) is its input: the op would copy the
// tensor and, on the host, break a chain kept in oneDNN's layouts.
struct RemoveEmptyPad : public mlir::OpRewritePattern<nn::PadOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      nn::PadOp pad, mlir::PatternRewriter& rewriter) const override {
    auto pads = pad->getAttrOfType<mlir::ArrayAttr>("pads");
    if (!pads || pad->getOperand(0).getType() != pad.getResult().getType() ||
        !llvm::all_of(pads, [](mlir::Attribute element) {
          auto value = mlir::dyn_cast<mlir::IntegerAttr>(element);
          return value && value.getInt() == 0;
        })) {
      return mlir::failure();
    }
    rewriter.replaceOp(pad, pad->getOperand(0));
    return mlir::success();
  }
};

// A zero pad of the spatial dimensions, the same at both ends, read only
// by an average pooling (with count_include_pad) or a convolution that pads
// nothing itself, becomes that op's `pads`: Inception-v3's exports pad
// before each 3x3 average pooling of its blocks, and the pad op copies the
// tensor and, on the host, breaks the chain kept in oneDNN's layouts.
// (Both ends equal: CUDA's cuDNN ops take symmetric padding only.)
struct FoldPadIntoWindow : public mlir::RewritePattern {
  explicit FoldPadIntoWindow(mlir::MLIRContext* context)
      : RewritePattern(mlir::Pattern::MatchAnyOpTypeTag(), /*benefit=*/1,
                       context) {}

  mlir::LogicalResult matchAndRewrite(
      mlir::Operation* op, mlir::PatternRewriter& rewriter) const override {
    const bool pool = mlir::isa<nn::AveragePoolOp>(op);
    if ((!pool && !mlir::isa<nn::ConvOp>(op)) || op->getNumOperands() < 1) {
      return mlir::failure();
    }
    auto pad = op->getOperand(0).getDefiningOp<nn::PadOp>();
    if (!pad || !pad->hasOneUse()) return mlir::failure();
    auto type =
        mlir::dyn_cast<mlir::RankedTensorType>(pad->getOperand(0).getType());
    auto mode = pad->getAttrOfType<mlir::StringAttr>("mode");
    auto value = pad->getAttrOfType<mlir::FloatAttr>("value");
    auto pads = IntegersOf(pad->getAttr("pads"));
    if (!type || type.getRank() < 3 ||
        (mode && mode.getValue() != "constant") ||
        (value && !value.getValue().isZero()) ||
        (pad->hasAttr("value") && !value) || !pads ||
        static_cast<int64_t>(pads->size()) != 2 * type.getRank()) {
      return mlir::failure();
    }
    const int64_t rank = type.getRank();
    llvm::SmallVector<int64_t> window_pads(2 * (rank - 2));
    for (int64_t d = 0; d < rank; ++d) {
      const int64_t begin = (*pads)[d], end = (*pads)[rank + d];
      if (begin != end || begin < 0 || (d < 2 && begin != 0)) {
        return mlir::failure();
      }
      if (d >= 2) {
        window_pads[d - 2] = begin;
        window_pads[rank - 2 + d - 2] = end;
      }
    }
    // The window op pads nothing itself and chooses no padding of its own.
    std::optional<llvm::SmallVector<int64_t>> own =
        op->hasAttr("pads") ? IntegersOf(op->getAttr("pads"))
                            : llvm::SmallVector<int64_t>();
    auto auto_pad = op->getAttrOfType<mlir::StringAttr>("auto_pad");
    auto ceil_mode = op->getAttrOfType<mlir::IntegerAttr>("ceil_mode");
    if (!own || llvm::any_of(*own, [](int64_t p) { return p != 0; }) ||
        (auto_pad && auto_pad.getValue() != "NOTSET") ||
        (ceil_mode && ceil_mode.getInt() != 0) || op->hasAttr("data_format")) {
      return mlir::failure();
    }
    rewriter.modifyOpInPlace(op, [&] {
      op->setOperand(0, pad->getOperand(0));
      op->setAttr("pads", rewriter.getI64ArrayAttr(window_pads));
      // The pad's zeros were averaged in: so are the op's own.
      if (pool) {
        op->setAttr("count_include_pad", rewriter.getI64IntegerAttr(1));
      }
    });
    rewriter.eraseOp(pad);
    return mlir::success();
  }

  // The integers of an array attribute, or nullopt.
  static std::optional<llvm::SmallVector<int64_t>> IntegersOf(
      mlir::Attribute attr) {
    auto array = mlir::dyn_cast_or_null<mlir::ArrayAttr>(attr);
    if (!array) return std::nullopt;
    llvm::SmallVector<int64_t> values;
    for (mlir::Attribute element : array) {
      auto integer = mlir::dyn_cast<mlir::IntegerAttr>(element);
      if (!integer) return std::nullopt;
      values.push_back(integer.getInt());
    }
    return values;
  }
};

class NnFusionPass
    : public mlir::PassWrapper<NnFusionPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnFusionPass)

  llvm::StringRef getArgument() const final { return "nn-fuse"; }
  llvm::StringRef getDescription() const final {
    return "Fuse biases, residual adds and activations into nn.conv and "
           "nn.matmul (oneDNN post-ops); drop pads of nothing";
  }

  void runOnOperation() override {
    mlir::RewritePatternSet patterns(&getContext());
    patterns.add<FoldBatchNormIntoConv, FuseActivation, FuseResidualAdd,
                 FuseGelu, FuseHardSwish, FuseLayerNorm, FuseMatmulBias,
                 FuseSwish, RemoveEmptyPad, FoldPadIntoWindow>(&getContext());
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
