// ONNX's quantized operator form (QLinearMatMul, QLinearConv) and its
// integer products (MatMulInteger, ConvInteger), imported as the QDQ form
// a quantizer also writes: each quantized operand dequantized
// (nn.dequantize_linear), the f32 op, the result quantized again
// (nn.quantize_linear) or cast to i32. MaxPool on 8-bit integers (which
// such models keep between their quantized ops) is the f32 pooling
// between casts, exact.
//
// The integer products are exact while their sums stay below 2^24 in
// magnitude (f32's integers; 8-bit products over up to 256 terms always
// do), and within 2^-24 of the sum beyond; the QLinear ops round once, as
// ONNX's definition, from the f32 product instead of the integer one.
#include <optional>
#include <string>
#include <vector>

#include "asyncrt/dialects/nn/nn_dialect.h"
#include "compiler/onnx/onnx_importer_internal.h"
#include "mlir/IR/BuiltinAttributes.h"

namespace asyncrt::onnx_internal {

namespace {

// Whether a scale or zero point of `dims` holds one value per index of an
// axis (more than one value) rather than one for the whole tensor.
bool PerAxis(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t d : dims) count *= d;
  return !dims.empty() && count > 1;
}

}  // namespace

mlir::FailureOr<std::string> Importer::DequantizeStep(
    const onnx::NodeProto& node, int input, int scale, int zero_point,
    std::optional<int64_t> axis_from_end,
    std::vector<std::string>& temporaries) {
  const std::optional<std::vector<int64_t>> dims = InputDims(node, input);
  if (!dims) {
    return Error(node) << "input " << input << " needs a static shape";
  }
  std::vector<std::string> operands = {node.input(input)};
  std::optional<std::vector<int64_t>> parameter_dims;
  if (scale >= 0) {
    if (Input(node, scale) == nullptr) {
      return Error(node) << "input " << scale << " (a scale) is missing";
    }
    parameter_dims = InputDims(node, scale);
    operands.push_back(node.input(scale));
  } else {
    // An integer product: the zero point alone, its scale 1.
    parameter_dims = zero_point >= 0 && Input(node, zero_point) != nullptr
                         ? InputDims(node, zero_point)
                         : std::vector<int64_t>{};
    if (!parameter_dims) {
      return Error(node) << "input " << zero_point
                         << " (a zero point) needs a static shape";
    }
    int64_t count = 1;
    for (int64_t d : *parameter_dims) count *= d;
    auto ones = ConstantStep(node, DType::kF32, *parameter_dims,
                             std::vector<float>(count, 1.f), temporaries);
    if (mlir::failed(ones)) return mlir::failure();
    operands.push_back(*ones);
  }
  if (!parameter_dims) {
    return Error(node) << "input " << scale << " (a scale) needs a static "
                       << "shape";
  }
  if (zero_point >= 0 && Input(node, zero_point) != nullptr) {
    operands.push_back(node.input(zero_point));
  }
  mlir::NamedAttrList attributes;
  if (PerAxis(*parameter_dims)) {
    const int64_t rank = static_cast<int64_t>(dims->size());
    if (!axis_from_end) {
      return Error(node) << "the scale and zero point of input " << input
                         << " must be one value";
    }
    if (parameter_dims->size() != 1 || rank < *axis_from_end) {
      return Error(node) << "a scale or zero point of input " << input
                         << " must be one value or a vector along axis "
                         << rank - *axis_from_end;
    }
    attributes.set("axis", builder_.getI64IntegerAttr(rank - *axis_from_end));
  }
  return BuildStep(node, "nn.dequantize_linear", std::move(operands),
                   std::move(attributes), temporaries);
}

mlir::FailureOr<GraphValue> Importer::ImportQuantizedProduct(
    const onnx::NodeProto& node) {
  const std::string& type = node.op_type();
  const bool linear = type == "QLinearMatMul" || type == "QLinearConv";
  const bool conv = type == "QLinearConv" || type == "ConvInteger";
  // Inputs: QLinear* x, x_scale, x_zp, w, w_scale, w_zp, y_scale, y_zp
  // (QLinearConv: bias); *Integer x, w, x_zp, w_zp.
  const int minimum = linear ? 8 : 2;
  if (node.input_size() < minimum) {
    return Error(node) << "needs " << minimum << " inputs";
  }
  static constexpr llvm::StringRef kConvAttributes[] = {
      "auto_pad", "dilations", "group", "kernel_shape", "pads", "strides"};
  OpSpec attributes;
  if (mlir::failed(
          CopyAttributes(node,
                         conv ? llvm::ArrayRef<llvm::StringRef>(kConvAttributes)
                              : llvm::ArrayRef<llvm::StringRef>(),
                         attributes))) {
    return mlir::failure();
  }
  // Operand indices: x, its scale and zero point; w, its scale and zero
  // point (-1: no scale, an integer product's).
  const int x = 0, x_scale = linear ? 1 : -1, x_zero_point = 2;
  const int w = linear ? 3 : 1, w_scale = linear ? 4 : -1,
            w_zero_point = linear ? 5 : 3;
  const std::optional<std::vector<int64_t>> w_dims = InputDims(node, w);
  if (!w_dims || (conv && w_dims->size() < 3)) {
    return Error(node) << "the weights need a static shape";
  }
  // A product's left operand may be quantized per row, its right one per
  // column; a convolution's input per tensor, its weights per output
  // channel (axis 0).
  const std::optional<int64_t> x_axis_from_end =
      conv ? std::nullopt : std::optional<int64_t>(2);
  const int64_t w_axis_from_end =
      conv ? static_cast<int64_t>(w_dims->size()) : 1;
  std::vector<std::string> temporaries;
  auto result = [&]() -> mlir::FailureOr<GraphValue> {
    auto dx = DequantizeStep(node, x, x_scale, x_zero_point, x_axis_from_end,
                             temporaries);
    if (mlir::failed(dx)) return mlir::failure();
    auto dw = DequantizeStep(node, w, w_scale, w_zero_point, w_axis_from_end,
                             temporaries);
    if (mlir::failed(dw)) return mlir::failure();
    std::vector<std::string> operands = {*dx, *dw};
    if (type == "QLinearConv" && Input(node, 8) != nullptr) {
      // The bias: i32 at scale x_scale * w_scale, zero point 0.
      auto scale = BuildStep(node, "nn.mul", {node.input(1), node.input(4)}, {},
                             temporaries);
      if (mlir::failed(scale)) return mlir::failure();
      mlir::NamedAttrList axis;
      axis.set("axis", builder_.getI64IntegerAttr(0));
      auto bias = BuildStep(node, "nn.dequantize_linear",
                            {node.input(8), *scale}, axis, temporaries);
      if (mlir::failed(bias)) return mlir::failure();
      operands.push_back(*bias);
    }
    auto product = BuildStep(
        node, conv ? "nn.conv" : "nn.matmul", std::move(operands),
        conv ? attributes.attributes : mlir::NamedAttrList(), temporaries);
    if (mlir::failed(product)) return mlir::failure();
    mlir::FailureOr<std::string> y;
    if (linear) {
      y = BuildStep(node, "nn.quantize_linear",
                    {*product, node.input(6), node.input(7)}, {}, temporaries);
    } else {
      mlir::NamedAttrList to;
      to.set("to", mlir::TypeAttr::get(nn::MlirTypeOf(DType::kI32, context_)));
      y = BuildStep(node, "nn.cast", {*product}, to, temporaries);
    }
    if (mlir::failed(y)) return mlir::failure();
    return values_[*y];
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return result;
}

mlir::FailureOr<GraphValue> Importer::ImportIntegerMaxPool(
    const onnx::NodeProto& node, DType dtype) {
  OpSpec spec;  // nn.max_pool with the node's attributes.
  if (mlir::failed(Translate(node, spec))) return mlir::failure();
  auto to = [&](DType type) {
    mlir::NamedAttrList attributes;
    attributes.set("to", mlir::TypeAttr::get(nn::MlirTypeOf(type, context_)));
    return attributes;
  };
  std::vector<std::string> temporaries;
  auto result = [&]() -> mlir::FailureOr<GraphValue> {
    auto wide = BuildStep(node, "nn.cast", {spec.operands.at(0)},
                          to(DType::kF32), temporaries);
    if (mlir::failed(wide)) return mlir::failure();
    auto pooled =
        BuildStep(node, spec.op_name, {*wide}, spec.attributes, temporaries);
    if (mlir::failed(pooled)) return mlir::failure();
    auto y = BuildStep(node, "nn.cast", {*pooled}, to(dtype), temporaries);
    if (mlir::failed(y)) return mlir::failure();
    return values_[*y];
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return result;
}

}  // namespace asyncrt::onnx_internal
