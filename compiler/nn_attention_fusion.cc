// -nn-fuse-attention: a transformer's attention as one nn.attention (see
// passes.h).
#include <optional>
#include <string>

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

  // An op with no attributes but its placement.
  static bool OnlyDevice(mlir::Operation* op) {
    return llvm::all_of(op->getAttrs(), [](mlir::NamedAttribute attribute) {
      return attribute.getName() == kDeviceAttribute;
    });
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

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnFuseAttentionPass() {
  return std::make_unique<NnFuseAttentionPass>();
}

void RegisterNnFuseAttentionPass() {
  mlir::PassRegistration<NnFuseAttentionPass>();
}

}  // namespace asyncrt::compiler
