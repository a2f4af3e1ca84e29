#include "asyncrt/serving/json_codec.h"

#include <algorithm>

#include <charconv>
#include <cmath>
#include <cstring>
#include <limits>
#include <optional>

#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_join.h"
#include "rapidjson/document.h"
#include "rapidjson/memorystream.h"
#include "rapidjson/stringbuffer.h"
#include "rapidjson/writer.h"

namespace asyncrt::serving {
namespace {

using rapidjson::Value;
using Writer = rapidjson::Writer<rapidjson::StringBuffer, rapidjson::UTF8<>,
                                 rapidjson::UTF8<>, rapidjson::CrtAllocator,
                                 rapidjson::kWriteNanAndInfFlag>;

// Not kParseFullPrecisionFlag: with NaN allowed, RapidJSON 1.1's full-
// precision path asserts on "NaNe-3" (found by the fuzzer). The default
// path is exact for every f32 and within one ulp for f64.
constexpr unsigned kParseFlags = rapidjson::kParseNanAndInfFlag;

absl::Status Invalid(absl::string_view what, absl::string_view problem) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": ", problem));
}

std::string ShapeText(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

//===--- Reading ----------------------------------------------------------===//

// A nested list: its dimensions and its leaves in row-major order.
struct Nested {
  std::vector<int64_t> dims;
  std::vector<const Value*> leaves;
};

// Adds `value` at `depth` to `nested`; ragged lists are errors.
absl::Status Flatten(const Value& value, size_t depth, Nested& nested,
                     std::optional<size_t>& leaf_depth,
                     absl::string_view what) {
  if (!value.IsArray()) {
    if (!leaf_depth) leaf_depth = depth;
    if (*leaf_depth != depth || depth < nested.dims.size()) {
      return Invalid(what, "the lists are ragged (not a rectangular tensor)");
    }
    nested.leaves.push_back(&value);
    return absl::OkStatus();
  }
  if (leaf_depth && depth >= *leaf_depth) {
    return Invalid(what, "the lists are ragged (not a rectangular tensor)");
  }
  const int64_t size = value.Size();
  if (depth == nested.dims.size()) {
    nested.dims.push_back(size);
  } else if (nested.dims[depth] != size) {
    return Invalid(what, "the lists are ragged (not a rectangular tensor)");
  }
  for (const Value& item : value.GetArray()) {
    if (absl::Status status = Flatten(item, depth + 1, nested, leaf_depth, what);
        !status.ok()) {
      return status;
    }
  }
  return absl::OkStatus();
}

// The rows' values (one per batch row) stacked along a new first dimension.
absl::StatusOr<Nested> FlattenRows(absl::Span<const Value* const> rows,
                                   absl::string_view what) {
  Nested nested;
  nested.dims.push_back(static_cast<int64_t>(rows.size()));
  std::optional<size_t> leaf_depth;
  for (const Value* row : rows) {
    if (absl::Status status = Flatten(*row, 1, nested, leaf_depth, what);
        !status.ok()) {
      return status;
    }
  }
  return nested;
}

absl::StatusOr<Nested> FlattenValue(const Value& value,
                                    absl::string_view what) {
  Nested nested;
  std::optional<size_t> leaf_depth;
  if (absl::Status status = Flatten(value, 0, nested, leaf_depth, what);
      !status.ok()) {
    return status;
  }
  return nested;
}

// One JSON leaf as `T`.
template <typename T>
absl::Status ReadLeaf(const Value& leaf, T* out, size_t index,
                      absl::string_view what) {
  auto wrong = [&](absl::string_view expected) {
    return Invalid(what, absl::StrCat("element ", index, " is not ", expected));
  };
  if constexpr (std::is_same_v<T, bool>) {
    if (!leaf.IsBool()) return wrong("a boolean");
    *out = leaf.GetBool();
  } else if constexpr (std::is_integral_v<T>) {
    if (leaf.IsInt64()) {
      const int64_t v = leaf.GetInt64();
      if (v < static_cast<int64_t>(std::numeric_limits<T>::min()) ||
          (v > 0 && static_cast<uint64_t>(v) >
                        static_cast<uint64_t>(std::numeric_limits<T>::max()))) {
        return Invalid(what,
                       absl::StrCat("element ", index, " is out of range"));
      }
      *out = static_cast<T>(v);
    } else {
      return wrong("an integer");
    }
  } else {
    if (!leaf.IsNumber()) return wrong("a number");
    const double v = leaf.GetDouble();
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      *out = T::FromFloat(static_cast<float>(v));
    } else {
      *out = static_cast<T>(v);
    }
  }
  return absl::OkStatus();
}

template <typename F>
auto ByDType(DType dtype, F&& f) {
  switch (dtype) {
    case DType::kI1: return f(TypeTag<bool>{});
    case DType::kI8: return f(TypeTag<int8_t>{});
    case DType::kI16: return f(TypeTag<int16_t>{});
    case DType::kI32: return f(TypeTag<int32_t>{});
    case DType::kI64: return f(TypeTag<int64_t>{});
    case DType::kUI8: return f(TypeTag<uint8_t>{});
    case DType::kF16: return f(TypeTag<Half>{});
    case DType::kBF16: return f(TypeTag<BFloat16>{});
    case DType::kF64: return f(TypeTag<double>{});
    default: return f(TypeTag<float>{});
  }
}

// The dtype for `spec`, or, where the signature says none, what the
// leaves look like: booleans, else f32.
DType ChooseDType(const TensorSpec& spec, const Nested& nested) {
  if (spec.dtype != DType::kInvalid) return spec.dtype;
  if (!nested.leaves.empty() && nested.leaves.front()->IsBool()) {
    return DType::kI1;
  }
  if (!nested.leaves.empty() && (nested.leaves.front()->IsString() ||
                                 nested.leaves.front()->IsObject())) {
    return DType::kString;
  }
  return DType::kF32;
}

// Whether `value` is TF Serving's {"b64": "..."} (one binary string), not
// an object of inputs by name.
bool IsBase64Value(const Value& value) {
  return value.IsObject() && value.MemberCount() == 1 &&
         value.HasMember("b64") && value["b64"].IsString();
}

// One string element: a JSON string (its bytes), or {"b64": "..."}
// (TF Serving's form for binary data: the base64 decoded).
absl::Status ReadString(const Value& leaf, std::string* out, size_t index,
                        absl::string_view what) {
  if (leaf.IsString()) {
    out->assign(leaf.GetString(), leaf.GetStringLength());
    return absl::OkStatus();
  }
  if (IsBase64Value(leaf)) {
    const absl::string_view encoded(leaf["b64"].GetString(),
                                    leaf["b64"].GetStringLength());
    if (!absl::Base64Unescape(encoded, out)) {
      return Invalid(what,
                     absl::StrCat("element ", index, " is not valid base64"));
    }
    return absl::OkStatus();
  }
  return Invalid(what, absl::StrCat("element ", index,
                                    " is not a string or {\"b64\": ...}"));
}

absl::StatusOr<ServingTensor> MakeStrings(absl::Span<const int64_t> dims,
                                          const std::vector<const Value*>& leaves,
                                          absl::string_view what) {
  std::vector<std::string> strings(leaves.size());
  for (size_t i = 0; i < leaves.size(); ++i) {
    if (absl::Status s = ReadString(*leaves[i], &strings[i], i, what);
        !s.ok()) {
      return s;
    }
  }
  std::optional<StringHostTensor> tensor =
      StringHostTensor::CreateFromStrings(TensorShape(dims), std::move(strings));
  if (!tensor) {
    return Invalid(what, absl::StrCat("shape ", ShapeText(dims),
                                      " does not hold ", leaves.size(),
                                      " strings"));
  }
  return ServingTensor(*std::move(tensor));
}

absl::StatusOr<ServingTensor> MakeTensor(DType dtype,
                                         absl::Span<const int64_t> dims,
                                         const std::vector<const Value*>& leaves,
                                         HostAllocator& allocator,
                                         absl::string_view what) {
  if (dtype == DType::kString) return MakeStrings(dims, leaves, what);
  if (!IsServableDType(dtype)) {
    return Invalid(what, absl::StrCat("the dtype ", DTypeName(dtype),
                                      " is not supported in JSON"));
  }
  TensorMetadata metadata(dtype, TensorShape(dims));
  if (metadata.shape.GetNumElements() != static_cast<int64_t>(leaves.size())) {
    return Invalid(what, absl::StrCat("shape ", ShapeText(dims), " needs ",
                                      metadata.shape.GetNumElements(),
                                      " elements, the data has ",
                                      leaves.size()));
  }
  std::optional<DenseHostTensor> tensor =
      DenseHostTensor::CreateUninitialized(metadata, allocator);
  if (!tensor) return absl::ResourceExhaustedError("out of host memory");
  absl::Status status = ByDType(dtype, [&](auto tag) -> absl::Status {
    using T = typename decltype(tag)::type;
    T* data = static_cast<T*>(tensor->data());
    for (size_t i = 0; i < leaves.size(); ++i) {
      if (absl::Status s = ReadLeaf<T>(*leaves[i], &data[i], i, what);
          !s.ok()) {
        return s;
      }
    }
    return absl::OkStatus();
  });
  if (!status.ok()) return status;
  return ServingTensor(std::move(*tensor));
}

absl::StatusOr<ServingTensor> TensorFrom(const Nested& nested,
                                           const TensorSpec& spec,
                                           HostAllocator& allocator) {
  const std::string what = absl::StrCat("input '", spec.name, "'");
  if (absl::Status status = CheckShape(spec, nested.dims, what); !status.ok()) {
    return status;
  }
  return MakeTensor(ChooseDType(spec, nested), nested.dims, nested.leaves,
                    allocator, what);
}

absl::StatusOr<rapidjson::Document> ParseBody(absl::string_view body) {
  rapidjson::Document document;
  document.Parse<kParseFlags>(body.data(), body.size());
  if (document.HasParseError()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "malformed JSON at offset ", document.GetErrorOffset()));
  }
  if (!document.IsObject()) {
    return absl::InvalidArgumentError("the body must be a JSON object");
  }
  return document;
}

//===--- Writing ----------------------------------------------------------===//

void WriteFloat(Writer& writer, double value, bool single) {
  if (std::isnan(value)) {
    writer.RawValue("NaN", 3, rapidjson::kNumberType);
    return;
  }
  if (std::isinf(value)) {
    if (value > 0) {
      writer.RawValue("Infinity", 8, rapidjson::kNumberType);
    } else {
      writer.RawValue("-Infinity", 9, rapidjson::kNumberType);
    }
    return;
  }
  // The shortest text that reads back to the same value of its own width.
  char text[64];
  std::to_chars_result end =
      single ? std::to_chars(text, text + sizeof(text),
                             static_cast<float>(value))
             : std::to_chars(text, text + sizeof(text), value);
  writer.RawValue(text, end.ptr - text, rapidjson::kNumberType);
}

template <typename T>
void WriteElement(Writer& writer, const T& value) {
  if constexpr (std::is_same_v<T, bool>) {
    writer.Bool(value);
  } else if constexpr (std::is_same_v<T, Half> ||
                       std::is_same_v<T, BFloat16>) {
    WriteFloat(writer, value.ToFloat(), /*single=*/true);
  } else if constexpr (std::is_same_v<T, float>) {
    WriteFloat(writer, value, /*single=*/true);
  } else if constexpr (std::is_same_v<T, double>) {
    WriteFloat(writer, value, /*single=*/false);
  } else if constexpr (std::is_signed_v<T>) {
    writer.Int64(value);
  } else {
    writer.Uint64(value);
  }
}

// Whether `text` is valid UTF-8 (a JSON string must be), by RapidJSON's
// validator.
bool IsUtf8(absl::string_view text) {
  struct Discard {
    void Put(char) {}
  } discard;
  rapidjson::MemoryStream stream(text.data(), text.size());
  while (stream.Tell() < text.size()) {
    if (!rapidjson::UTF8<>::Validate(stream, discard)) return false;
  }
  return true;
}

// A string element: as a JSON string, or, where `base64` asks or its bytes
// are not UTF-8 text, as TF Serving's {"b64": "..."}.
void WriteString(Writer& writer, const std::string& value, bool base64) {
  if (!base64 && IsUtf8(value)) {
    writer.String(value.data(), value.size());
    return;
  }
  const std::string encoded = absl::Base64Escape(value);
  writer.StartObject();
  writer.Key("b64");
  writer.String(encoded.data(), encoded.size());
  writer.EndObject();
}

// Elements [begin, begin + product(dims)) as nested lists (flat if `flat`);
// `element(i)` writes element i.
template <typename F>
void WriteNestedWith(Writer& writer, absl::Span<const int64_t> dims,
                     int64_t begin, bool flat, const F& element) {
  if (flat || dims.empty()) {
    int64_t count = 1;
    for (int64_t d : dims) count *= d;
    if (!flat) return element(begin);
    writer.StartArray();
    for (int64_t i = 0; i < count; ++i) element(begin + i);
    writer.EndArray();
    return;
  }
  int64_t stride = 1;
  for (size_t i = 1; i < dims.size(); ++i) stride *= dims[i];
  writer.StartArray();
  for (int64_t i = 0; i < dims[0]; ++i) {
    WriteNestedWith(writer, dims.subspan(1), begin + i * stride, false,
                    element);
  }
  writer.EndArray();
}

// Elements of `tensor` as above; strings base64-encoded if `base64`.
void WriteNested(Writer& writer, const ServingTensor& tensor,
                 absl::Span<const int64_t> dims, int64_t begin, bool flat,
                 bool base64 = false) {
  if (tensor.IsString()) {
    absl::Span<const std::string> strings = tensor.strings().strings();
    return WriteNestedWith(writer, dims, begin, flat, [&](int64_t i) {
      WriteString(writer, strings[i], base64);
    });
  }
  ByDType(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* data = static_cast<const T*>(tensor.dense().data());
    WriteNestedWith(writer, dims, begin, flat,
                    [&](int64_t i) { WriteElement(writer, data[i]); });
  });
}

// TF Serving's rule: an output whose name ends in "_bytes" holds binary
// strings, written as {"b64": ...}.
bool Base64Output(const TensorSpec& spec) {
  return absl::EndsWith(spec.name, "_bytes");
}

absl::Status CheckOutputs(const std::vector<ServingTensor>& outputs,
                          const Signature& signature) {
  if (outputs.size() != signature.outputs.size()) {
    return absl::InternalError(absl::StrCat(
        "the model returned ", outputs.size(), " outputs; its signature has ",
        signature.outputs.size()));
  }
  for (size_t i = 0; i < outputs.size(); ++i) {
    if (!IsServableDType(outputs[i].dtype())) {
      return absl::UnimplementedError(
          absl::StrCat("output '", signature.outputs[i].name, "' is ",
                       DTypeName(outputs[i].dtype()),
                       ", which JSON replies do not carry"));
    }
  }
  return absl::OkStatus();
}

}  // namespace

//===--- TF Serving -------------------------------------------------------===//

absl::StatusOr<PredictRequest> ParseTfServingPredict(
    absl::string_view body, const Signature& signature,
    HostAllocator& allocator) {
  absl::StatusOr<rapidjson::Document> document = ParseBody(body);
  if (!document.ok()) return document.status();
  const bool has_instances = document->HasMember("instances");
  const bool has_inputs = document->HasMember("inputs");
  if (has_instances == has_inputs) {
    return absl::InvalidArgumentError(
        "the request needs exactly one of \"instances\" (row format) and "
        "\"inputs\" (columnar format)");
  }
  const std::vector<TensorSpec>& specs = signature.inputs;
  PredictRequest request;
  request.row_format = has_instances;
  request.inputs.reserve(specs.size());
  if (has_instances) {
    const Value& instances = (*document)["instances"];
    if (!instances.IsArray() || instances.Empty()) {
      return absl::InvalidArgumentError(
          "\"instances\" must be a non-empty list of rows");
    }
    const bool named =
        instances[0].IsObject() && !IsBase64Value(instances[0]);
    if (!named && specs.size() != 1) {
      return absl::InvalidArgumentError(absl::StrCat(
          "the model takes ", specs.size(),
          " inputs: each row must be an object of them by name"));
    }
    for (const TensorSpec& spec : specs) {
      std::vector<const Value*> rows;
      for (const Value& row : instances.GetArray()) {
        if (!named) {
          rows.push_back(&row);
          continue;
        }
        if (!row.IsObject() || IsBase64Value(row)) {
          return absl::InvalidArgumentError(
              "\"instances\" mixes objects and values");
        }
        auto it = row.FindMember(spec.name.c_str());
        if (it == row.MemberEnd()) {
          return absl::InvalidArgumentError(
              absl::StrCat("a row lacks input '", spec.name, "'"));
        }
        rows.push_back(&it->value);
      }
      absl::StatusOr<Nested> nested =
          FlattenRows(rows, absl::StrCat("input '", spec.name, "'"));
      if (!nested.ok()) return nested.status();
      absl::StatusOr<ServingTensor> tensor =
          TensorFrom(*nested, spec, allocator);
      if (!tensor.ok()) return tensor.status();
      request.inputs.push_back(*std::move(tensor));
    }
    if (named) {
      for (auto& member : instances[0].GetObject()) {
        bool known = false;
        for (const TensorSpec& spec : specs) known |= spec.name == member.name.GetString();
        if (!known) {
          return absl::InvalidArgumentError(absl::StrCat(
              "the model has no input '", member.name.GetString(), "'"));
        }
      }
    }
    return request;
  }
  const Value& inputs = (*document)["inputs"];
  const bool named = inputs.IsObject() && !IsBase64Value(inputs);
  if (!named && specs.size() != 1) {
    return absl::InvalidArgumentError(absl::StrCat(
        "the model takes ", specs.size(),
        " inputs: \"inputs\" must be an object of them by name"));
  }
  if (named) {
    for (auto& member : inputs.GetObject()) {
      bool known = false;
      for (const TensorSpec& spec : specs) known |= spec.name == member.name.GetString();
      if (!known) {
        return absl::InvalidArgumentError(absl::StrCat(
            "the model has no input '", member.name.GetString(), "'"));
      }
    }
  }
  for (const TensorSpec& spec : specs) {
    const Value* value = &inputs;
    if (named) {
      auto it = inputs.FindMember(spec.name.c_str());
      if (it == inputs.MemberEnd()) {
        return absl::InvalidArgumentError(
            absl::StrCat("\"inputs\" lacks input '", spec.name, "'"));
      }
      value = &it->value;
    }
    absl::StatusOr<Nested> nested =
        FlattenValue(*value, absl::StrCat("input '", spec.name, "'"));
    if (!nested.ok()) return nested.status();
    absl::StatusOr<ServingTensor> tensor =
        TensorFrom(*nested, spec, allocator);
    if (!tensor.ok()) return tensor.status();
    request.inputs.push_back(*std::move(tensor));
  }
  return request;
}

absl::StatusOr<std::string> WriteTfServingPredict(
    const std::vector<ServingTensor>& outputs, const Signature& signature,
    bool row_format) {
  if (absl::Status status = CheckOutputs(outputs, signature); !status.ok()) {
    return status;
  }
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartObject();
  if (row_format) {
    writer.Key("predictions");
    if (outputs.size() == 1) {
      WriteNested(writer, outputs[0], outputs[0].shape().GetDimensions(), 0,
                  /*flat=*/false, Base64Output(signature.outputs[0]));
    } else {
      // One object per row: every output must share the batch dimension.
      int64_t rows = -1;
      for (size_t i = 0; i < outputs.size(); ++i) {
        absl::Span<const int64_t> dims = outputs[i].shape().GetDimensions();
        if (dims.empty() || (rows != -1 && dims[0] != rows)) {
          return absl::InvalidArgumentError(
              "the outputs do not share a batch dimension: ask for the "
              "columnar format (\"inputs\")");
        }
        rows = dims[0];
      }
      writer.StartArray();
      for (int64_t row = 0; row < rows; ++row) {
        writer.StartObject();
        for (size_t i = 0; i < outputs.size(); ++i) {
          absl::Span<const int64_t> dims = outputs[i].shape().GetDimensions();
          int64_t stride = 1;
          for (size_t d = 1; d < dims.size(); ++d) stride *= dims[d];
          writer.Key(signature.outputs[i].name.c_str());
          WriteNested(writer, outputs[i], dims.subspan(1), row * stride,
                      /*flat=*/false, Base64Output(signature.outputs[i]));
        }
        writer.EndObject();
      }
      writer.EndArray();
    }
  } else {
    writer.Key("outputs");
    if (outputs.size() == 1) {
      WriteNested(writer, outputs[0], outputs[0].shape().GetDimensions(), 0,
                  /*flat=*/false, Base64Output(signature.outputs[0]));
    } else {
      writer.StartObject();
      for (size_t i = 0; i < outputs.size(); ++i) {
        writer.Key(signature.outputs[i].name.c_str());
        WriteNested(writer, outputs[i], outputs[i].shape().GetDimensions(), 0,
                    /*flat=*/false, Base64Output(signature.outputs[i]));
      }
      writer.EndObject();
    }
  }
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

//===--- KServe v2 --------------------------------------------------------===//

namespace {

// The tensor of `dims` whose `size` (a binary_data_size) bytes come next
// in `binary`, which moves past them.
// KServe's BYTES in binary data (serving_tensor.h's layout).
absl::StatusOr<ServingTensor> BinaryStrings(absl::Span<const int64_t> dims,
                                            uint64_t size,
                                            absl::string_view& binary,
                                            absl::string_view what) {
  if (binary.size() < size) {
    return Invalid(what, absl::StrCat("needs ", size,
                                      " bytes of binary data; ", binary.size(),
                                      " are left"));
  }
  absl::StatusOr<std::vector<std::string>> strings = ParseLengthPrefixed(
      binary.substr(0, size), TensorShape(dims).GetNumElements(), what);
  binary.remove_prefix(size);
  if (!strings.ok()) return strings.status();
  std::optional<StringHostTensor> tensor =
      StringHostTensor::CreateFromStrings(TensorShape(dims), *std::move(strings));
  if (!tensor) return Invalid(what, "its BYTES elements do not fill its shape");
  return ServingTensor(*std::move(tensor));
}

absl::StatusOr<ServingTensor> BinaryTensor(DType dtype,
                                           absl::Span<const int64_t> dims,
                                           const Value& size,
                                           absl::string_view& binary,
                                           HostAllocator& allocator,
                                           absl::string_view what) {
  if (!IsServableDType(dtype)) {
    return Invalid(what, absl::StrCat("the dtype ", DTypeName(dtype),
                                      " is not supported"));
  }
  if (!size.IsUint64()) {
    return Invalid(what, "binary_data_size must be a byte count");
  }
  if (dtype == DType::kString) {
    return BinaryStrings(dims, size.GetUint64(), binary, what);
  }
  TensorMetadata metadata(dtype, TensorShape(dims));
  const std::optional<size_t> need = internal::DenseByteSize(metadata);
  if (!need || size.GetUint64() != *need) {
    return Invalid(what, absl::StrCat(
                             "binary_data_size is ", size.GetUint64(),
                             "; its shape and datatype need ",
                             need ? absl::StrCat(*need) : "too many"));
  }
  if (binary.size() < *need) {
    return Invalid(what, absl::StrCat("needs ", *need,
                                      " bytes of binary data; ", binary.size(),
                                      " are left"));
  }
  std::optional<DenseHostTensor> tensor =
      DenseHostTensor::CreateUninitialized(metadata, allocator);
  if (!tensor) return absl::ResourceExhaustedError("out of host memory");
  if (*need > 0) std::memcpy(tensor->data(), binary.data(), *need);
  binary.remove_prefix(*need);
  return ServingTensor(std::move(*tensor));
}

// `object`'s "parameters" member `key`, if it is there.
const Value* Parameter(const Value& object, const char* key) {
  auto parameters = object.FindMember("parameters");
  if (parameters == object.MemberEnd() || !parameters->value.IsObject()) {
    return nullptr;
  }
  auto it = parameters->value.FindMember(key);
  return it == parameters->value.MemberEnd() ? nullptr : &it->value;
}

}  // namespace

absl::StatusOr<KServeInferRequest> ParseKServeInfer(
    absl::string_view body, const Signature& signature,
    HostAllocator& allocator, std::optional<size_t> json_length) {
  absl::string_view binary;
  if (json_length) {
    if (*json_length > body.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Inference-Header-Content-Length is ", *json_length,
          "; the body has ", body.size(), " bytes"));
    }
    binary = body.substr(*json_length);
    body = body.substr(0, *json_length);
  }
  absl::StatusOr<rapidjson::Document> document = ParseBody(body);
  if (!document.ok()) return document.status();
  auto inputs_it = document->FindMember("inputs");
  if (inputs_it == document->MemberEnd() || !inputs_it->value.IsArray()) {
    return absl::InvalidArgumentError("\"inputs\" must be a list of tensors");
  }
  const std::vector<TensorSpec>& specs = signature.inputs;
  std::vector<std::optional<ServingTensor>> found(specs.size());
  for (const Value& input : inputs_it->value.GetArray()) {
    const Value* binary_size =
        input.IsObject() ? Parameter(input, "binary_data_size") : nullptr;
    if (!input.IsObject() || !input.HasMember("name") ||
        !input["name"].IsString() || !input.HasMember("shape") ||
        !input["shape"].IsArray() || !input.HasMember("datatype") ||
        !input["datatype"].IsString() ||
        (!input.HasMember("data") && binary_size == nullptr)) {
      return absl::InvalidArgumentError(
          "each input needs \"name\", \"shape\", \"datatype\" and \"data\" "
          "(or binary_data_size)");
    }
    const std::string name = input["name"].GetString();
    size_t index = specs.size();
    for (size_t i = 0; i < specs.size(); ++i) {
      if (specs[i].name == name) index = i;
    }
    if (index == specs.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("the model has no input '", name, "'"));
    }
    if (found[index]) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", name, "' is given twice"));
    }
    const std::string what = absl::StrCat("input '", name, "'");
    std::vector<int64_t> dims;
    for (const Value& dim : input["shape"].GetArray()) {
      if (!dim.IsInt64() || dim.GetInt64() < 0) {
        return Invalid(what, "the shape must hold sizes");
      }
      dims.push_back(dim.GetInt64());
    }
    DType dtype = ParseDTypeName(input["datatype"].GetString());
    if (dtype == DType::kInvalid) {
      return Invalid(what, absl::StrCat("unknown datatype \"",
                                        input["datatype"].GetString(), "\""));
    }
    if (specs[index].dtype != DType::kInvalid && specs[index].dtype != dtype) {
      return Invalid(what, absl::StrCat(
                               "is ", KServeDTypeName(dtype), "; the model takes ",
                               KServeDTypeName(specs[index].dtype)));
    }
    if (absl::Status status = CheckShape(specs[index], dims, what);
        !status.ok()) {
      return status;
    }
    if (binary_size != nullptr) {
      absl::StatusOr<ServingTensor> tensor =
          BinaryTensor(dtype, dims, *binary_size, binary, allocator, what);
      if (!tensor.ok()) return tensor.status();
      found[index] = *std::move(tensor);
      continue;
    }
    // The data may be flat or nested: only its element count matters.
    absl::StatusOr<Nested> nested = FlattenValue(input["data"], what);
    if (!nested.ok()) return nested.status();
    absl::StatusOr<ServingTensor> tensor =
        MakeTensor(dtype, dims, nested->leaves, allocator, what);
    if (!tensor.ok()) return tensor.status();
    found[index] = *std::move(tensor);
  }
  if (!binary.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(
        binary.size(), " bytes of binary data follow the inputs that use it"));
  }
  KServeInferRequest request;
  for (size_t i = 0; i < specs.size(); ++i) {
    if (!found[i]) {
      return absl::InvalidArgumentError(
          absl::StrCat("input '", specs[i].name, "' is missing"));
    }
    request.inputs.push_back(std::move(*found[i]));
  }
  if (const Value* all = Parameter(*document, "binary_data_output");
      all != nullptr && all->IsBool()) {
    request.all_outputs_binary = all->GetBool();
  }
  if (auto outputs = document->FindMember("outputs");
      outputs != document->MemberEnd() && outputs->value.IsArray()) {
    for (const Value& output : outputs->value.GetArray()) {
      if (!output.IsObject() || !output.HasMember("name") ||
          !output["name"].IsString()) {
        return absl::InvalidArgumentError(
            "each requested output needs a \"name\"");
      }
      const Value* wants = Parameter(output, "binary_data");
      if (wants != nullptr && wants->IsBool() && wants->GetBool()) {
        request.binary_outputs.push_back(output["name"].GetString());
      }
    }
  }
  return request;
}

absl::StatusOr<KServeInferReply> WriteKServeInfer(
    absl::string_view model_name, absl::string_view model_version,
    const std::vector<ServingTensor>& outputs, const Signature& signature,
    const KServeInferRequest* request) {
  if (absl::Status status = CheckOutputs(outputs, signature); !status.ok()) {
    return status;
  }
  auto binary = [&](const std::string& name) {
    if (request == nullptr) return false;
    return request->all_outputs_binary ||
           std::find(request->binary_outputs.begin(),
                     request->binary_outputs.end(),
                     name) != request->binary_outputs.end();
  };
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  std::string data;  // The binary outputs' bytes, in order.
  writer.StartObject();
  writer.Key("model_name");
  writer.String(model_name.data(), model_name.size());
  writer.Key("model_version");
  writer.String(model_version.data(), model_version.size());
  writer.Key("outputs");
  writer.StartArray();
  for (size_t i = 0; i < outputs.size(); ++i) {
    const ServingTensor& output = outputs[i];
    writer.StartObject();
    writer.Key("name");
    const std::string& name = signature.outputs[i].name;
    writer.String(name.c_str(), name.size());
    writer.Key("shape");
    writer.StartArray();
    for (int64_t d : output.shape().GetDimensions()) writer.Int64(d);
    writer.EndArray();
    writer.Key("datatype");
    absl::string_view datatype = KServeDTypeName(output.dtype());
    writer.String(datatype.data(), datatype.size());
    if (binary(name)) {
      const size_t start = data.size();
      if (output.IsString()) {
        AppendLengthPrefixed(output.strings().strings(), &data);
      } else {
        data.append(static_cast<const char*>(output.dense().data()),
                    output.dense().DataSizeInBytes());
      }
      writer.Key("parameters");
      writer.StartObject();
      writer.Key("binary_data_size");
      writer.Uint64(data.size() - start);
      writer.EndObject();
    } else {
      writer.Key("data");
      WriteNested(writer, output, output.shape().GetDimensions(), 0,
                  /*flat=*/true);
    }
    writer.EndObject();
  }
  writer.EndArray();
  writer.EndObject();
  KServeInferReply reply;
  reply.body.assign(buffer.GetString(), buffer.GetSize());
  if (!data.empty() ||
      (request != nullptr &&
       (request->all_outputs_binary || !request->binary_outputs.empty()))) {
    reply.json_length = reply.body.size();
    reply.body += data;
  }
  return reply;
}

std::string ErrorJson(absl::string_view message) {
  rapidjson::StringBuffer buffer;
  Writer writer(buffer);
  writer.StartObject();
  writer.Key("error");
  writer.String(message.data(), message.size());
  writer.EndObject();
  return std::string(buffer.GetString(), buffer.GetSize());
}

}  // namespace asyncrt::serving
