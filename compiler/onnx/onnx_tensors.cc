// ONNX tensors: TensorProto to runtime tensors and back (onnx_tensors.h),
// and the reading the importer shares (onnx_tensor_util.h).
#include "asyncrt/compiler/onnx_tensors.h"

#include <cstring>
#include <limits>
#include <set>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "compiler/onnx/onnx_tensor_util.h"
#include "onnx/onnx_pb.h"

namespace asyncrt {
namespace onnx_internal {
namespace {

// Refuses tensors whose element count would overflow or exhaust memory.
constexpr int64_t kMaxElements = int64_t{1} << 36;

}  // namespace

std::optional<DType> DTypeOfOnnx(int32_t type) {
  using onnx::TensorProto;
  switch (type) {
    case TensorProto::FLOAT:
      return DType::kF32;
    case TensorProto::UINT8:
      return DType::kUI8;
    case TensorProto::INT8:
      return DType::kI8;
    case TensorProto::UINT16:
      return DType::kUI16;
    case TensorProto::INT16:
      return DType::kI16;
    case TensorProto::INT32:
      return DType::kI32;
    case TensorProto::INT64:
      return DType::kI64;
    case TensorProto::BOOL:
      return DType::kI1;
    case TensorProto::FLOAT16:
      return DType::kF16;
    case TensorProto::DOUBLE:
      return DType::kF64;
    case TensorProto::UINT32:
      return DType::kUI32;
    case TensorProto::UINT64:
      return DType::kUI64;
    case TensorProto::BFLOAT16:
      return DType::kBF16;
    default:
      return std::nullopt;
  }
}

std::string OnnxTypeName(int32_t type) {
  const std::string& name = onnx::TensorProto::DataType_Name(
      static_cast<onnx::TensorProto::DataType>(type));
  return name.empty() ? absl::StrCat("data type ", type) : name;
}

absl::StatusOr<int64_t> CheckedElements(absl::Span<const int64_t> dims) {
  int64_t n = 1;
  for (int64_t d : dims) {
    if (d < 0) return absl::InvalidArgumentError("negative dimension");
    if (d != 0 && n > kMaxElements / d) {
      return absl::InvalidArgumentError("too many elements");
    }
    n *= d;
  }
  return n;
}

// Copies `count` typed values of `field` into `out`, each narrowed to
// `size` bytes (ONNX stores small integers, bools and f16 bits in int32).
template <typename Field>
void CopyNarrowed(const Field& field, size_t size, std::vector<char>& out) {
  out.resize(field.size() * size);
  for (int i = 0; i < field.size(); ++i) {
    auto value = field.Get(i);
    std::memcpy(&out[i * size], &value, size);  // Little-endian: low bytes.
  }
}

absl::StatusOr<ConstTensor> ReadTensorProto(const onnx::TensorProto& proto) {
  ConstTensor tensor;
  std::optional<DType> dtype = DTypeOfOnnx(proto.data_type());
  if (!dtype) {
    return absl::UnimplementedError(
        absl::StrCat("unsupported dtype ", OnnxTypeName(proto.data_type())));
  }
  tensor.dtype = *dtype;
  tensor.dims.assign(proto.dims().begin(), proto.dims().end());
  absl::StatusOr<int64_t> count = CheckedElements(tensor.dims);
  if (!count.ok()) return count.status();
  if (proto.data_location() == onnx::TensorProto::EXTERNAL) {
    return absl::UnimplementedError("tensors in external data files");
  }
  const size_t size = DTypeSize(tensor.dtype);
  if (proto.has_raw_data()) {
    tensor.bytes.assign(proto.raw_data().begin(), proto.raw_data().end());
  } else {
    switch (proto.data_type()) {
      case onnx::TensorProto::FLOAT:
        CopyNarrowed(proto.float_data(), size, tensor.bytes);
        break;
      case onnx::TensorProto::DOUBLE:
        CopyNarrowed(proto.double_data(), size, tensor.bytes);
        break;
      case onnx::TensorProto::INT64:
        CopyNarrowed(proto.int64_data(), size, tensor.bytes);
        break;
      case onnx::TensorProto::UINT32:
      case onnx::TensorProto::UINT64:
        CopyNarrowed(proto.uint64_data(), size, tensor.bytes);
        break;
      default:  // int32_data: the small integers, bool, f16 and bf16 bits.
        CopyNarrowed(proto.int32_data(), size, tensor.bytes);
        break;
    }
  }
  if (tensor.bytes.size() != static_cast<size_t>(*count) * size) {
    return absl::InvalidArgumentError(
        absl::StrCat("holds ", tensor.bytes.size(),
                     " bytes where its shape needs ", *count * size));
  }
  if (tensor.dtype == DType::kI1) {
    for (char& b : tensor.bytes) b = b != 0;
  }
  return tensor;
}

int32_t OnnxTypeOf(DType dtype) {
  using onnx::TensorProto;
  switch (dtype) {
    case DType::kF32:
      return TensorProto::FLOAT;
    case DType::kUI8:
      return TensorProto::UINT8;
    case DType::kI8:
      return TensorProto::INT8;
    case DType::kUI16:
      return TensorProto::UINT16;
    case DType::kI16:
      return TensorProto::INT16;
    case DType::kI32:
      return TensorProto::INT32;
    case DType::kI64:
      return TensorProto::INT64;
    case DType::kI1:
      return TensorProto::BOOL;
    case DType::kF16:
      return TensorProto::FLOAT16;
    case DType::kF64:
      return TensorProto::DOUBLE;
    case DType::kUI32:
      return TensorProto::UINT32;
    case DType::kUI64:
      return TensorProto::UINT64;
    case DType::kBF16:
      return TensorProto::BFLOAT16;
    default:
      return TensorProto::UNDEFINED;
  }
}

}  // namespace onnx_internal

using onnx_internal::ConstTensor;
using onnx_internal::OnnxTypeOf;
using onnx_internal::ReadTensorProto;

absl::StatusOr<DenseHostTensor> ParseOnnxTensor(absl::string_view bytes,
                                                HostAllocator& allocator) {
  onnx::TensorProto proto;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not a serialized ONNX TensorProto");
  }
  absl::StatusOr<ConstTensor> tensor = ReadTensorProto(proto);
  if (!tensor.ok()) return tensor.status();
  auto dense = DenseHostTensor::CreateUninitialized(
      TensorMetadata(tensor->dtype, tensor->dims), allocator);
  if (!dense) return absl::ResourceExhaustedError("out of memory");
  if (!tensor->bytes.empty()) {
    std::memcpy(dense->data(), tensor->bytes.data(), tensor->bytes.size());
  }
  return *std::move(dense);
}

absl::StatusOr<std::string> SerializeOnnxTensor(const DenseHostTensor& tensor,
                                                absl::string_view name) {
  onnx::TensorProto proto;
  const int32_t type = OnnxTypeOf(tensor.dtype());
  if (type == onnx::TensorProto::UNDEFINED) {
    return absl::UnimplementedError(
        absl::StrCat("ONNX has no dtype for ", DTypeName(tensor.dtype())));
  }
  proto.set_data_type(type);
  proto.set_name(std::string(name));
  for (int64_t dim : tensor.shape().GetDimensions()) proto.add_dims(dim);
  proto.set_raw_data(static_cast<const char*>(tensor.data()),
                     tensor.NumElements() * DTypeSize(tensor.dtype()));
  return proto.SerializeAsString();
}

namespace {

OnnxValueInfo ValueInfo(const onnx::ValueInfoProto& info) {
  OnnxValueInfo value;
  value.name = info.name();
  if (!info.type().has_tensor_type()) return value;
  const onnx::TypeProto::Tensor& tensor = info.type().tensor_type();
  value.dtype = onnx_internal::DTypeOfOnnx(tensor.elem_type())
                    .value_or(DType::kInvalid);
  if (tensor.has_shape()) {
    std::vector<int64_t> dims;
    for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
      dims.push_back(dim.has_dim_value() ? dim.dim_value() : -1);
    }
    value.shape = std::move(dims);
  }
  return value;
}

}  // namespace

absl::StatusOr<OnnxGraphInterface> ReadOnnxGraphInterface(
    absl::string_view bytes) {
  onnx::ModelProto model;
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max()) ||
      !model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not a serialized ONNX ModelProto");
  }
  std::set<std::string> initializers;
  for (const onnx::TensorProto& initializer : model.graph().initializer()) {
    initializers.insert(initializer.name());
  }
  OnnxGraphInterface interface;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    if (!initializers.count(input.name())) {
      interface.inputs.push_back(ValueInfo(input));
    }
  }
  for (const onnx::ValueInfoProto& output : model.graph().output()) {
    interface.outputs.push_back(ValueInfo(output));
  }
  return interface;
}

}  // namespace asyncrt
