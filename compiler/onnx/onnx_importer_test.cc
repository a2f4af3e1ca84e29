// Tests of the ONNX importer on malformed models: each is one clear
// diagnostic naming the problem, and no corruption of a valid model's bytes
// crashes or hangs it (a deterministic mutation run, as for BEF files).
#include "asyncrt/compiler/onnx_importer.h"

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "asyncrt/dialects/register_dialects.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "onnx/onnx_pb.h"

namespace asyncrt {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// Declares `value` an f32 tensor `name` of `dims`.
void SetF32Value(onnx::ValueInfoProto* value, const std::string& name,
                 const std::vector<int64_t>& dims) {
  value->set_name(name);
  auto* tensor = value->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t dim : dims) {
    tensor->mutable_shape()->add_dim()->set_dim_value(dim);
  }
}

// Adds an f32 initializer `name` of `dims` holding 0, step, 2 step, ...
void AddRampInitializer(onnx::GraphProto& graph, const std::string& name,
                        const std::vector<int64_t>& dims, float step) {
  onnx::TensorProto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t dim : dims) {
    tensor->add_dims(dim);
    count *= dim;
  }
  for (int64_t i = 0; i < count; ++i) tensor->add_float_data(step * i);
}

// y = relu(conv(x, w, b)) + x, with initializers w and b.
onnx::ModelProto SampleModel() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto& graph = *model.mutable_graph();
  SetF32Value(graph.add_input(), "x", {1, 2, 4, 4});
  SetF32Value(graph.add_output(), "y", {1, 2, 4, 4});
  AddRampInitializer(graph, "w", {2, 2, 3, 3}, 0.1f);
  AddRampInitializer(graph, "b", {2}, 0.1f);
  onnx::NodeProto* conv = graph.add_node();
  conv->set_name("conv");
  conv->set_op_type("Conv");
  for (const char* name : {"x", "w", "b"}) conv->add_input(name);
  conv->add_output("c");
  onnx::AttributeProto* pads = conv->add_attribute();
  pads->set_name("pads");
  pads->set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) pads->add_ints(1);
  onnx::NodeProto* relu = graph.add_node();
  relu->set_name("relu");
  relu->set_op_type("Relu");
  relu->add_input("c");
  relu->add_output("r");
  onnx::NodeProto* add = graph.add_node();
  add->set_name("add");
  add->set_op_type("Add");
  add->add_input("r");
  add->add_input("x");
  add->add_output("y");
  return model;
}

class OnnxImporterTest : public ::testing::Test {
 protected:
  OnnxImporterTest() {
    mlir::DialectRegistry registry;
    RegisterAllDialects(registry);
    context_ = std::make_unique<mlir::MLIRContext>(registry);
  }

  // The first diagnostic of importing `bytes`, or "" if it imported.
  std::string Import(const std::string& bytes) {
    std::string first;
    mlir::ScopedDiagnosticHandler handler(context_.get(),
                                          [&](mlir::Diagnostic& diagnostic) {
                                            if (first.empty())
                                              first = diagnostic.str();
                                            return mlir::success();
                                          });
    mlir::OwningOpRef<mlir::ModuleOp> module =
        ImportOnnxModel(bytes, "test.onnx", context_.get());
    if (module) return "";
    return first.empty() ? "failed without a diagnostic" : first;
  }
  std::string Import(const onnx::ModelProto& model) {
    return Import(model.SerializeAsString());
  }
  // The imported module's text, or "" with the diagnostic in ADD_FAILURE.
  std::string ImportedText(const onnx::ModelProto& model) {
    mlir::OwningOpRef<mlir::ModuleOp> module =
        ImportOnnxModel(model.SerializeAsString(), "test.onnx", context_.get());
    if (!module) {
      ADD_FAILURE() << Import(model);
      return "";
    }
    std::string text;
    llvm::raw_string_ostream os(text);
    module->print(os);
    return text;
  }

  std::unique_ptr<mlir::MLIRContext> context_;
};

TEST_F(OnnxImporterTest, SampleImports) {
  EXPECT_EQ(Import(SampleModel()), "");
}

// Sum, Max, Min and Mean take any number of inputs: a chain of binary ops
// (of the relu's input and the graph's).
TEST_F(OnnxImporterTest, VariadicElementwiseOps) {
  for (const char* type : {"Sum", "Max", "Min", "Mean"}) {
    for (int inputs : {1, 2, 3}) {
      SCOPED_TRACE(testing::Message() << type << " of " << inputs);
      onnx::ModelProto model = SampleModel();
      onnx::NodeProto* node = model.mutable_graph()->mutable_node(1);
      node->set_op_type(type);
      node->clear_input();
      for (int i = 0; i < inputs; ++i) node->add_input(i == 1 ? "x" : "c");
      EXPECT_EQ(Import(model), "");
    }
  }
  onnx::ModelProto model = SampleModel();
  onnx::NodeProto* node = model.mutable_graph()->mutable_node(1);
  node->set_op_type("Sum");
  node->clear_input();
  EXPECT_THAT(Import(model),
              HasSubstr("node 'relu' (Sum): needs at least one input"));
  node->add_input("c");
  node->add_input("");
  EXPECT_THAT(Import(model), HasSubstr("node 'relu' (Sum): input 1 is empty"));
}

// A scalar Constant node named `name` of `type` holding `bytes`.
void AddScalarConstant(onnx::GraphProto& graph, const std::string& name,
                       onnx::TensorProto::DataType type,
                       const std::string& bytes) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type("Constant");
  node->add_output(name);
  onnx::AttributeProto* value = node->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(type);
  value->mutable_t()->set_raw_data(bytes);
}

std::string FloatBytes(float value) {
  return std::string(reinterpret_cast<const char*>(&value), sizeof(value));
}

// The sample's relu reads `x + Range(start, limit, delta)` (swin_t's
// relative positions come from Range of shapes).
onnx::ModelProto RangeModel(float start, float limit, float delta) {
  onnx::ModelProto model = SampleModel();
  onnx::GraphProto& graph = *model.mutable_graph();
  onnx::GraphProto nodes;
  AddScalarConstant(nodes, "start", onnx::TensorProto::FLOAT,
                    FloatBytes(start));
  AddScalarConstant(nodes, "limit", onnx::TensorProto::FLOAT,
                    FloatBytes(limit));
  AddScalarConstant(nodes, "delta", onnx::TensorProto::FLOAT,
                    FloatBytes(delta));
  onnx::NodeProto* range = nodes.add_node();
  range->set_name("range");
  range->set_op_type("Range");
  for (const char* name : {"start", "limit", "delta"}) range->add_input(name);
  range->add_output("positions");
  onnx::NodeProto* add = nodes.add_node();
  add->set_op_type("Add");
  add->add_input("c");
  add->add_input("positions");
  add->add_output("shifted");
  // Conv, the new nodes, then relu (now reading them) and the final add.
  for (int i = 1; i < graph.node_size(); ++i) *nodes.add_node() = graph.node(i);
  graph.mutable_node()->DeleteSubrange(1, graph.node_size() - 1);
  for (const onnx::NodeProto& node : nodes.node()) *graph.add_node() = node;
  for (onnx::NodeProto& node : *graph.mutable_node()) {
    if (node.op_type() == "Relu") node.set_input(0, "shifted");
  }
  return model;
}

TEST_F(OnnxImporterTest, RangeOfConstantsIsAConstant) {
  EXPECT_THAT(ImportedText(RangeModel(0.5f, 2.25f, 0.5f)),
              HasSubstr("nn.constant dense<[5.000000e-01, 1.000000e+00, "
                        "1.500000e+00, 2.000000e+00]> : tensor<4xf32>"));
  // Downwards; an empty range where the delta points away from the limit.
  EXPECT_EQ(Import(RangeModel(4, 0, -1)), "");
  EXPECT_THAT(Import(RangeModel(0, 4, -1)),
              HasSubstr("shapes [1, 2, 4, 4] and [0] do not broadcast"));
  EXPECT_THAT(Import(RangeModel(0, 4, 0)),
              HasSubstr("node 'range' (Range): delta must not be 0"));
  onnx::ModelProto from_input = RangeModel(0, 4, 1);
  from_input.mutable_graph()->mutable_node(4)->set_input(1, "x");
  EXPECT_THAT(Import(from_input),
              HasSubstr("input 1 (limit) must be a constant at compile time"));
}

// Dropout at inference is its input, and its mask (opset 10 on) all true;
// in training mode with a ratio of 0 too. Training with a ratio above 0
// would draw random masks.
TEST_F(OnnxImporterTest, DropoutAtInference) {
  onnx::ModelProto model = SampleModel();
  onnx::GraphProto& graph = *model.mutable_graph();
  AddScalarConstant(graph, "ratio", onnx::TensorProto::FLOAT, FloatBytes(0));
  AddScalarConstant(graph, "training", onnx::TensorProto::BOOL,
                    std::string(1, '\1'));
  onnx::NodeProto* dropout = graph.add_node();
  dropout->set_name("dropout");
  dropout->set_op_type("Dropout");
  for (const char* name : {"y", "ratio", "training"}) dropout->add_input(name);
  dropout->add_output("dropped");
  dropout->add_output("mask");
  graph.mutable_output(0)->set_name("dropped");
  *graph.add_output() = graph.output(0);
  graph.mutable_output(1)->set_name("mask");
  graph.mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::BOOL);
  const std::string text = ImportedText(model);
  EXPECT_THAT(text, HasSubstr("nn.constant dense<true> : tensor<1x2x4x4xi1>"));
  EXPECT_THAT(text, Not(HasSubstr("identity")));

  graph.mutable_node(graph.node_size() - 3)
      ->mutable_attribute(0)
      ->mutable_t()
      ->set_raw_data(FloatBytes(0.25f));
  EXPECT_THAT(Import(model),
              HasSubstr("node 'dropout' (Dropout): training mode (random "
                        "masks, ratio 0.25) is not supported"));
}

// y = GRU(x, w, r, [no B], [no sequence_lens], h0) with activations given:
// the gaps before h0 become zeros and full lengths.
onnx::ModelProto GruModel() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(14);
  onnx::GraphProto& graph = *model.mutable_graph();
  SetF32Value(graph.add_input(), "x", {2, 1, 3});
  SetF32Value(graph.add_output(), "y_h", {1, 1, 4});
  AddRampInitializer(graph, "w", {1, 12, 3}, 0.01f);
  AddRampInitializer(graph, "r", {1, 12, 4}, 0.01f);
  AddRampInitializer(graph, "h0", {1, 1, 4}, 0.01f);
  onnx::NodeProto* gru = graph.add_node();
  gru->set_name("gru");
  gru->set_op_type("GRU");
  for (const char* name : {"x", "w", "r", "", "", "h0"}) gru->add_input(name);
  gru->add_output("");
  gru->add_output("y_h");
  onnx::AttributeProto* hidden = gru->add_attribute();
  hidden->set_name("hidden_size");
  hidden->set_type(onnx::AttributeProto::INT);
  hidden->set_i(4);
  onnx::AttributeProto* activations = gru->add_attribute();
  activations->set_name("activations");
  activations->set_type(onnx::AttributeProto::STRINGS);
  activations->add_strings("Sigmoid");
  activations->add_strings("Relu");
  return model;
}

TEST_F(OnnxImporterTest, RecurrentLayersFillGapsInTheirInputs) {
  const std::string text = ImportedText(GruModel());
  EXPECT_THAT(text, HasSubstr("nn.constant dense<0.000000e+00> : "
                              "tensor<1x24xf32>"));
  EXPECT_THAT(text, HasSubstr("nn.constant dense<2> : tensor<1xi32>"));
  EXPECT_THAT(text, HasSubstr("activations = [\"Sigmoid\", \"Relu\"]"));
  EXPECT_THAT(text, HasSubstr("nn.gru"));

  onnx::ModelProto no_r = GruModel();
  no_r.mutable_graph()->mutable_node(0)->set_input(2, "");
  EXPECT_THAT(Import(no_r), HasSubstr("node 'gru' (GRU): needs inputs X, W "
                                      "and R"));
  onnx::ModelProto unknown = GruModel();
  unknown.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_name(
      "input_forget");
  EXPECT_THAT(Import(unknown), HasSubstr("node 'gru' (GRU): attribute "
                                         "'input_forget' is not supported"));
  onnx::ModelProto bad_activation = GruModel();
  bad_activation.mutable_graph()
      ->mutable_node(0)
      ->mutable_attribute(1)
      ->set_strings(1, "Cube");
  EXPECT_THAT(Import(bad_activation),
              HasSubstr("nn.gru: unknown activation 'Cube'"));
}

TEST_F(OnnxImporterTest, MalformedModelsAreNamedErrors) {
  {
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()->mutable_node(1)->set_input(0, "nowhere");
    EXPECT_THAT(Import(model), HasSubstr("node 'relu' (Relu): input "
                                         "'nowhere' is not defined"));
  }
  {  // A cycle: relu reads the add's output, which comes after it.
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()->mutable_node(1)->set_input(0, "y");
    EXPECT_THAT(Import(model), HasSubstr("(a dangling name or a cycle)"));
  }
  {
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()->mutable_node(1)->set_output(0, "c");
    EXPECT_THAT(Import(model), HasSubstr("output 'c' is defined twice"));
  }
  {  // An attribute of another type than the op's (the fuzzer found it
     // cast unchecked).
    onnx::ModelProto model = SampleModel();
    model.mutable_opset_import(0)->set_version(11);
    onnx::NodeProto* node = model.mutable_graph()->mutable_node(1);
    node->set_op_type("Softmax");
    onnx::AttributeProto* axis = node->add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::FLOAT);
    axis->set_f(1.5f);
    EXPECT_THAT(Import(model), HasSubstr("node 'relu' (Softmax): attribute "
                                         "'axis' is not an integer"));
  }
  {
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()->mutable_node(1)->set_op_type("Frobnicate");
    EXPECT_THAT(Import(model),
                HasSubstr("node 'relu' (Frobnicate): unsupported op"));
  }
  {
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_type(
        onnx::AttributeProto::GRAPH);
    EXPECT_THAT(Import(model), HasSubstr("has an unsupported type"));
  }
  {  // Channels that do not match the weights: the shape function says so.
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()
        ->mutable_input(0)
        ->mutable_type()
        ->mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(1)
        ->set_dim_value(3);
    EXPECT_THAT(Import(model), HasSubstr("nn.conv: input channels 3"));
  }
  {
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()->mutable_initializer(0)->add_float_data(1.0f);
    EXPECT_THAT(Import(model), HasSubstr("initializer 'w': holds 148 bytes "
                                         "where its shape needs 144"));
  }
  {
    onnx::ModelProto model = SampleModel();
    onnx::TensorProto* w = model.mutable_graph()->mutable_initializer(0);
    w->set_dims(0, int64_t{1} << 40);
    EXPECT_THAT(Import(model), HasSubstr("too many elements"));
    w->set_dims(0, -2);
    EXPECT_THAT(Import(model), HasSubstr("negative dimension"));
  }
  {
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()->mutable_initializer(1)->set_data_location(
        onnx::TensorProto::EXTERNAL);
    EXPECT_THAT(Import(model), HasSubstr("external data"));
  }
  {
    onnx::ModelProto model = SampleModel();
    model.mutable_opset_import(0)->set_version(23);
    EXPECT_THAT(Import(model), HasSubstr("unsupported ONNX opset 23"));
  }
  {
    onnx::ModelProto model = SampleModel();
    model.mutable_graph()->mutable_output(0)->set_name("never");
    EXPECT_THAT(Import(model),
                HasSubstr("graph output 'never' is never computed"));
  }
  EXPECT_THAT(Import(std::string("\x08\x07garbage", 9)),
              HasSubstr("not a valid ONNX model"));
}

// y = op(x, initializers...) at `opset`: x is f32 [1, 4, 2, 2]; the
// initializers are i64 tensors of one dimension, or f32 ones when named
// "scale" or "bias".
onnx::ModelProto OneNodeModel(
    const std::string& op, int64_t opset,
    const std::vector<std::pair<std::string, std::vector<int64_t>>>&
        initializers = {}) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(opset);
  onnx::GraphProto& graph = *model.mutable_graph();
  SetF32Value(graph.add_input(), "x", {1, 4, 2, 2});
  SetF32Value(graph.add_output(), "y", {});
  onnx::NodeProto* node = graph.add_node();
  node->set_name("node");
  node->set_op_type(op);
  node->add_input("x");
  node->add_output("y");
  for (const auto& [name, values] : initializers) {
    node->add_input(name);
    if (name == "scale" || name == "bias") {
      AddRampInitializer(graph, name, {static_cast<int64_t>(values.size())},
                         0.5f);
      continue;
    }
    onnx::TensorProto* tensor = graph.add_initializer();
    tensor->set_name(name);
    tensor->set_data_type(onnx::TensorProto::INT64);
    tensor->add_dims(values.size());
    for (int64_t value : values) tensor->add_int64_data(value);
  }
  return model;
}

void SetIntAttribute(onnx::NodeProto* node, const std::string& name,
                     int64_t value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::INT);
  attribute->set_i(value);
}

void SetStringAttribute(onnx::NodeProto* node, const std::string& name,
                        const std::string& value) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::STRING);
  attribute->set_s(value);
}

// What opsets 18 to 22 added that the runtime cannot do is one diagnostic
// naming the node; what it can do imports (their values are checked by
// onnx_opset_test).
TEST_F(OnnxImporterTest, OpsetsEighteenToTwentyTwoRefuseWhatTheyCannot) {
  {
    onnx::ModelProto model = OneNodeModel("ReduceMean", 18, {{"axes", {1}}});
    EXPECT_EQ(Import(model), "");
    model.mutable_graph()->mutable_initializer(0)->set_int64_data(0, 9);
    EXPECT_THAT(Import(model), HasSubstr("axis 9 is out of range"));
  }
  {
    onnx::ModelProto model = OneNodeModel("Split", 18);
    model.mutable_graph()->mutable_node(0)->add_output("z");
    SetIntAttribute(model.mutable_graph()->mutable_node(0), "num_outputs", 3);
    EXPECT_THAT(Import(model), HasSubstr("node 'node' (Split): num_outputs 3 "
                                         "does not match its 2 outputs"));
  }
  {
    onnx::ModelProto model =
        OneNodeModel("Pad", 18, {{"pads", {1, 1, 1}}, {"value", {}}});
    model.mutable_graph()->mutable_node(0)->set_input(2, "");
    model.mutable_graph()->mutable_node(0)->add_input("axes");
    onnx::TensorProto* axes = model.mutable_graph()->add_initializer();
    axes->set_name("axes");
    axes->set_data_type(onnx::TensorProto::INT64);
    axes->add_dims(2);
    axes->add_int64_data(1);
    axes->add_int64_data(3);
    EXPECT_THAT(Import(model), HasSubstr("needs 2 pads per axis"));
  }
  {
    onnx::ModelProto model = OneNodeModel(
        "Resize", 18, {{"roi", {}}, {"scales", {}}, {"sizes", {1, 4, 1, 1}}});
    onnx::NodeProto* node = model.mutable_graph()->mutable_node(0);
    node->set_input(1, "");
    node->set_input(2, "");
    SetStringAttribute(node, "mode", "linear");
    EXPECT_EQ(Import(model), "");
    SetIntAttribute(node, "antialias", 1);
    EXPECT_THAT(Import(model),
                HasSubstr("antialias = 1 when downscaling is not supported"));
    node->mutable_attribute()->RemoveLast();
    SetStringAttribute(node, "keep_aspect_ratio_policy", "not_larger");
    EXPECT_THAT(Import(model),
                HasSubstr("keep_aspect_ratio_policy 'not_larger' is not "
                          "supported"));
  }
  {
    onnx::ModelProto model = OneNodeModel(
        "GroupNormalization", 18, {{"scale", {0, 0, 0}}, {"bias", {0, 0, 0}}});
    SetIntAttribute(model.mutable_graph()->mutable_node(0), "num_groups", 3);
    EXPECT_THAT(Import(model),
                HasSubstr("num_groups 3 does not divide 4 channels"));
    model.mutable_graph()->mutable_node(0)->mutable_attribute(0)->set_i(2);
    EXPECT_THAT(Import(model), HasSubstr("input 1 must have shape [2]"));
    model.mutable_opset_import(0)->set_version(21);  // Per channel: [4].
    EXPECT_THAT(Import(model), HasSubstr("input 1 must have shape [4]"));
  }
  {
    onnx::ModelProto model = OneNodeModel("QuantizeLinear", 21, {});
    AddRampInitializer(*model.mutable_graph(), "scale", {}, 0.5f);
    model.mutable_graph()->mutable_node(0)->add_input("scale");
    SetIntAttribute(model.mutable_graph()->mutable_node(0), "block_size", 2);
    EXPECT_THAT(Import(model), HasSubstr("blocked quantization (block_size "
                                         "2) is not supported"));
  }
  {
    onnx::ModelProto model = OneNodeModel("Gelu", 20);
    SetStringAttribute(model.mutable_graph()->mutable_node(0), "approximate",
                       "sigmoid");
    EXPECT_THAT(Import(model), HasSubstr("unknown approximate 'sigmoid'"));
  }
  {
    onnx::ModelProto model = OneNodeModel("BitwiseNot", 18);
    EXPECT_THAT(Import(model),
                HasSubstr("nn.bitwise_not: argument 0 is f32; this op "
                          "computes in integers only"));
  }
}

// Adds a node `op` of `inputs` and `outputs` to `graph`.
onnx::NodeProto* AddNode(onnx::GraphProto& graph, const std::string& op,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(op);
  node->set_name(outputs.empty() ? op : outputs[0]);
  for (const std::string& input : inputs) node->add_input(input);
  for (const std::string& output : outputs) node->add_output(output);
  return node;
}

void SetGraphAttribute(onnx::NodeProto* node, const std::string& name,
                       const onnx::GraphProto& graph) {
  onnx::AttributeProto* attribute = node->add_attribute();
  attribute->set_name(name);
  attribute->set_type(onnx::AttributeProto::GRAPH);
  *attribute->mutable_g() = graph;
}

// A bool scalar initializer.
void AddBoolInitializer(onnx::GraphProto& graph, const std::string& name,
                        bool value) {
  onnx::TensorProto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(onnx::TensorProto::BOOL);
  tensor->add_int32_data(value ? 1 : 0);
}

// Control flow imports only where its decisions are known at compile time
// (it is inlined and unrolled); otherwise one diagnostic names the node, and
// unrolling is bounded, so no model makes the importer run away.
TEST_F(OnnxImporterTest, ControlFlowNeedsDecisionsKnownAtCompileTime) {
  onnx::GraphProto then_branch, else_branch;
  AddNode(then_branch, "Neg", {"x"}, {"t"});
  SetF32Value(then_branch.add_output(), "t", {1, 4, 2, 2});
  AddNode(else_branch, "Abs", {"x"}, {"e"});
  SetF32Value(else_branch.add_output(), "e", {1, 4, 2, 2});
  {  // A condition computed from the input's values.
    onnx::ModelProto model = OneNodeModel("ReduceMax", 13);
    onnx::GraphProto& graph = *model.mutable_graph();
    graph.mutable_node(0)->set_output(0, "largest");
    AddNode(graph, "Cast", {"largest"}, {"flag"})
        ->add_attribute()
        ->CopyFrom([] {
          onnx::AttributeProto to;
          to.set_name("to");
          to.set_type(onnx::AttributeProto::INT);
          to.set_i(onnx::TensorProto::BOOL);
          return to;
        }());
    AddNode(graph, "Squeeze", {"flag"}, {"cond"});
    onnx::NodeProto* branch = AddNode(graph, "If", {"cond"}, {"y"});
    SetGraphAttribute(branch, "then_branch", then_branch);
    SetGraphAttribute(branch, "else_branch", else_branch);
    EXPECT_THAT(Import(model), HasSubstr("node 'y' (If): input 0 (cond) must "
                                         "be a constant at compile time"));
    // With the condition known, the branch taken is imported inline.
    graph.mutable_node(3)->set_input(0, "known");
    AddBoolInitializer(graph, "known", false);
    const std::string text = ImportedText(model);
    EXPECT_THAT(text, HasSubstr("nn.abs"));
    EXPECT_THAT(text, Not(HasSubstr("nn.neg")));
  }
  {  // A Loop whose condition never turns false, and one decided by data.
    onnx::ModelProto model = OneNodeModel("Loop", 13);
    onnx::GraphProto& graph = *model.mutable_graph();
    onnx::NodeProto* loop = graph.mutable_node(0);
    loop->clear_input();
    loop->add_input("");
    loop->add_input("go");
    loop->add_input("x");
    AddBoolInitializer(graph, "go", true);
    onnx::GraphProto body;
    onnx::ValueInfoProto* i = body.add_input();
    i->set_name("i");
    onnx::ValueInfoProto* cond_in = body.add_input();
    cond_in->set_name("cond_in");
    SetF32Value(body.add_input(), "v", {1, 4, 2, 2});
    AddNode(body, "Identity", {"cond_in"}, {"cond_out"});
    AddNode(body, "Neg", {"v"}, {"v_out"});
    body.add_output()->set_name("cond_out");
    body.add_output()->set_name("v_out");
    SetGraphAttribute(loop, "body", body);
    EXPECT_THAT(Import(model),
                HasSubstr("unrolling its control flow imports more than "
                          "100000 nodes"));
    // cond_out = isnan(max(v)): decided by the data.
    onnx::NodeProto* largest = body.mutable_node(0);
    largest->set_op_type("ReduceMax");
    largest->set_input(0, "v");
    largest->set_output(0, "largest");
    SetIntAttribute(largest, "keepdims", 0);
    AddNode(body, "IsNaN", {"largest"}, {"cond_out"});
    loop->mutable_attribute(0)->mutable_g()->CopyFrom(body);
    EXPECT_THAT(Import(model), HasSubstr("must be a constant at compile time "
                                         "(unrolled)"));
  }
  {  // Ifs nested deeper than the importer follows.
    onnx::GraphProto inner = then_branch;
    for (int depth = 0; depth < 20; ++depth) {
      onnx::GraphProto outer;
      onnx::NodeProto* node = AddNode(outer, "If", {"known"}, {"t"});
      SetGraphAttribute(node, "then_branch", inner);
      SetGraphAttribute(node, "else_branch", else_branch);
      SetF32Value(outer.add_output(), "t", {1, 4, 2, 2});
      inner = outer;
    }
    onnx::ModelProto model = OneNodeModel("Identity", 13);
    onnx::GraphProto& graph = *model.mutable_graph();
    AddBoolInitializer(graph, "known", true);
    *graph.mutable_node(0) = inner.node(0);
    graph.mutable_node(0)->set_output(0, "y");
    EXPECT_THAT(Import(model), HasSubstr("subgraphs nest deeper than 16"));
  }
  {
    onnx::ModelProto model = OneNodeModel("Scan", 8);
    EXPECT_THAT(Import(model), HasSubstr("Scan before opset 9"));
  }
}

// Truncations and byte flips of a valid model: each imports or fails with
// a diagnostic; none may crash.
// Models of opsets 1 to 5 import as opset 6 where each op's definition is
// the same there (ONNX's schemas say since when), and are refused naming
// the first op that changed.
TEST_F(OnnxImporterTest, OldOpsetsImportWhereTheirOpsAreUnchanged) {
  EXPECT_THAT(ImportedText(OneNodeModel("GlobalAveragePool", 1)),
              HasSubstr("nn.global_average_pool"));
  EXPECT_THAT(ImportedText(OneNodeModel("Softplus", 3)),
              HasSubstr("nn.softplus"));
  EXPECT_THAT(Import(OneNodeModel("Relu", 5)),
              HasSubstr("node 'node' (Relu): opset 5's version of Relu (since "
                        "opset 1) is not supported: it changed before opset "
                        "6 (export the model at opset 6 or later)"));
  EXPECT_THAT(Import(OneNodeModel("Gelu", 4)),
              HasSubstr("node 'node' (Gelu): no such op in ONNX opset 4"));
}

// Adds an initializer `name` of `data_type` and `dims`, all zero bytes.
void AddZeroInitializer(onnx::GraphProto& graph, const std::string& name,
                        int32_t data_type, const std::vector<int64_t>& dims,
                        int64_t element_bytes) {
  onnx::TensorProto* tensor = graph.add_initializer();
  tensor->set_name(name);
  tensor->set_data_type(data_type);
  int64_t count = 1;
  for (int64_t dim : dims) {
    tensor->add_dims(dim);
    count *= dim;
  }
  tensor->set_raw_data(std::string(count * element_bytes, '\0'));
}

// QLinearConv, QLinearMatMul, MatMulInteger and ConvInteger import as
// dequantize, f32 op, quantize (onnx_opset_test runs them); what their
// dequantization cannot express is an error naming the input.
TEST_F(OnnxImporterTest, QuantizedProductsRefuseScalesTheyCannotApply) {
  constexpr int32_t kU8 = onnx::TensorProto::UINT8;
  constexpr int32_t kI8 = onnx::TensorProto::INT8;
  constexpr int32_t kF32 = onnx::TensorProto::FLOAT;
  // A QLinearConv whose input has a scale per channel.
  auto qlinear_conv = [&](std::vector<int64_t> x_scale_dims) {
    onnx::ModelProto model;
    model.set_ir_version(8);
    model.add_opset_import()->set_version(13);
    onnx::GraphProto& graph = *model.mutable_graph();
    onnx::ValueInfoProto* x = graph.add_input();
    x->set_name("x");
    auto* type = x->mutable_type()->mutable_tensor_type();
    type->set_elem_type(kU8);
    for (int64_t dim : {1, 2, 4, 4}) {
      type->mutable_shape()->add_dim()->set_dim_value(dim);
    }
    graph.add_output()->set_name("y");
    AddZeroInitializer(graph, "x_scale", kF32, x_scale_dims, 4);
    AddZeroInitializer(graph, "x_zero", kU8, x_scale_dims, 1);
    AddZeroInitializer(graph, "w", kI8, {3, 2, 3, 3}, 1);
    AddZeroInitializer(graph, "w_scale", kF32, {3}, 4);
    AddZeroInitializer(graph, "w_zero", kI8, {3}, 1);
    AddZeroInitializer(graph, "y_scale", kF32, {}, 4);
    AddZeroInitializer(graph, "y_zero", kU8, {}, 1);
    onnx::NodeProto* node = graph.add_node();
    node->set_name("qconv");
    node->set_op_type("QLinearConv");
    for (const char* input : {"x", "x_scale", "x_zero", "w", "w_scale",
                              "w_zero", "y_scale", "y_zero"}) {
      node->add_input(input);
    }
    node->add_output("y");
    return model;
  };
  EXPECT_THAT(ImportedText(qlinear_conv({})), HasSubstr("nn.quantize_linear"));
  EXPECT_THAT(Import(qlinear_conv({2})),
              HasSubstr("node 'qconv' (QLinearConv): the scale and zero point "
                        "of input 0 must be one value"));
  onnx::ModelProto short_of_inputs = qlinear_conv({});
  short_of_inputs.mutable_graph()
      ->mutable_node(0)
      ->mutable_input()
      ->RemoveLast();
  EXPECT_THAT(Import(short_of_inputs),
              HasSubstr("node 'qconv' (QLinearConv): needs 8 inputs"));
  // A MatMulInteger whose zero point is a matrix.
  onnx::ModelProto model = qlinear_conv({});
  onnx::GraphProto& graph = *model.mutable_graph();
  AddZeroInitializer(graph, "a_zero", kU8, {2, 2}, 1);
  AddZeroInitializer(graph, "b", kI8, {4, 5}, 1);
  onnx::NodeProto* node = graph.mutable_node(0);
  node->set_name("qmatmul");
  node->set_op_type("MatMulInteger");
  node->clear_input();
  for (const char* input : {"x", "b", "a_zero"}) node->add_input(input);
  EXPECT_THAT(Import(model),
              HasSubstr("node 'qmatmul' (MatMulInteger): a scale or zero point "
                        "of input 0 must be one value or a vector along axis "
                        "2"));
}

TEST_F(OnnxImporterTest, CorruptedModelsNeverCrash) {
  const std::string bytes = SampleModel().SerializeAsString();
  int imported = 0, rejected = 0;
  for (size_t length = 0; length < bytes.size(); ++length) {
    (Import(bytes.substr(0, length)).empty() ? imported : rejected)++;
  }
  std::mt19937 random(7);
  for (int i = 0; i < 3000; ++i) {
    std::string mutated = bytes;
    const int flips = 1 + static_cast<int>(random() % 4);
    for (int f = 0; f < flips; ++f) {
      mutated[random() % mutated.size()] ^=
          static_cast<char>(1 + random() % 255);
    }
    (Import(mutated).empty() ? imported : rejected)++;
  }
  EXPECT_GT(rejected, 0);
  RecordProperty("imported", imported);
  RecordProperty("rejected", rejected);
}

}  // namespace
}  // namespace asyncrt
