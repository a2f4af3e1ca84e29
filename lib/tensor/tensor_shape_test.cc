// Tests of TensorShape, PartialTensorShape, FixedRankShape and
// TensorMetadata.
#include "asyncrt/tensor/tensor_shape.h"

#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt {
namespace {

using ::testing::ElementsAre;

TEST(TensorShapeTest, DefaultIsScalar) {
  TensorShape shape;
  EXPECT_EQ(shape.GetRank(), 0);
  EXPECT_EQ(shape.GetNumElements(), 1);
  EXPECT_TRUE(shape.GetDimensions().empty());
  EXPECT_EQ(shape.DebugString(), "[]");
}

TEST(TensorShapeTest, DimensionsAndElements) {
  TensorShape shape({1, 57, 92});
  EXPECT_EQ(shape.GetRank(), 3);
  EXPECT_EQ(shape.GetDimensionSize(1), 57);
  EXPECT_THAT(shape.GetDimensions(), ElementsAre(1, 57, 92));
  EXPECT_EQ(shape.GetNumElements(), 1 * 57 * 92);
  EXPECT_EQ(shape.DebugString(), "[1, 57, 92]");
  EXPECT_EQ(TensorShape({3, 0, 2}).GetNumElements(), 0);
}

TEST(TensorShapeTest, InlineAndHeapRanks) {
  // Rank 4 fits inline; rank 7 spills to the heap. Both behave the same.
  std::vector<int64_t> dims4 = {2, 3, 4, 5};
  std::vector<int64_t> dims7 = {1, 2, 3, 4, 5, 6, 7};
  TensorShape s4(dims4), s7(dims7);
  EXPECT_EQ(s4.GetRank(), 4);
  EXPECT_EQ(s4.GetNumElements(), 120);
  EXPECT_EQ(s7.GetRank(), 7);
  EXPECT_EQ(s7.GetNumElements(), 5040);
  EXPECT_EQ(s7.DebugString(), "[1, 2, 3, 4, 5, 6, 7]");
  TensorShape copy = s7;
  EXPECT_EQ(copy, s7);
  TensorShape moved = std::move(copy);
  EXPECT_EQ(moved, s7);
  EXPECT_NE(s4, s7);
  // The shape owns its dimensions: the source vector may change.
  dims7[0] = 100;
  EXPECT_EQ(s7.GetDimensionSize(0), 1);
}

TEST(TensorShapeTest, Equality) {
  EXPECT_EQ(TensorShape({2, 2}), TensorShape({2, 2}));
  EXPECT_NE(TensorShape({2, 2}), TensorShape({4}));
  EXPECT_NE(TensorShape({2}), TensorShape());
  EXPECT_EQ(TensorShape(), TensorShape(std::vector<int64_t>{}));
}

TEST(PartialTensorShapeTest, UnknownRank) {
  PartialTensorShape shape;
  EXPECT_TRUE(shape.IsUnranked());
  EXPECT_EQ(shape.GetRank(), -1);
  EXPECT_FALSE(shape.IsShapeKnown());
  EXPECT_EQ(shape.DebugString(), "Unknown rank");
  auto result = shape.ToTensorShape();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(), "Unknown rank");
  EXPECT_TRUE(PartialTensorShape(std::nullopt).IsUnranked());
}

TEST(PartialTensorShapeTest, UnknownDimensions) {
  std::vector<int64_t> dims = {-1, 57, -1};
  PartialTensorShape shape(dims);
  EXPECT_FALSE(shape.IsUnranked());
  EXPECT_EQ(shape.GetRank(), 3);
  EXPECT_FALSE(shape.IsShapeKnown());
  EXPECT_EQ(shape.DebugString(), "[-1, 57, -1]");
  auto result = shape.ToTensorShape();
  ASSERT_FALSE(result.ok());
  EXPECT_EQ(result.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(result.status().message(),
            "Unknown dimensions at following indices = [0, 2]");
}

TEST(PartialTensorShapeTest, KnownShapeConverts) {
  std::vector<int64_t> dims = {1, 57, 92};
  PartialTensorShape shape(dims);
  EXPECT_TRUE(shape.IsShapeKnown());
  auto result = shape.ToTensorShape();
  ASSERT_TRUE(result.ok());
  EXPECT_EQ(*result, TensorShape({1, 57, 92}));
  PartialTensorShape from = PartialTensorShape::FromTensorShape(*result);
  EXPECT_EQ(from, shape);
  EXPECT_EQ(from.DebugString(), "[1, 57, 92]");
  // Rank 0 is a known shape, unlike unknown rank.
  PartialTensorShape scalar(std::vector<int64_t>{});
  EXPECT_TRUE(scalar.IsShapeKnown());
  EXPECT_EQ(scalar.GetRank(), 0);
  EXPECT_NE(scalar, PartialTensorShape());
}

TEST(FixedRankShapeTest, FromTensorShape) {
  auto fixed = FixedRankShape<3>::FromTensorShape(TensorShape({1, 57, 92}));
  ASSERT_TRUE(fixed.ok());
  EXPECT_EQ((*fixed)[0], 1);
  EXPECT_EQ((*fixed)[2], 92);
  EXPECT_EQ(fixed->GetNumElements(), 1 * 57 * 92);
  EXPECT_EQ(fixed->DebugString(), "[1, 57, 92]");
  EXPECT_EQ(fixed->ToTensorShape(), TensorShape({1, 57, 92}));
  auto mismatch = FixedRankShape<2>::FromTensorShape(TensorShape({1, 57, 92}));
  EXPECT_FALSE(mismatch.ok());
  EXPECT_EQ(mismatch.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(FixedRankShape<0>::FromTensorShape(TensorShape())->DebugString(),
            "[]");
}

TEST(TensorMetadataTest, ValidityEqualityAndPrinting) {
  TensorMetadata md(DType::kI32, {2, 2});
  EXPECT_TRUE(md.IsValid());
  EXPECT_EQ(md.DebugString(), "dtype = i32, shape = [2, 2]");
  EXPECT_EQ(md, TensorMetadata(DType::kI32, TensorShape({2, 2})));
  EXPECT_NE(md, TensorMetadata(DType::kF32, {2, 2}));
  EXPECT_NE(md, TensorMetadata(DType::kI32, {4}));
  EXPECT_FALSE(TensorMetadata().IsValid());
  EXPECT_FALSE(TensorMetadata(DType::kF32, {2, -1}).IsValid());
  EXPECT_EQ(TensorMetadata(DType::kF32, TensorShape()).DebugString(),
            "dtype = f32, shape = []");
}

}  // namespace
}  // namespace asyncrt
