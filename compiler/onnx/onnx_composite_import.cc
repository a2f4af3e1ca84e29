// ONNX ops that become several runtime ops (see onnx_importer_internal.h):
// the composite imports (Sum/Max/Min/Mean chains, Pow of mixed dtypes,
// recurrent layers' defaults, OneHot, MeanVarianceNormalization, Gelu's
// tanh form, GroupNormalization) and the steps they are built from.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "compiler/onnx/onnx_importer_internal.h"

namespace asyncrt::onnx_internal {

mlir::FailureOr<GraphValue> Importer::ImportOneHot(
    const onnx::NodeProto& node) {
  if (node.input_size() != 3 || node.input(0).empty() ||
      node.input(1).empty() || node.input(2).empty()) {
    return Error(node) << "needs indices, depth and values";
  }
  OpSpec attributes;
  if (mlir::failed(CopyAttributes(node, {"axis"}, attributes))) {
    return mlir::failure();
  }
  mlir::FailureOr<int64_t> axis_attr =
      IntegerAttribute(node, attributes, "axis", -1);
  if (mlir::failed(axis_attr)) return mlir::failure();
  auto depth_input = ConstantInput(node, 1, "depth");
  if (mlir::failed(depth_input)) return mlir::failure();
  const std::optional<double> depth_value = Scalar(**depth_input);
  const std::optional<std::vector<int64_t>> dims = InputDims(node, 0);
  const std::optional<std::vector<int64_t>> values_dims = InputDims(node, 2);
  if (!depth_value || *depth_value < 1) {
    return Error(node) << "depth must be one number of at least 1";
  }
  if (!dims || !values_dims || *values_dims != std::vector<int64_t>{2}) {
    return Error(node) << "needs indices of static shape and values [2]";
  }
  const int64_t depth = static_cast<int64_t>(*depth_value);
  const int64_t rank = dims->size() + 1;  // The result's.
  const int64_t axis = *axis_attr < 0 ? *axis_attr + rank : *axis_attr;
  if (axis < 0 || axis >= rank) {
    return Error(node) << "axis " << *axis_attr << " is out of range";
  }
  std::vector<std::string> temporaries;
  auto result = [&]() -> mlir::FailureOr<GraphValue> {
    auto i64 = [&](std::vector<int64_t> dims, std::vector<int64_t> values) {
      temporaries.push_back(
          AddTemporary(IntegerConstant(DType::kI64, std::move(dims), values)));
      return temporaries.back();
    };
    // Indices as i64 (ONNX casts them), negative ones counted from depth:
    // where(i < 0, i + depth, i); out-of-range ones then match nothing.
    mlir::NamedAttrList to_i64;
    to_i64.set("to",
               mlir::TypeAttr::get(nn::MlirTypeOf(DType::kI64, context_)));
    auto indices =
        BuildStep(node, "nn.cast", {node.input(0)}, to_i64, temporaries);
    if (mlir::failed(indices)) return mlir::failure();
    const std::string zero = i64({}, {0}), depth_scalar = i64({}, {depth});
    auto negative =
        BuildStep(node, "nn.less", {*indices, zero}, {}, temporaries);
    auto wrapped =
        BuildStep(node, "nn.add", {*indices, depth_scalar}, {}, temporaries);
    if (mlir::failed(negative) || mlir::failed(wrapped)) {
      return mlir::failure();
    }
    auto positive = BuildStep(node, "nn.where", {*negative, *wrapped, *indices},
                              {}, temporaries);
    if (mlir::failed(positive)) return mlir::failure();
    // Compared with 0 .. depth - 1 laid along `axis`.
    mlir::NamedAttrList unsqueeze;
    unsqueeze.set("axes", builder_.getI64ArrayAttr({axis}));
    auto spread =
        BuildStep(node, "nn.unsqueeze", {*positive}, unsqueeze, temporaries);
    if (mlir::failed(spread)) return mlir::failure();
    std::vector<int64_t> range_dims(rank, 1), range(depth);
    range_dims[axis] = depth;
    for (int64_t i = 0; i < depth; ++i) range[i] = i;
    auto hot = BuildStep(node, "nn.equal", {*spread, i64(range_dims, range)},
                         {}, temporaries);
    if (mlir::failed(hot)) return mlir::failure();
    // values = [off, on], as scalars.
    auto part = [&](int64_t index) -> mlir::FailureOr<std::string> {
      mlir::NamedAttrList slice;
      slice.set("starts", builder_.getI64ArrayAttr({index}));
      slice.set("ends", builder_.getI64ArrayAttr({index + 1}));
      auto one =
          BuildStep(node, "nn.slice", {node.input(2)}, slice, temporaries);
      if (mlir::failed(one)) return mlir::failure();
      mlir::NamedAttrList scalar;
      scalar.set("shape", builder_.getI64ArrayAttr({}));
      return BuildStep(node, "nn.reshape", {*one}, scalar, temporaries);
    };
    auto off = part(0), on = part(1);
    if (mlir::failed(off) || mlir::failed(on)) return mlir::failure();
    auto y = BuildStep(node, "nn.where", {*hot, *on, *off}, {}, temporaries);
    if (mlir::failed(y)) return mlir::failure();
    return values_[*y];
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return result;
}

mlir::FailureOr<GraphValue> Importer::ImportMeanVarianceNormalization(
    const onnx::NodeProto& node) {
  if (node.input_size() != 1 || node.input(0).empty()) {
    return Error(node) << "needs one input";
  }
  OpSpec attributes;
  if (mlir::failed(CopyAttributes(node, {"axes"}, attributes))) {
    return mlir::failure();
  }
  const std::optional<DType> dtype = InputDType(node, 0);
  if (!dtype) return Error(node) << "input 0 has no tensor type";
  mlir::Attribute axes = attributes.attributes.get("axes");
  if (!axes) axes = builder_.getI64ArrayAttr({0, 2, 3});  // ONNX's default.
  // (x - mean) / (sqrt(mean((x - mean)^2)) + 1e-9), ONNX's function body
  // with the variance of the centered values.
  std::vector<std::string> temporaries;
  auto result = [&]() -> mlir::FailureOr<GraphValue> {
    mlir::NamedAttrList reduce;
    reduce.set("axes", axes);
    reduce.set("keepdims", builder_.getI64IntegerAttr(1));
    const std::string& x = node.input(0);
    auto mean = BuildStep(node, "nn.reduce_mean", {x}, reduce, temporaries);
    if (mlir::failed(mean)) return mlir::failure();
    auto centered = BuildStep(node, "nn.sub", {x, *mean}, {}, temporaries);
    if (mlir::failed(centered)) return mlir::failure();
    auto squared =
        BuildStep(node, "nn.mul", {*centered, *centered}, {}, temporaries);
    if (mlir::failed(squared)) return mlir::failure();
    auto variance =
        BuildStep(node, "nn.reduce_mean", {*squared}, reduce, temporaries);
    if (mlir::failed(variance)) return mlir::failure();
    auto deviation = BuildStep(node, "nn.sqrt", {*variance}, {}, temporaries);
    auto epsilon = ConstantStep(node, *dtype, {}, {1e-9f}, temporaries);
    if (mlir::failed(deviation) || mlir::failed(epsilon)) {
      return mlir::failure();
    }
    auto divisor =
        BuildStep(node, "nn.add", {*deviation, *epsilon}, {}, temporaries);
    if (mlir::failed(divisor)) return mlir::failure();
    auto y = BuildStep(node, "nn.div", {*centered, *divisor}, {}, temporaries);
    if (mlir::failed(y)) return mlir::failure();
    return values_[*y];
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return result;
}

mlir::FailureOr<std::string> Importer::BuildStep(
    const onnx::NodeProto& node, llvm::StringRef op_name,
    std::vector<std::string> operands, mlir::NamedAttrList attributes,
    std::vector<std::string>& temporaries) {
  OpSpec spec;
  spec.op_name = op_name.str();
  spec.operands = std::move(operands);
  spec.attributes = std::move(attributes);
  auto built = Build(node, spec);
  if (mlir::failed(built)) return mlir::failure();
  temporaries.push_back(AddTemporary((*built)[0]));
  return temporaries.back();
}

mlir::FailureOr<std::string> Importer::ConstantStep(
    const onnx::NodeProto& node, DType dtype, std::vector<int64_t> dims,
    const std::vector<float>& values, std::vector<std::string>& temporaries) {
  ConstTensor tensor;
  tensor.dtype = DType::kF32;
  tensor.dims = std::move(dims);
  tensor.bytes.resize(values.size() * sizeof(float));
  std::memcpy(tensor.bytes.data(), values.data(), tensor.bytes.size());
  GraphValue value;
  value.constant = std::make_shared<ConstTensor>(std::move(tensor));
  temporaries.push_back(AddTemporary(std::move(value)));
  if (dtype == DType::kF32) return temporaries.back();
  // Other dtypes by the runtime's cast (evaluated now: a constant).
  mlir::NamedAttrList to;
  to.set("to", mlir::TypeAttr::get(nn::MlirTypeOf(dtype, context_)));
  return BuildStep(node, "nn.cast", {temporaries.back()}, to, temporaries);
}

mlir::FailureOr<GraphValue> Importer::ImportGelu(const onnx::NodeProto& node) {
  if (node.input_size() != 1 || node.input(0).empty()) {
    return Error(node) << "needs one input";
  }
  OpSpec attributes;
  if (mlir::failed(CopyAttributes(node, {"approximate"}, attributes))) {
    return mlir::failure();
  }
  auto approximate = mlir::dyn_cast_or_null<mlir::StringAttr>(
      attributes.attributes.get("approximate"));
  const std::string& x = node.input(0);
  if (!approximate || approximate.getValue() == "none") {
    OpSpec spec;
    spec.op_name = "nn.gelu";
    spec.operands = {x};
    auto built = Build(node, spec);
    if (mlir::failed(built)) return mlir::failure();
    return (*built)[0];
  }
  if (approximate.getValue() != "tanh") {
    return Error(node) << "unknown approximate '" << approximate.getValue()
                       << "' (none or tanh)";
  }
  const std::optional<DType> dtype = InputDType(node, 0);
  if (!dtype) return Error(node) << "input 0 has no tensor type";
  // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3))), op by op (the
  // model compiler fuses the chain).
  std::vector<std::string> temporaries;
  auto result = [&]() -> mlir::FailureOr<GraphValue> {
    auto constant = [&](float value) {
      return ConstantStep(node, *dtype, {}, {value}, temporaries);
    };
    auto step = [&](llvm::StringRef op, std::string a,
                    std::string b) -> mlir::FailureOr<std::string> {
      return BuildStep(node, op, {std::move(a), std::move(b)}, {}, temporaries);
    };
    auto c_cube = constant(0.044715f);
    auto c_scale = constant(0.7978845608028654f);
    auto c_half = constant(0.5f);
    auto c_one = constant(1.0f);
    if (mlir::failed(c_cube) || mlir::failed(c_scale) || mlir::failed(c_half) ||
        mlir::failed(c_one)) {
      return mlir::failure();
    }
    auto square = step("nn.mul", x, x);
    if (mlir::failed(square)) return mlir::failure();
    auto cube = step("nn.mul", *square, x);
    if (mlir::failed(cube)) return mlir::failure();
    auto scaled_cube = step("nn.mul", *cube, *c_cube);
    if (mlir::failed(scaled_cube)) return mlir::failure();
    auto inner = step("nn.add", x, *scaled_cube);
    if (mlir::failed(inner)) return mlir::failure();
    auto argument = step("nn.mul", *inner, *c_scale);
    if (mlir::failed(argument)) return mlir::failure();
    auto tanh = BuildStep(node, "nn.tanh", {*argument}, {}, temporaries);
    if (mlir::failed(tanh)) return mlir::failure();
    auto one_plus = step("nn.add", *tanh, *c_one);
    if (mlir::failed(one_plus)) return mlir::failure();
    auto half_x = step("nn.mul", x, *c_half);
    if (mlir::failed(half_x)) return mlir::failure();
    auto y = step("nn.mul", *half_x, *one_plus);
    if (mlir::failed(y)) return mlir::failure();
    return values_[*y];
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return result;
}

mlir::FailureOr<GraphValue> Importer::ImportGroupNormalization(
    const onnx::NodeProto& node) {
  if (node.input_size() != 3 || node.input(0).empty() ||
      node.input(1).empty() || node.input(2).empty()) {
    return Error(node) << "needs X, scale and bias";
  }
  OpSpec attributes;
  if (mlir::failed(CopyAttributes(node, {"epsilon", "num_groups", "stash_type"},
                                  attributes))) {
    return mlir::failure();
  }
  mlir::FailureOr<int64_t> groups =
      IntegerAttribute(node, attributes, "num_groups", 0);
  if (mlir::failed(groups)) return mlir::failure();
  const std::optional<std::vector<int64_t>> dims = InputDims(node, 0);
  const std::optional<DType> dtype = InputDType(node, 0);
  if (!dims || !dtype || dims->size() < 2) {
    return Error(node) << "needs an input N x C x ... of static shape";
  }
  const int64_t channels = (*dims)[1];
  if (*groups < 1 || channels % *groups != 0) {
    return Error(node) << "num_groups " << *groups << " does not divide "
                       << channels << " channels";
  }
  // Opset 18 scales and shifts per group, 21 per channel.
  const int64_t per_group_params = opset_ >= 21 ? channels : *groups;
  for (int i = 1; i <= 2; ++i) {
    const std::optional<std::vector<int64_t>> param = InputDims(node, i);
    if (!param || *param != std::vector<int64_t>{per_group_params}) {
      return Error(node) << "input " << i << " must have shape ["
                         << per_group_params << "]";
    }
  }
  mlir::Attribute epsilon = attributes.attributes.get("epsilon");
  std::vector<std::string> temporaries;
  auto result = [&]() -> mlir::FailureOr<GraphValue> {
    auto reshape = [&](const std::string& value, std::vector<int64_t> shape) {
      mlir::NamedAttrList attrs;
      attrs.set("shape", builder_.getI64ArrayAttr(shape));
      return BuildStep(node, "nn.reshape", {value}, attrs, temporaries);
    };
    // Each group of each sample normalized as one instance-normalization
    // channel of [N, groups, C / groups * spatial].
    auto grouped = reshape(node.input(0), {(*dims)[0], *groups, -1});
    auto ones = ConstantStep(node, *dtype, {*groups},
                             std::vector<float>(*groups, 1.0f), temporaries);
    auto zeros = ConstantStep(node, *dtype, {*groups},
                              std::vector<float>(*groups, 0.0f), temporaries);
    if (mlir::failed(grouped) || mlir::failed(ones) || mlir::failed(zeros)) {
      return mlir::failure();
    }
    mlir::NamedAttrList norm_attrs;
    if (epsilon) norm_attrs.set("epsilon", epsilon);
    auto normalized =
        BuildStep(node, "nn.instance_normalization", {*grouped, *ones, *zeros},
                  norm_attrs, temporaries);
    if (mlir::failed(normalized)) return mlir::failure();
    auto restored = reshape(*normalized, *dims);
    if (mlir::failed(restored)) return mlir::failure();
    // Scale and bias per channel, as [C, 1, ...] against [N, C, ...].
    std::vector<int64_t> channel_shape(dims->size() - 1, 1);
    channel_shape[0] = channels;
    auto per_channel =
        [&](const std::string& param) -> mlir::FailureOr<std::string> {
      if (opset_ >= 21) return reshape(param, channel_shape);
      auto column = reshape(param, {*groups, 1});
      if (mlir::failed(column)) return mlir::failure();
      mlir::NamedAttrList expand;
      expand.set("shape",
                 builder_.getI64ArrayAttr({*groups, channels / *groups}));
      auto repeated =
          BuildStep(node, "nn.expand", {*column}, expand, temporaries);
      if (mlir::failed(repeated)) return mlir::failure();
      return reshape(*repeated, channel_shape);
    };
    auto scale = per_channel(node.input(1));
    auto bias = per_channel(node.input(2));
    if (mlir::failed(scale) || mlir::failed(bias)) return mlir::failure();
    auto scaled =
        BuildStep(node, "nn.mul", {*restored, *scale}, {}, temporaries);
    if (mlir::failed(scaled)) return mlir::failure();
    auto shifted = BuildStep(node, "nn.add", {*scaled, *bias}, {}, temporaries);
    if (mlir::failed(shifted)) return mlir::failure();
    return values_[*shifted];
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return result;
}

mlir::FailureOr<GraphValue> Importer::ImportVariadic(
    const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  if (node.input_size() < 1) return Error(node) << "needs at least one input";
  for (int i = 0; i < node.input_size(); ++i) {
    if (node.input(i).empty())
      return Error(node) << "input " << i << " is empty";
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

mlir::FailureOr<GraphValue> Importer::ImportPow(const onnx::NodeProto& node) {
  const GraphValue* base = Input(node, 0);
  const GraphValue* exponent = Input(node, 1);
  if (base == nullptr || exponent == nullptr || node.input_size() != 2) {
    return Error(node) << "needs a base and an exponent";
  }
  const std::optional<DType> base_dtype = InputDType(node, 0);
  const std::optional<DType> exponent_dtype = InputDType(node, 1);
  auto is_float = [](DType dtype) {
    return dtype == DType::kF32 || dtype == DType::kF64 ||
           dtype == DType::kF16 || dtype == DType::kBF16;
  };
  OpSpec attributes;  // Pow has none.
  if (mlir::failed(CopyAttributes(node, {}, attributes))) {
    return mlir::failure();
  }
  std::vector<std::string> temporaries;
  auto build = [&](const char* op_name, std::vector<std::string> operands,
                   std::optional<DType> to) {
    mlir::NamedAttrList cast;
    if (to) cast.set("to", mlir::TypeAttr::get(nn::MlirTypeOf(*to, context_)));
    return BuildStep(node, op_name, std::move(operands), cast, temporaries);
  };
  auto result = [&]() -> mlir::FailureOr<GraphValue> {
    std::string x = node.input(0), y = node.input(1);
    const bool mixed =
        base_dtype && exponent_dtype && *base_dtype != *exponent_dtype;
    if (mixed && !is_float(*base_dtype) && is_float(*exponent_dtype)) {
      auto widened = build("nn.cast", {x}, exponent_dtype);
      if (mlir::failed(widened)) return mlir::failure();
      auto power = build("nn.pow", {*widened, y}, std::nullopt);
      if (mlir::failed(power)) return mlir::failure();
      auto narrowed = build("nn.cast", {*power}, base_dtype);
      if (mlir::failed(narrowed)) return mlir::failure();
      return values_[*narrowed];
    }
    if (mixed) {
      auto cast = build("nn.cast", {y}, base_dtype);
      if (mlir::failed(cast)) return mlir::failure();
      y = *cast;
    }
    auto power = build("nn.pow", {x, y}, std::nullopt);
    if (mlir::failed(power)) return mlir::failure();
    return values_[*power];
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return result;
}

mlir::FailureOr<std::vector<GraphValue>> Importer::ImportRecurrent(
    const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  const bool lstm = type == "LSTM";
  const int gates = lstm ? 4 : type == "GRU" ? 3 : 1;
  const int max_inputs = lstm ? 8 : 6;
  if (node.input_size() > max_inputs) {
    return Error(node) << "has at most " << max_inputs << " inputs";
  }
  OpSpec spec;
  spec.op_name = lstm ? "nn.lstm" : type == "GRU" ? "nn.gru" : "nn.rnn";
  spec.num_results = lstm ? 3 : 2;
  std::vector<llvm::StringRef> allowed = {
      "activation_alpha", "activation_beta", "activations", "clip",
      "direction",        "hidden_size",     "layout"};
  if (lstm) allowed.push_back("input_forget");
  if (type == "GRU") allowed.push_back("linear_before_reset");
  if (mlir::failed(CopyAttributes(node, allowed, spec))) {
    return mlir::failure();
  }
  // The static dimensions of input `index`, or empty.
  auto dims_of = [&](int index) -> std::vector<int64_t> {
    const GraphValue* value = Input(node, index);
    if (value == nullptr) return {};
    if (value->constant) return value->constant->dims;
    auto tensor =
        mlir::dyn_cast<mlir::RankedTensorType>(value->value.getType());
    if (!tensor || !tensor.hasStaticShape()) return {};
    return std::vector<int64_t>(tensor.getShape().begin(),
                                tensor.getShape().end());
  };
  int last_given = -1;
  for (int i = 0; i < node.input_size(); ++i) {
    if (!node.input(i).empty()) last_given = i;
  }
  for (int i = 0; i < 3; ++i) {
    if (i > last_given || node.input(i).empty()) {
      return Error(node) << "needs inputs X, W and R";
    }
  }
  bool has_gap = false;
  for (int i = 3; i < last_given; ++i) has_gap |= node.input(i).empty();
  // The sizes a gap's filling takes, from X, W and R.
  int64_t steps = 0, batch = 0, directions = 0, hidden = 0;
  bool batch_major = false;
  if (has_gap) {
    const std::vector<int64_t> x = dims_of(0), w = dims_of(1), r = dims_of(2);
    if (x.size() != 3 || w.size() != 3 || r.size() != 3) {
      return Error(node) << "X, W and R must have static shapes of rank 3";
    }
    mlir::FailureOr<int64_t> layout = IntegerAttribute(node, spec, "layout", 0);
    if (mlir::failed(layout)) return mlir::failure();
    batch_major = *layout != 0;
    steps = batch_major ? x[1] : x[0];
    batch = batch_major ? x[0] : x[1];
    directions = w[0];
    hidden = r[2];
  }
  std::vector<std::string> temporaries;
  for (int i = 0; i <= last_given; ++i) {
    if (!node.input(i).empty()) {
      spec.operands.push_back(node.input(i));
      continue;
    }
    // A gap: B (3), sequence_lens (4), initial_h or initial_c (5, 6).
    ConstTensor fill;
    if (i == 4) {
      fill.dtype = DType::kI32;
      fill.dims = {batch};
      const std::vector<int32_t> lengths(batch, static_cast<int32_t>(steps));
      fill.bytes.resize(lengths.size() * sizeof(int32_t));
      std::memcpy(fill.bytes.data(), lengths.data(), fill.bytes.size());
    } else {
      fill.dtype = DType::kF32;
      if (i == 3) {
        fill.dims = {directions, 2 * gates * hidden};
      } else if (batch_major) {
        fill.dims = {batch, directions, hidden};
      } else {
        fill.dims = {directions, batch, hidden};
      }
      fill.bytes.assign(fill.NumElements() * sizeof(float), 0);
    }
    GraphValue value;
    value.constant = std::make_shared<ConstTensor>(std::move(fill));
    temporaries.push_back(AddTemporary(std::move(value)));
    spec.operands.push_back(temporaries.back());
  }
  auto built = Build(node, spec);
  for (const std::string& name : temporaries) values_.erase(name);
  return built;
}

}  // namespace asyncrt::onnx_internal
