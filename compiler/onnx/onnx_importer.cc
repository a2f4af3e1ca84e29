// The ONNX importer (see asyncrt/compiler/onnx_importer.h).
#include "asyncrt/compiler/onnx_importer.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "compiler/onnx/onnx_importer_internal.h"
#include "mlir/IR/Verifier.h"

namespace asyncrt {
namespace onnx_internal {

mlir::OwningOpRef<mlir::ModuleOp> Importer::Import(llvm::StringRef bytes) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    mlir::emitError(file_) << "not a valid ONNX model (the protobuf does not "
                              "parse: truncated or not ONNX)";
    return nullptr;
  }
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") {
      opset_ = opset.version();
    }
  }
  if (opset_ == 0) {
    mlir::emitError(file_) << "the model imports no opset of the default "
                              "ONNX domain";
    return nullptr;
  }
  if (opset_ < 1 || opset_ > kMaxOnnxOpset) {
    mlir::emitError(file_) << "unsupported ONNX opset " << opset_
                           << " (supported: " << kMinOnnxOpset << " to "
                           << kMaxOnnxOpset << ", and older models whose ops "
                           << "are unchanged at " << kMinOnnxOpset << ")";
    return nullptr;
  }
  if (opset_ < kMinOnnxOpset) {
    if (mlir::failed(CheckUnchangedSinceOpset(model.graph()))) return nullptr;
    opset_ = kMinOnnxOpset;  // Every op means what it does there.
  }
  context_->loadDialect<nn::NNDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(file_);
  builder_.setInsertionPointToEnd(module->getBody());
  if (mlir::failed(ImportGraph(model.graph()))) return nullptr;
  if (mlir::failed(mlir::verify(*module))) return nullptr;
  return module;
}

mlir::LogicalResult Importer::CheckUnchangedSinceOpset(
    const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    if (!node.domain().empty() && node.domain() != "ai.onnx") continue;
    const std::optional<int> then = OnnxOpSinceVersion(node.op_type(), opset_);
    const std::optional<int> supported =
        OnnxOpSinceVersion(node.op_type(), kMinOnnxOpset);
    if (!then) return Error(node) << "no such op in ONNX opset " << opset_;
    if (supported != then) {
      return Error(node) << "opset " << opset_ << "'s version of "
                         << node.op_type() << " (since opset " << *then
                         << ") is not supported: it changed before opset "
                         << kMinOnnxOpset << " (export the model at opset "
                         << kMinOnnxOpset << " or later)";
    }
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.has_g() &&
          mlir::failed(CheckUnchangedSinceOpset(attribute.g()))) {
        return mlir::failure();
      }
      for (const onnx::GraphProto& body : attribute.graphs()) {
        if (mlir::failed(CheckUnchangedSinceOpset(body))) {
          return mlir::failure();
        }
      }
    }
  }
  return mlir::success();
}

mlir::LogicalResult Importer::ImportGraph(const onnx::GraphProto& graph) {
  // Initializers first: in opsets before 9 they are also listed as inputs.
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    absl::StatusOr<ConstTensor> tensor = ReadTensorProto(initializer);
    if (!tensor.ok()) {
      return mlir::emitError(file_)
             << "initializer '" << initializer.name()
             << "': " << std::string(tensor.status().message());
    }
    GraphValue value;
    value.constant = std::make_shared<ConstTensor>(*std::move(tensor));
    value.initializer = true;
    values_[initializer.name()] = std::move(value);
  }

  std::vector<std::string> argument_names;
  llvm::SmallVector<mlir::Type> argument_types;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (values_.count(input.name())) continue;  // An initializer.
    if (auto it = options_.constant_inputs.find(input.name());
        it != options_.constant_inputs.end()) {
      onnx::TensorProto proto;
      absl::StatusOr<ConstTensor> tensor =
          proto.ParseFromString(it->second)
              ? ReadTensorProto(proto)
              : absl::InvalidArgumentError("not a TensorProto");
      if (!tensor.ok()) {
        return mlir::emitError(file_)
               << "value of graph input '" << input.name()
               << "': " << std::string(tensor.status().message());
      }
      GraphValue value;
      value.constant = std::make_shared<ConstTensor>(*std::move(tensor));
      values_[input.name()] = std::move(value);
      continue;
    }
    if (!input.type().has_tensor_type()) {
      return mlir::emitError(file_)
             << "graph input '" << input.name() << "' is not a tensor";
    }
    const onnx::TypeProto::Tensor& type = input.type().tensor_type();
    std::optional<DType> dtype = DTypeOfOnnx(type.elem_type());
    if (!dtype) {
      return mlir::emitError(file_)
             << "graph input '" << input.name() << "' has unsupported dtype "
             << OnnxTypeName(type.elem_type());
    }
    if (!type.has_shape()) {
      return mlir::emitError(file_)
             << "graph input '" << input.name() << "' has no shape";
    }
    std::vector<int64_t> dims;
    for (const onnx::TensorShapeProto::Dimension& dim : type.shape().dim()) {
      dims.push_back(dim.has_dim_value() ? dim.dim_value()
                                         : options_.default_dimension);
    }
    if (!CheckedElements(dims).ok()) {
      return mlir::emitError(file_)
             << "graph input '" << input.name() << "' has an invalid shape";
    }
    argument_names.push_back(input.name());
    argument_types.push_back(
        mlir::RankedTensorType::get(dims, nn::MlirTypeOf(*dtype, context_)));
  }

  auto function =
      mlir::func::FuncOp::create(builder_, file_, options_.function_name,
                                 builder_.getFunctionType(argument_types, {}));
  mlir::Block* entry = function.addEntryBlock();
  builder_.setInsertionPointToStart(entry);
  for (size_t i = 0; i < argument_names.size(); ++i) {
    GraphValue value;
    value.value = entry->getArgument(i);
    values_[argument_names[i]] = std::move(value);
  }

  for (const onnx::NodeProto& node : graph.node()) {
    if (mlir::failed(ImportNode(node))) return mlir::failure();
  }

  llvm::SmallVector<mlir::Value> results;
  for (const onnx::ValueInfoProto& output : graph.output()) {
    auto it = values_.find(output.name());
    if (it == values_.end()) {
      return mlir::emitError(file_)
             << "graph output '" << output.name() << "' is never computed";
    }
    results.push_back(Materialize(output.name(), it->second));
  }
  mlir::func::ReturnOp::create(builder_, file_, results);
  function.setFunctionType(builder_.getFunctionType(
      argument_types, mlir::ValueRange(results).getTypes()));
  return mlir::success();
}

mlir::Value Importer::Materialize(const std::string& name, GraphValue& value) {
  if (value.value) return value.value;
  const ConstTensor& tensor = *value.constant;
  auto type = mlir::cast<mlir::RankedTensorType>(TensorType(tensor));
  mlir::ElementsAttr attr;
  llvm::ArrayRef<char> bytes(tensor.bytes.data(), tensor.bytes.size());
  // One repeated value (ConstantOfShape, Dropout's mask): a splat, however
  // large. Initializers stay resources, as weights are.
  const size_t element_size = DTypeSize(tensor.dtype);
  bool splat = !value.initializer && tensor.NumElements() > 1;
  for (size_t i = element_size; splat && i < bytes.size(); i += element_size) {
    splat = std::memcmp(&bytes[i], bytes.data(), element_size) == 0;
  }
  if (splat && tensor.dtype == DType::kI1) {
    attr = mlir::DenseElementsAttr::get(type, bytes[0] != 0);
  } else if (splat) {
    attr = mlir::DenseElementsAttr::getFromRawBuffer(
        type, bytes.take_front(element_size));
  } else if (tensor.NumElements() > kInlineConstantElements) {
    // Aligned for the widest vector loads; the name is a hint made unique.
    attr = mlir::DenseResourceElementsAttr::get(
        type,
        name.empty() ? absl::StrCat("constant_", resource_counter_++) : name,
        mlir::HeapAsmResourceBlob::allocateAndCopyWithAlign(bytes, 64));
  } else if (tensor.dtype == DType::kI1) {
    llvm::SmallVector<bool> bools;
    for (char b : tensor.bytes) bools.push_back(b != 0);
    attr = mlir::DenseElementsAttr::get(type, llvm::ArrayRef<bool>(bools));
  } else {
    attr = mlir::DenseElementsAttr::getFromRawBuffer(type, bytes);
  }
  // Constants go to the top of the function, so every use is dominated.
  mlir::OpBuilder::InsertionGuard guard(builder_);
  mlir::Block* entry = builder_.getInsertionBlock();
  builder_.setInsertionPointToStart(entry);
  auto constant = nn::ConstantOp::create(
      builder_, mlir::NameLoc::get(builder_.getStringAttr(name), file_), type,
      attr, value.initializer ? builder_.getStringAttr(name) : nullptr);
  value.value = constant.getResult();
  return value.value;
}

mlir::FailureOr<mlir::Attribute> Importer::ConvertAttribute(
    const onnx::NodeProto& node, const onnx::AttributeProto& attribute) {
  switch (attribute.type()) {
    case onnx::AttributeProto::INT:
      return mlir::Attribute(builder_.getI64IntegerAttr(attribute.i()));
    case onnx::AttributeProto::FLOAT:
      return mlir::Attribute(builder_.getF32FloatAttr(attribute.f()));
    case onnx::AttributeProto::STRING:
      return mlir::Attribute(builder_.getStringAttr(attribute.s()));
    case onnx::AttributeProto::INTS: {
      std::vector<int64_t> ints(attribute.ints().begin(),
                                attribute.ints().end());
      return mlir::Attribute(builder_.getI64ArrayAttr(ints));
    }
    case onnx::AttributeProto::STRINGS: {
      llvm::SmallVector<mlir::Attribute> strings;
      for (const std::string& s : attribute.strings()) {
        strings.push_back(builder_.getStringAttr(s));
      }
      return mlir::Attribute(builder_.getArrayAttr(strings));
    }
    case onnx::AttributeProto::FLOATS: {
      std::vector<float> floats(attribute.floats().begin(),
                                attribute.floats().end());
      return mlir::Attribute(builder_.getF32ArrayAttr(floats));
    }
    default:
      return Error(node) << "attribute '" << attribute.name()
                         << "' has an unsupported type";
  }
}

mlir::LogicalResult Importer::CopyAttributes(
    const onnx::NodeProto& node, llvm::ArrayRef<llvm::StringRef> allowed,
    OpSpec& spec) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    // Opset 6's `broadcast` flag: broadcasting a suffix-shaped operand is
    // numpy broadcasting (its `axis` form is refused as unknown below).
    if (opset_ < 7 && attribute.name() == "broadcast") continue;
    // Opset 6's batch normalization and dropout mark inference by is_test.
    if (opset_ < 7 && attribute.name() == "is_test") continue;
    bool known = false;
    for (llvm::StringRef name : allowed) known |= name == attribute.name();
    if (!known) {
      return Error(node) << "attribute '" << attribute.name()
                         << "' is not supported";
    }
    auto converted = ConvertAttribute(node, attribute);
    if (mlir::failed(converted)) return mlir::failure();
    spec.attributes.set(attribute.name(), *converted);
  }
  return mlir::success();
}

mlir::FailureOr<std::optional<std::vector<int64_t>>> Importer::IntegersInput(
    const onnx::NodeProto& node, int index, llvm::StringRef name) {
  auto constant = ConstantInput(node, index, name);
  if (mlir::failed(constant)) return mlir::failure();
  if (*constant == nullptr) return std::optional<std::vector<int64_t>>();
  std::optional<std::vector<int64_t>> ints = Integers(**constant);
  if (!ints) {
    return Error(node) << "input " << index << " (" << name
                       << ") must hold integers";
  }
  return ints;
}

mlir::LogicalResult Importer::IntegersInputAsAttr(const onnx::NodeProto& node,
                                                  int index,
                                                  llvm::StringRef name,
                                                  OpSpec& spec) {
  auto ints = IntegersInput(node, index, name);
  if (mlir::failed(ints)) return mlir::failure();
  if (*ints) spec.attributes.set(name, builder_.getI64ArrayAttr(**ints));
  return mlir::success();
}

mlir::LogicalResult Importer::IntegerInputAsAttr(const onnx::NodeProto& node,
                                                 int index,
                                                 llvm::StringRef name,
                                                 OpSpec& spec) {
  auto ints = IntegersInput(node, index, name);
  if (mlir::failed(ints)) return mlir::failure();
  if (!*ints) return mlir::success();  // Optional, absent.
  if ((*ints)->size() != 1) {
    return Error(node) << "input " << index << " (" << name
                       << ") must be one integer";
  }
  spec.attributes.set(name, builder_.getI64IntegerAttr((*ints)->front()));
  return mlir::success();
}

mlir::LogicalResult Importer::FloatsInputAsAttr(const onnx::NodeProto& node,
                                                int index, llvm::StringRef name,
                                                OpSpec& spec) {
  auto constant = ConstantInput(node, index, name);
  if (mlir::failed(constant)) return mlir::failure();
  if (*constant == nullptr) return mlir::success();
  std::optional<std::vector<float>> floats = Floats(**constant);
  if (!floats) {
    return Error(node) << "input " << index << " (" << name
                       << ") must hold floating-point numbers";
  }
  spec.attributes.set(name, builder_.getF32ArrayAttr(*floats));
  return mlir::success();
}

mlir::LogicalResult Importer::ScalarInputAsAttr(const onnx::NodeProto& node,
                                                int index, llvm::StringRef name,
                                                OpSpec& spec) {
  auto constant = ConstantInput(node, index, name);
  if (mlir::failed(constant)) return mlir::failure();
  if (*constant == nullptr) return mlir::success();
  std::optional<double> scalar = Scalar(**constant);
  if (!scalar) {
    return Error(node) << "input " << index << " (" << name
                       << ") must be one number";
  }
  spec.attributes.set(name, builder_.getF32FloatAttr(*scalar));
  return mlir::success();
}

mlir::FailureOr<std::vector<GraphValue>> Importer::Build(
    const onnx::NodeProto& node, const OpSpec& spec) {
  std::vector<GraphValue*> operands;
  bool all_constant = true;
  for (const std::string& name : spec.operands) {
    auto it = values_.find(name);
    operands.push_back(&it->second);
    all_constant &= it->second.constant != nullptr;
  }
  mlir::DictionaryAttr attributes = spec.attributes.getDictionary(context_);
  std::vector<GraphValue> results(spec.num_results);
  // The shape and size of a value whose type is static are constants, as
  // if its contents were: shape arithmetic in exported models (Shape, Size,
  // Gather, Concat into Reshape) then folds to the attributes ops need.
  if (!all_constant && operands.size() == 1 &&
      (spec.op_name == "nn.shape" || spec.op_name == "nn.size")) {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(
        operands[0]->value ? operands[0]->value.getType() : mlir::Type());
    if (type && type.hasStaticShape()) {
      std::vector<int64_t> dims(type.getShape().begin(), type.getShape().end());
      int64_t count = 1;
      for (int64_t d : dims) count *= d;
      std::vector<int64_t> values = {count};
      std::vector<int64_t> shape;  // Of the result: 0-d for nn.size.
      if (spec.op_name == "nn.shape") {
        const int64_t rank = static_cast<int64_t>(dims.size());
        auto clamp = [rank](int64_t v) {
          return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
        };
        auto integer = [&](llvm::StringRef name, int64_t fallback) {
          auto attr = attributes.getAs<mlir::IntegerAttr>(name);
          return attr ? attr.getInt() : fallback;
        };
        const int64_t start = clamp(integer("start", 0));
        const int64_t end = std::max(start, clamp(integer("end", rank)));
        values.assign(dims.begin() + start, dims.begin() + end);
        shape = {end - start};
      }
      auto folded = std::make_shared<ConstTensor>();
      folded->dtype = DType::kI64;
      folded->dims = shape;
      folded->bytes.resize(values.size() * sizeof(int64_t));
      std::memcpy(folded->bytes.data(), values.data(), folded->bytes.size());
      results[0].constant = std::move(folded);
      return results;
    }
  }
  if (all_constant) {
    OpAttrs attrs;
    for (mlir::NamedAttribute attribute : attributes) {
      if (mlir::failed(nn::AddOpAttr(attribute.getName(), attribute.getValue(),
                                     attrs))) {
        return Error(node) << "attribute '" << attribute.getName().str()
                           << "' has no runtime form";
      }
    }
    std::vector<const ConstTensor*> constants;
    for (GraphValue* operand : operands) {
      constants.push_back(operand->constant.get());
    }
    auto evaluated =
        evaluator_.Evaluate(spec.op_name, constants, attrs, spec.num_results);
    if (!evaluated.ok()) {
      return Error(node) << std::string(evaluated.status().message());
    }
    for (unsigned i = 0; i < spec.num_results; ++i) {
      results[i].constant =
          std::make_shared<ConstTensor>(std::move((*evaluated)[i]));
    }
    return results;
  }
  llvm::SmallVector<mlir::Value> values;
  for (size_t i = 0; i < operands.size(); ++i) {
    values.push_back(Materialize(spec.operands[i], *operands[i]));
  }
  std::string error;
  auto types = nn::InferResultTypes(context_, spec.op_name,
                                    mlir::ValueRange(values).getTypes(),
                                    attributes, spec.num_results, error);
  if (mlir::failed(types)) return Error(node) << error;
  mlir::OperationState state(NodeLoc(node), spec.op_name);
  state.addOperands(values);
  state.addAttributes(attributes.getValue());
  state.addTypes(*types);
  mlir::Operation* op = builder_.create(state);
  for (unsigned i = 0; i < spec.num_results; ++i) {
    results[i].value = op->getResult(i);
  }
  return results;
}

mlir::LogicalResult Importer::ImportNode(const onnx::NodeProto& node) {
  if (!node.domain().empty() && node.domain() != "ai.onnx") {
    return Error(node) << "ops of domain '" << node.domain()
                       << "' are not supported";
  }
  for (int i = 0; i < node.input_size(); ++i) {
    if (!node.input(i).empty() && !values_.count(node.input(i))) {
      return Error(node) << "input '" << node.input(i)
                         << "' is not defined before the node (a dangling "
                            "name or a cycle)";
    }
  }
  for (const std::string& output : node.output()) {
    if (!output.empty() && values_.count(output)) {
      return Error(node) << "output '" << output << "' is defined twice";
    }
  }

  std::vector<GraphValue> results;
  if (node.op_type() == "Constant" || node.op_type() == "ConstantOfShape") {
    mlir::FailureOr<GraphValue> value = ImportConstantNode(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "Range") {
    mlir::FailureOr<GraphValue> value = ImportRange(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "Dropout") {
    auto values = ImportDropout(node);
    if (mlir::failed(values)) return mlir::failure();
    results = *std::move(values);
  } else if (node.op_type() == "Pow") {
    mlir::FailureOr<GraphValue> value = ImportPow(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "RNN" || node.op_type() == "GRU" ||
             node.op_type() == "LSTM") {
    auto values = ImportRecurrent(node);
    if (mlir::failed(values)) return mlir::failure();
    results = *std::move(values);
  } else if (node.op_type() == "Gelu") {
    mlir::FailureOr<GraphValue> value = ImportGelu(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "If" || node.op_type() == "Loop" ||
             node.op_type() == "Scan") {
    auto values = node.op_type() == "If"     ? ImportIf(node)
                  : node.op_type() == "Loop" ? ImportLoop(node)
                                             : ImportScan(node);
    if (mlir::failed(values)) return mlir::failure();
    results = *std::move(values);
  } else if (node.op_type() == "OneHot") {
    mlir::FailureOr<GraphValue> value = ImportOneHot(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "QLinearMatMul" ||
             node.op_type() == "QLinearConv" ||
             node.op_type() == "MatMulInteger" ||
             node.op_type() == "ConvInteger") {
    mlir::FailureOr<GraphValue> value = ImportQuantizedProduct(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "MaxPool" &&
             (InputDType(node, 0) == DType::kI8 ||
              InputDType(node, 0) == DType::kUI8)) {
    mlir::FailureOr<GraphValue> value =
        ImportIntegerMaxPool(node, *InputDType(node, 0));
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "MeanVarianceNormalization") {
    mlir::FailureOr<GraphValue> value = ImportMeanVarianceNormalization(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "GroupNormalization") {
    mlir::FailureOr<GraphValue> value = ImportGroupNormalization(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else if (node.op_type() == "SoftmaxCrossEntropyLoss") {
    auto values = ImportSoftmaxCrossEntropyLoss(node);
    if (mlir::failed(values)) return mlir::failure();
    results = *std::move(values);
  } else if (node.op_type() == "Sum" || node.op_type() == "Max" ||
             node.op_type() == "Min" || node.op_type() == "Mean") {
    mlir::FailureOr<GraphValue> value = ImportVariadic(node);
    if (mlir::failed(value)) return mlir::failure();
    results.push_back(*std::move(value));
  } else {
    OpSpec spec;
    if (mlir::failed(Translate(node, spec))) return mlir::failure();
    if (spec.op_name == "nn.identity" && !spec.operands.empty()) {
      results.push_back(values_[spec.operands[0]]);  // An alias.
    } else {
      auto built = Build(node, spec);
      if (mlir::failed(built)) return mlir::failure();
      results = *std::move(built);
    }
  }
  for (int i = 0;
       i < node.output_size() && i < static_cast<int>(results.size()); ++i) {
    if (node.output(i).empty()) continue;
    GraphValue value = results[i];
    value.initializer = false;
    values_[node.output(i)] = std::move(value);
  }
  return mlir::success();
}

}  // namespace onnx_internal

mlir::OwningOpRef<mlir::ModuleOp> ImportOnnxModel(
    llvm::StringRef bytes, llvm::StringRef file_name,
    mlir::MLIRContext* context, const OnnxImportOptions& options) {
  onnx_internal::Importer importer(context, file_name, options);
  return importer.Import(bytes);
}

}  // namespace asyncrt
