// Internal to the ONNX importer: the importer's state and the helpers its
// two sources share (onnx_importer.cc: graphs, values and op emission;
// onnx_node_import.cc: what each ONNX op becomes). Not installed.
//
// An Importer imports one model on one thread; it is not thread-safe.
#ifndef ASYNCRT_COMPILER_ONNX_ONNX_IMPORTER_INTERNAL_H_
#define ASYNCRT_COMPILER_ONNX_ONNX_IMPORTER_INTERNAL_H_

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
#include "asyncrt/compiler/onnx_importer.h"
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
#include "onnx/onnx_pb.h"

namespace asyncrt::onnx_internal {

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
inline std::optional<std::vector<int64_t>> Integers(const ConstTensor& tensor) {
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

// The value of a one-element constant as a double (f32, f64, integers,
// booleans as 0 or 1).
inline std::optional<double> Scalar(const ConstTensor& tensor) {
  if (tensor.NumElements() != 1) return std::nullopt;
  switch (tensor.dtype) {
    case DType::kI1:
      return tensor.bytes[0] != 0 ? 1.0 : 0.0;
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

// A constant of i64 (or bool: 0 or 1) of `dims` holding `values`.
inline GraphValue IntegerConstant(DType dtype, std::vector<int64_t> dims,
                                  const std::vector<int64_t>& values) {
  ConstTensor tensor;
  tensor.dtype = dtype;
  tensor.dims = std::move(dims);
  for (int64_t value : values) {
    if (dtype == DType::kI1) {
      tensor.bytes.push_back(value != 0 ? 1 : 0);
    } else {
      const char* bytes = reinterpret_cast<const char*>(&value);
      tensor.bytes.insert(tensor.bytes.end(), bytes, bytes + sizeof(value));
    }
  }
  GraphValue constant;
  constant.constant = std::make_shared<ConstTensor>(std::move(tensor));
  return constant;
}

// The values of a constant of f32 or f64 dtype.
inline std::optional<std::vector<float>> Floats(const ConstTensor& tensor) {
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

// The opset at which the default domain's `op` got the definition it has
// at `opset` (libonnx's schemas, onnx_schemas.cc); nullopt for an op that
// opset does not have.
std::optional<int> OnnxOpSinceVersion(const std::string& op, int64_t opset);

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
  // For a model of opset 1 to 5: an error unless every node of the default
  // domain (in subgraphs too) is an op whose definition there is the one
  // of opset 6 (GlobalAveragePool, Softplus, Not: unchanged since opset
  // 1), so that the model imports as opset 6.
  mlir::LogicalResult CheckUnchangedSinceOpset(const onnx::GraphProto& graph);
  mlir::LogicalResult ImportNode(const onnx::NodeProto& node);
  // Translates `node` into `spec`, or emits an error.
  mlir::LogicalResult Translate(const onnx::NodeProto& node, OpSpec& spec);
  // Emits or evaluates `spec`; the SSA values or constants of its results.
  mlir::FailureOr<std::vector<GraphValue>> Build(const onnx::NodeProto& node,
                                                 const OpSpec& spec);
  // Sum, Max, Min or Mean of one or more inputs (numpy broadcasting): a
  // chain of binary ops, then, for Mean, a division by the count.
  mlir::FailureOr<GraphValue> ImportVariadic(const onnx::NodeProto& node);
  // SoftmaxCrossEntropyLoss as nn.log_softmax along the class axis, then
  // nn.negative_log_likelihood_loss: the loss and the log probabilities.
  mlir::FailureOr<std::vector<GraphValue>> ImportSoftmaxCrossEntropyLoss(
      const onnx::NodeProto& node);
  // Range of constant inputs, as a constant; an error for others (its size
  // would depend on values).
  mlir::FailureOr<GraphValue> ImportRange(const onnx::NodeProto& node);
  // Dropout at inference (or with a ratio of 0): its input and, if asked
  // for, an all-true mask; an error in training mode with a ratio above 0.
  mlir::FailureOr<std::vector<GraphValue>> ImportDropout(
      const onnx::NodeProto& node);
  // Pow, whose exponent may have another dtype than its base (the result
  // has the base's): nn.pow, the exponent cast to the base's dtype, or for
  // an integer base and a floating-point exponent, the power computed in
  // the exponent's dtype and cast back (truncating, as ONNX Runtime).
  mlir::FailureOr<GraphValue> ImportPow(const onnx::NodeProto& node);
  // RNN, GRU or LSTM as nn.rnn, nn.gru or nn.lstm: an optional input left
  // out before one given becomes its default (zeros; every sequence at
  // full length), as the runtime op only lets trailing ones be left out.
  mlir::FailureOr<std::vector<GraphValue>> ImportRecurrent(
      const onnx::NodeProto& node);
  // Gelu (opset 20): nn.gelu, or for approximate = "tanh" its tanh form
  // op by op.
  mlir::FailureOr<GraphValue> ImportGelu(const onnx::NodeProto& node);
  // GroupNormalization (opsets 18 and 21): each group of channels
  // normalized as one channel of nn.instance_normalization over the input
  // reshaped to [N, groups, rest], then scaled and shifted per channel
  // (opset 18's per-group parameters repeated over their channels).
  mlir::FailureOr<GraphValue> ImportGroupNormalization(
      const onnx::NodeProto& node);
  // OneHot: the indices (cast to i64, negative ones counted from depth)
  // compared with 0 .. depth - 1 along `axis`, then where(hot, on, off).
  // depth must be constant.
  mlir::FailureOr<GraphValue> ImportOneHot(const onnx::NodeProto& node);
  // QLinearMatMul, QLinearConv, MatMulInteger and ConvInteger
  // (onnx_quantized_import.cc): the operands dequantized, the f32 product,
  // the result quantized (QLinear*) or cast to i32.
  mlir::FailureOr<GraphValue> ImportQuantizedProduct(
      const onnx::NodeProto& node);
  // MaxPool of i8 or ui8 (`dtype`): the pooling in f32 between casts.
  mlir::FailureOr<GraphValue> ImportIntegerMaxPool(const onnx::NodeProto& node,
                                                   DType dtype);
  // Input `input` of `node` dequantized by its scale (input `scale`; -1:
  // scale 1, an integer product's) and optional zero point (input
  // `zero_point`), as BuildStep's temporary; a scale of several values
  // applies along axis rank - `axis_from_end` (nullopt: one value only).
  mlir::FailureOr<std::string> DequantizeStep(
      const onnx::NodeProto& node, int input, int scale, int zero_point,
      std::optional<int64_t> axis_from_end,
      std::vector<std::string>& temporaries);
  // MeanVarianceNormalization: (x - mean) / (standard deviation + 1e-9)
  // over `axes` (0, 2, 3 by default), op by op.
  mlir::FailureOr<GraphValue> ImportMeanVarianceNormalization(
      const onnx::NodeProto& node);
  // CenterCropPad (opset 18) as one nn.pad: each listed axis padded with
  // zeros on both sides or cropped (negative pads) to its size, centered.
  mlir::LogicalResult TranslateCenterCropPad(const onnx::NodeProto& node,
                                             OpSpec& spec);
  // QuantizeLinear and DequantizeLinear from opset 19: saturate (float8
  // only) ignored; blocked quantization refused; output_dtype (21) as a
  // zero point of zeros when the node has none.
  mlir::LogicalResult TranslateQuantizeLinear(const onnx::NodeProto& node,
                                              OpSpec& spec);
  // Resize's opset 18 attributes in `spec` made the runtime op's: axes
  // (scales or sizes for some axes) widened to every axis; antialias
  // refused where it changes the result; keep_aspect_ratio_policy
  // "stretch" only.
  mlir::LogicalResult ResizeOpset18Attributes(const onnx::NodeProto& node,
                                              OpSpec& spec);
  // One op of a node made of several: builds `op_name` on the named values
  // and records its result as a temporary (in `temporaries`, which the
  // caller erases once the node is imported); the temporary's name.
  mlir::FailureOr<std::string> BuildStep(const onnx::NodeProto& node,
                                         llvm::StringRef op_name,
                                         std::vector<std::string> operands,
                                         mlir::NamedAttrList attributes,
                                         std::vector<std::string>& temporaries);
  // A constant of `dtype` (a float dtype) holding `values`, as BuildStep's
  // temporaries.
  mlir::FailureOr<std::string> ConstantStep(
      const onnx::NodeProto& node, DType dtype, std::vector<int64_t> dims,
      const std::vector<float>& values, std::vector<std::string>& temporaries);
  // Control flow decided at compile time (onnx_control_flow.cc): If with a
  // constant condition is the branch taken; Loop (a constant trip count,
  // or a condition constant in every iteration) and Scan (its inputs'
  // static length) are their body imported once per iteration, the scan
  // outputs stacked. Their results, in the node's output order.
  mlir::FailureOr<std::vector<GraphValue>> ImportIf(
      const onnx::NodeProto& node);
  mlir::FailureOr<std::vector<GraphValue>> ImportLoop(
      const onnx::NodeProto& node);
  mlir::FailureOr<std::vector<GraphValue>> ImportScan(
      const onnx::NodeProto& node);
  // Imports `graph`, a subgraph of `node`, with its inputs bound to
  // `inputs`; its outputs. The names it defines are dropped afterwards and
  // the outer ones it shadows restored, so a body imports once per
  // iteration.
  mlir::FailureOr<std::vector<GraphValue>> ImportSubgraph(
      const onnx::NodeProto& node, const onnx::GraphProto& graph,
      const std::vector<GraphValue>& inputs);
  // `slices` (one per iteration, of one shape) stacked along a new `axis`,
  // as BuildStep's temporaries.
  mlir::FailureOr<GraphValue> Stack(const onnx::NodeProto& node,
                                    const std::vector<GraphValue>& slices,
                                    int64_t axis,
                                    std::vector<std::string>& temporaries);
  // A Constant or ConstantOfShape node's value.
  mlir::FailureOr<GraphValue> ImportConstantNode(const onnx::NodeProto& node);
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
  // The static dimensions, or the dtype, of input `index`; nullopt when
  // it is absent or not a static tensor.
  std::optional<std::vector<int64_t>> InputDims(const onnx::NodeProto& node,
                                                int index) const;
  std::optional<DType> InputDType(const onnx::NodeProto& node, int index) const;
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
  // ConstantInput as integers; nullopt when the optional input is absent.
  mlir::FailureOr<std::optional<std::vector<int64_t>>> IntegersInput(
      const onnx::NodeProto& node, int index, llvm::StringRef name);
  // ConstantInput as integers, stored as attribute `name`.
  mlir::LogicalResult IntegersInputAsAttr(const onnx::NodeProto& node,
                                          int index, llvm::StringRef name,
                                          OpSpec& spec);
  // ConstantInput as one integer (a scalar or a one-element tensor),
  // stored as the integer attribute `name`.
  mlir::LogicalResult IntegerInputAsAttr(const onnx::NodeProto& node, int index,
                                         llvm::StringRef name, OpSpec& spec);
  // ConstantInput as f32 values, stored as attribute `name`.
  mlir::LogicalResult FloatsInputAsAttr(const onnx::NodeProto& node, int index,
                                        llvm::StringRef name, OpSpec& spec);
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
  mlir::LogicalResult CopyAttributes(const onnx::NodeProto& node,
                                     llvm::ArrayRef<llvm::StringRef> allowed,
                                     OpSpec& spec);
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
  // Bounds on unrolling control flow, so that a small model cannot make
  // the import run for hours or overflow the stack.
  static constexpr int kMaxSubgraphDepth = 16;
  static constexpr int64_t kMaxUnrolledNodes = 100000;
  int subgraph_depth_ = 0;
  int64_t unrolled_nodes_ = 0;
};

}  // namespace asyncrt::onnx_internal

#endif  // ASYNCRT_COMPILER_ONNX_ONNX_IMPORTER_INTERNAL_H_
