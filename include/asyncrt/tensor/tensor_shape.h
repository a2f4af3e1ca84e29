// Tensor shapes: TensorShape (known rank and dimensions), PartialTensorShape
// (unknown rank or unknown dimensions), FixedRankShape<Rank> (rank known at
// compile time) and TensorMetadata (dtype + shape).
//
// All are plain value types: copyable, no shared state, thread-compatible
// (concurrent const access is safe).
#ifndef ASYNCRT_TENSOR_TENSOR_SHAPE_H_
#define ASYNCRT_TENSOR_TENSOR_SHAPE_H_

#include <array>
#include <cassert>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <memory>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/optimization.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "asyncrt/tensor/dtype.h"

namespace asyncrt {

// A shape of known rank and dimensions. Ranks up to 4 are stored inline
// (no heap allocation). Dimensions are not validated here: a negative
// dimension makes a shape that tensor factories reject.
class TensorShape {
 public:
  // Rank 0: a scalar with one element.
  TensorShape() = default;
  explicit TensorShape(absl::Span<const int64_t> dims) { Assign(dims); }
  // TensorShape({2, 3}); also makes TensorShape({}) rank 0 unambiguously.
  explicit TensorShape(std::initializer_list<int64_t> dims) {
    Assign(absl::Span<const int64_t>(dims.begin(), dims.size()));
  }

  // Inline shapes copy as plain words: handles and metadata are copied on
  // every eager op.
  TensorShape(const TensorShape& other)
      : rank_(other.rank_), inline_dims_(other.inline_dims_) {
    if (ABSL_PREDICT_FALSE(rank_ > kInlineRank)) Assign(other.GetDimensions());
  }
  TensorShape& operator=(const TensorShape& other) {
    if (ABSL_PREDICT_TRUE(other.rank_ <= kInlineRank)) {
      rank_ = other.rank_;
      inline_dims_ = other.inline_dims_;
      heap_dims_.reset();
    } else if (this != &other) {
      Assign(other.GetDimensions());
    }
    return *this;
  }
  // A moved-from shape is rank 0.
  TensorShape(TensorShape&& other) noexcept
      : rank_(std::exchange(other.rank_, 0)),
        inline_dims_(other.inline_dims_),
        heap_dims_(std::move(other.heap_dims_)) {}
  TensorShape& operator=(TensorShape&& other) noexcept {
    rank_ = std::exchange(other.rank_, 0);
    inline_dims_ = other.inline_dims_;
    heap_dims_ = std::move(other.heap_dims_);
    return *this;
  }

  int GetRank() const { return rank_; }
  int64_t GetDimensionSize(int i) const {
    assert(i >= 0 && i < GetRank());
    return data()[i];
  }
  absl::Span<const int64_t> GetDimensions() const {
    return absl::Span<const int64_t>(data(), static_cast<size_t>(rank_));
  }
  // The product of the dimensions; 1 for rank 0.
  int64_t GetNumElements() const {
    int64_t n = 1;
    for (int64_t d : GetDimensions()) n *= d;
    return n;
  }

  // Element by element, inline: shapes are compared on every eager op, and
  // a memcmp call cost more than the few dimensions.
  friend bool operator==(const TensorShape& a, const TensorShape& b) {
    if (a.rank_ != b.rank_) return false;
    const int64_t* x = a.data();
    const int64_t* y = b.data();
    for (int i = 0; i < a.rank_; ++i) {
      if (x[i] != y[i]) return false;
    }
    return true;
  }
  friend bool operator!=(const TensorShape& a, const TensorShape& b) {
    return !(a == b);
  }

  // "[1, 57, 92]"; "[]" for rank 0.
  std::string DebugString() const;

 private:
  static constexpr int kInlineRank = 4;

  const int64_t* data() const {
    return rank_ <= kInlineRank ? inline_dims_.data() : heap_dims_.get();
  }
  void Assign(absl::Span<const int64_t> dims);

  int rank_ = 0;
  // Ranks up to kInlineRank live here, without a heap allocation. (Not
  // absl::InlinedVector: copying one trips GCC 12's -Wmaybe-uninitialized.)
  std::array<int64_t, kInlineRank> inline_dims_ = {};
  // Larger ranks.
  std::unique_ptr<int64_t[]> heap_dims_;
};

// A shape whose rank, or some of whose dimensions, may be unknown.
class PartialTensorShape {
 public:
  static constexpr int64_t kUnknownDimSize = -1;

  // Unknown rank.
  PartialTensorShape() = default;
  // nullopt: unknown rank. Otherwise the dimensions, kUnknownDimSize (-1)
  // marking the unknown ones.
  explicit PartialTensorShape(std::optional<absl::Span<const int64_t>> dims);

  static PartialTensorShape FromTensorShape(const TensorShape& shape);

  bool IsUnranked() const { return !dims_.has_value(); }
  // -1 if unranked.
  int GetRank() const {
    return dims_ ? dims_->GetRank() : -1;
  }
  // The dimensions; requires !IsUnranked().
  absl::Span<const int64_t> GetDimensions() const {
    assert(dims_.has_value());
    return dims_->GetDimensions();
  }
  // True if the rank and every dimension are known.
  bool IsShapeKnown() const;

  // The shape if it is known; InvalidArgument "Unknown rank" or
  // "Unknown dimensions at following indices = [0, 2]" otherwise.
  absl::StatusOr<TensorShape> ToTensorShape() const;

  friend bool operator==(const PartialTensorShape& a,
                         const PartialTensorShape& b) {
    return a.dims_ == b.dims_;
  }
  friend bool operator!=(const PartialTensorShape& a,
                         const PartialTensorShape& b) {
    return !(a == b);
  }

  // "[-1, 57, 92]", or "Unknown rank".
  std::string DebugString() const;

 private:
  // nullopt: unknown rank.
  std::optional<TensorShape> dims_;
};

// A shape whose rank is fixed at compile time, for kernels specialized by
// rank.
template <size_t Rank>
class FixedRankShape {
 public:
  // All dimensions zero.
  FixedRankShape() { dims_.fill(0); }
  explicit FixedRankShape(const std::array<int64_t, Rank>& dims)
      : dims_(dims) {}

  // InvalidArgument if `shape` does not have rank Rank.
  static absl::StatusOr<FixedRankShape> FromTensorShape(
      const TensorShape& shape) {
    if (shape.GetRank() != static_cast<int>(Rank)) {
      return absl::InvalidArgumentError(
          absl::StrCat("Expected a shape of rank ", Rank, ", got rank ",
                       shape.GetRank(), " shape ", shape.DebugString()));
    }
    std::array<int64_t, Rank> dims{};
    for (size_t i = 0; i < Rank; ++i) dims[i] = shape.GetDimensions()[i];
    return FixedRankShape(dims);
  }

  TensorShape ToTensorShape() const {
    return TensorShape(absl::Span<const int64_t>(dims_.data(), Rank));
  }

  static constexpr size_t GetRank() { return Rank; }
  int64_t GetNumElements() const {
    int64_t n = 1;
    for (int64_t d : dims_) n *= d;
    return n;
  }

  int64_t operator[](size_t i) const {
    assert(i < Rank);
    return dims_[i];
  }
  int64_t& operator[](size_t i) {
    assert(i < Rank);
    return dims_[i];
  }
  const std::array<int64_t, Rank>& dims() const { return dims_; }

  friend bool operator==(const FixedRankShape& a, const FixedRankShape& b) {
    return a.dims_ == b.dims_;
  }
  friend bool operator!=(const FixedRankShape& a, const FixedRankShape& b) {
    return !(a == b);
  }

  // "[1, 57, 92]"; "[]" for rank 0.
  std::string DebugString() const {
    return absl::StrCat("[", absl::StrJoin(dims_, ", "), "]");
  }

 private:
  std::array<int64_t, Rank> dims_;
};

// The dtype and shape of a tensor.
struct TensorMetadata {
  TensorMetadata() = default;
  TensorMetadata(DType dtype, TensorShape shape)
      : dtype(dtype), shape(std::move(shape)) {}
  TensorMetadata(DType dtype, absl::Span<const int64_t> dims)
      : dtype(dtype), shape(dims) {}
  // TensorMetadata(DType::kI32, {2, 2}); {} is rank 0.
  TensorMetadata(DType dtype, std::initializer_list<int64_t> dims)
      : dtype(dtype), shape(dims) {}

  // True if the dtype is not kInvalid and no dimension is negative.
  bool IsValid() const;

  friend bool operator==(const TensorMetadata& a, const TensorMetadata& b) {
    return a.dtype == b.dtype && a.shape == b.shape;
  }
  friend bool operator!=(const TensorMetadata& a, const TensorMetadata& b) {
    return !(a == b);
  }

  // "dtype = i32, shape = [2, 2]".
  std::string DebugString() const;

  DType dtype = DType::kInvalid;
  TensorShape shape;
};

}  // namespace asyncrt

#endif  // ASYNCRT_TENSOR_TENSOR_SHAPE_H_
