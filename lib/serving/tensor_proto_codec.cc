#include "lib/serving/tensor_proto_codec.h"

#include <cstring>
#include <limits>
#include <optional>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"

namespace asyncrt::serving {
namespace {

absl::Status Invalid(absl::string_view name, absl::string_view problem) {
  return absl::InvalidArgumentError(
      absl::StrCat("input '", name, "': ", problem));
}

// The number of elements of `dims`; InvalidArgument for a negative or
// overflowing shape.
absl::StatusOr<int64_t> ElementCount(absl::Span<const int64_t> dims,
                                     absl::string_view name) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0 || (d > 0 && n > std::numeric_limits<int64_t>::max() / d / 16)) {
      return Invalid(name, absl::StrCat("bad shape [", absl::StrJoin(dims, ", "),
                                        "]"));
    }
    n *= d;
  }
  return n;
}

// Checked before anything is allocated: a message's shape may not ask for
// more memory than its values fill (a few bytes must not make the server
// allocate gigabytes). `bytes`: the raw bytes given, or `values`: the
// typed values given (one fills the shape, up to kMaxFilledTensorBytes).
absl::Status CheckProvided(DType dtype, int64_t n, absl::string_view name,
                           std::optional<size_t> bytes, int64_t values,
                           bool one_value_fills) {
  const size_t need = static_cast<size_t>(n) * DTypeSize(dtype);
  if (bytes) {
    if (*bytes == need) return absl::OkStatus();
    return Invalid(name, absl::StrCat("has ", *bytes, " bytes; its shape and "
                                      "dtype need ", need));
  }
  if (values == n) return absl::OkStatus();
  if (one_value_fills && values == 1 && n > 0) {
    if (need <= kMaxFilledTensorBytes) return absl::OkStatus();
    return Invalid(name, absl::StrCat("one value would fill ", need,
                                      " bytes; at most ",
                                      kMaxFilledTensorBytes, " are filled"));
  }
  return Invalid(name, absl::StrCat("has ", values, " values for ", n,
                                    " elements"));
}

absl::StatusOr<DenseHostTensor> NewTensor(DType dtype,
                                          absl::Span<const int64_t> dims,
                                          HostAllocator& allocator) {
  std::optional<DenseHostTensor> tensor = DenseHostTensor::CreateUninitialized(
      TensorMetadata(dtype, TensorShape(dims)), allocator);
  if (!tensor) return absl::ResourceExhaustedError("out of host memory");
  return std::move(*tensor);
}

// Calls visit(values, T{}) with the typed field of `proto` that carries
// `dtype` and the element type T it fills; false if no field does.
template <typename Visit>
bool VisitTypedValues(const tensorflow::TensorProto& proto, DType dtype,
                      Visit&& visit) {
  switch (dtype) {
    case DType::kF32: visit(proto.float_val(), float{}); return true;
    case DType::kF64: visit(proto.double_val(), double{}); return true;
    case DType::kI32: visit(proto.int_val(), int32_t{}); return true;
    case DType::kI16: visit(proto.int_val(), int16_t{}); return true;
    case DType::kI8: visit(proto.int_val(), int8_t{}); return true;
    case DType::kUI8: visit(proto.int_val(), uint8_t{}); return true;
    case DType::kI64: visit(proto.int64_val(), int64_t{}); return true;
    case DType::kI1: visit(proto.bool_val(), bool{}); return true;
    // The bits of each value, in half_val.
    case DType::kF16:
    case DType::kBF16: visit(proto.half_val(), uint16_t{}); return true;
    default: return false;
  }
}

// The same for KServe's contents (f16 and bf16 come only raw).
template <typename Visit>
bool VisitContents(const inference::InferTensorContents& contents, DType dtype,
                   Visit&& visit) {
  switch (dtype) {
    case DType::kF32: visit(contents.fp32_contents(), float{}); return true;
    case DType::kF64: visit(contents.fp64_contents(), double{}); return true;
    case DType::kI32: visit(contents.int_contents(), int32_t{}); return true;
    case DType::kI16: visit(contents.int_contents(), int16_t{}); return true;
    case DType::kI8: visit(contents.int_contents(), int8_t{}); return true;
    case DType::kUI8: visit(contents.uint_contents(), uint8_t{}); return true;
    case DType::kI64: visit(contents.int64_contents(), int64_t{}); return true;
    case DType::kI1: visit(contents.bool_contents(), bool{}); return true;
    default: return false;
  }
}

// Copies `values` (n of them, or one to fill: CheckProvided checked which)
// into `out` as T, checking that each fits T.
template <typename T, typename Values>
absl::Status Fill(const Values& values, int64_t n, T* out,
                  absl::string_view name) {
  const bool one = values.size() == 1;
  for (int64_t i = 0; i < n; ++i) {
    const auto value = values[one ? 0 : i];
    if constexpr (std::is_integral_v<T> && !std::is_same_v<T, bool>) {
      if (value < std::numeric_limits<T>::min() ||
          value > std::numeric_limits<T>::max()) {
        return Invalid(name, absl::StrCat("value ", value, " is out of range"));
      }
    }
    out[i] = static_cast<T>(value);
  }
  return absl::OkStatus();
}

absl::Status CheckDType(const TensorSpec& spec, DType dtype) {
  if (spec.dtype == DType::kInvalid || spec.dtype == dtype) {
    return absl::OkStatus();
  }
  return Invalid(spec.name, absl::StrCat("is ", DTypeName(dtype),
                                         "; the model takes ",
                                         DTypeName(spec.dtype)));
}

// A string tensor of `dims` (n elements) from `values` (n of them, or one
// that fills when `one_value_fills`), each checked against what is left of
// kMaxFilledTensorBytes.
template <typename Values>
absl::StatusOr<ServingTensor> StringsFrom(const Values& values,
                                          absl::Span<const int64_t> dims,
                                          int64_t n, bool one_value_fills,
                                          absl::string_view name) {
  const bool one = one_value_fills && values.size() == 1 && n != 1;
  if (!one && values.size() != n) {
    return Invalid(name, absl::StrCat("has ", values.size(), " strings for ",
                                      n, " elements"));
  }
  // Each element is a std::string, however short: counted, so that one
  // empty string cannot fill millions of elements (found by the fuzzer).
  constexpr size_t kElementBytes = sizeof(std::string);
  if (static_cast<uint64_t>(n) > kMaxFilledTensorBytes / kElementBytes) {
    return Invalid(name, absl::StrCat("has ", n, " strings; at most ",
                                      kMaxFilledTensorBytes / kElementBytes,
                                      " are taken"));
  }
  size_t bytes = 0;
  for (const auto& value : values) bytes += value.size();
  if (one) bytes *= static_cast<size_t>(n);
  bytes += static_cast<size_t>(n) * kElementBytes;
  if (bytes > kMaxFilledTensorBytes) {
    return Invalid(name, absl::StrCat("fills ", bytes, " bytes; at most ",
                                      kMaxFilledTensorBytes, " are filled"));
  }
  std::vector<std::string> strings;
  strings.reserve(n);
  for (int64_t i = 0; i < n; ++i) strings.push_back(values[one ? 0 : i]);
  std::optional<StringHostTensor> tensor =
      StringHostTensor::CreateFromStrings(TensorShape(dims), std::move(strings));
  if (!tensor) return Invalid(name, "the strings do not fit the shape");
  return ServingTensor(*std::move(tensor));
}

// KServe's raw BYTES (serving_tensor.h's layout).
absl::StatusOr<ServingTensor> RawStrings(const std::string& raw,
                                         absl::Span<const int64_t> dims,
                                         int64_t n, absl::string_view name) {
  absl::StatusOr<std::vector<std::string>> strings =
      ParseLengthPrefixed(raw, n, absl::StrCat("input '", name, "'"));
  if (!strings.ok()) return strings.status();
  std::optional<StringHostTensor> tensor =
      StringHostTensor::CreateFromStrings(TensorShape(dims), *std::move(strings));
  if (!tensor) return Invalid(name, "the strings do not fit the shape");
  return ServingTensor(*std::move(tensor));
}

}  // namespace

tensorflow::DataType ToTfDataType(DType dtype) {
  switch (dtype) {
    case DType::kF32: return tensorflow::DT_FLOAT;
    case DType::kF64: return tensorflow::DT_DOUBLE;
    case DType::kF16: return tensorflow::DT_HALF;
    case DType::kBF16: return tensorflow::DT_BFLOAT16;
    case DType::kI8: return tensorflow::DT_INT8;
    case DType::kI16: return tensorflow::DT_INT16;
    case DType::kI32: return tensorflow::DT_INT32;
    case DType::kI64: return tensorflow::DT_INT64;
    case DType::kUI8: return tensorflow::DT_UINT8;
    case DType::kI1: return tensorflow::DT_BOOL;
    case DType::kString: return tensorflow::DT_STRING;
    default: return tensorflow::DT_INVALID;
  }
}

DType FromTfDataType(tensorflow::DataType dtype) {
  switch (dtype) {
    case tensorflow::DT_FLOAT: return DType::kF32;
    case tensorflow::DT_DOUBLE: return DType::kF64;
    case tensorflow::DT_HALF: return DType::kF16;
    case tensorflow::DT_BFLOAT16: return DType::kBF16;
    case tensorflow::DT_INT8: return DType::kI8;
    case tensorflow::DT_INT16: return DType::kI16;
    case tensorflow::DT_INT32: return DType::kI32;
    case tensorflow::DT_INT64: return DType::kI64;
    case tensorflow::DT_UINT8: return DType::kUI8;
    case tensorflow::DT_BOOL: return DType::kI1;
    case tensorflow::DT_STRING: return DType::kString;
    default: return DType::kInvalid;
  }
}

absl::StatusOr<ServingTensor> FromTensorProto(
    const tensorflow::TensorProto& proto, const TensorSpec& spec,
    HostAllocator& allocator) {
  const DType dtype = FromTfDataType(proto.dtype());
  if (dtype == DType::kInvalid) {
    return Invalid(spec.name,
                   absl::StrCat("dtype ", tensorflow::DataType_Name(proto.dtype()),
                                " is not supported"));
  }
  if (absl::Status status = CheckDType(spec, dtype); !status.ok()) {
    return status;
  }
  if (proto.tensor_shape().unknown_rank()) {
    return Invalid(spec.name, "the shape must be known");
  }
  std::vector<int64_t> dims;
  for (const auto& dim : proto.tensor_shape().dim()) dims.push_back(dim.size());
  if (absl::Status status =
          CheckShape(spec, dims, absl::StrCat("input '", spec.name, "'"));
      !status.ok()) {
    return status;
  }
  absl::StatusOr<int64_t> count = ElementCount(dims, spec.name);
  if (!count.ok()) return count.status();
  const int64_t n = *count;
  if (dtype == DType::kString) {
    return StringsFrom(proto.string_val(), dims, n, /*one_value_fills=*/true,
                       spec.name);
  }
  const bool has_content = !proto.tensor_content().empty();
  if (absl::Status status = CheckProvided(
          dtype, n, spec.name,
          has_content ? std::optional<size_t>(proto.tensor_content().size())
                      : std::nullopt,
          [&] {
            int64_t count = 0;
            VisitTypedValues(proto, dtype,
                             [&](const auto& values, auto) { count = values.size(); });
            return count;
          }(),
          /*one_value_fills=*/true);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<DenseHostTensor> tensor = NewTensor(dtype, dims, allocator);
  if (!tensor.ok()) return tensor.status();
  if (has_content) {
    std::memcpy(tensor->data(), proto.tensor_content().data(),
                proto.tensor_content().size());
    return ServingTensor(*std::move(tensor));
  }
  absl::Status status;
  VisitTypedValues(proto, dtype, [&](const auto& values, auto element) {
    status = Fill(values, n, static_cast<decltype(element)*>(tensor->data()),
                  spec.name);
  });
  if (!status.ok()) return status;
  return ServingTensor(*std::move(tensor));
}

absl::Status ToTensorProto(const ServingTensor& serving,
                           tensorflow::TensorProto* proto) {
  if (serving.IsString()) {
    proto->set_dtype(tensorflow::DT_STRING);
    for (int64_t d : serving.shape().GetDimensions()) {
      proto->mutable_tensor_shape()->add_dim()->set_size(d);
    }
    for (const std::string& value : serving.strings().strings()) {
      proto->add_string_val(value);
    }
    return absl::OkStatus();
  }
  const DenseHostTensor& tensor = serving.dense();
  const tensorflow::DataType dtype = ToTfDataType(tensor.dtype());
  if (dtype == tensorflow::DT_INVALID) {
    return absl::UnimplementedError(absl::StrCat(
        "an output is ", DTypeName(tensor.dtype()),
        ", which TF Serving's API does not carry"));
  }
  proto->set_dtype(dtype);
  for (int64_t d : tensor.shape().GetDimensions()) {
    proto->mutable_tensor_shape()->add_dim()->set_size(d);
  }
  proto->set_tensor_content(static_cast<const char*>(tensor.data()),
                            tensor.DataSizeInBytes());
  return absl::OkStatus();
}

absl::StatusOr<ServingTensor> FromInferInput(
    const inference::ModelInferRequest::InferInputTensor& input,
    const std::string* raw, const TensorSpec& spec, HostAllocator& allocator) {
  const DType dtype = ParseDTypeName(input.datatype());
  if (!IsServableDType(dtype)) {
    return Invalid(spec.name, absl::StrCat("datatype \"", input.datatype(),
                                           "\" is not supported"));
  }
  if (absl::Status status = CheckDType(spec, dtype); !status.ok()) {
    return status;
  }
  std::vector<int64_t> dims(input.shape().begin(), input.shape().end());
  if (absl::Status status =
          CheckShape(spec, dims, absl::StrCat("input '", spec.name, "'"));
      !status.ok()) {
    return status;
  }
  absl::StatusOr<int64_t> count = ElementCount(dims, spec.name);
  if (!count.ok()) return count.status();
  const int64_t n = *count;
  if (dtype == DType::kString) {
    if (raw != nullptr) return RawStrings(*raw, dims, n, spec.name);
    return StringsFrom(input.contents().bytes_contents(), dims, n,
                       /*one_value_fills=*/false, spec.name);
  }
  int64_t values = 0;
  const bool typed = VisitContents(
      input.contents(), dtype,
      [&](const auto& contents, auto) { values = contents.size(); });
  if (raw == nullptr && !typed) {
    return Invalid(spec.name, absl::StrCat(input.datatype(),
                                           " comes only as raw contents"));
  }
  if (absl::Status status = CheckProvided(
          dtype, n, spec.name,
          raw != nullptr ? std::optional<size_t>(raw->size()) : std::nullopt,
          values, /*one_value_fills=*/false);
      !status.ok()) {
    return status;
  }
  absl::StatusOr<DenseHostTensor> tensor = NewTensor(dtype, dims, allocator);
  if (!tensor.ok()) return tensor.status();
  if (raw != nullptr) {
    if (!raw->empty()) std::memcpy(tensor->data(), raw->data(), raw->size());
    return ServingTensor(*std::move(tensor));
  }
  // No single-value fill in this protocol: CheckProvided matched the count.
  absl::Status status;
  VisitContents(input.contents(), dtype, [&](const auto& contents, auto element) {
    status = Fill(contents, n, static_cast<decltype(element)*>(tensor->data()),
                  spec.name);
  });
  if (!status.ok()) return status;
  return ServingTensor(*std::move(tensor));
}

absl::Status ToInferOutput(
    const ServingTensor& serving, const std::string& name,
    inference::ModelInferResponse::InferOutputTensor* output,
    std::string* raw) {
  if (!IsServableDType(serving.dtype())) {
    return absl::UnimplementedError(absl::StrCat(
        "output '", name, "' is ", DTypeName(serving.dtype()),
        ", which the v2 protocol does not carry"));
  }
  output->set_name(name);
  output->set_datatype(std::string(KServeDTypeName(serving.dtype())));
  for (int64_t d : serving.shape().GetDimensions()) output->add_shape(d);
  if (serving.IsString()) {
    if (raw != nullptr) {
      AppendLengthPrefixed(serving.strings().strings(), raw);
      return absl::OkStatus();
    }
    for (const std::string& value : serving.strings().strings()) {
      output->mutable_contents()->add_bytes_contents(value);
    }
    return absl::OkStatus();
  }
  const DenseHostTensor& tensor = serving.dense();
  if (raw != nullptr) {
    raw->assign(static_cast<const char*>(tensor.data()),
                tensor.DataSizeInBytes());
    return absl::OkStatus();
  }
  inference::InferTensorContents* contents = output->mutable_contents();
  const int64_t n = tensor.NumElements();
  const void* data = tensor.data();
  switch (tensor.dtype()) {
    case DType::kF32:
      contents->mutable_fp32_contents()->Add(
          static_cast<const float*>(data), static_cast<const float*>(data) + n);
      break;
    case DType::kF64:
      contents->mutable_fp64_contents()->Add(
          static_cast<const double*>(data),
          static_cast<const double*>(data) + n);
      break;
    case DType::kI32:
      contents->mutable_int_contents()->Add(
          static_cast<const int32_t*>(data),
          static_cast<const int32_t*>(data) + n);
      break;
    case DType::kI16:
      for (int64_t i = 0; i < n; ++i) {
        contents->add_int_contents(static_cast<const int16_t*>(data)[i]);
      }
      break;
    case DType::kI8:
      for (int64_t i = 0; i < n; ++i) {
        contents->add_int_contents(static_cast<const int8_t*>(data)[i]);
      }
      break;
    case DType::kUI8:
      for (int64_t i = 0; i < n; ++i) {
        contents->add_uint_contents(static_cast<const uint8_t*>(data)[i]);
      }
      break;
    case DType::kI64:
      contents->mutable_int64_contents()->Add(
          static_cast<const int64_t*>(data),
          static_cast<const int64_t*>(data) + n);
      break;
    case DType::kI1:
      for (int64_t i = 0; i < n; ++i) {
        contents->add_bool_contents(static_cast<const bool*>(data)[i]);
      }
      break;
    default:
      return absl::InternalError("f16 and bf16 outputs go as raw contents");
  }
  return absl::OkStatus();
}

}  // namespace asyncrt::serving
