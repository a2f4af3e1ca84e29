#include "asyncrt/serving/signature.h"

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "rapidjson/document.h"

namespace asyncrt::serving {

DType ParseDTypeName(absl::string_view name) {
  const std::string lower = absl::AsciiStrToLower(name);
  struct Entry {
    const char* names[4];
    DType dtype;
  };
  static const Entry kEntries[] = {
      {{"float32", "f32", "fp32", "dt_float"}, DType::kF32},
      {{"float64", "f64", "fp64", "dt_double"}, DType::kF64},
      {{"float16", "f16", "fp16", "dt_half"}, DType::kF16},
      {{"bfloat16", "bf16", "dt_bfloat16", "bfloat16"}, DType::kBF16},
      {{"int8", "i8", "dt_int8", "int8"}, DType::kI8},
      {{"int16", "i16", "dt_int16", "int16"}, DType::kI16},
      {{"int32", "i32", "dt_int32", "int32"}, DType::kI32},
      {{"int64", "i64", "dt_int64", "int64"}, DType::kI64},
      {{"uint8", "ui8", "dt_uint8", "u8"}, DType::kUI8},
      {{"bool", "i1", "dt_bool", "bool"}, DType::kI1},
      {{"string", "str", "dt_string", "bytes"}, DType::kString},
  };
  for (const Entry& entry : kEntries) {
    for (const char* candidate : entry.names) {
      if (lower == candidate) return entry.dtype;
    }
  }
  return DType::kInvalid;
}

bool IsServableDType(DType dtype) {
  switch (dtype) {
    case DType::kI1: case DType::kI8: case DType::kI16: case DType::kI32:
    case DType::kI64: case DType::kUI8: case DType::kF16: case DType::kBF16:
    case DType::kF32: case DType::kF64: case DType::kString:
      return true;
    default:
      return false;
  }
}

absl::string_view TfDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "DT_FLOAT";
    case DType::kF64: return "DT_DOUBLE";
    case DType::kF16: return "DT_HALF";
    case DType::kBF16: return "DT_BFLOAT16";
    case DType::kI8: return "DT_INT8";
    case DType::kI16: return "DT_INT16";
    case DType::kI32: return "DT_INT32";
    case DType::kI64: return "DT_INT64";
    case DType::kUI8: return "DT_UINT8";
    case DType::kI1: return "DT_BOOL";
    case DType::kString: return "DT_STRING";
    default: return "DT_INVALID";
  }
}

absl::string_view KServeDTypeName(DType dtype) {
  switch (dtype) {
    case DType::kF32: return "FP32";
    case DType::kF64: return "FP64";
    case DType::kF16: return "FP16";
    case DType::kBF16: return "BF16";
    case DType::kI8: return "INT8";
    case DType::kI16: return "INT16";
    case DType::kI32: return "INT32";
    case DType::kI64: return "INT64";
    case DType::kUI8: return "UINT8";
    case DType::kI1: return "BOOL";
    case DType::kString: return "BYTES";
    default: return "INVALID";
  }
}

absl::Status CheckShape(const TensorSpec& spec, absl::Span<const int64_t> dims,
                        absl::string_view what) {
  if (!spec.shape) return absl::OkStatus();
  const std::vector<int64_t>& expected = *spec.shape;
  bool fits = expected.size() == dims.size();
  for (size_t i = 0; fits && i < dims.size(); ++i) {
    fits = expected[i] == -1 || expected[i] == dims[i];
  }
  if (fits) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(what, ": has shape [", absl::StrJoin(dims, ", "),
                   "]; the model takes [", absl::StrJoin(expected, ", "), "]"));
}

std::vector<TensorSpec> PositionalSpecs(absl::string_view prefix,
                                        size_t count) {
  std::vector<TensorSpec> specs(count);
  for (size_t i = 0; i < count; ++i) specs[i].name = absl::StrCat(prefix, i);
  return specs;
}

namespace {

absl::StatusOr<std::vector<TensorSpec>> ParseSpecs(
    const rapidjson::Value& object, const char* key) {
  std::vector<TensorSpec> specs;
  auto it = object.FindMember(key);
  if (it == object.MemberEnd()) return specs;
  if (!it->value.IsArray()) {
    return absl::InvalidArgumentError(
        absl::StrCat("signature: '", key, "' must be a list"));
  }
  for (const rapidjson::Value& entry : it->value.GetArray()) {
    if (!entry.IsObject() || !entry.HasMember("name") ||
        !entry["name"].IsString()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "signature: each of '", key, "' needs a \"name\" string"));
    }
    TensorSpec spec;
    spec.name = entry["name"].GetString();
    if (entry.HasMember("dtype")) {
      if (!entry["dtype"].IsString() ||
          (spec.dtype = ParseDTypeName(entry["dtype"].GetString())) ==
              DType::kInvalid) {
        return absl::InvalidArgumentError(
            absl::StrCat("signature: '", spec.name, "' has an unknown dtype"));
      }
    }
    if (entry.HasMember("shape")) {
      if (!entry["shape"].IsArray()) {
        return absl::InvalidArgumentError(absl::StrCat(
            "signature: the shape of '", spec.name, "' must be a list"));
      }
      std::vector<int64_t> shape;
      for (const rapidjson::Value& dim : entry["shape"].GetArray()) {
        if (!dim.IsInt64() || dim.GetInt64() < -1) {
          return absl::InvalidArgumentError(
              absl::StrCat("signature: the shape of '", spec.name,
                           "' holds something other than sizes and -1"));
        }
        shape.push_back(dim.GetInt64());
      }
      spec.shape = std::move(shape);
    }
    specs.push_back(std::move(spec));
  }
  return specs;
}

}  // namespace

absl::StatusOr<Signature> ParseSignatureJson(absl::string_view json) {
  rapidjson::Document document;
  document.Parse(json.data(), json.size());
  if (document.HasParseError() || !document.IsObject()) {
    return absl::InvalidArgumentError("signature: not a JSON object");
  }
  Signature signature;
  absl::StatusOr<std::vector<TensorSpec>> inputs =
      ParseSpecs(document, "inputs");
  if (!inputs.ok()) return inputs.status();
  absl::StatusOr<std::vector<TensorSpec>> outputs =
      ParseSpecs(document, "outputs");
  if (!outputs.ok()) return outputs.status();
  signature.inputs = *std::move(inputs);
  signature.outputs = *std::move(outputs);
  return signature;
}

}  // namespace asyncrt::serving
