#include "asyncrt/tensor/tensor_shape.h"

#include <algorithm>
#include <vector>

namespace asyncrt {

void TensorShape::Assign(absl::Span<const int64_t> dims) {
  rank_ = static_cast<int>(dims.size());
  if (dims.size() <= kInlineRank) {
    heap_dims_.reset();
    std::copy(dims.begin(), dims.end(), inline_dims_.begin());
  } else {
    heap_dims_ = std::make_unique<int64_t[]>(dims.size());
    std::copy(dims.begin(), dims.end(), heap_dims_.get());
  }
}

std::string TensorShape::DebugString() const {
  return absl::StrCat("[", absl::StrJoin(GetDimensions(), ", "), "]");
}

PartialTensorShape::PartialTensorShape(
    std::optional<absl::Span<const int64_t>> dims) {
  if (dims) dims_.emplace(*dims);
}

PartialTensorShape PartialTensorShape::FromTensorShape(
    const TensorShape& shape) {
  return PartialTensorShape(shape.GetDimensions());
}

bool PartialTensorShape::IsShapeKnown() const {
  if (!dims_) return false;
  for (int64_t d : dims_->GetDimensions()) {
    if (d == kUnknownDimSize) return false;
  }
  return true;
}

absl::StatusOr<TensorShape> PartialTensorShape::ToTensorShape() const {
  if (!dims_) return absl::InvalidArgumentError("Unknown rank");
  std::vector<int64_t> unknown;
  absl::Span<const int64_t> dims = dims_->GetDimensions();
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] == kUnknownDimSize) unknown.push_back(i);
  }
  if (!unknown.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("Unknown dimensions at following indices = [",
                     absl::StrJoin(unknown, ", "), "]"));
  }
  return *dims_;
}

std::string PartialTensorShape::DebugString() const {
  if (!dims_) return "Unknown rank";
  return dims_->DebugString();
}

bool TensorMetadata::IsValid() const {
  if (dtype == DType::kInvalid) return false;
  for (int64_t d : shape.GetDimensions()) {
    if (d < 0) return false;
  }
  return true;
}

std::string TensorMetadata::DebugString() const {
  return absl::StrCat("dtype = ", DTypeName(dtype),
                      ", shape = ", shape.DebugString());
}

}  // namespace asyncrt
