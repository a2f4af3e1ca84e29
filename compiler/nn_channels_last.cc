// -nn-channels-last: runs a device's convolutions and pooling in NHWC (see
// passes.h).
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "asyncrt/backends/fused_elementwise.h"
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "asyncrt/tensor/dtype.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/Interfaces/SideEffectInterfaces.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

using Perm = llvm::SmallVector<int64_t, 4>;

constexpr int64_t kToChannelsLast[] = {0, 2, 3, 1};
constexpr int64_t kToChannelsFirst[] = {0, 3, 1, 2};

mlir::RankedTensorType StaticRank4(mlir::Type type) {
  auto ranked = mlir::dyn_cast<mlir::RankedTensorType>(type);
  return ranked && ranked.hasStaticShape() && ranked.getRank() == 4
             ? ranked
             : mlir::RankedTensorType();
}

mlir::RankedTensorType Transposed(mlir::RankedTensorType type,
                                  llvm::ArrayRef<int64_t> perm) {
  llvm::SmallVector<int64_t, 4> shape;
  for (int64_t axis : perm) shape.push_back(type.getDimSize(axis));
  return type.clone(shape);
}

// Whether the runtime's shape function of `name` gives `result` for
// `operands` and `attributes`: a rewrite checks before it builds, so that
// what a shape function refuses stays as it was.
bool ShapeFunctionAgrees(mlir::MLIRContext* context, llvm::StringRef name,
                         mlir::TypeRange operands,
                         const mlir::NamedAttrList& attributes,
                         mlir::Type result) {
  std::string error;
  mlir::FailureOr<llvm::SmallVector<mlir::Type>> types = nn::InferResultTypes(
      context, name, operands, attributes.getDictionary(context), 1, error);
  return mlir::succeeded(types) && (*types)[0] == result;
}

Perm Inverse(llvm::ArrayRef<int64_t> perm) {
  Perm inverse(perm.size());
  for (size_t i = 0; i < perm.size(); ++i) inverse[perm[i]] = i;
  return inverse;
}

std::optional<Perm> PermOf(mlir::Operation* op) {
  if (op == nullptr || op->getName().getStringRef() != "nn.transpose") {
    return std::nullopt;
  }
  auto array = op->getAttrOfType<mlir::ArrayAttr>("perm");
  if (!array) return std::nullopt;
  Perm perm;
  for (mlir::Attribute element : array) {
    auto value = mlir::dyn_cast<mlir::IntegerAttr>(element);
    if (!value) return std::nullopt;
    perm.push_back(value.getInt());
  }
  return perm;
}

// The operations this pass turns to NHWC: 2-D convolutions and pooling on
// the pass's device, of static shapes, in NCHW, without the host's oneDNN
// layout attributes.
bool IsChannelsFirstWindowOp(mlir::Operation* op, llvm::StringRef device) {
  if (!mlir::isa<nn::ConvOp, nn::MaxPoolOp, nn::AveragePoolOp,
                 nn::GlobalAveragePoolOp>(op)) {
    return false;
  }
  auto placed = op->getAttrOfType<mlir::StringAttr>(kDeviceAttribute);
  if (!placed || placed.getValue() != device) return false;
  if (auto format = op->getAttrOfType<mlir::StringAttr>("data_format");
      format && format.getValue() != "NCHW") {
    return false;
  }
  if (op->hasAttr("result_layout") || op->hasAttr("compute_layout")) {
    return false;
  }
  if (!StaticRank4(op->getResult(0).getType())) return false;
  return llvm::all_of(op->getOperandTypes(), [](mlir::Type type) {
    auto ranked = mlir::dyn_cast<mlir::RankedTensorType>(type);
    return ranked && ranked.hasStaticShape() &&
           (ranked.getRank() == 4 || ranked.getRank() == 1);
  });
}

// Elementwise ops a transpose moves through: those of the fused
// elementwise op and a few more that compute each element alone.
bool IsElementwise(mlir::Operation* op) {
  if (op->getNumResults() != 1) return false;
  llvm::StringRef name = op->getName().getStringRef();
  if (nn::FindFusedElementwiseOp(std::string_view(name.data(), name.size()))) {
    return true;
  }
  return llvm::is_contained(
      llvm::ArrayRef<llvm::StringRef>{"nn.cast", "nn.clip", "nn.leaky_relu",
                                      "nn.hard_swish", "nn.hard_sigmoid",
                                      "nn.elu", "nn.softplus"},
      name);
}

class NnChannelsLastPass
    : public mlir::PassWrapper<NnChannelsLastPass,
                               mlir::OperationPass<mlir::func::FuncOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnChannelsLastPass)

  NnChannelsLastPass() = default;
  NnChannelsLastPass(const NnChannelsLastPass& other) : PassWrapper(other) {}
  explicit NnChannelsLastPass(std::string device) { device_ = device; }

  llvm::StringRef getArgument() const final { return "nn-channels-last"; }
  llvm::StringRef getDescription() const final {
    return "Run a device's 2-D convolutions and pooling in NHWC, with the "
           "transposes between them cancelled";
  }

  void runOnOperation() override {
    mlir::func::FuncOp function = getOperation();
    if (function.isDeclaration()) return;
    mlir::Block& block = function.getBody().front();
    for (mlir::Operation& op : llvm::make_early_inc_range(block)) {
      if (IsChannelsFirstWindowOp(&op, device_)) {
        ToChannelsLast(&op);
      }
    }
    // Cancel and move transposes until nothing changes: each step removes
    // a transpose or moves one towards the function's end.
    for (bool changed = true; changed;) {
      changed = false;
      for (mlir::Operation& op : llvm::make_early_inc_range(block)) {
        if (mlir::isOpTriviallyDead(&op)) {
          op.erase();
          changed = true;
          continue;
        }
        changed |= Simplify(&op);
      }
    }
  }

 private:
  // `value` transposed by `perm` on `device` at the builder's insertion
  // point: an earlier transpose of it that is the same, else a new one (a
  // value read by several convolutions is transposed once).
  mlir::Value Transpose(mlir::OpBuilder& builder, mlir::Location loc,
                        mlir::Value value, llvm::ArrayRef<int64_t> perm,
                        mlir::Attribute device) {
    mlir::Block* block = builder.getInsertionBlock();
    mlir::Block::iterator point = builder.getInsertionPoint();
    for (mlir::Operation* user : value.getUsers()) {
      if (user->getBlock() == block &&
          (point == block->end() || user->isBeforeInBlock(&*point)) &&
          PermOf(user) == Perm(perm.begin(), perm.end()) &&
          user->getAttr(kDeviceAttribute) == device) {
        return user->getResult(0);
      }
    }
    mlir::OperationState state(loc, "nn.transpose");
    state.addOperands(value);
    state.addAttribute("perm", builder.getI64ArrayAttr(perm));
    if (device) state.addAttribute(kDeviceAttribute, device);
    state.addTypes(
        Transposed(mlir::cast<mlir::RankedTensorType>(value.getType()), perm));
    return builder.create(state)->getResult(0);
  }

  // `op` (NCHW) as its NHWC form between transposes; the weights of a
  // convolution as M x kH x kW x C/group.
  void ToChannelsLast(mlir::Operation* op) {
    mlir::OpBuilder builder(op);
    mlir::Attribute device = op->getAttr(kDeviceAttribute);
    mlir::NamedAttrList attributes;
    for (mlir::NamedAttribute attribute : op->getAttrs()) {
      if (attribute.getName() != "data_format") attributes.push_back(attribute);
    }
    attributes.set("data_format", builder.getStringAttr("NHWC"));
    llvm::SmallVector<mlir::Type> operand_types;
    for (mlir::Value operand : op->getOperands()) {
      auto type = StaticRank4(operand.getType());
      operand_types.push_back(type ? Transposed(type, kToChannelsLast)
                                   : operand.getType());
    }
    auto result_type =
        Transposed(StaticRank4(op->getResult(0).getType()), kToChannelsLast);
    if (!ShapeFunctionAgrees(&getContext(), op->getName().getStringRef(),
                             operand_types, attributes, result_type)) {
      return;  // Stays NCHW.
    }
    mlir::OperationState state(op->getLoc(), op->getName());
    for (mlir::Value operand : op->getOperands()) {
      state.addOperands(StaticRank4(operand.getType())
                            ? Transpose(builder, op->getLoc(), operand,
                                        kToChannelsLast, device)
                            : operand);
    }
    state.addAttributes(attributes);
    state.addTypes(result_type);
    mlir::Operation* channels_last = builder.create(state);
    op->getResult(0).replaceAllUsesWith(Transpose(builder, op->getLoc(),
                                                  channels_last->getResult(0),
                                                  kToChannelsFirst, device));
    op->erase();
  }

  // One rewrite at `op` if one applies: a transpose of a transpose
  // composed (nothing where they cancel), of a constant folded, or that
  // moves only unit dimensions made a reshape; an elementwise op whose
  // operands come through one transpose computed before it. True if `op`
  // changed.
  bool Simplify(mlir::Operation* op) {
    if (std::optional<Perm> perm = PermOf(op)) {
      mlir::Value input = op->getOperand(0);
      mlir::Operation* producer = input.getDefiningOp();
      if (std::optional<Perm> inner = PermOf(producer)) {
        Perm composed;
        for (int64_t axis : *perm) composed.push_back((*inner)[axis]);
        mlir::Value source = producer->getOperand(0);
        if (llvm::equal(composed, llvm::seq<int64_t>(0, composed.size()))) {
          op->getResult(0).replaceAllUsesWith(source);
        } else {
          mlir::OpBuilder builder(op);
          op->getResult(0).replaceAllUsesWith(
              Transpose(builder, op->getLoc(), source, composed,
                        op->getAttr(kDeviceAttribute)));
        }
        op->erase();
        return true;
      }
      if (auto constant = mlir::dyn_cast_or_null<nn::ConstantOp>(producer)) {
        return FoldConstant(op, constant, *perm);
      }
      if (MovesOnlyUnitDimensions(input, *perm)) {
        mlir::OpBuilder builder(op);
        mlir::OperationState state(op->getLoc(), "nn.reshape");
        state.addOperands(input);
        auto type =
            mlir::cast<mlir::RankedTensorType>(op->getResult(0).getType());
        state.addAttribute("shape", builder.getI64ArrayAttr(type.getShape()));
        if (mlir::Attribute device = op->getAttr(kDeviceAttribute)) {
          state.addAttribute(kDeviceAttribute, device);
        }
        state.addTypes(type);
        op->getResult(0).replaceAllUsesWith(
            builder.create(state)->getResult(0));
        op->erase();
        return true;
      }
      return false;
    }
    if (IsElementwise(op)) return SinkThroughElementwise(op);
    if (op->getName().getStringRef() == "nn.concat") {
      return SinkThroughConcat(op);
    }
    return false;
  }

  // Whether transposing `value` by `perm` keeps the order of its
  // dimensions other than 1s: the same bytes, a reshape.
  static bool MovesOnlyUnitDimensions(mlir::Value value,
                                      llvm::ArrayRef<int64_t> perm) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(value.getType());
    if (!type || !type.hasStaticShape()) return false;
    int64_t last = -1;
    for (int64_t axis : perm) {
      if (type.getDimSize(axis) == 1) continue;
      if (axis < last) return false;
      last = axis;
    }
    return true;
  }

  // op(transpose(a, p), ...) -> transpose(op(a, ...), p) for an
  // elementwise op: each operand of its rank either comes through a
  // transpose by p, or is transposed back by p's inverse where that costs
  // nothing (a constant, which folds, or a tensor whose inverse transpose
  // moves only unit dimensions: a reshape; a squeeze-and-excite gate);
  // operands of one element stay as they are. At least one operand of the
  // result's shape comes through a transpose, so the transposes only move
  // on, never multiply.
  bool SinkThroughElementwise(mlir::Operation* op) {
    auto result_type =
        mlir::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
    if (!result_type || !result_type.hasStaticShape()) return false;
    mlir::Attribute device = op->getAttr(kDeviceAttribute);
    // The perm: that of a transposed operand of the result's shape.
    std::optional<Perm> perm;
    for (mlir::Value operand : op->getOperands()) {
      mlir::Operation* producer = operand.getDefiningOp();
      std::optional<Perm> operand_perm = PermOf(producer);
      if (operand_perm && operand.getType() == result_type &&
          producer->getAttr(kDeviceAttribute) == device) {
        perm = operand_perm;
        break;
      }
    }
    if (!perm) return false;
    const Perm inverse = Inverse(*perm);
    mlir::OpBuilder builder(op);
    // Each operand's value before the transpose; null where it has none.
    llvm::SmallVector<mlir::Value> sources;
    for (mlir::Value operand : op->getOperands()) {
      auto type = mlir::dyn_cast<mlir::RankedTensorType>(operand.getType());
      if (!type || !type.hasStaticShape()) return false;
      if (type.getNumElements() == 1 && type.getRank() <= 1) {
        sources.push_back(operand);
        continue;
      }
      if (type.getRank() != result_type.getRank()) return false;
      mlir::Operation* producer = operand.getDefiningOp();
      if (PermOf(producer) == perm &&
          producer->getAttr(kDeviceAttribute) == device) {
        sources.push_back(producer->getOperand(0));
        continue;
      }
      if (!MovesOnlyUnitDimensions(operand, inverse) &&
          !mlir::isa_and_nonnull<nn::ConstantOp>(producer)) {
        return false;
      }
      sources.push_back(mlir::Value());
    }
    llvm::SmallVector<mlir::Type> source_types;
    for (auto [source, operand] : llvm::zip(sources, op->getOperands())) {
      source_types.push_back(
          source ? source.getType()
                 : Transposed(
                       mlir::cast<mlir::RankedTensorType>(operand.getType()),
                       inverse));
    }
    const mlir::RankedTensorType moved_type = Transposed(result_type, inverse);
    if (!ShapeFunctionAgrees(&getContext(), op->getName().getStringRef(),
                             source_types, mlir::NamedAttrList(op->getAttrs()),
                             moved_type)) {
      return false;
    }
    for (auto [source, operand] : llvm::zip(sources, op->getOperands())) {
      if (!source) {
        source = Transpose(builder, op->getLoc(), operand, inverse, device);
      }
    }
    ReplaceBeforeTranspose(builder, op, sources,
                           mlir::NamedAttrList(op->getAttrs()), moved_type,
                           *perm);
    return true;
  }

  // concat(transpose(a, p), transpose(b, p), ..., axis) ->
  // transpose(concat(a, b, ..., p[axis]), p).
  bool SinkThroughConcat(mlir::Operation* op) {
    auto axis_attr = op->getAttrOfType<mlir::IntegerAttr>("axis");
    auto result_type =
        mlir::dyn_cast<mlir::RankedTensorType>(op->getResult(0).getType());
    if (!axis_attr || !result_type || op->getNumOperands() == 0) return false;
    mlir::Attribute device = op->getAttr(kDeviceAttribute);
    std::optional<Perm> perm;
    llvm::SmallVector<mlir::Value> sources;
    for (mlir::Value operand : op->getOperands()) {
      mlir::Operation* producer = operand.getDefiningOp();
      std::optional<Perm> operand_perm = PermOf(producer);
      if (!operand_perm || (perm && *perm != *operand_perm) ||
          producer->getAttr(kDeviceAttribute) != device) {
        return false;
      }
      perm = operand_perm;
      sources.push_back(producer->getOperand(0));
    }
    const int64_t rank = result_type.getRank();
    int64_t axis = axis_attr.getInt();
    if (axis < 0) axis += rank;
    if (axis < 0 || axis >= rank) return false;
    mlir::OpBuilder builder(op);
    mlir::NamedAttrList attributes(op->getAttrs());
    attributes.set("axis", builder.getI64IntegerAttr((*perm)[axis]));
    const Perm inverse = Inverse(*perm);
    const mlir::RankedTensorType moved_type = Transposed(result_type, inverse);
    llvm::SmallVector<mlir::Type> source_types;
    for (mlir::Value source : sources) source_types.push_back(source.getType());
    if (!ShapeFunctionAgrees(&getContext(), "nn.concat", source_types,
                             attributes, moved_type)) {
      return false;
    }
    ReplaceBeforeTranspose(builder, op, sources, attributes, moved_type, *perm);
    return true;
  }

  // Replaces `op` by transpose(op', perm), op' the same op on `operands`
  // with `attributes` and result `type`.
  void ReplaceBeforeTranspose(mlir::OpBuilder& builder, mlir::Operation* op,
                              mlir::ValueRange operands,
                              const mlir::NamedAttrList& attributes,
                              mlir::Type type, llvm::ArrayRef<int64_t> perm) {
    mlir::OperationState state(op->getLoc(), op->getName());
    state.addOperands(operands);
    state.addAttributes(attributes);
    state.addTypes(type);
    mlir::Operation* moved = builder.create(state);
    op->getResult(0).replaceAllUsesWith(
        Transpose(builder, op->getLoc(), moved->getResult(0), perm,
                  op->getAttr(kDeviceAttribute)));
    op->erase();
  }

  // transpose(constant) -> the constant's value transposed.
  bool FoldConstant(mlir::Operation* op, nn::ConstantOp constant,
                    llvm::ArrayRef<int64_t> perm) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(constant.getType());
    std::optional<DType> dtype =
        type ? nn::DTypeOf(type.getElementType()) : std::nullopt;
    if (!dtype || !type.hasStaticShape() || *dtype == DType::kI1 ||
        *dtype == DType::kString) {
      return false;
    }
    const mlir::RankedTensorType out_type = Transposed(type, perm);
    if (auto dense =
            mlir::dyn_cast<mlir::DenseElementsAttr>(constant.getValue());
        dense && dense.isSplat()) {
      return ReplaceWithConstant(op, constant, dense.resizeSplat(out_type));
    }
    std::optional<std::vector<char>> bytes =
        nn::ElementBytes(constant.getValue(), *dtype);
    if (!bytes) return false;
    const size_t size = DTypeSize(*dtype);
    const int rank = type.getRank();
    llvm::SmallVector<int64_t, 4> in_strides(rank, 1);
    for (int k = rank - 2; k >= 0; --k) {
      in_strides[k] = in_strides[k + 1] * type.getDimSize(k + 1);
    }
    std::vector<char> out(bytes->size());
    llvm::SmallVector<int64_t, 4> index(rank, 0);
    for (int64_t i = 0, n = type.getNumElements(); i < n; ++i) {
      int64_t from = 0;
      for (int k = 0; k < rank; ++k) from += index[k] * in_strides[perm[k]];
      std::memcpy(out.data() + i * size, bytes->data() + from * size, size);
      for (int k = rank - 1; k >= 0 && ++index[k] == out_type.getDimSize(k);
           --k) {
        index[k] = 0;
      }
    }
    mlir::ElementsAttr value = nn::ElementsFromBytes(
        out_type, out, "channels_last",
        mlir::isa<mlir::DenseResourceElementsAttr>(constant.getValue()));
    return ReplaceWithConstant(op, constant, value);
  }

  // Replaces `op`'s result by a constant of `value` with `constant`'s other
  // attributes (its name).
  static bool ReplaceWithConstant(mlir::Operation* op, nn::ConstantOp constant,
                                  mlir::ElementsAttr value) {
    mlir::OpBuilder builder(op);
    mlir::OperationState state(constant.getLoc(), "nn.constant");
    for (mlir::NamedAttribute attribute : constant->getAttrs()) {
      if (attribute.getName() != "value")
        state.addAttribute(attribute.getName(), attribute.getValue());
    }
    state.addAttribute("value", value);
    state.addTypes(value.getType());
    op->getResult(0).replaceAllUsesWith(builder.create(state)->getResult(0));
    op->erase();
    return true;
  }

  Option<std::string> device_{
      *this, "device",
      llvm::cl::desc("The device whose ops run in NHWC (e.g. CUDA:0)"),
      llvm::cl::init("CUDA:0")};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnChannelsLastPass(std::string device) {
  return std::make_unique<NnChannelsLastPass>(std::move(device));
}

void RegisterNnChannelsLastPass() {
  mlir::PassRegistration<NnChannelsLastPass>();
}

}  // namespace asyncrt::compiler
