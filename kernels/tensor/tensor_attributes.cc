#include "asyncrt/kernels/tensor_attributes.h"

#include <cstdint>
#include <cstring>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"

namespace asyncrt {

using bef::AttributeKind;

std::optional<DType> DTypeOfAttributeKind(AttributeKind kind) {
  switch (kind) {
    case AttributeKind::kBool:
      return DType::kI1;
    case AttributeKind::kI8:
      return DType::kI8;
    case AttributeKind::kI16:
      return DType::kI16;
    case AttributeKind::kI32:
      return DType::kI32;
    case AttributeKind::kI64:
      return DType::kI64;
    case AttributeKind::kUI8:
      return DType::kUI8;
    case AttributeKind::kUI16:
      return DType::kUI16;
    case AttributeKind::kUI32:
      return DType::kUI32;
    case AttributeKind::kUI64:
      return DType::kUI64;
    case AttributeKind::kF16:
      return DType::kF16;
    case AttributeKind::kBF16:
      return DType::kBF16;
    case AttributeKind::kF32:
      return DType::kF32;
    case AttributeKind::kF64:
      return DType::kF64;
    case AttributeKind::kComplex64:
      return DType::kComplex64;
    case AttributeKind::kComplex128:
      return DType::kComplex128;
    default:
      return std::nullopt;
  }
}

// An integer array attribute (`[1 : i64, 57 : i64]`, `[]`).
absl::StatusOr<std::vector<int64_t>> IntegerArrayAttribute(
    const bef::Attribute* attribute) {
  if (!attribute) return absl::InvalidArgumentError("missing dimensions");
  if (attribute->kind == AttributeKind::kAggregate &&
      attribute->elements.empty()) {
    return std::vector<int64_t>();
  }
  if (attribute->kind != AttributeKind::kArray) {
    return absl::InvalidArgumentError("dimensions must be an integer array");
  }
  std::vector<int64_t> values;
  for (uint32_t i = 0; i < attribute->count; ++i) {
    switch (attribute->element_kind) {
      case AttributeKind::kI32:
        values.push_back(attribute->array<int32_t>()[i]);
        break;
      case AttributeKind::kI64:
        values.push_back(attribute->array<int64_t>()[i]);
        break;
      default:
        return absl::InvalidArgumentError(
            "dimensions must be an integer array");
    }
  }
  return values;
}

absl::StatusOr<std::vector<int64_t>> DimensionsAttribute(
    const bef::Attribute* attribute) {
  auto dims = IntegerArrayAttribute(attribute);
  if (!dims.ok()) return dims;
  for (int64_t d : *dims) {
    if (d < 0) {
      return absl::InvalidArgumentError(absl::StrCat("negative dimension ", d));
    }
  }
  return dims;
}

absl::StatusOr<DenseHostTensor> DenseTensorFromAttribute(
    const bef::Attribute& dense, HostAllocator& allocator) {
  auto dtype = DTypeOfAttributeKind(dense.element_kind);
  if (dense.kind != AttributeKind::kDense || !dtype) {
    return absl::InvalidArgumentError("value must be a dense attribute");
  }
  auto tensor = DenseHostTensor::CreateUninitialized(
      TensorMetadata(*dtype, TensorShape(dense.shape)), allocator);
  if (!tensor) return absl::ResourceExhaustedError("Cannot allocate tensor");
  if (dense.bytes.size() != tensor->DataSizeInBytes()) {
    return absl::InvalidArgumentError("malformed dense attribute");
  }
  if (!dense.bytes.empty()) {
    std::memcpy(tensor->data(), dense.bytes.data(), dense.bytes.size());
  }
  return std::move(*tensor);
}

absl::StatusOr<DenseHostTensor> ConstantTensorFromAttribute(
    const bef::BefFile& file, const bef::Attribute& dense,
    HostAllocator& allocator) {
  absl::StatusOr<const DecodedConstant*> decoded =
      DecodedConstantOf(file, dense, allocator);
  if (!decoded.ok()) return decoded.status();
  return (*decoded)->tensor().CopyRef();
}

absl::StatusOr<const DecodedConstant*> DecodedConstantOf(
    const bef::BefFile& file, const bef::Attribute& dense,
    HostAllocator& allocator) {
  auto decode = [&]() -> std::shared_ptr<const void> {
    auto dtype = DTypeOfAttributeKind(dense.element_kind);
    if (dense.kind != AttributeKind::kDense || !dtype) return nullptr;
    TensorMetadata metadata(*dtype, TensorShape(dense.shape));
    if (static_cast<size_t>(metadata.shape.GetNumElements()) *
            DTypeSize(*dtype) !=
        dense.bytes.size()) {
      return nullptr;
    }
    RCReference<HostBuffer> buffer;
    if (reinterpret_cast<uintptr_t>(dense.bytes.data()) %
            DTypeAlignment(*dtype) ==
        0) {
      // The bytes stay in the file, which the buffer keeps alive.
      buffer = HostBuffer::CreateFromExternal(
          const_cast<char*>(dense.bytes.data()), dense.bytes.size(),
          [keep_alive = file.keep_alive()](void*, size_t) {});
    } else {
      auto copy = DenseTensorFromAttribute(dense, allocator);
      if (!copy.ok()) return nullptr;
      buffer = copy->ReleaseBuffer();
    }
    if (!buffer) return nullptr;
    buffer->MarkReadOnly();
    return std::make_shared<const DecodedConstant>(
        DenseHostTensor(metadata, std::move(buffer)));
  };
  std::shared_ptr<const void> decoded = file.GetOrDecode(dense, decode);
  if (decoded == nullptr) {
    // Not decodable: the copying path says why.
    auto copy = DenseTensorFromAttribute(dense, allocator);
    if (!copy.ok()) return copy.status();
    return absl::InternalError("cannot decode a constant tensor");
  }
  return static_cast<const DecodedConstant*>(decoded.get());
}

absl::StatusOr<StringHostTensor> StringTensorFromAttributes(
    const bef::BefFile& file, const bef::Attribute* shape_attribute,
    const bef::Attribute* values) {
  auto dims = DimensionsAttribute(shape_attribute);
  if (!dims.ok()) return dims.status();
  std::vector<absl::string_view> strings;
  if (values && values->kind == AttributeKind::kAggregate) {
    for (uint32_t element : values->elements) {
      const bef::Attribute& s = file.attribute(element);
      if (s.kind != AttributeKind::kString) {
        return absl::InvalidArgumentError("values must be strings");
      }
      strings.push_back(s.bytes);
    }
  } else if (values && values->kind == AttributeKind::kString) {
    strings.push_back(values->bytes);
  }
  TensorShape shape(*dims);
  if (strings.empty() ||
      (strings.size() != 1 &&
       static_cast<int64_t>(strings.size()) != shape.GetNumElements())) {
    return absl::InvalidArgumentError(
        "values must hold one string or one per element");
  }
  auto tensor = StringHostTensor::CreateUninitialized(shape);
  if (!tensor) return absl::ResourceExhaustedError("Cannot allocate tensor");
  absl::Span<std::string> out = tensor->strings();
  for (size_t i = 0; i < out.size(); ++i) {
    out[i] = std::string(strings[strings.size() == 1 ? 0 : i]);
  }
  return std::move(*tensor);
}

}  // namespace asyncrt
