// -nn-fuse-attention: a transformer's attention as one nn.attention;
// -nn-fuse-qkv: its three projections as one (see passes.h).
#include <optional>
#include <string>
#include <vector>

#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

// `value`'s producer if it is the nn op `name` with one use (this one), on
// `device`.
mlir::Operation* OnlyUseOf(mlir::Value value, llvm::StringRef name,
                           mlir::Attribute device) {
  mlir::Operation* op = value.getDefiningOp();
  if (op == nullptr || op->getName().getStringRef() != name ||
      !value.hasOneUse() || op->getAttr(kDeviceAttribute) != device) {
    return nullptr;
  }
  return op;
}

// An op with no attributes but its placement.
bool OnlyDevice(mlir::Operation* op) {
  return llvm::all_of(op->getAttrs(), [](mlir::NamedAttribute attribute) {
    return attribute.getName() == kDeviceAttribute;
  });
}

bool HasPerm(mlir::Operation* transpose, llvm::ArrayRef<int64_t> perm) {
  auto array = transpose->getAttrOfType<mlir::ArrayAttr>("perm");
  if (!array || array.size() != perm.size()) return false;
  for (auto [element, expected] : llvm::zip(array, perm)) {
    auto value = mlir::dyn_cast<mlir::IntegerAttr>(element);
    if (!value || value.getInt() != expected) return false;
  }
  return true;
}

mlir::RankedTensorType StaticType(mlir::Value value, int rank) {
  auto type = mlir::dyn_cast<mlir::RankedTensorType>(value.getType());
  return type && type.hasStaticShape() && type.getRank() == rank
             ? type
             : mlir::RankedTensorType();
}

// The batch x sequence x hidden tensor whose heads `transposed` reads:
// transposed = transpose(reshape(x, [B, S, H, D]), perm). Null otherwise.
mlir::Value HeadsOf(mlir::Value transposed, llvm::ArrayRef<int64_t> perm,
                    mlir::Attribute device, int64_t* heads) {
  mlir::Operation* transpose = OnlyUseOf(transposed, "nn.transpose", device);
  if (transpose == nullptr || !HasPerm(transpose, perm)) return nullptr;
  mlir::Operation* reshape =
      OnlyUseOf(transpose->getOperand(0), "nn.reshape", device);
  if (reshape == nullptr) return nullptr;
  mlir::Value x = reshape->getOperand(0);
  auto x_type = StaticType(x, 3);
  auto split = StaticType(reshape->getResult(0), 4);
  if (!x_type || !split || split.getDimSize(0) != x_type.getDimSize(0) ||
      split.getDimSize(1) != x_type.getDimSize(1)) {
    return nullptr;
  }
  *heads = split.getDimSize(2);
  return x;
}

class NnFuseAttentionPass
    : public mlir::PassWrapper<NnFuseAttentionPass,
                               mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnFuseAttentionPass)

  llvm::StringRef getArgument() const final { return "nn-fuse-attention"; }
  llvm::StringRef getDescription() const final {
    return "Fuse a transformer's attention (head transposes, matrix "
           "products, softmax) into nn.attention";
  }

  void runOnOperation() override {
    mlir::func::FuncOp function = getOperation();
    llvm::SmallVector<mlir::Operation*> reshapes;
    function.walk([&](mlir::Operation* op) {
      if (op->getName().getStringRef() == "nn.reshape") reshapes.push_back(op);
    });
    for (mlir::Operation* reshape : reshapes) Fuse(reshape);
  }

 private:
  // y = reshape(transpose(matmul(softmax(matmul(q', k') * scale), v'),
  // [0, 2, 1, 3]), [B, S, H x Dv]) with q', k' and v' the heads of
  // batch x sequence x hidden tensors (k' transposed for the product)
  // becomes y = nn.attention(q, k, v).
  void Fuse(mlir::Operation* reshape) {
    mlir::Attribute device = reshape->getAttr(kDeviceAttribute);
    auto y_type = StaticType(reshape->getResult(0), 3);
    if (!y_type) return;
    mlir::Operation* merge =
        OnlyUseOf(reshape->getOperand(0), "nn.transpose", device);
    if (merge == nullptr || !HasPerm(merge, {0, 2, 1, 3})) {
      return;
    }
    mlir::Operation* values =
        OnlyUseOf(merge->getOperand(0), "nn.matmul", device);
    if (values == nullptr || values->getNumOperands() != 2 ||
        !OnlyDevice(values)) {
      return;
    }
    mlir::Operation* softmax =
        OnlyUseOf(values->getOperand(0), "nn.softmax", device);
    if (softmax == nullptr || !LastAxis(softmax)) return;
    mlir::Operation* scores =
        OnlyUseOf(softmax->getOperand(0), "nn.matmul", device);
    std::optional<float> scale = scores ? ScaleOf(scores) : std::nullopt;
    if (!scale || scores->getNumOperands() != 2) return;
    int64_t q_heads = 0, k_heads = 0, v_heads = 0;
    mlir::Value q =
        HeadsOf(scores->getOperand(0), {0, 2, 1, 3}, device, &q_heads);
    mlir::Value k =
        HeadsOf(scores->getOperand(1), {0, 2, 3, 1}, device, &k_heads);
    mlir::Value v =
        HeadsOf(values->getOperand(1), {0, 2, 1, 3}, device, &v_heads);
    if (!q || !k || !v || k_heads != v_heads) return;

    mlir::OpBuilder builder(reshape);
    mlir::OperationState state(reshape->getLoc(), "nn.attention");
    state.addOperands({q, k, v});
    state.addAttribute("q_num_heads", builder.getI64IntegerAttr(q_heads));
    state.addAttribute("kv_num_heads", builder.getI64IntegerAttr(k_heads));
    state.addAttribute("scale", builder.getF32FloatAttr(*scale));
    if (device) state.addAttribute(kDeviceAttribute, device);
    state.addTypes(y_type);
    // Shapes the pattern did not pin down (the heads' sizes) are the shape
    // function's to check: where it disagrees the ops stay as they were.
    std::string error;
    mlir::FailureOr<llvm::SmallVector<mlir::Type>> types = nn::InferResultTypes(
        &getContext(), "nn.attention",
        mlir::TypeRange{q.getType(), k.getType(), v.getType()},
        builder.getDictionaryAttr(state.attributes), 1, error);
    if (mlir::failed(types) || (*types)[0] != y_type) return;
    mlir::Operation* attention = builder.create(state);
    reshape->getResult(0).replaceAllUsesWith(attention->getResult(0));
    // The pattern's ops, from the last, now have no uses.
    llvm::SmallVector<mlir::Operation*> dead = {reshape, merge, values, softmax,
                                                scores};
    for (mlir::Value heads : {scores->getOperand(0), scores->getOperand(1),
                              values->getOperand(1)}) {
      mlir::Operation* transpose = heads.getDefiningOp();
      dead.push_back(transpose);
      dead.push_back(transpose->getOperand(0).getDefiningOp());
    }
    for (mlir::Operation* op : dead) op->erase();
  }

  static bool LastAxis(mlir::Operation* softmax) {
    auto axis = softmax->getAttrOfType<mlir::IntegerAttr>("axis");
    return !axis || axis.getInt() == -1 || axis.getInt() == 3;
  }

  // The factor of a product with no other fusion: 1, or the alpha of a
  // "linear" activation without offset.
  static std::optional<float> ScaleOf(mlir::Operation* matmul) {
    auto activation = matmul->getAttrOfType<mlir::StringAttr>("activation");
    if (!activation)
      return OnlyDevice(matmul) ? std::optional<float>(1.f) : std::nullopt;
    for (mlir::NamedAttribute attribute : matmul->getAttrs()) {
      llvm::StringRef name = attribute.getName();
      if (name != kDeviceAttribute && name != "activation" &&
          name != "activation_alpha" && name != "activation_beta") {
        return std::nullopt;
      }
    }
    auto alpha = matmul->getAttrOfType<mlir::FloatAttr>("activation_alpha");
    auto beta = matmul->getAttrOfType<mlir::FloatAttr>("activation_beta");
    if (activation.getValue() != "linear" ||
        (beta && beta.getValueAsDouble() != 0)) {
      return std::nullopt;
    }
    return alpha ? static_cast<float>(alpha.getValueAsDouble()) : 1.f;
  }
};

// The bytes of a constant `value` of `type`'s element type, or nullopt.
std::optional<std::vector<char>> ConstantBytes(mlir::Value value,
                                               mlir::RankedTensorType type) {
  auto constant = value.getDefiningOp<nn::ConstantOp>();
  std::optional<DType> dtype = nn::DTypeOf(type.getElementType());
  if (!constant || !dtype) return std::nullopt;
  auto elements = mlir::dyn_cast<mlir::ElementsAttr>(constant.getValue());
  if (!elements) return std::nullopt;
  return nn::ElementBytes(elements, *dtype);
}

class NnFuseQkvPass
    : public mlir::PassWrapper<NnFuseQkvPass,
                               mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnFuseQkvPass)

  llvm::StringRef getArgument() const final { return "nn-fuse-qkv"; }
  llvm::StringRef getDescription() const final {
    return "Compute an nn.attention's Q, K and V projections as one matrix "
           "product and pass its result packed";
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::Operation*> attentions;
    getOperation().walk([&](mlir::Operation* op) {
      if (op->getName().getStringRef() == "nn.attention" &&
          op->getNumOperands() == 3) {
        attentions.push_back(op);
      }
    });
    for (mlir::Operation* attention : attentions) Fuse(attention);
  }

 private:
  // nn.attention(matmul(x, wq, bq), matmul(x, wk, bk), matmul(x, wv, bv)),
  // weights [K, N] and biases [N] constant, each product used only there,
  // becomes nn.attention(matmul(x, [wq wk wv], [bq bk bv])) {qkv_widths}.
  void Fuse(mlir::Operation* attention) {
    mlir::Attribute device = attention->getAttr(kDeviceAttribute);
    mlir::Operation* projections[3];
    for (int i = 0; i < 3; ++i) {
      projections[i] = OnlyUseOf(attention->getOperand(i), "nn.matmul", device);
      if (projections[i] == nullptr || projections[i]->getNumOperands() != 3 ||
          !OnlyDevice(projections[i]) ||
          projections[i]->getOperand(0) != projections[0]->getOperand(0)) {
        return;
      }
    }
    mlir::Value x = projections[0]->getOperand(0);
    auto x_type = StaticType(x, 3);
    if (!x_type) return;
    // Rows of the fused weights: each projection's row side by side.
    const int64_t rows = x_type.getDimSize(2);
    std::vector<std::vector<char>> weights(3), biases(3);
    int64_t widths[3];
    mlir::Type element = x_type.getElementType();
    for (int i = 0; i < 3; ++i) {
      auto w_type = StaticType(projections[i]->getOperand(1), 2);
      auto b_type = StaticType(projections[i]->getOperand(2), 1);
      if (!w_type || !b_type || w_type.getElementType() != element ||
          b_type.getElementType() != element || w_type.getDimSize(0) != rows ||
          b_type.getDimSize(0) != w_type.getDimSize(1)) {
        return;
      }
      widths[i] = w_type.getDimSize(1);
      std::optional<std::vector<char>> w =
          ConstantBytes(projections[i]->getOperand(1), w_type);
      std::optional<std::vector<char>> b =
          ConstantBytes(projections[i]->getOperand(2), b_type);
      if (!w || !b) return;
      weights[i] = *std::move(w);
      biases[i] = *std::move(b);
    }
    const int64_t total = widths[0] + widths[1] + widths[2];
    // The shape functions decide, as for the attention itself.
    mlir::OpBuilder builder(attention);
    auto w_type = mlir::RankedTensorType::get({rows, total}, element);
    auto b_type = mlir::RankedTensorType::get({total}, element);
    auto qkv_type = mlir::RankedTensorType::get(
        {x_type.getDimSize(0), x_type.getDimSize(1), total}, element);
    mlir::OperationState product(projections[0]->getLoc(), "nn.matmul");
    product.addAttributes(projections[0]->getAttrs());
    product.addTypes(qkv_type);
    mlir::OperationState packed(attention->getLoc(), "nn.attention");
    packed.addAttributes(attention->getAttrs());
    packed.addAttribute("qkv_widths", builder.getI64ArrayAttr(widths));
    packed.addTypes(attention->getResultTypes());
    std::string error;
    mlir::FailureOr<llvm::SmallVector<mlir::Type>> product_types =
        nn::InferResultTypes(&getContext(), "nn.matmul",
                             mlir::TypeRange{x.getType(), w_type, b_type},
                             builder.getDictionaryAttr(product.attributes), 1,
                             error);
    mlir::FailureOr<llvm::SmallVector<mlir::Type>> packed_types =
        nn::InferResultTypes(
            &getContext(), "nn.attention", mlir::TypeRange{qkv_type},
            builder.getDictionaryAttr(packed.attributes), 1, error);
    if (mlir::failed(product_types) || (*product_types)[0] != qkv_type ||
        mlir::failed(packed_types) ||
        (*packed_types)[0] != attention->getResult(0).getType()) {
      return;
    }
    const size_t element_bytes = biases[0].size() / widths[0];
    std::vector<char> fused_weights, fused_bias;
    fused_weights.reserve(rows * total * element_bytes);
    for (int64_t r = 0; r < rows; ++r) {
      for (int i = 0; i < 3; ++i) {
        const size_t row_bytes = widths[i] * element_bytes;
        fused_weights.insert(fused_weights.end(),
                             weights[i].begin() + r * row_bytes,
                             weights[i].begin() + (r + 1) * row_bytes);
      }
    }
    for (const std::vector<char>& b : biases) {
      fused_bias.insert(fused_bias.end(), b.begin(), b.end());
    }

    auto constant = [&](mlir::RankedTensorType type,
                        const std::vector<char>& bytes, llvm::StringRef hint) {
      return nn::ConstantOp::create(builder, attention->getLoc(), type,
                                    nn::ElementsFromBytes(type, bytes, hint),
                                    nullptr)
          ->getResult(0);
    };
    product.addOperands({x, constant(w_type, fused_weights, "qkv_weights"),
                         constant(b_type, fused_bias, "qkv_bias")});
    mlir::Operation* qkv = builder.create(product);
    packed.addOperands(qkv->getResult(0));
    mlir::Operation* fused = builder.create(packed);
    attention->getResult(0).replaceAllUsesWith(fused->getResult(0));
    attention->erase();
    for (mlir::Operation* projection : projections) {
      mlir::Operation* weight = projection->getOperand(1).getDefiningOp();
      mlir::Operation* bias = projection->getOperand(2).getDefiningOp();
      projection->erase();
      for (mlir::Operation* old : {weight, bias}) {
        if (old->use_empty()) old->erase();
      }
    }
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnFuseQkvPass() {
  return std::make_unique<NnFuseQkvPass>();
}

void RegisterNnFuseQkvPass() { mlir::PassRegistration<NnFuseQkvPass>(); }

std::unique_ptr<mlir::Pass> CreateNnFuseAttentionPass() {
  return std::make_unique<NnFuseAttentionPass>();
}

void RegisterNnFuseAttentionPass() {
  mlir::PassRegistration<NnFuseAttentionPass>();
}

}  // namespace asyncrt::compiler
