// What each ONNX op becomes: the runtime op, its operands and attributes
// (see onnx_importer_internal.h).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "compiler/onnx/onnx_importer_internal.h"

namespace asyncrt::onnx_internal {

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
    {"Size", "nn.size", {}},
    {"Mod", "nn.mod", {"fmod"}},
    {"BitShift", "nn.bit_shift", {"direction"}},
    {"Equal", "nn.equal", {}},
    {"Less", "nn.less", {}},
    {"LessOrEqual", "nn.less_or_equal", {}},
    {"Greater", "nn.greater", {}},
    {"GreaterOrEqual", "nn.greater_or_equal", {}},
    {"And", "nn.and", {}},
    {"Or", "nn.or", {}},
    {"Xor", "nn.xor", {}},
    {"Not", "nn.not", {}},
    {"PRelu", "nn.prelu", {}},
    {"Sign", "nn.sign", {}},
    {"Floor", "nn.floor", {}},
    {"Ceil", "nn.ceil", {}},
    {"Round", "nn.round", {}},
    {"Reciprocal", "nn.reciprocal", {}},
    {"Sin", "nn.sin", {}},
    {"Cos", "nn.cos", {}},
    {"Tan", "nn.tan", {}},
    {"Asin", "nn.asin", {}},
    {"Acos", "nn.acos", {}},
    {"Atan", "nn.atan", {}},
    {"Sinh", "nn.sinh", {}},
    {"Cosh", "nn.cosh", {}},
    {"Asinh", "nn.asinh", {}},
    {"Acosh", "nn.acosh", {}},
    {"Atanh", "nn.atanh", {}},
    {"Softplus", "nn.softplus", {}},
    {"Softsign", "nn.softsign", {}},
    {"Mish", "nn.mish", {}},
    {"Elu", "nn.elu", {"alpha"}},
    {"Celu", "nn.celu", {"alpha"}},
    {"Selu", "nn.selu", {"alpha", "gamma"}},
    {"ThresholdedRelu", "nn.thresholded_relu", {"alpha"}},
    {"Shrink", "nn.shrink", {"bias", "lambd"}},
    {"InstanceNormalization", "nn.instance_normalization", {"epsilon"}},
    {"IsNaN", "nn.is_nan", {}},
    {"IsInf", "nn.is_inf", {"detect_negative", "detect_positive"}},
    // Opset 18 moves these reductions' axes into an input (Translate).
    {"ReduceMin", "nn.reduce_min", {"axes", "keepdims"}},
    {"ReduceProd", "nn.reduce_prod", {"axes", "keepdims"}},
    {"ReduceL1", "nn.reduce_l1", {"axes", "keepdims"}},
    {"ReduceL2", "nn.reduce_l2", {"axes", "keepdims"}},
    {"ReduceSumSquare", "nn.reduce_sum_square", {"axes", "keepdims"}},
    {"ReduceLogSum", "nn.reduce_log_sum", {"axes", "keepdims"}},
    {"ReduceLogSumExp", "nn.reduce_log_sum_exp", {"axes", "keepdims"}},
    {"ArgMax", "nn.arg_max", {"axis", "keepdims", "select_last_index"}},
    {"ArgMin", "nn.arg_min", {"axis", "keepdims", "select_last_index"}},
    {"GatherElements", "nn.gather_elements", {"axis"}},
    {"ScatterElements", "nn.scatter_elements", {"axis", "reduction"}},
    // Scatter (opsets 9-10) is ScatterElements under its first name.
    {"Scatter", "nn.scatter_elements", {"axis"}},
    {"GatherND", "nn.gather_nd", {"batch_dims"}},
    {"ScatterND", "nn.scatter_nd", {"reduction"}},
    {"QuantizeLinear", "nn.quantize_linear", {"axis"}},
    {"DequantizeLinear", "nn.dequantize_linear", {"axis"}},
    {"GridSample", "nn.grid_sample", {"align_corners", "mode", "padding_mode"}},
    {"LRN", "nn.lrn", {"alpha", "beta", "bias", "size"}},
    {"Einsum", "nn.einsum", {"equation"}},
    {"ReverseSequence", "nn.reverse_sequence", {"batch_axis", "time_axis"}},
    {"NegativeLogLikelihoodLoss",
     "nn.negative_log_likelihood_loss",
     {"reduction", "ignore_index"}},
    {"DepthToSpace", "nn.depth_to_space", {"blocksize", "mode"}},
    {"SpaceToDepth", "nn.space_to_depth", {"blocksize"}},
};

mlir::LogicalResult Importer::Translate(const onnx::NodeProto& node,
                                        OpSpec& spec) {
  const std::string& type = node.op_type();
  auto take_inputs = [&](int count) {
    for (int i = 0; i < std::min(count, node.input_size()); ++i) {
      if (!node.input(i).empty()) spec.operands.push_back(node.input(i));
    }
  };
  if (opset_ >= 18 && absl::StartsWith(type, "Reduce")) {
    // Every reduction's axes are an input from opset 18, as ReduceSum's
    // from 13 (below).
    for (const DirectOp& direct : kDirectOps) {
      if (type != direct.onnx_name) continue;
      spec.op_name = direct.op_name;
      take_inputs(1);
      if (mlir::failed(IntegersInputAsAttr(node, 1, "axes", spec))) {
        return mlir::failure();
      }
      return CopyAttributes(node, {"keepdims", "noop_with_empty_axes"}, spec);
    }
  }
  if (type == "AveragePool" && opset_ >= 19) {
    // Opset 19 gives average pooling dilations.
    spec.op_name = "nn.average_pool";
    take_inputs(1);
    return CopyAttributes(node,
                          {"auto_pad", "ceil_mode", "count_include_pad",
                           "dilations", "kernel_shape", "pads", "strides"},
                          spec);
  }
  if ((type == "QuantizeLinear" || type == "DequantizeLinear") &&
      opset_ >= 19) {
    return TranslateQuantizeLinear(node, spec);
  }
  if (type == "CenterCropPad") return TranslateCenterCropPad(node, spec);
  if (type == "BitwiseAnd" || type == "BitwiseOr" || type == "BitwiseXor" ||
      type == "BitwiseNot") {
    spec.op_name = type == "BitwiseAnd"   ? "nn.bitwise_and"
                   : type == "BitwiseOr"  ? "nn.bitwise_or"
                   : type == "BitwiseXor" ? "nn.bitwise_xor"
                                          : "nn.bitwise_not";
    take_inputs(node.input_size());
    return CopyAttributes(node, {}, spec);
  }
  for (const DirectOp& direct : kDirectOps) {
    if (type != direct.onnx_name) continue;
    spec.op_name = direct.op_name;
    take_inputs(node.input_size());
    return CopyAttributes(node, direct.attributes, spec);
  }
  if (type == "Softmax" || type == "LogSoftmax" || type == "Hardmax") {
    spec.op_name = type == "Softmax"   ? "nn.softmax"
                   : type == "Hardmax" ? "nn.hardmax"
                                       : "nn.log_softmax";
    take_inputs(1);
    if (mlir::failed(CopyAttributes(node, {"axis"}, spec))) {
      return mlir::failure();
    }
    // Before opset 13 the input is coerced to a matrix at `axis` (default
    // 1); that equals softmax along the last axis only when `axis` is it.
    if (opset_ < 13) {
      const std::optional<std::vector<int64_t>> dims = InputDims(node, 0);
      const int64_t rank = dims ? static_cast<int64_t>(dims->size()) : -1;
      mlir::FailureOr<int64_t> axis_attr =
          IntegerAttribute(node, spec, "axis", 1);
      if (mlir::failed(axis_attr)) return mlir::failure();
      int64_t axis = *axis_attr;
      if (axis < 0) axis += rank;
      if (axis != rank - 1) {
        return Error(node) << "opset " << opset_ << " " << type
                           << " over dimensions [" << axis
                           << ", rank) is not supported";
      }
      spec.attributes.set("axis", builder_.getI64IntegerAttr(-1));
    }
    return mlir::success();
  }
  if (type == "CumSum") {
    spec.op_name = "nn.cum_sum";
    take_inputs(1);
    if (node.input_size() < 2 || node.input(1).empty()) {
      return Error(node) << "no axis input";
    }
    if (mlir::failed(IntegerInputAsAttr(node, 1, "axis", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {"exclusive", "reverse"}, spec);
  }
  if (type == "Tile") {
    spec.op_name = "nn.tile";
    take_inputs(1);
    if (node.input_size() < 2 || node.input(1).empty()) {
      return Error(node) << "no repeats input";
    }
    if (mlir::failed(IntegersInputAsAttr(node, 1, "repeats", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {}, spec);
  }
  if (type == "Trilu") {
    spec.op_name = "nn.trilu";
    take_inputs(1);
    if (mlir::failed(IntegerInputAsAttr(node, 1, "k", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {"upper"}, spec);
  }
  if (type == "DynamicQuantizeLinear") {
    spec.op_name = "nn.dynamic_quantize_linear";
    spec.num_results = 3;
    if (node.output_size() != 3) return Error(node) << "must have 3 outputs";
    take_inputs(1);
    return CopyAttributes(node, {}, spec);
  }
  if (type == "TopK") {
    spec.op_name = "nn.top_k";
    spec.num_results = 2;
    if (node.output_size() != 2) return Error(node) << "must have 2 outputs";
    take_inputs(1);
    // K is an attribute before opset 10, a one-element input from it.
    if (opset_ < 10) return CopyAttributes(node, {"axis", "k"}, spec);
    if (node.input_size() < 2 || node.input(1).empty()) {
      return Error(node) << "no K input";
    }
    if (mlir::failed(IntegerInputAsAttr(node, 1, "k", spec))) {
      return mlir::failure();
    }
    return CopyAttributes(node, {"axis", "largest", "sorted"}, spec);
  }
  if (type == "Identity") {
    spec.op_name = "nn.identity";
    take_inputs(1);
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
  if (type == "GlobalMaxPool") {
    // The largest element of each channel: a maximum over the spatial
    // axes, kept as dimensions of 1.
    const std::optional<std::vector<int64_t>> dims = InputDims(node, 0);
    if (!dims || dims->size() < 3) {
      return Error(node) << "needs an input of rank 3 or more (N x C x ...)";
    }
    std::vector<int64_t> axes;
    for (int64_t axis = 2; axis < static_cast<int64_t>(dims->size()); ++axis) {
      axes.push_back(axis);
    }
    spec.op_name = "nn.reduce_max";
    take_inputs(1);
    spec.attributes.set("axes", builder_.getI64ArrayAttr(axes));
    spec.attributes.set("keepdims", builder_.getI64IntegerAttr(1));
    return CopyAttributes(node, {}, spec);
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
    if (mlir::failed(IntegersInputAsAttr(node, 1, "split", spec)) ||
        mlir::failed(CopyAttributes(node, {"axis", "num_outputs"}, spec))) {
      return mlir::failure();
    }
    if (!spec.attributes.get("num_outputs")) return mlir::success();
    // Opset 18: num_outputs parts of ceil(size / num_outputs), the last
    // one smaller when the axis does not divide evenly.
    mlir::FailureOr<int64_t> parts =
        IntegerAttribute(node, spec, "num_outputs", 0);
    mlir::FailureOr<int64_t> axis = IntegerAttribute(node, spec, "axis", 0);
    if (mlir::failed(parts) || mlir::failed(axis)) return mlir::failure();
    spec.attributes.erase("num_outputs");
    if (spec.attributes.get("split")) {
      return Error(node) << "has both a split input and num_outputs";
    }
    const std::optional<std::vector<int64_t>> dims = InputDims(node, 0);
    const int64_t rank = dims ? static_cast<int64_t>(dims->size()) : 0;
    const int64_t d = *axis < 0 ? *axis + rank : *axis;
    if (!dims || d < 0 || d >= rank) {
      return Error(node) << "axis " << *axis << " is out of range";
    }
    if (*parts < 1 || *parts != node.output_size()) {
      return Error(node) << "num_outputs " << *parts << " does not match its "
                         << node.output_size() << " outputs";
    }
    const int64_t size = (*dims)[d];
    const int64_t chunk = (size + *parts - 1) / *parts;
    std::vector<int64_t> split;
    for (int64_t i = 0, left = size; i < *parts; ++i) {
      split.push_back(std::min(chunk, left));
      left -= split.back();
    }
    spec.attributes.set("split", builder_.getI64ArrayAttr(split));
    return mlir::success();
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
    if (mlir::failed(IntegersInputAsAttr(node, 1, "pads", spec)) ||
        mlir::failed(ScalarInputAsAttr(node, 2, "value", spec))) {
      return mlir::failure();
    }
    auto axes = IntegersInput(node, 3, "axes");
    if (mlir::failed(axes)) return mlir::failure();
    if (*axes) {
      // Opset 18: pads for the listed axes only (begins, then ends); the
      // runtime op takes them for every axis.
      auto given =
          mlir::dyn_cast_or_null<mlir::ArrayAttr>(spec.attributes.get("pads"));
      const std::optional<std::vector<int64_t>> dims = InputDims(node, 0);
      if (!given || !dims || given.size() != 2 * (*axes)->size()) {
        return Error(node) << "needs 2 pads per axis of its axes input";
      }
      const int64_t rank = dims->size();
      std::vector<int64_t> pads(2 * rank, 0);
      const size_t count = (*axes)->size();
      for (size_t i = 0; i < count; ++i) {
        int64_t axis = (**axes)[i];
        if (axis < 0) axis += rank;
        if (axis < 0 || axis >= rank) {
          return Error(node) << "axis " << (**axes)[i] << " is out of range";
        }
        pads[axis] = mlir::cast<mlir::IntegerAttr>(given[i]).getInt();
        pads[axis + rank] =
            mlir::cast<mlir::IntegerAttr>(given[i + count]).getInt();
      }
      spec.attributes.set("pads", builder_.getI64ArrayAttr(pads));
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
          mlir::failed(IntegersInputAsAttr(node, 3, "sizes", spec)) ||
          mlir::failed(CopyAttributes(
              node,
              {"mode", "coordinate_transformation_mode", "nearest_mode",
               "cubic_coeff_a", "exclude_outside", "extrapolation_value",
               "antialias", "axes", "keep_aspect_ratio_policy"},
              spec))) {
        return mlir::failure();
      }
      return ResizeOpset18Attributes(node, spec);
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
      // Opset 19's saturate only concerns float8 targets, which the
      // runtime does not have.
      if (attribute.name() == "saturate") continue;
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
  if (type == "EyeLike") {
    spec.op_name = "nn.eye_like";
    take_inputs(1);
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.name() == "k") {
        spec.attributes.set(
            "k", mlir::IntegerAttr::get(mlir::IntegerType::get(context_, 64),
                                        attribute.i()));
      } else if (attribute.name() == "dtype") {
        std::optional<DType> dtype = DTypeOfOnnx(attribute.i());
        if (!dtype) {
          return Error(node)
                 << "unsupported dtype " << OnnxTypeName(attribute.i());
        }
        spec.attributes.set(
            "dtype", mlir::TypeAttr::get(nn::MlirTypeOf(*dtype, context_)));
      } else {
        return Error(node) << "attribute '" << attribute.name()
                           << "' is not supported";
      }
    }
    return mlir::success();
  }
  if (type == "CastLike") {
    // Cast to the element type of input 1 (only its type is used).
    spec.op_name = "nn.cast";
    if (node.input_size() != 2) return Error(node) << "needs two inputs";
    take_inputs(1);
    const GraphValue& like = values_[node.input(1)];
    mlir::Type element;
    if (like.constant) {
      element = nn::MlirTypeOf(like.constant->dtype, context_);
    } else if (auto tensor =
                   mlir::dyn_cast<mlir::TensorType>(like.value.getType())) {
      element = tensor.getElementType();
    }
    if (!element) return Error(node) << "input 1 has no tensor type";
    spec.attributes.set("to", mlir::TypeAttr::get(element));
    return CopyAttributes(node, {}, spec);
  }
  return Error(node) << "unsupported op";
}

mlir::LogicalResult Importer::TranslateCenterCropPad(
    const onnx::NodeProto& node, OpSpec& spec) {
  spec.op_name = "nn.pad";
  if (node.input_size() != 2 || node.input(0).empty()) {
    return Error(node) << "needs input_data and shape";
  }
  spec.operands.push_back(node.input(0));
  OpSpec attributes;
  if (mlir::failed(CopyAttributes(node, {"axes"}, attributes))) {
    return mlir::failure();
  }
  auto shape = IntegersInput(node, 1, "shape");
  if (mlir::failed(shape)) return mlir::failure();
  const std::optional<std::vector<int64_t>> dims = InputDims(node, 0);
  if (!*shape || !dims) {
    return Error(node) << "needs an input of static shape and a shape";
  }
  const int64_t rank = dims->size();
  std::vector<int64_t> axes;
  if (auto given = mlir::dyn_cast_or_null<mlir::ArrayAttr>(
          attributes.attributes.get("axes"))) {
    for (mlir::Attribute axis : given) {
      auto integer = mlir::dyn_cast<mlir::IntegerAttr>(axis);
      if (!integer) return Error(node) << "axes must be integers";
      axes.push_back(integer.getInt() < 0 ? integer.getInt() + rank
                                          : integer.getInt());
    }
  } else {
    for (int64_t axis = 0; axis < rank; ++axis) axes.push_back(axis);
  }
  if ((*shape)->size() != axes.size()) {
    return Error(node) << "needs one size per axis";
  }
  // Each axis centered in its new size: padded on both sides, or cropped
  // (negative pads), the odd unit at the end.
  std::vector<int64_t> pads(2 * rank, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    const int64_t axis = axes[i], target = (**shape)[i];
    if (axis < 0 || axis >= rank || target < 0) {
      return Error(node) << "axis " << axis << " or size " << target
                         << " is out of range";
    }
    const int64_t in = (*dims)[axis];
    const int64_t begin =
        target >= in ? (target - in) / 2 : -((in - target) / 2);
    pads[axis] = begin;
    pads[axis + rank] = target - in - begin;
  }
  spec.attributes.set("pads", builder_.getI64ArrayAttr(pads));
  return mlir::success();
}

std::optional<std::vector<int64_t>> Importer::InputDims(
    const onnx::NodeProto& node, int index) const {
  const GraphValue* value = Input(node, index);
  if (value == nullptr) return std::nullopt;
  if (value->constant) return value->constant->dims;
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(value->value.getType());
  if (!tensor || !tensor.hasStaticShape()) return std::nullopt;
  return std::vector<int64_t>(tensor.getShape().begin(),
                              tensor.getShape().end());
}

std::optional<DType> Importer::InputDType(const onnx::NodeProto& node,
                                          int index) const {
  const GraphValue* value = Input(node, index);
  if (value == nullptr) return std::nullopt;
  if (value->constant) return value->constant->dtype;
  auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(value->value.getType());
  return tensor ? nn::DTypeOf(tensor.getElementType()) : std::nullopt;
}

mlir::LogicalResult Importer::ResizeOpset18Attributes(
    const onnx::NodeProto& node, OpSpec& spec) {
  // keep_aspect_ratio_policy: only "stretch" (each axis to its size).
  if (auto policy = mlir::dyn_cast_or_null<mlir::StringAttr>(
          spec.attributes.get("keep_aspect_ratio_policy"))) {
    if (policy.getValue() != "stretch") {
      return Error(node) << "keep_aspect_ratio_policy '" << policy.getValue()
                         << "' is not supported (stretch only)";
    }
    spec.attributes.erase("keep_aspect_ratio_policy");
  }
  const std::optional<std::vector<int64_t>> dims = InputDims(node, 0);
  if (!dims) return Error(node) << "needs an input of static shape";
  const int64_t rank = dims->size();
  // axes: scales or sizes for those axes only; the runtime op takes them
  // for every axis (1 and the input's size elsewhere).
  if (auto axes = mlir::dyn_cast_or_null<mlir::ArrayAttr>(
          spec.attributes.get("axes"))) {
    spec.attributes.erase("axes");
    std::vector<int64_t> listed;
    for (mlir::Attribute axis : axes) {
      auto integer = mlir::dyn_cast<mlir::IntegerAttr>(axis);
      if (!integer) return Error(node) << "axes must be integers";
      int64_t a = integer.getInt();
      if (a < 0) a += rank;
      if (a < 0 || a >= rank) {
        return Error(node) << "axis " << integer.getInt() << " is out of range";
      }
      listed.push_back(a);
    }
    if (auto scales = mlir::dyn_cast_or_null<mlir::ArrayAttr>(
            spec.attributes.get("scales"))) {
      if (scales.size() != listed.size()) {
        return Error(node) << "needs one scale per axis of axes";
      }
      std::vector<float> full(rank, 1.0f);
      for (size_t i = 0; i < listed.size(); ++i) {
        full[listed[i]] = static_cast<float>(
            mlir::cast<mlir::FloatAttr>(scales[i]).getValueAsDouble());
      }
      spec.attributes.set("scales", builder_.getF32ArrayAttr(full));
    }
    if (auto sizes = mlir::dyn_cast_or_null<mlir::ArrayAttr>(
            spec.attributes.get("sizes"))) {
      if (sizes.size() != listed.size()) {
        return Error(node) << "needs one size per axis of axes";
      }
      std::vector<int64_t> full = *dims;
      for (size_t i = 0; i < listed.size(); ++i) {
        full[listed[i]] = mlir::cast<mlir::IntegerAttr>(sizes[i]).getInt();
      }
      spec.attributes.set("sizes", builder_.getI64ArrayAttr(full));
    }
  }
  // antialias changes only linear and cubic downscaling: refused there.
  mlir::FailureOr<int64_t> antialias =
      IntegerAttribute(node, spec, "antialias", 0);
  if (mlir::failed(antialias)) return mlir::failure();
  spec.attributes.erase("antialias");
  if (*antialias != 0) {
    auto mode =
        mlir::dyn_cast_or_null<mlir::StringAttr>(spec.attributes.get("mode"));
    bool downscales = false;
    if (auto sizes = mlir::dyn_cast_or_null<mlir::ArrayAttr>(
            spec.attributes.get("sizes"))) {
      for (int64_t i = 0; i < rank && i < static_cast<int64_t>(sizes.size());
           ++i) {
        downscales |=
            mlir::cast<mlir::IntegerAttr>(sizes[i]).getInt() < (*dims)[i];
      }
    } else if (auto scales = mlir::dyn_cast_or_null<mlir::ArrayAttr>(
                   spec.attributes.get("scales"))) {
      for (mlir::Attribute scale : scales) {
        downscales |= mlir::cast<mlir::FloatAttr>(scale).getValueAsDouble() < 1;
      }
    }
    if (mode && mode.getValue() != "nearest" && downscales) {
      return Error(node) << "antialias = 1 when downscaling is not supported";
    }
  }
  return mlir::success();
}

mlir::LogicalResult Importer::TranslateQuantizeLinear(
    const onnx::NodeProto& node, OpSpec& spec) {
  const bool quantize = node.op_type() == "QuantizeLinear";
  spec.op_name = quantize ? "nn.quantize_linear" : "nn.dequantize_linear";
  for (int i = 0; i < std::min(3, node.input_size()); ++i) {
    if (!node.input(i).empty()) spec.operands.push_back(node.input(i));
  }
  if (mlir::failed(CopyAttributes(
          node, {"axis", "saturate", "block_size", "output_dtype"}, spec))) {
    return mlir::failure();
  }
  // saturate (19) only concerns float8, which the runtime does not have.
  spec.attributes.erase("saturate");
  mlir::FailureOr<int64_t> block_size =
      IntegerAttribute(node, spec, "block_size", 0);
  mlir::FailureOr<int64_t> output_dtype =
      IntegerAttribute(node, spec, "output_dtype", 0);
  if (mlir::failed(block_size) || mlir::failed(output_dtype)) {
    return mlir::failure();
  }
  spec.attributes.erase("block_size");
  spec.attributes.erase("output_dtype");
  if (*block_size != 0) {
    return Error(node) << "blocked quantization (block_size " << *block_size
                       << ") is not supported";
  }
  if (*output_dtype == 0) return mlir::success();
  // Opset 21: the quantized dtype without a zero point; with one it must
  // be the zero point's.
  std::optional<DType> to = DTypeOfOnnx(*output_dtype);
  if (!quantize || !to) {
    return Error(node) << "output_dtype " << OnnxTypeName(*output_dtype)
                       << " is not supported";
  }
  if (std::optional<DType> zero_point = InputDType(node, 2)) {
    if (*zero_point != *to) {
      return Error(node) << "output_dtype does not match the zero point's";
    }
    return mlir::success();
  }
  std::optional<std::vector<int64_t>> scale_dims = InputDims(node, 1);
  if (!scale_dims) return Error(node) << "needs a scale of static shape";
  ConstTensor zero;
  zero.dtype = *to;
  zero.dims = *scale_dims;
  int64_t count = 1;
  for (int64_t d : zero.dims) count *= d;
  zero.bytes.assign(count * DTypeSize(*to), 0);
  GraphValue value;
  value.constant = std::make_shared<ConstTensor>(std::move(zero));
  spec.operands.push_back(AddTemporary(std::move(value)));
  return mlir::success();
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

mlir::FailureOr<GraphValue> Importer::ImportRange(const onnx::NodeProto& node) {
  // The result's length depends on the inputs' values, which static shapes
  // need at compile time: exported models compute them from shapes, which
  // import folds to constants.
  const ConstTensor* inputs[3];
  static constexpr const char* kNames[] = {"start", "limit", "delta"};
  for (int i = 0; i < 3; ++i) {
    if (Input(node, i) == nullptr) return Error(node) << "needs 3 inputs";
    auto value = ConstantInput(node, i, kNames[i]);
    if (mlir::failed(value)) return mlir::failure();
    inputs[i] = *value;
    if (inputs[i]->NumElements() != 1) {
      return Error(node) << "input " << i << " (" << kNames[i]
                         << ") must be a scalar";
    }
    if (inputs[i]->dtype != inputs[0]->dtype) {
      return Error(node) << "inputs must have one dtype";
    }
  }
  if (node.attribute_size() > 0) {
    return Error(node) << "attribute '" << node.attribute(0).name()
                       << "' is not supported";
  }
  const DType dtype = inputs[0]->dtype;
  auto fill = [&]<typename T>(T) -> mlir::FailureOr<GraphValue> {
    T start, limit, delta;
    std::memcpy(&start, inputs[0]->bytes.data(), sizeof(T));
    std::memcpy(&limit, inputs[1]->bytes.data(), sizeof(T));
    std::memcpy(&delta, inputs[2]->bytes.data(), sizeof(T));
    if (delta == 0) return Error(node) << "delta must not be 0";
    const double count =
        std::ceil((static_cast<double>(limit) - static_cast<double>(start)) /
                  static_cast<double>(delta));
    if (!(count < (1 << 28))) {
      return Error(node) << "the range has too many elements";
    }
    ConstTensor tensor;
    tensor.dtype = dtype;
    tensor.dims = {std::max<int64_t>(0, static_cast<int64_t>(count))};
    tensor.bytes.resize(tensor.dims[0] * sizeof(T));
    // start + i * delta, as ONNX defines each element (not a running sum).
    for (int64_t i = 0; i < tensor.dims[0]; ++i) {
      const T value = static_cast<T>(start + static_cast<T>(i) * delta);
      std::memcpy(&tensor.bytes[i * sizeof(T)], &value, sizeof(T));
    }
    GraphValue result;
    result.constant = std::make_shared<ConstTensor>(std::move(tensor));
    return result;
  };
  switch (dtype) {
    case DType::kF32:
      return fill(float{});
    case DType::kF64:
      return fill(double{});
    case DType::kI16:
      return fill(int16_t{});
    case DType::kI32:
      return fill(int32_t{});
    case DType::kI64:
      return fill(int64_t{});
    default:
      return Error(node) << "unsupported dtype "
                         << std::string(DTypeName(dtype));
  }
}

mlir::FailureOr<std::vector<GraphValue>> Importer::ImportDropout(
    const onnx::NodeProto& node) {
  const GraphValue* input = Input(node, 0);
  if (input == nullptr) return Error(node) << "needs an input";
  double ratio = 0.5;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == "ratio") {
      ratio = attribute.f();
    } else if (attribute.name() != "seed" && attribute.name() != "is_test") {
      return Error(node) << "attribute '" << attribute.name()
                         << "' is not supported";
    }
  }
  // From opset 12 the ratio and the mode are inputs; training is off by
  // default. With it off, or with a ratio of 0, nothing is dropped: the
  // output is the input and the mask all true. Training with a ratio above
  // 0 draws random masks, which a compiled inference model does not.
  bool training = false;
  if (node.input_size() > 2 && !node.input(2).empty()) {
    auto mode = ConstantInput(node, 2, "training_mode");
    if (mlir::failed(mode)) return mlir::failure();
    std::optional<double> on = Scalar(**mode);
    if (!on) return Error(node) << "training_mode must be one boolean";
    training = *on != 0;
  }
  if (training && node.input_size() > 1 && !node.input(1).empty()) {
    auto given = ConstantInput(node, 1, "ratio");
    if (mlir::failed(given)) return mlir::failure();
    std::optional<double> value = Scalar(**given);
    if (!value) return Error(node) << "ratio must be one number";
    ratio = *value;
  }
  if (training && ratio != 0) {
    return Error(node) << "training mode (random masks, ratio "
                       << absl::StrCat(ratio) << ") is not supported";
  }
  std::vector<GraphValue> results = {*input};
  if (node.output_size() < 2 || node.output(1).empty()) return results;
  ConstTensor mask;
  if (input->constant) {
    mask.dims = input->constant->dims;
  } else {
    auto type = mlir::dyn_cast<mlir::RankedTensorType>(input->value.getType());
    if (!type || !type.hasStaticShape()) {
      return Error(node) << "the mask output needs a static input shape";
    }
    mask.dims.assign(type.getShape().begin(), type.getShape().end());
  }
  // A boolean mask from opset 10; before, one of the input's type (f32).
  mask.dtype = opset_ >= 10 ? DType::kI1 : DType::kF32;
  const int64_t count = mask.NumElements();
  if (mask.dtype == DType::kI1) {
    mask.bytes.assign(count, 1);
  } else {
    std::vector<float> ones(count, 1.0f);
    mask.bytes.resize(count * sizeof(float));
    std::memcpy(mask.bytes.data(), ones.data(), mask.bytes.size());
  }
  GraphValue mask_value;
  mask_value.constant = std::make_shared<ConstTensor>(std::move(mask));
  results.push_back(std::move(mask_value));
  return results;
}

mlir::FailureOr<std::vector<GraphValue>>
Importer::ImportSoftmaxCrossEntropyLoss(const onnx::NodeProto& node) {
  if (node.input_size() < 2 || node.input(0).empty() || node.input(1).empty()) {
    return Error(node) << "needs scores and labels";
  }
  OpSpec log_softmax;
  log_softmax.op_name = "nn.log_softmax";
  log_softmax.operands = {node.input(0)};
  log_softmax.attributes.set("axis", builder_.getI64IntegerAttr(1));
  auto log_prob = Build(node, log_softmax);
  if (mlir::failed(log_prob)) return mlir::failure();
  const std::string log_prob_name = AddTemporary((*log_prob)[0]);
  OpSpec loss;
  loss.op_name = "nn.negative_log_likelihood_loss";
  loss.operands = {log_prob_name, node.input(1)};
  if (node.input_size() > 2 && !node.input(2).empty()) {
    loss.operands.push_back(node.input(2));
  }
  mlir::FailureOr<std::vector<GraphValue>> result = mlir::failure();
  if (mlir::succeeded(
          CopyAttributes(node, {"reduction", "ignore_index"}, loss))) {
    auto built = Build(node, loss);
    if (mlir::succeeded(built)) {
      result = std::vector<GraphValue>{(*built)[0], values_[log_prob_name]};
    }
  }
  values_.erase(log_prob_name);
  return result;
}

mlir::FailureOr<GraphValue> Importer::ImportConstantNode(
    const onnx::NodeProto& node) {
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
    return value;
  }
  // ConstantOfShape.
  {
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
    return value;
  }
}

}  // namespace asyncrt::onnx_internal
