// The ONNX importer (see asyncrt/compiler/onnx_importer.h).
#include "asyncrt/compiler/onnx_importer.h"

#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/compiler/onnx_tensors.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/dtype.h"
#include "compiler/onnx/onnx_tensor_util.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "onnx/onnx_pb.h"

namespace asyncrt {
namespace {

using onnx_internal::CheckedElements;
using onnx_internal::ConstTensor;
using onnx_internal::DTypeOfOnnx;
using onnx_internal::OnnxTypeName;
using onnx_internal::ReadTensorProto;

// Graph inputs and constants larger than this many elements become dense
// resources (stored once as bytes); smaller ones stay inline and readable.
constexpr int64_t kInlineConstantElements = 16;
// A named value of the graph: an SSA value, a constant, or both once the
// constant has been materialized as an nn.constant.
struct GraphValue {
  mlir::Value value;
  std::shared_ptr<const ConstTensor> constant;
  bool initializer = false;
};

// The integers of a constant of integer dtype.
std::optional<std::vector<int64_t>> Integers(const ConstTensor& tensor) {
  std::vector<int64_t> values(tensor.NumElements());
  for (size_t i = 0; i < values.size(); ++i) {
    switch (tensor.dtype) {
      case DType::kI64:
        std::memcpy(&values[i], &tensor.bytes[i * 8], 8);
        break;
      case DType::kI32: {
        int32_t v;
        std::memcpy(&v, &tensor.bytes[i * 4], 4);
        values[i] = v;
        break;
      }
      default:
        return std::nullopt;
    }
  }
  return values;
}

// The value of a one-element constant as a double (f32, f64, integers).
std::optional<double> Scalar(const ConstTensor& tensor) {
  if (tensor.NumElements() != 1) return std::nullopt;
  switch (tensor.dtype) {
    case DType::kF32: {
      float v;
      std::memcpy(&v, tensor.bytes.data(), 4);
      return v;
    }
    case DType::kF64: {
      double v;
      std::memcpy(&v, tensor.bytes.data(), 8);
      return v;
    }
    default:
      if (auto ints = Integers(tensor)) return static_cast<double>((*ints)[0]);
      return std::nullopt;
  }
}

// The values of a constant of f32 or f64 dtype.
std::optional<std::vector<float>> Floats(const ConstTensor& tensor) {
  std::vector<float> values(tensor.NumElements());
  for (size_t i = 0; i < values.size(); ++i) {
    if (tensor.dtype == DType::kF32) {
      std::memcpy(&values[i], &tensor.bytes[i * 4], 4);
    } else if (tensor.dtype == DType::kF64) {
      double v;
      std::memcpy(&v, &tensor.bytes[i * 8], 8);
      values[i] = static_cast<float>(v);
    } else {
      return std::nullopt;
    }
  }
  return values;
}

// Evaluates runtime ops on constants: the importer's constant folding runs
// the very ops that run the model. Created on first use.
class ConstantEvaluator {
 public:
  absl::StatusOr<std::vector<ConstTensor>> Evaluate(
      llvm::StringRef op_name, const std::vector<const ConstTensor*>& operands,
      const OpAttrs& attrs, unsigned num_results) {
    if (!runtime_) {
      RuntimeOptions options;
      options.work_queue = "mstd:1";
      auto runtime = Runtime::Create(options);
      if (!runtime.ok()) return runtime.status();
      runtime_ = *std::move(runtime);
      auto exec_ctx = runtime_->CreateExecutionContext();
      if (!exec_ctx.ok()) return exec_ctx.status();
      exec_ctx_.emplace(*std::move(exec_ctx));
    }
    CoreRuntime& core = runtime_->core_runtime();
    std::vector<TensorHandle> handles;
    for (const ConstTensor* operand : operands) {
      TensorMetadata metadata(operand->dtype, operand->dims);
      auto tensor = DenseHostTensor::CreateUninitialized(
          metadata, *runtime_->host().allocator());
      if (!tensor) return absl::ResourceExhaustedError("out of memory");
      if (!operand->bytes.empty()) {
        std::memcpy(tensor->data(), operand->bytes.data(),
                    operand->bytes.size());
      }
      handles.push_back(core.MakeTensorHandle(std::move(*tensor)));
    }
    std::vector<TensorHandle> results(num_results);
    core.Execute(*exec_ctx_, absl::string_view(op_name.data(), op_name.size()),
                 core.GetOpHandler("cpu"), absl::MakeSpan(handles),
                 attrs.Freeze(), absl::MakeSpan(results), nullptr);
    std::vector<ConstTensor> constants;
    for (TensorHandle& result : results) {
      const Tensor* tensor = core.Await(result);
      if (tensor == nullptr) return *result.GetErrorIfPresent();
      if (tensor->tensor_type() != DenseHostTensorType()) {
        return absl::InternalError("the op gave a tensor that is not dense");
      }
      const auto& dense = static_cast<const DenseHostTensor&>(*tensor);
      ConstTensor constant;
      constant.dtype = dense.dtype();
      auto dims = dense.shape().GetDimensions();
      constant.dims.assign(dims.begin(), dims.end());
      const char* data = static_cast<const char*>(dense.data());
      constant.bytes.assign(
          data, data + dense.NumElements() * DTypeSize(dense.dtype()));
      constants.push_back(std::move(constant));
    }
    return constants;
  }

 private:
  std::unique_ptr<Runtime> runtime_;
  std::optional<ExecutionContext> exec_ctx_;
};

class Importer {
 public:
  Importer(mlir::MLIRContext* context, llvm::StringRef file_name,
           const OnnxImportOptions& options)
      : context_(context),
        builder_(context),
        file_(mlir::FileLineColLoc::get(context, file_name, 0, 0)),
        options_(options) {}

  mlir::OwningOpRef<mlir::ModuleOp> Import(llvm::StringRef bytes);

 private:
  // One node's translation: the runtime op, its operands (graph value
  // names) and attributes.
  struct OpSpec {
    std::string op_name;
    std::vector<std::string> operands;
    mlir::NamedAttrList attributes;
    unsigned num_results = 1;
  };

  mlir::LogicalResult ImportGraph(const onnx::GraphProto& graph);
  mlir::LogicalResult ImportNode(const onnx::NodeProto& node);
  // Translates `node` into `spec`, or emits an error.
  mlir::LogicalResult Translate(const onnx::NodeProto& node, OpSpec& spec);
  // Emits or evaluates `spec`; the SSA values or constants of its results.
  mlir::FailureOr<std::vector<GraphValue>> Build(const onnx::NodeProto& node,
                                                 const OpSpec& spec);
  // Sum, Max, Min or Mean of one or more inputs (numpy broadcasting): a
  // chain of binary ops, then, for Mean, a division by the count.
  mlir::FailureOr<GraphValue> ImportVariadic(const onnx::NodeProto& node);
  // Makes `value` known under a new name no graph value has (for values
  // between the ops of one node).
  std::string AddTemporary(GraphValue value);

  mlir::InFlightDiagnostic Error(const onnx::NodeProto& node) {
    return mlir::emitError(NodeLoc(node))
           << "node '" << NodeName(node) << "' (" << node.op_type() << "): ";
  }
  static std::string NodeName(const onnx::NodeProto& node) {
    if (!node.name().empty()) return node.name();
    return node.output_size() > 0 ? node.output(0) : node.op_type();
  }
  mlir::Location NodeLoc(const onnx::NodeProto& node) {
    return mlir::NameLoc::get(builder_.getStringAttr(NodeName(node)), file_);
  }

  // The value named by input `index` of `node`; null for a missing
  // optional input ("" or past the end).
  const GraphValue* Input(const onnx::NodeProto& node, int index) const {
    if (index >= node.input_size() || node.input(index).empty()) {
      return nullptr;
    }
    auto it = values_.find(node.input(index));
    return it == values_.end() ? nullptr : &it->second;
  }
  // Input `index` as a constant for an attribute; an error if it is not
  // constant at import time.
  mlir::FailureOr<const ConstTensor*> ConstantInput(const onnx::NodeProto& node,
                                                    int index,
                                                    llvm::StringRef what) {
    const GraphValue* value = Input(node, index);
    if (value == nullptr) return static_cast<const ConstTensor*>(nullptr);
    if (!value->constant) {
      return Error(node) << "input " << index << " (" << what
                         << ") must be a constant at compile time";
    }
    return value->constant.get();
  }
  // ConstantInput as integers, stored as attribute `name`.
  mlir::LogicalResult IntegersInputAsAttr(const onnx::NodeProto& node,
                                          int index, llvm::StringRef name,
                                          OpSpec& spec);
  // ConstantInput as f32 values, stored as attribute `name`.
  mlir::LogicalResult FloatsInputAsAttr(const onnx::NodeProto& node,
                                        int index, llvm::StringRef name,
                                        OpSpec& spec);
  // ConstantInput as a float scalar, stored as attribute `name`.
  mlir::LogicalResult ScalarInputAsAttr(const onnx::NodeProto& node, int index,
                                        llvm::StringRef name, OpSpec& spec);

  // The integer attribute `name` of `spec` (copied from `node`), or
  // `fallback` when absent; an error naming the node when it is not an
  // integer (a malformed model).
  mlir::FailureOr<int64_t> IntegerAttribute(const onnx::NodeProto& node,
                                            const OpSpec& spec,
                                            llvm::StringRef name,
                                            int64_t fallback) {
    mlir::Attribute attribute = spec.attributes.get(name);
    if (!attribute) return fallback;
    if (auto integer = mlir::dyn_cast<mlir::IntegerAttr>(attribute)) {
      return integer.getInt();
    }
    return Error(node) << "attribute '" << name << "' is not an integer";
  }

  // Copies the node's attributes named in `allowed` into `spec` (renamed
  // per `renames`); any other attribute is an error (it could change the
  // op's meaning).
  mlir::LogicalResult CopyAttributes(
      const onnx::NodeProto& node,
      std::initializer_list<llvm::StringRef> allowed, OpSpec& spec);
  mlir::FailureOr<mlir::Attribute> ConvertAttribute(
      const onnx::NodeProto& node, const onnx::AttributeProto& attribute);

  // The SSA value of `value`, materializing its constant on first use.
  mlir::Value Materialize(const std::string& name, GraphValue& value);
  mlir::Type TensorType(const ConstTensor& tensor) {
    return mlir::RankedTensorType::get(tensor.dims,
                                       nn::MlirTypeOf(tensor.dtype, context_));
  }

  mlir::MLIRContext* context_;
  mlir::OpBuilder builder_;
  mlir::Location file_;
  OnnxImportOptions options_;
  int64_t opset_ = 0;
  llvm::StringMap<GraphValue> values_;
  ConstantEvaluator evaluator_;
  int resource_counter_ = 0;
  int next_temporary_ = 0;  // AddTemporary's.
};

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
  if (opset_ < kMinOnnxOpset || opset_ > kMaxOnnxOpset) {
    mlir::emitError(file_) << "unsupported ONNX opset " << opset_
                           << " (supported: " << kMinOnnxOpset << " to "
                           << kMaxOnnxOpset << ")";
    return nullptr;
  }
  context_->loadDialect<nn::NNDialect, mlir::func::FuncDialect>();
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(file_);
  builder_.setInsertionPointToEnd(module->getBody());
  if (mlir::failed(ImportGraph(model.graph()))) return nullptr;
  if (mlir::failed(mlir::verify(*module))) return nullptr;
  return module;
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
  if (tensor.NumElements() > kInlineConstantElements) {
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
    const onnx::NodeProto& node, std::initializer_list<llvm::StringRef> allowed,
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

mlir::LogicalResult Importer::IntegersInputAsAttr(const onnx::NodeProto& node,
                                                  int index,
                                                  llvm::StringRef name,
                                                  OpSpec& spec) {
  auto constant = ConstantInput(node, index, name);
  if (mlir::failed(constant)) return mlir::failure();
  if (*constant == nullptr) return mlir::success();  // Optional, absent.
  std::optional<std::vector<int64_t>> ints = Integers(**constant);
  if (!ints) {
    return Error(node) << "input " << index << " (" << name
                       << ") must hold integers";
  }
  spec.attributes.set(name, builder_.getI64ArrayAttr(*ints));
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

// ONNX op type -> runtime op for ops that translate one to one, with the
// attributes each may carry.
struct DirectOp {
  const char* onnx_name;
  const char* op_name;
  std::initializer_list<llvm::StringRef> attributes;
};

const DirectOp kDirectOps[] = {
    {"Add", "nn.add", {}},
    {"Sub", "nn.sub", {}},
    {"Mul", "nn.mul", {}},
    {"Div", "nn.div", {}},
    {"Pow", "nn.pow", {}},
    {"MatMul", "nn.matmul", {}},
    {"Relu", "nn.relu", {}},
    {"Sigmoid", "nn.sigmoid", {}},
    {"Tanh", "nn.tanh", {}},
    {"Erf", "nn.erf", {}},
    {"Exp", "nn.exp", {}},
    {"Log", "nn.log", {}},
    {"Sqrt", "nn.sqrt", {}},
    {"Neg", "nn.neg", {}},
    {"Abs", "nn.abs", {}},
    {"LeakyRelu", "nn.leaky_relu", {"alpha"}},
    {"HardSigmoid", "nn.hard_sigmoid", {"alpha", "beta"}},
    {"HardSwish", "nn.hard_swish", {}},
    {"Conv",
     "nn.conv",
     {"auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"}},
    {"ConvTranspose",
     "nn.conv_transpose",
     {"auto_pad", "dilations", "group", "kernel_shape", "output_padding",
      "output_shape", "pads", "strides"}},
    {"Gemm", "nn.gemm", {"alpha", "beta", "transA", "transB"}},
    {"GlobalAveragePool", "nn.global_average_pool", {}},
    {"Flatten", "nn.flatten", {"axis"}},
    {"Transpose", "nn.transpose", {"perm"}},
    {"Concat", "nn.concat", {"axis"}},
    {"Gather", "nn.gather", {"axis"}},
    {"Where", "nn.where", {}},
    {"ReduceMean", "nn.reduce_mean", {"axes", "keepdims"}},
    {"ReduceMax", "nn.reduce_max", {"axes", "keepdims"}},
    {"Shape", "nn.shape", {"start", "end"}},
};

mlir::LogicalResult Importer::Translate(const onnx::NodeProto& node,
                                        OpSpec& spec) {
  const std::string& type = node.op_type();
  auto take_inputs = [&](int count) {
    for (int i = 0; i < std::min(count, node.input_size()); ++i) {
      if (!node.input(i).empty()) spec.operands.push_back(node.input(i));
    }
  };
  for (const DirectOp& direct : kDirectOps) {
    if (type != direct.onnx_name) continue;
    spec.op_name = direct.op_name;
    take_inputs(node.input_size());
    return CopyAttributes(node, direct.attributes, spec);
  }
  if (type == "Softmax" || type == "LogSoftmax") {
    spec.op_name = type == "Softmax" ? "nn.softmax" : "nn.log_softmax";
    take_inputs(1);
    if (mlir::failed(CopyAttributes(node, {"axis"}, spec))) {
      return mlir::failure();
    }
    // Before opset 13 the input is coerced to a matrix at `axis` (default
    // 1); that equals softmax along the last axis only when `axis` is it.
    if (opset_ < 13) {
      const GraphValue* x = Input(node, 0);
      int64_t rank = -1;
      if (x && x->value) {
        rank = mlir::cast<mlir::RankedTensorType>(x->value.getType()).getRank();
      } else if (x && x->constant) {
        rank = x->constant->dims.size();
      }
      mlir::FailureOr<int64_t> axis_attr =
          IntegerAttribute(node, spec, "axis", 1);
      if (mlir::failed(axis_attr)) return mlir::failure();
      int64_t axis = *axis_attr;
      if (axis < 0) axis += rank;
      if (axis != rank - 1) {
        return Error(node) << "opset " << opset_ << " softmax over dimensions ["
                           << axis << ", rank) is not supported";
      }
      spec.attributes.set("axis", builder_.getI64IntegerAttr(-1));
    }
    return mlir::success();
  }
  if (type == "Identity" || type == "Dropout") {
    spec.op_name = "nn.identity";
    take_inputs(1);
    if (type == "Dropout") {
      if (node.output_size() > 1 && !node.output(1).empty()) {
        return Error(node) << "the mask output is not supported";
      }
      if (node.input_size() > 2 && !node.input(2).empty()) {
        auto training = ConstantInput(node, 2, "training_mode");
        if (mlir::failed(training)) return mlir::failure();
        if (Scalar(**training).value_or(1) != 0) {
          return Error(node) << "training mode is not supported";
        }
      }
      return CopyAttributes(node, {"seed", "is_test", "ratio"}, spec);
    }
    return CopyAttributes(node, {}, spec);
  }
  if (type == "Clip") {
    spec.op_name = "nn.clip";
    take_inputs(1);
    if (opset_ < 11) return CopyAttributes(node, {"min", "max"}, spec);
    if (mlir::failed(ScalarInputAsAttr(node, 1, "min", spec)) ||
        mlir::failed(ScalarInputAsAttr(node, 2, "max", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {}, spec);
  }
  if (type == "MaxPool" || type == "AveragePool") {
    if (node.output_size() > 1 && !node.output(1).empty()) {
      return Error(node) << "the indices output is not supported";
    }
    spec.op_name = type == "MaxPool" ? "nn.max_pool" : "nn.average_pool";
    take_inputs(1);
    if (type == "MaxPool") {
      return CopyAttributes(node,
                            {"auto_pad", "ceil_mode", "dilations",
                             "kernel_shape", "pads", "strides"},
                            spec);
    }
    return CopyAttributes(node,
                          {"auto_pad", "ceil_mode", "count_include_pad",
                           "kernel_shape", "pads", "strides"},
                          spec);
  }
  if (type == "BatchNormalization") {
    for (int i = 1; i < node.output_size(); ++i) {
      if (!node.output(i).empty()) {
        return Error(node) << "training outputs are not supported";
      }
    }
    spec.op_name = "nn.batch_normalization";
    take_inputs(5);
    if (mlir::failed(CopyAttributes(
            node, {"epsilon", "momentum", "training_mode", "spatial"}, spec))) {
      return mlir::failure();
    }
    mlir::FailureOr<int64_t> training =
        IntegerAttribute(node, spec, "training_mode", 0);
    mlir::FailureOr<int64_t> spatial =
        IntegerAttribute(node, spec, "spatial", 1);
    if (mlir::failed(training) || mlir::failed(spatial)) {
      return mlir::failure();
    }
    if (*training != 0) {
      return Error(node) << "training mode is not supported";
    }
    if (*spatial != 1) {
      return Error(node) << "spatial = 0 is not supported";
    }
    spec.attributes.erase("momentum");
    spec.attributes.erase("training_mode");
    spec.attributes.erase("spatial");
    return mlir::success();
  }
  if (type == "LayerNormalization") {
    if (node.output_size() > 3) return Error(node) << "has at most 3 outputs";
    // With the Mean or InvStdDev output, the op computes both.
    for (int i = 1; i < node.output_size(); ++i) {
      if (!node.output(i).empty()) spec.num_results = 3;
    }
    spec.op_name = "nn.layer_normalization";
    take_inputs(3);
    if (mlir::failed(
            CopyAttributes(node, {"axis", "epsilon", "stash_type"}, spec))) {
      return mlir::failure();
    }
    spec.attributes.erase("stash_type");  // We always accumulate in double.
    return mlir::success();
  }
  if (type == "ReduceSum") {
    spec.op_name = "nn.reduce_sum";
    take_inputs(1);
    if (opset_ < 13) return CopyAttributes(node, {"axes", "keepdims"}, spec);
    if (mlir::failed(IntegersInputAsAttr(node, 1, "axes", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {"keepdims", "noop_with_empty_axes"}, spec);
  }
  if (type == "Reshape") {
    spec.op_name = "nn.reshape";
    take_inputs(1);
    if (node.input_size() < 2) return Error(node) << "no shape input";
    if (mlir::failed(IntegersInputAsAttr(node, 1, "shape", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {"allowzero"}, spec);
  }
  if (type == "Squeeze" || type == "Unsqueeze") {
    spec.op_name = type == "Squeeze" ? "nn.squeeze" : "nn.unsqueeze";
    take_inputs(1);
    if (opset_ < 13) return CopyAttributes(node, {"axes"}, spec);
    if (mlir::failed(IntegersInputAsAttr(node, 1, "axes", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {}, spec);
  }
  if (type == "Expand") {
    spec.op_name = "nn.expand";
    take_inputs(1);
    if (mlir::failed(IntegersInputAsAttr(node, 1, "shape", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {}, spec);
  }
  if (type == "Split") {
    spec.op_name = "nn.split";
    spec.num_results = node.output_size();
    take_inputs(1);
    if (opset_ < 13) return CopyAttributes(node, {"axis", "split"}, spec);
    if (mlir::failed(IntegersInputAsAttr(node, 1, "split", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {"axis"}, spec);
  }
  if (type == "Slice") {
    spec.op_name = "nn.slice";
    take_inputs(1);
    if (opset_ < 10) {
      return CopyAttributes(node, {"starts", "ends", "axes"}, spec);
    }
    const char* names[] = {"starts", "ends", "axes", "steps"};
    for (int i = 0; i < 4; ++i) {
      if (mlir::failed(IntegersInputAsAttr(node, i + 1, names[i], spec))) {
        return mlir::failure();
      }
    }
    return CopyAttributes(node, {}, spec);
  }
  if (type == "Pad") {
    spec.op_name = "nn.pad";
    take_inputs(1);
    if (opset_ < 11)
      return CopyAttributes(node, {"mode", "pads", "value"}, spec);
    if (node.input_size() > 3 && !node.input(3).empty()) {
      return Error(node) << "the axes input is not supported";
    }
    if (mlir::failed(IntegersInputAsAttr(node, 1, "pads", spec)) ||
        mlir::failed(ScalarInputAsAttr(node, 2, "value", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {"mode"}, spec);
  }
  if (type == "Resize" || type == "Upsample") {
    spec.op_name = "nn.resize";
    take_inputs(1);
    if (type == "Resize" && opset_ >= 11) {
      // X, roi, scales, sizes; roi only matters for tf_crop_and_resize,
      // which the runtime op rejects.
      if (mlir::failed(FloatsInputAsAttr(node, 2, "scales", spec)) ||
          mlir::failed(IntegersInputAsAttr(node, 3, "sizes", spec))) {
        return mlir::failure();
      }
      return CopyAttributes(node,
                            {"mode", "coordinate_transformation_mode",
                             "nearest_mode", "cubic_coeff_a",
                             "exclude_outside", "extrapolation_value"},
                            spec);
    }
    // Resize 10 and Upsample: scales (an input from opset 9, else an
    // attribute), indices x / scale rounded down.
    spec.attributes.set("coordinate_transformation_mode",
                        builder_.getStringAttr("asymmetric"));
    spec.attributes.set("nearest_mode", builder_.getStringAttr("floor"));
    if (opset_ >= 9 &&
        mlir::failed(FloatsInputAsAttr(node, 1, "scales", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {"mode", "scales"}, spec);
  }
  if (type == "Cast") {
    spec.op_name = "nn.cast";
    take_inputs(1);
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.name() != "to") {
        return Error(node) << "attribute '" << attribute.name()
                           << "' is not supported";
      }
      std::optional<DType> to = DTypeOfOnnx(attribute.i());
      if (!to) {
        return Error(node) << "cast to unsupported dtype "
                           << OnnxTypeName(attribute.i());
      }
      spec.attributes.set("to",
                          mlir::TypeAttr::get(nn::MlirTypeOf(*to, context_)));
    }
    if (!spec.attributes.get("to")) return Error(node) << "no 'to' attribute";
    return mlir::success();
  }
  return Error(node) << "unsupported op";
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

std::string Importer::AddTemporary(GraphValue value) {
  // ONNX names are free-form: count up until the name is unused.
  std::string name;
  do {
    name = absl::StrCat("asyncrt_tmp_", next_temporary_++);
  } while (values_.count(name));
  values_[name] = std::move(value);
  return name;
}

mlir::FailureOr<GraphValue> Importer::ImportVariadic(
    const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  if (node.input_size() < 1) return Error(node) << "needs at least one input";
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty()) return Error(node) << "input " << i << " is empty";
  }
  if (node.attribute_size() > 0) {
    return Error(node) << "attribute '" << node.attribute(0).name()
                       << "' is not supported";
  }
  const char* op_name = type == "Max"   ? "nn.max"
                        : type == "Min" ? "nn.min"
                                        : "nn.add";
  std::vector<std::string> temporaries;
  auto result = [&]() -> mlir::FailureOr<GraphValue> {
    std::string partial = node.input(0);
    for (int i = 1; i < node.input_size(); ++i) {
      OpSpec spec;
      spec.op_name = op_name;
      spec.operands = {partial, node.input(i)};
      auto built = Build(node, spec);
      if (mlir::failed(built)) return mlir::failure();
      partial = AddTemporary((*built)[0]);
      temporaries.push_back(partial);
    }
    if (type == "Mean" && node.input_size() > 1) {
      ConstTensor count;
      count.dtype = DType::kF32;
      const float n = static_cast<float>(node.input_size());
      count.bytes.resize(sizeof(n));
      std::memcpy(count.bytes.data(), &n, sizeof(n));
      GraphValue divisor;
      divisor.constant = std::make_shared<ConstTensor>(std::move(count));
      temporaries.push_back(AddTemporary(std::move(divisor)));
      OpSpec spec;
      spec.op_name = "nn.div";
      spec.operands = {partial, temporaries.back()};
      auto built = Build(node, spec);
      if (mlir::failed(built)) return mlir::failure();
      return (*built)[0];
    }
    return values_[partial];
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return result;
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
  if (node.op_type() == "Constant") {
    if (node.attribute_size() != 1 || node.output_size() != 1) {
      return Error(node) << "expects one attribute and one output";
    }
    const onnx::AttributeProto& attribute = node.attribute(0);
    ConstTensor tensor;
    if (attribute.name() == "value") {
      absl::StatusOr<ConstTensor> read = ReadTensorProto(attribute.t());
      if (!read.ok()) {
        return Error(node) << std::string(read.status().message());
      }
      tensor = *std::move(read);
    } else if (attribute.name() == "value_float" ||
               attribute.name() == "value_floats") {
      std::vector<float> floats(attribute.floats().begin(),
                                attribute.floats().end());
      if (attribute.name() == "value_float") floats = {attribute.f()};
      tensor.dtype = DType::kF32;
      if (attribute.name() == "value_floats") {
        tensor.dims = {static_cast<int64_t>(floats.size())};
      }
      tensor.bytes.resize(floats.size() * 4);
      std::memcpy(tensor.bytes.data(), floats.data(), tensor.bytes.size());
    } else if (attribute.name() == "value_int" ||
               attribute.name() == "value_ints") {
      std::vector<int64_t> ints(attribute.ints().begin(),
                                attribute.ints().end());
      if (attribute.name() == "value_int") ints = {attribute.i()};
      tensor.dtype = DType::kI64;
      if (attribute.name() == "value_ints") {
        tensor.dims = {static_cast<int64_t>(ints.size())};
      }
      tensor.bytes.resize(ints.size() * 8);
      std::memcpy(tensor.bytes.data(), ints.data(), tensor.bytes.size());
    } else {
      return Error(node) << "attribute '" << attribute.name()
                         << "' is not supported";
    }
    GraphValue value;
    value.constant = std::make_shared<ConstTensor>(std::move(tensor));
    results.push_back(std::move(value));
  } else if (node.op_type() == "ConstantOfShape") {
    auto shape = ConstantInput(node, 0, "shape");
    if (mlir::failed(shape)) return mlir::failure();
    if (*shape == nullptr) return Error(node) << "no shape input";
    std::optional<std::vector<int64_t>> dims = Integers(**shape);
    if (!dims || !CheckedElements(*dims).ok()) {
      return Error(node) << "the shape input is not a valid shape";
    }
    ConstTensor fill;
    fill.dtype = DType::kF32;
    fill.bytes.assign(4, 0);
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.name() != "value") {
        return Error(node) << "attribute '" << attribute.name()
                           << "' is not supported";
      }
      absl::StatusOr<ConstTensor> read = ReadTensorProto(attribute.t());
      if (!read.ok() || read->NumElements() != 1) {
        return Error(node) << "'value' must be a one-element tensor";
      }
      fill = *std::move(read);
    }
    ConstTensor tensor;
    tensor.dtype = fill.dtype;
    tensor.dims = *dims;
    const int64_t count = tensor.NumElements();
    tensor.bytes.resize(count * fill.bytes.size());
    for (int64_t i = 0; i < count; ++i) {
      std::memcpy(&tensor.bytes[i * fill.bytes.size()], fill.bytes.data(),
                  fill.bytes.size());
    }
    GraphValue value;
    value.constant = std::make_shared<ConstTensor>(std::move(tensor));
    results.push_back(std::move(value));
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

}  // namespace

mlir::OwningOpRef<mlir::ModuleOp> ImportOnnxModel(
    llvm::StringRef bytes, llvm::StringRef file_name,
    mlir::MLIRContext* context, const OnnxImportOptions& options) {
  Importer importer(context, file_name, options);
  return importer.Import(bytes);
}

}  // namespace asyncrt
