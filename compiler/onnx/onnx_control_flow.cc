// ONNX control flow whose decisions are known at compile time (see
// onnx_importer_internal.h): If on a constant condition imports the branch
// taken; Loop with a constant trip count or condition, and Scan over its
// inputs' static length, import their body once per iteration (unrolled).
// With static shapes most exported conditions and trip counts fold to
// constants (they test shapes); the others are errors naming the node.
#include <algorithm>
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
namespace {

// The graph attribute `name` of `node`, or null.
const onnx::GraphProto* GraphAttribute(const onnx::NodeProto& node,
                                       const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name && attribute.has_g()) return &attribute.g();
  }
  return nullptr;
}

// An integer attribute of `node`, or `fallback`.
int64_t IntAttribute(const onnx::NodeProto& node, const std::string& name,
                     int64_t fallback) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) return attribute.i();
  }
  return fallback;
}

// An integer-list attribute of `node`, or empty.
std::vector<int64_t> IntsAttribute(const onnx::NodeProto& node,
                                   const std::string& name) {
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == name) {
      return std::vector<int64_t>(attribute.ints().begin(),
                                  attribute.ints().end());
    }
  }
  return {};
}

}  // namespace

mlir::FailureOr<std::vector<GraphValue>> Importer::ImportSubgraph(
    const onnx::NodeProto& node, const onnx::GraphProto& graph,
    const std::vector<GraphValue>& inputs) {
  if (graph.input_size() != static_cast<int>(inputs.size())) {
    return Error(node) << "its body takes " << graph.input_size()
                       << " inputs, expected " << inputs.size();
  }
  if (++subgraph_depth_ > kMaxSubgraphDepth) {
    --subgraph_depth_;
    return Error(node) << "subgraphs nest deeper than " << kMaxSubgraphDepth;
  }
  // The subgraph's names live while it is imported: values it shadows are
  // put back, and every name it defines is dropped afterwards (an unrolled
  // body defines the same names once per iteration).
  std::vector<std::pair<std::string, std::optional<GraphValue>>> shadowed;
  auto define = [&](const std::string& name, GraphValue value) {
    auto it = values_.find(name);
    shadowed.emplace_back(name, it == values_.end()
                                    ? std::nullopt
                                    : std::optional<GraphValue>(it->second));
    values_[name] = std::move(value);
  };
  auto result = [&]() -> mlir::FailureOr<std::vector<GraphValue>> {
    for (int i = 0; i < graph.input_size(); ++i) {
      define(graph.input(i).name(), inputs[i]);
    }
    for (const onnx::TensorProto& initializer : graph.initializer()) {
      absl::StatusOr<ConstTensor> tensor = ReadTensorProto(initializer);
      if (!tensor.ok()) {
        return Error(node) << "initializer '" << initializer.name()
                           << "': " << std::string(tensor.status().message());
      }
      GraphValue value;
      value.constant = std::make_shared<ConstTensor>(*std::move(tensor));
      define(initializer.name(), std::move(value));
    }
    for (const onnx::NodeProto& inner : graph.node()) {
      if (++unrolled_nodes_ > kMaxUnrolledNodes) {
        return Error(node) << "unrolling its control flow imports more than "
                           << kMaxUnrolledNodes << " nodes";
      }
      for (const std::string& output : inner.output()) {
        if (!output.empty() && !values_.count(output)) {
          shadowed.emplace_back(output, std::nullopt);
        }
      }
      if (mlir::failed(ImportNode(inner))) return mlir::failure();
    }
    std::vector<GraphValue> outputs;
    for (const onnx::ValueInfoProto& output : graph.output()) {
      auto it = values_.find(output.name());
      if (it == values_.end()) {
        return Error(node) << "its body's output '" << output.name()
                           << "' is never computed";
      }
      outputs.push_back(it->second);
    }
    return outputs;
  }();
  for (auto it = shadowed.rbegin(); it != shadowed.rend(); ++it) {
    if (it->second) {
      values_[it->first] = *it->second;
    } else {
      values_.erase(it->first);
    }
  }
  --subgraph_depth_;
  return result;
}

mlir::FailureOr<std::vector<GraphValue>> Importer::ImportIf(
    const onnx::NodeProto& node) {
  const onnx::GraphProto* then_branch = GraphAttribute(node, "then_branch");
  const onnx::GraphProto* else_branch = GraphAttribute(node, "else_branch");
  if (!then_branch || !else_branch || node.input_size() != 1) {
    return Error(node) << "needs a condition and both branches";
  }
  auto cond = ConstantInput(node, 0, "cond");
  if (mlir::failed(cond)) return mlir::failure();
  const std::optional<double> taken = *cond ? Scalar(**cond) : std::nullopt;
  if (!taken) return Error(node) << "its condition must be one value";
  const onnx::GraphProto& branch = *taken != 0 ? *then_branch : *else_branch;
  if (branch.output_size() != node.output_size()) {
    return Error(node) << "its branch has " << branch.output_size()
                       << " outputs, the node " << node.output_size();
  }
  return ImportSubgraph(node, branch, {});
}

mlir::FailureOr<GraphValue> Importer::Stack(
    const onnx::NodeProto& node, const std::vector<GraphValue>& slices,
    int64_t axis, std::vector<std::string>& temporaries) {
  if (slices.empty()) {
    return Error(node) << "has a scan output of no iterations";
  }
  std::vector<std::string> parts;
  for (const GraphValue& slice : slices) {
    mlir::NamedAttrList unsqueeze;
    unsqueeze.set("axes", builder_.getI64ArrayAttr({axis}));
    temporaries.push_back(AddTemporary(slice));
    auto part = BuildStep(node, "nn.unsqueeze", {temporaries.back()}, unsqueeze,
                          temporaries);
    if (mlir::failed(part)) return mlir::failure();
    parts.push_back(*part);
  }
  if (parts.size() == 1) return values_[parts[0]];
  mlir::NamedAttrList concat;
  concat.set("axis", builder_.getI64IntegerAttr(axis));
  auto whole = BuildStep(node, "nn.concat", parts, concat, temporaries);
  if (mlir::failed(whole)) return mlir::failure();
  return values_[*whole];
}

mlir::FailureOr<std::vector<GraphValue>> Importer::ImportLoop(
    const onnx::NodeProto& node) {
  const onnx::GraphProto* body = GraphAttribute(node, "body");
  if (!body || node.input_size() < 2) {
    return Error(node) << "needs a body, a trip count and a condition";
  }
  const int carried = node.input_size() - 2;
  const int scanned = node.output_size() - carried;
  if (scanned < 0 || body->output_size() != 1 + carried + scanned) {
    return Error(node) << "its body's outputs do not match its " << carried
                       << " loop-carried values";
  }
  auto trip_count = ConstantInput(node, 0, "M");
  auto first_cond = ConstantInput(node, 1, "cond");
  if (mlir::failed(trip_count) || mlir::failed(first_cond)) {
    return mlir::failure();
  }
  std::optional<int64_t> limit;
  if (*trip_count) {
    std::optional<double> m = Scalar(**trip_count);
    if (!m) return Error(node) << "its trip count must be one value";
    limit = static_cast<int64_t>(*m);
  }
  bool running = true;
  if (*first_cond) {
    std::optional<double> c = Scalar(**first_cond);
    if (!c) return Error(node) << "its condition must be one value";
    running = *c != 0;
  }
  std::vector<GraphValue> state;
  for (int i = 0; i < carried; ++i) {
    const GraphValue* value = Input(node, 2 + i);
    if (value == nullptr)
      return Error(node) << "input " << 2 + i << " is empty";
    state.push_back(*value);
  }
  std::vector<std::vector<GraphValue>> scans(scanned);
  for (int64_t i = 0; running && (!limit || i < *limit); ++i) {
    std::vector<GraphValue> inputs = {IntegerConstant(DType::kI64, {}, {i}),
                                      IntegerConstant(DType::kI1, {}, {1})};
    inputs.insert(inputs.end(), state.begin(), state.end());
    auto outputs = ImportSubgraph(node, *body, inputs);
    if (mlir::failed(outputs)) return mlir::failure();
    const GraphValue& cond = (*outputs)[0];
    std::optional<double> next =
        cond.constant ? Scalar(*cond.constant) : std::nullopt;
    if (!next) {
      return Error(node) << "its body's condition must be a constant at "
                            "compile time (unrolled)";
    }
    running = *next != 0;
    state.assign(outputs->begin() + 1, outputs->begin() + 1 + carried);
    for (int k = 0; k < scanned; ++k) {
      scans[k].push_back((*outputs)[1 + carried + k]);
    }
  }
  std::vector<std::string> temporaries;
  auto results = [&]() -> mlir::FailureOr<std::vector<GraphValue>> {
    std::vector<GraphValue> results = state;
    for (int k = 0; k < scanned; ++k) {
      auto stacked = Stack(node, scans[k], 0, temporaries);
      if (mlir::failed(stacked)) return mlir::failure();
      results.push_back(*stacked);
    }
    return results;
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return results;
}

mlir::FailureOr<std::vector<GraphValue>> Importer::ImportScan(
    const onnx::NodeProto& node) {
  const onnx::GraphProto* body = GraphAttribute(node, "body");
  const int64_t num_scan_inputs = IntAttribute(node, "num_scan_inputs", -1);
  if (opset_ < 9) {
    return Error(node) << "Scan before opset 9 (with a batch axis) is not "
                          "supported";
  }
  const int carried = node.input_size() - static_cast<int>(num_scan_inputs);
  if (!body || num_scan_inputs < 1 || carried < 0 ||
      body->input_size() != node.input_size() ||
      body->output_size() != node.output_size() ||
      node.output_size() < carried) {
    return Error(node) << "needs a body and num_scan_inputs that match its "
                          "inputs and outputs";
  }
  const int scanned = node.output_size() - carried;
  std::vector<int64_t> input_axes = IntsAttribute(node, "scan_input_axes");
  std::vector<int64_t> input_reversed =
      IntsAttribute(node, "scan_input_directions");
  std::vector<int64_t> output_axes = IntsAttribute(node, "scan_output_axes");
  std::vector<int64_t> output_reversed =
      IntsAttribute(node, "scan_output_directions");
  input_axes.resize(num_scan_inputs, 0);
  input_reversed.resize(num_scan_inputs, 0);
  output_axes.resize(scanned, 0);
  output_reversed.resize(scanned, 0);
  std::vector<GraphValue> state;
  for (int i = 0; i < carried; ++i) {
    const GraphValue* value = Input(node, i);
    if (value == nullptr) return Error(node) << "input " << i << " is empty";
    state.push_back(*value);
  }
  // Every scan input's length along its axis: the iterations.
  int64_t length = -1;
  for (int j = 0; j < num_scan_inputs; ++j) {
    const std::optional<std::vector<int64_t>> dims =
        InputDims(node, carried + j);
    const int64_t rank = dims ? static_cast<int64_t>(dims->size()) : 0;
    int64_t& axis = input_axes[j];
    if (axis < 0) axis += rank;
    if (!dims || axis < 0 || axis >= rank) {
      return Error(node) << "scan input " << j << " has no axis "
                         << input_axes[j];
    }
    if (length >= 0 && (*dims)[axis] != length) {
      return Error(node) << "its scan inputs differ in length";
    }
    length = (*dims)[axis];
  }
  std::vector<std::string> temporaries;
  auto results = [&]() -> mlir::FailureOr<std::vector<GraphValue>> {
    std::vector<std::vector<GraphValue>> scans(scanned);
    for (int64_t t = 0; t < length; ++t) {
      std::vector<GraphValue> inputs = state;
      for (int j = 0; j < num_scan_inputs; ++j) {
        const int64_t index = input_reversed[j] ? length - 1 - t : t;
        mlir::NamedAttrList slice;
        slice.set("starts", builder_.getI64ArrayAttr({index}));
        slice.set("ends", builder_.getI64ArrayAttr({index + 1}));
        slice.set("axes", builder_.getI64ArrayAttr({input_axes[j]}));
        auto part = BuildStep(node, "nn.slice", {node.input(carried + j)},
                              slice, temporaries);
        if (mlir::failed(part)) return mlir::failure();
        mlir::NamedAttrList squeeze;
        squeeze.set("axes", builder_.getI64ArrayAttr({input_axes[j]}));
        auto element =
            BuildStep(node, "nn.squeeze", {*part}, squeeze, temporaries);
        if (mlir::failed(element)) return mlir::failure();
        inputs.push_back(values_[*element]);
      }
      auto outputs = ImportSubgraph(node, *body, inputs);
      if (mlir::failed(outputs)) return mlir::failure();
      state.assign(outputs->begin(), outputs->begin() + carried);
      for (int k = 0; k < scanned; ++k) {
        scans[k].push_back((*outputs)[carried + k]);
      }
    }
    std::vector<GraphValue> results = state;
    for (int k = 0; k < scanned; ++k) {
      if (output_reversed[k]) {
        std::reverse(scans[k].begin(), scans[k].end());
      }
      // The stacked result's rank: one more than an iteration's.
      int64_t rank = 1;
      if (!scans[k].empty()) {
        const GraphValue& first = scans[k][0];
        if (first.constant) {
          rank += first.constant->dims.size();
        } else if (auto tensor = mlir::dyn_cast<mlir::RankedTensorType>(
                       first.value.getType())) {
          rank += tensor.getRank();
        }
      }
      const int64_t axis =
          output_axes[k] < 0 ? output_axes[k] + rank : output_axes[k];
      if (axis < 0 || axis >= rank) {
        return Error(node) << "scan output " << k << " has no axis "
                           << output_axes[k];
      }
      auto stacked = Stack(node, scans[k], axis, temporaries);
      if (mlir::failed(stacked)) return mlir::failure();
      results.push_back(*stacked);
    }
    return results;
  }();
  for (const std::string& name : temporaries) values_.erase(name);
  return results;
}

}  // namespace asyncrt::onnx_internal
