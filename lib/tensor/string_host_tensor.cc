#include "asyncrt/tensor/string_host_tensor.h"

#include "asyncrt/tensor/dense_host_tensor.h"

namespace asyncrt {

namespace {

bool IsValidShape(const TensorShape& shape) {
  for (int64_t d : shape.GetDimensions()) {
    if (d < 0) return false;
  }
  return true;
}

}  // namespace

std::optional<StringHostTensor> StringHostTensor::CreateUninitialized(
    const TensorShape& shape) {
  if (!IsValidShape(shape)) return std::nullopt;
  return CreateFromStrings(
      shape, std::vector<std::string>(
                 static_cast<size_t>(shape.GetNumElements())));
}

std::optional<StringHostTensor> StringHostTensor::CreateFromStrings(
    const TensorShape& shape, std::vector<std::string> strings) {
  if (!IsValidShape(shape) ||
      strings.size() != static_cast<size_t>(shape.GetNumElements())) {
    return std::nullopt;
  }
  return StringHostTensor(
      shape, MakeRef<internal::StringArray>(std::move(strings)));
}

void StringHostTensor::Print(std::string* out) const {
  out->append("StringHostTensor shape = ");
  out->append(shape().DebugString());
  out->append(", values = ");
  absl::Span<const std::string> values = strings();
  internal::AppendElementList(DType::kString, values.data(),
                              static_cast<int64_t>(values.size()), out);
}

}  // namespace asyncrt
