// The JSON of TF Serving's :predict and KServe's v2 infer: both request
// formats, replies, NaN and Infinity, and bad bodies as errors naming what
// is wrong.
#include "asyncrt/serving/json_codec.h"

#include "asyncrt/host_context/host_allocator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::serving {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

Signature OneInput(DType dtype = DType::kF32,
                   std::optional<std::vector<int64_t>> shape = std::nullopt) {
  Signature signature;
  signature.inputs = {{"x", dtype, std::move(shape)}};
  signature.outputs = {{"y", dtype, std::nullopt}};
  return signature;
}

class JsonCodecTest : public ::testing::Test {
 protected:
  absl::StatusOr<PredictRequest> Predict(absl::string_view body,
                                         const Signature& signature) {
    return ParseTfServingPredict(body, signature, *allocator_);
  }
  std::unique_ptr<HostAllocator> allocator_ = CreateMallocAllocator();
};

std::vector<int64_t> Dims(const ServingTensor& tensor) {
  auto dims = tensor.shape().GetDimensions();
  return std::vector<int64_t>(dims.begin(), dims.end());
}

TEST_F(JsonCodecTest, RowFormatStacksInstances) {
  absl::StatusOr<PredictRequest> request =
      Predict(R"({"instances": [[1, 2], [3, 4.5]]})", OneInput());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_TRUE(request->row_format);
  ASSERT_EQ(request->inputs.size(), 1u);
  EXPECT_THAT(Dims(request->inputs[0]), ElementsAre(2, 2));
  EXPECT_THAT(request->inputs[0].dense().elements<float>(), ElementsAre(1, 2, 3, 4.5));
  absl::StatusOr<std::string> reply =
      WriteTfServingPredict(request->inputs, OneInput(), true);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(*reply, R"({"predictions":[[1,2],[3,4.5]]})");
}

TEST_F(JsonCodecTest, NamedRowsAndColumnsForSeveralInputs) {
  Signature signature;
  signature.inputs = {{"a", DType::kI64, std::nullopt},
                      {"b", DType::kI1, std::nullopt}};
  signature.outputs = {{"a", DType::kI64, std::nullopt},
                       {"b", DType::kI1, std::nullopt}};
  absl::StatusOr<PredictRequest> rows = Predict(
      R"({"instances": [{"a": 1, "b": true}, {"a": 2, "b": false}]})",
      signature);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT(rows->inputs[0].dense().elements<int64_t>(), ElementsAre(1, 2));
  EXPECT_THAT(rows->inputs[1].dense().elements<bool>(), ElementsAre(true, false));
  EXPECT_EQ(*WriteTfServingPredict(rows->inputs, signature, true),
            R"({"predictions":[{"a":1,"b":true},{"a":2,"b":false}]})");
  absl::StatusOr<PredictRequest> columns =
      Predict(R"({"inputs": {"a": [[7]], "b": [[true]]}})", signature);
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_FALSE(columns->row_format);
  EXPECT_EQ(*WriteTfServingPredict(columns->inputs, signature, false),
            R"({"outputs":{"a":[[7]],"b":[[true]]}})");
}

TEST_F(JsonCodecTest, NanAndInfinityGoBothWays) {
  absl::StatusOr<PredictRequest> request =
      Predict(R"({"inputs": [NaN, Infinity, -Infinity, 0.1]})", OneInput());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_EQ(*WriteTfServingPredict(request->inputs, OneInput(), false),
            R"({"outputs":[NaN,Infinity,-Infinity,0.1]})");
}

TEST_F(JsonCodecTest, BadRequestsAreErrorsNamingTheProblem) {
  auto error = [&](absl::string_view body, const Signature& signature) {
    absl::StatusOr<PredictRequest> request = Predict(body, signature);
    EXPECT_FALSE(request.ok()) << body;
    EXPECT_EQ(request.status().code(), absl::StatusCode::kInvalidArgument);
    return std::string(request.status().message());
  };
  EXPECT_THAT(error("{", OneInput()), HasSubstr("malformed JSON"));
  EXPECT_THAT(error("[1]", OneInput()), HasSubstr("JSON object"));
  EXPECT_THAT(error(R"({"instances": [[1, 2], [3]]})", OneInput()),
              HasSubstr("ragged"));
  EXPECT_THAT(error(R"({"instances": [[1, [2]]]})", OneInput()),
              HasSubstr("ragged"));
  EXPECT_THAT(error(R"({"instances": [1], "inputs": [1]})", OneInput()),
              HasSubstr("exactly one of"));
  EXPECT_THAT(error(R"({"inputs": ["a"]})", OneInput()),
              HasSubstr("input 'x': element 0 is not a number"));
  EXPECT_THAT(error(R"({"inputs": [1.5]})", OneInput(DType::kI32)),
              HasSubstr("not an integer"));
  EXPECT_THAT(error(R"({"inputs": [300]})", OneInput(DType::kI8)),
              HasSubstr("out of range"));
  EXPECT_THAT(error(R"({"inputs": [[1, 2]]})", OneInput(DType::kF32, {{-1, 3}})),
              HasSubstr("has shape [1, 2]; the model takes [-1, 3]"));
  EXPECT_THAT(error(R"({"inputs": {"z": [1]}})", OneInput()),
              HasSubstr("no input 'z'"));
  // Found by the fuzzer: RapidJSON's full-precision path asserted here.
  EXPECT_THAT(error("{\"\":NaNe-0332000000,\r\rn}", OneInput()),
              HasSubstr("malformed JSON"));
}

TEST_F(JsonCodecTest, KServeInferRoundTrip) {
  Signature signature = OneInput(DType::kF32, {{-1, 2}});
  absl::StatusOr<KServeInferRequest> request = ParseKServeInfer(
      R"({"inputs": [{"name": "x", "shape": [2, 2], "datatype": "FP32",
                      "data": [1, 2, 3, 4]}]})",
      signature, *allocator_);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT(Dims(request->inputs[0]), ElementsAre(2, 2));
  absl::StatusOr<KServeInferReply> reply =
      WriteKServeInfer("m", "3", request->inputs, signature, &*request);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->body,
            R"({"model_name":"m","model_version":"3","outputs":[{"name":"y",)"
            R"("shape":[2,2],"datatype":"FP32","data":[1,2,3,4]}]})");
  EXPECT_FALSE(reply->json_length.has_value());
  auto error = [&](absl::string_view body) {
    absl::StatusOr<KServeInferRequest> parsed =
        ParseKServeInfer(body, signature, *allocator_);
    EXPECT_FALSE(parsed.ok()) << body;
    return std::string(parsed.status().message());
  };
  EXPECT_THAT(error(R"({"inputs": [{"name": "x", "shape": [1, 2],
                      "datatype": "INT32", "data": [1, 2]}]})"),
              HasSubstr("is INT32; the model takes FP32"));
  EXPECT_THAT(error(R"({"inputs": [{"name": "x", "shape": [1, 2],
                      "datatype": "FP32", "data": [1, 2, 3]}]})"),
              HasSubstr("needs 2 elements, the data has 3"));
  EXPECT_THAT(error(R"({"inputs": []})"), HasSubstr("input 'x' is missing"));
}

// KServe's binary-data extension: inputs after the JSON, outputs after the
// reply's JSON where asked.
TEST_F(JsonCodecTest, KServeBinaryData) {
  Signature signature = OneInput(DType::kF32, {{-1, 2}});
  const std::string json =
      R"({"inputs": [{"name": "x", "shape": [1, 2], "datatype": "FP32",)"
      R"( "parameters": {"binary_data_size": 8}}],)"
      R"( "outputs": [{"name": "y", "parameters": {"binary_data": true}}]})";
  const float values[2] = {1.5f, -2.0f};
  const std::string body =
      json + std::string(reinterpret_cast<const char*>(values), 8);
  absl::StatusOr<KServeInferRequest> request =
      ParseKServeInfer(body, signature, *allocator_, json.size());
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT(request->inputs[0].dense().elements<float>(), ElementsAre(1.5f, -2.0f));
  EXPECT_THAT(request->binary_outputs, ElementsAre("y"));
  absl::StatusOr<KServeInferReply> reply =
      WriteKServeInfer("m", "1", request->inputs, signature, &*request);
  ASSERT_TRUE(reply.ok());
  ASSERT_TRUE(reply->json_length.has_value());
  const std::string reply_json = reply->body.substr(0, *reply->json_length);
  EXPECT_THAT(reply_json, HasSubstr(R"("parameters":{"binary_data_size":8})"));
  EXPECT_THAT(reply_json, Not(HasSubstr("\"data\"")));
  EXPECT_EQ(reply->body.substr(*reply->json_length),
            std::string(reinterpret_cast<const char*>(values), 8));

  auto error = [&](const std::string& text, size_t json_length) {
    absl::StatusOr<KServeInferRequest> parsed =
        ParseKServeInfer(text, signature, *allocator_, json_length);
    EXPECT_FALSE(parsed.ok());
    return std::string(parsed.status().message());
  };
  EXPECT_THAT(error(json + "1234", json.size()),
              HasSubstr("needs 8 bytes of binary data; 4 are left"));
  EXPECT_THAT(error(body + "x", json.size()),
              HasSubstr("1 bytes of binary data follow"));
  EXPECT_THAT(error(body, body.size() + 1),
              HasSubstr("Inference-Header-Content-Length is"));
  std::string wrong_size = body;
  wrong_size.replace(wrong_size.find("\"binary_data_size\": 8"), 21,
                     "\"binary_data_size\": 4");
  EXPECT_THAT(error(wrong_size, json.size()),
              HasSubstr("binary_data_size is 4; its shape and datatype need 8"));
}

TEST_F(JsonCodecTest, TfServingStringsAndBase64) {
  Signature signature;
  signature.inputs = {{"x", DType::kString, std::nullopt}};
  signature.outputs = {{"x_bytes", DType::kString, std::nullopt}};
  // Plain strings and {"b64": ...} (TF Serving's bytes) in one tensor.
  absl::StatusOr<PredictRequest> request =
      Predict(R"({"instances": ["a\u00e9", {"b64": "AP8="}]})", signature);
  ASSERT_TRUE(request.ok()) << request.status();
  ASSERT_TRUE(request->inputs[0].IsString());
  EXPECT_THAT(request->inputs[0].strings().strings(),
              ElementsAre("a\xc3\xa9", std::string("\x00\xff", 2)));
  // An output named *_bytes goes back as base64.
  EXPECT_EQ(*WriteTfServingPredict(request->inputs, signature, true),
            R"({"predictions":[{"b64":"YcOp"},{"b64":"AP8="}]})");
  // Other names: text as JSON strings, bytes that are not UTF-8 as base64.
  signature.outputs[0].name = "y";
  EXPECT_EQ(*WriteTfServingPredict(request->inputs, signature, false),
            "{\"outputs\":[\"a\xc3\xa9\",{\"b64\":\"AP8=\"}]}");
  // Without a dtype in the signature, strings make a string tensor.
  signature.inputs[0].dtype = DType::kInvalid;
  absl::StatusOr<PredictRequest> untyped =
      Predict(R"({"inputs": [["x", "y"]]})", signature);
  ASSERT_TRUE(untyped.ok()) << untyped.status();
  EXPECT_EQ(untyped->inputs[0].dtype(), DType::kString);
  EXPECT_THAT(Dims(untyped->inputs[0]), ElementsAre(1, 2));
  // Errors.
  signature.inputs[0].dtype = DType::kString;
  EXPECT_THAT(std::string(Predict(R"({"instances": [{"b64": "%%"}]})", signature)
                              .status()
                              .message()),
              HasSubstr("element 0 is not valid base64"));
  EXPECT_THAT(
      std::string(Predict(R"({"instances": ["a", 1]})", signature)
                      .status()
                      .message()),
      HasSubstr("element 1 is not a string or {\"b64\": ...}"));
}

TEST_F(JsonCodecTest, KServeBytesAsJsonAndBinary) {
  Signature signature;
  signature.inputs = {{"x", DType::kString, std::nullopt}};
  signature.outputs = {{"y", DType::kString, std::nullopt}};
  absl::StatusOr<KServeInferRequest> request = ParseKServeInfer(
      R"({"inputs": [{"name": "x", "shape": [2], "datatype": "BYTES",
                      "data": ["hello", ""]}]})",
      signature, *allocator_);
  ASSERT_TRUE(request.ok()) << request.status();
  EXPECT_THAT(request->inputs[0].strings().strings(), ElementsAre("hello", ""));
  absl::StatusOr<KServeInferReply> reply =
      WriteKServeInfer("m", "1", request->inputs, signature);
  ASSERT_TRUE(reply.ok()) << reply.status();
  EXPECT_THAT(reply->body,
              HasSubstr(R"("datatype":"BYTES","data":["hello",""])"));
  // Binary data: each element a 4-byte little-endian length and its bytes.
  const std::string json =
      R"({"inputs": [{"name": "x", "shape": [2], "datatype": "BYTES",
                      "parameters": {"binary_data_size": 11}}],
          "parameters": {"binary_data_output": true}})";
  const std::string data("\x03\0\0\0abc\0\0\0\0", 11);
  absl::StatusOr<KServeInferRequest> binary =
      ParseKServeInfer(json + data, signature, *allocator_, json.size());
  ASSERT_TRUE(binary.ok()) << binary.status();
  EXPECT_THAT(binary->inputs[0].strings().strings(), ElementsAre("abc", ""));
  absl::StatusOr<KServeInferReply> out =
      WriteKServeInfer("m", "1", binary->inputs, signature, &*binary);
  ASSERT_TRUE(out.ok()) << out.status();
  ASSERT_TRUE(out->json_length.has_value());
  EXPECT_THAT(out->body.substr(0, *out->json_length),
              HasSubstr(R"("binary_data_size":11)"));
  EXPECT_EQ(out->body.substr(*out->json_length), data);
  // Lengths past the data, and more elements than the shape holds.
  const std::string cut("\x09\0\0\0abc\0\0\0\0", 11);
  EXPECT_THAT(std::string(ParseKServeInfer(json + cut, signature, *allocator_,
                                           json.size())
                              .status()
                              .message()),
              HasSubstr("cut short"));
  std::string three = json;
  three.replace(three.find("\"binary_data_size\": 11"), 22,
                "\"binary_data_size\": 15");
  EXPECT_THAT(
      std::string(ParseKServeInfer(three + data + std::string(4, '\0'),
                                   signature, *allocator_, three.size())
                      .status()
                      .message()),
      HasSubstr("more BYTES elements than its shape holds"));
}

TEST(SignatureTest, ParsesJsonAndDTypeNames) {
  absl::StatusOr<Signature> signature = ParseSignatureJson(
      R"({"inputs": [{"name": "x", "dtype": "DT_FLOAT", "shape": [-1, 4]}],
          "outputs": [{"name": "y", "dtype": "int64"}]})");
  ASSERT_TRUE(signature.ok()) << signature.status();
  EXPECT_EQ(signature->inputs[0].dtype, DType::kF32);
  EXPECT_THAT(*signature->inputs[0].shape, ElementsAre(-1, 4));
  EXPECT_EQ(signature->outputs[0].dtype, DType::kI64);
  EXPECT_FALSE(signature->outputs[0].shape.has_value());
  EXPECT_FALSE(ParseSignatureJson(R"({"inputs": [{"dtype": "x"}]})").ok());
  EXPECT_EQ(TfDTypeName(DType::kF32), "DT_FLOAT");
  EXPECT_EQ(KServeDTypeName(DType::kI64), "INT64");
  EXPECT_EQ(ParseDTypeName("DT_STRING"), DType::kString);
  EXPECT_EQ(ParseDTypeName("BYTES"), DType::kString);
  EXPECT_EQ(KServeDTypeName(DType::kString), "BYTES");
}

}  // namespace
}  // namespace asyncrt::serving
