// Tests of the shape and data-movement nn.* ops through the eager API:
// values and shapes against hand-computed expectations for several dtypes,
// buffer sharing for the view ops, and errors that name the op.
#include <algorithm>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using Shape = std::vector<int64_t>;

class ShapeOpsTest : public AnyDTypeOpTest {};

//===--- Views ------------------------------------------------------------===//

TEST_F(ShapeOpsTest, ReshapeCopiesZerosAndInfersMinusOne) {
  auto r = Run("nn.reshape", {IotaF32({2, 3, 4})}, Ints("shape", {0, -1, 2}));
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape, (Shape{2, 6, 2}));
  EXPECT_EQ(r->values<float>(), IotaF32({24}).values<float>());

  auto ints = Run("nn.reshape", {I64({2, 2}, {7, -8, 9, 1LL << 40})},
                  Ints("shape", {4}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(ints->shape, (Shape{4}));
  EXPECT_THAT(ints->values<int64_t>(), ElementsAre(7, -8, 9, 1LL << 40));

  // allowzero = 1: 0 is a real zero-sized dimension.
  OpAttrs zero = Ints("shape", {0, 3});
  zero.Set("allowzero", int64_t{1});
  auto empty = Run("nn.reshape", {F32({3, 0}, {})}, zero);
  ASSERT_TRUE(empty.ok()) << empty.status();
  EXPECT_EQ(empty->shape, (Shape{0, 3}));
}

TEST_F(ShapeOpsTest, ReshapeErrors) {
  EXPECT_THAT(Error("nn.reshape", {IotaF32({2, 3})}, Ints("shape", {-1, -1})),
              HasSubstr("nn.reshape: -1 appears more than once"));
  EXPECT_THAT(Error("nn.reshape", {IotaF32({2, 3})}, Ints("shape", {4})),
              HasSubstr("nn.reshape: cannot reshape [2, 3] (6 elements) to "
                        "[4] (4 elements)"));
  EXPECT_THAT(Error("nn.reshape", {IotaF32({2, 3})}, Ints("shape", {4, -1})),
              HasSubstr("nn.reshape: cannot infer"));
  EXPECT_THAT(Error("nn.reshape", {IotaF32({6})}, Ints("shape", {0, 0})),
              HasSubstr("nn.reshape: shape[1] is 0 (copy)"));
  EXPECT_THAT(Error("nn.reshape", {IotaF32({6})}, Ints("shape", {-2, -3})),
              HasSubstr("nn.reshape: shape [-2, -3] has a negative"));
  EXPECT_THAT(Error("nn.reshape", {IotaF32({6})}),
              HasSubstr("nn.reshape: attribute `shape`"));
  EXPECT_THAT(
      Error("nn.reshape", {IotaF32({6}), IotaF32({6})}, Ints("shape", {6})),
      HasSubstr("nn.reshape: takes 1 argument"));
}

TEST_F(ShapeOpsTest, ViewOpsShareTheArgumentsBuffer) {
  TensorHandle x = Handle(IotaF32({2, 3, 1}));
  const auto* in = static_cast<const DenseHostTensor*>(core_->Await(x));
  struct Case {
    std::string op;
    OpAttrs attrs;
    Shape shape;
  };
  std::vector<Case> cases = {
      {"nn.reshape", Ints("shape", {3, 2}), {3, 2}},
      {"nn.flatten", OpAttrs(), {2, 3}},
      {"nn.squeeze", OpAttrs(), {2, 3}},
      {"nn.unsqueeze", Ints("axes", {0}), {1, 2, 3, 1}},
  };
  for (Case& c : cases) {
    TensorHandle result;
    core_->Execute(*exec_ctx_, c.op, cpu_, absl::MakeSpan(&x, 1),
                   c.attrs.Freeze(), absl::MakeSpan(&result, 1), nullptr);
    const auto* out = static_cast<const DenseHostTensor*>(core_->Await(result));
    ASSERT_NE(out, nullptr) << c.op;
    EXPECT_EQ(out->data(), in->data()) << c.op << " copied";
    EXPECT_EQ(out->shape(), TensorShape(c.shape)) << c.op;
  }
}

TEST_F(ShapeOpsTest, Flatten) {
  AnyTensor x = IotaF32({2, 3, 4});
  auto one = Run("nn.flatten", {x});
  ASSERT_TRUE(one.ok()) << one.status();
  EXPECT_EQ(one->shape, (Shape{2, 12}));
  EXPECT_EQ(one->values<float>(), x.values<float>());
  auto zero = Run("nn.flatten", {x}, Int("axis", 0));
  ASSERT_TRUE(zero.ok());
  EXPECT_EQ(zero->shape, (Shape{1, 24}));
  auto last = Run("nn.flatten", {x}, Int("axis", 3));
  ASSERT_TRUE(last.ok());
  EXPECT_EQ(last->shape, (Shape{24, 1}));
  auto negative =
      Run("nn.flatten", {I64({2, 1, 2}, {1, 2, 3, 4})}, Int("axis", -1));
  ASSERT_TRUE(negative.ok());
  EXPECT_EQ(negative->shape, (Shape{2, 2}));
  EXPECT_THAT(negative->values<int64_t>(), ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(Error("nn.flatten", {x}, Int("axis", 4)),
              HasSubstr("nn.flatten: axis 4 is out of range for rank 3"));
}

TEST_F(ShapeOpsTest, SqueezeAndUnsqueeze) {
  AnyTensor x = I64({1, 3, 1, 2}, {1, 2, 3, 4, 5, 6});
  auto all = Run("nn.squeeze", {x});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->shape, (Shape{3, 2}));
  EXPECT_THAT(all->values<int64_t>(), ElementsAre(1, 2, 3, 4, 5, 6));
  auto some = Run("nn.squeeze", {x}, Ints("axes", {-2}));
  ASSERT_TRUE(some.ok()) << some.status();
  EXPECT_EQ(some->shape, (Shape{1, 3, 2}));
  EXPECT_THAT(Error("nn.squeeze", {x}, Ints("axes", {1})),
              HasSubstr("nn.squeeze: cannot squeeze axis 1 of size 3"));
  EXPECT_THAT(Error("nn.squeeze", {x}, Ints("axes", {0, -4})),
              HasSubstr("nn.squeeze: axis -4 is repeated"));
  EXPECT_THAT(Error("nn.squeeze", {F32({}, {1})}, Ints("axes", {0})),
              HasSubstr("nn.squeeze: axis 0 is out of range for rank 0"));

  AnyTensor y = I64({2, 3}, {1, 2, 3, 4, 5, 6});
  auto u = Run("nn.unsqueeze", {y}, Ints("axes", {0, -1, 2}));
  ASSERT_TRUE(u.ok()) << u.status();
  EXPECT_EQ(u->shape, (Shape{1, 2, 1, 3, 1}));
  EXPECT_EQ(u->values<int64_t>(), y.values<int64_t>());
  auto scalar = Run("nn.unsqueeze", {F32({}, {5})}, Ints("axes", {0}));
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->shape, (Shape{1}));
  EXPECT_THAT(Error("nn.unsqueeze", {y}, Ints("axes", {4})),
              HasSubstr("nn.unsqueeze: axis 4 is out of range for rank 3"));
  EXPECT_THAT(Error("nn.unsqueeze", {y}, Ints("axes", {1, 1})),
              HasSubstr("nn.unsqueeze: axis 1 is repeated"));
  EXPECT_THAT(Error("nn.unsqueeze", {y}),
              HasSubstr("nn.unsqueeze: attribute `axes`"));
}

// A handle whose tensor (and so metadata) arrives after the op is issued:
// the runtime cannot run the shape function at issue time, so the op runs
// it when it dispatches, and still reports a bad attribute as an error.
TEST_F(ShapeOpsTest, ArgumentMetadataThatArrivesLater) {
  TensorHandle ready = Handle(I64({2, 3}, {1, 2, 3, 4, 5, 6}));
  RCReference<IndirectAsyncValue> pending = MakeIndirectAsyncValue();
  TensorHandle later(ready.device(), pending);
  ASSERT_FALSE(later.IsMetadataAvailable());
  TensorHandle good, bad;
  core_->Execute(*exec_ctx_, "nn.transpose", cpu_, absl::MakeSpan(&later, 1),
                 OpAttrs().Freeze(), absl::MakeSpan(&good, 1), nullptr);
  core_->Execute(*exec_ctx_, "nn.transpose", cpu_, absl::MakeSpan(&later, 1),
                 Ints("perm", {0, 0}).Freeze(), absl::MakeSpan(&bad, 1),
                 nullptr);
  pending->ForwardTo(FormRef(ready.GetAsyncTensor()));
  const auto* out = static_cast<const DenseHostTensor*>(core_->Await(good));
  ASSERT_NE(out, nullptr) << good.GetErrorIfPresent()->message();
  EXPECT_EQ(out->shape(), TensorShape({3, 2}));
  EXPECT_THAT(out->elements<int64_t>(), ElementsAre(1, 4, 2, 5, 3, 6));
  ASSERT_EQ(core_->Await(bad), nullptr);
  EXPECT_THAT(bad.GetErrorIfPresent()->message(),
              HasSubstr("nn.transpose: perm [0, 0] is not a permutation"));
}

//===--- Transpose, expand ------------------------------------------------===//

TEST_F(ShapeOpsTest, Transpose) {
  auto reversed = Run("nn.transpose", {F32({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(reversed.ok()) << reversed.status();
  EXPECT_EQ(reversed->shape, (Shape{3, 2}));
  EXPECT_THAT(reversed->values<float>(), ElementsAre(1, 4, 2, 5, 3, 6));

  // [2, 3, 4] -> perm [1, 0, 2] keeps rows of 4 contiguous.
  AnyTensor x = IotaF32({2, 3, 4});
  auto rows = Run("nn.transpose", {x}, Ints("perm", {1, 0, 2}));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->shape, (Shape{3, 2, 4}));
  std::vector<float> expected;
  for (int j = 0; j < 3; ++j)
    for (int i = 0; i < 2; ++i)
      for (int k = 0; k < 4; ++k) expected.push_back(i * 12 + j * 4 + k);
  EXPECT_EQ(rows->values<float>(), expected);

  auto ints = Run("nn.transpose", {I64({2, 1, 3}, {1, 2, 3, 4, 5, 6})},
                  Ints("perm", {2, 0, 1}));
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(ints->shape, (Shape{3, 2, 1}));
  EXPECT_THAT(ints->values<int64_t>(), ElementsAre(1, 4, 2, 5, 3, 6));

  auto bools = Run("nn.transpose", {Bool({2, 2}, {true, true, false, false})});
  ASSERT_TRUE(bools.ok());
  EXPECT_THAT(bools->values<bool>(), ElementsAre(true, false, true, false));

  // NCHW -> NHWC on rank 4, against the index arithmetic.
  AnyTensor nchw = IotaF32({2, 3, 2, 4});
  auto nhwc = Run("nn.transpose", {nchw}, Ints("perm", {0, 2, 3, 1}));
  ASSERT_TRUE(nhwc.ok()) << nhwc.status();
  EXPECT_EQ(nhwc->shape, (Shape{2, 2, 4, 3}));
  std::vector<float> want;
  for (int n = 0; n < 2; ++n)
    for (int h = 0; h < 2; ++h)
      for (int w = 0; w < 4; ++w)
        for (int c = 0; c < 3; ++c)
          want.push_back(((n * 3 + c) * 2 + h) * 4 + w);
  EXPECT_EQ(nhwc->values<float>(), want);

  EXPECT_THAT(Error("nn.transpose", {x}, Ints("perm", {0, 0, 1})),
              HasSubstr("nn.transpose: perm [0, 0, 1] is not a permutation"));
  EXPECT_THAT(Error("nn.transpose", {x}, Ints("perm", {1, 0})),
              HasSubstr("nn.transpose: perm [1, 0] is not a permutation of "
                        "rank 3"));
}

// Every permutation of a rank-4 float tensor whose dimensions take whole
// 8x8 blocks and leave edges (the blocked transposition path), and of
// 64-bit elements (the strided copy), against the index arithmetic.
TEST_F(ShapeOpsTest, TransposeEveryPermutationInBlocksAndEdges) {
  const std::vector<int64_t> shape = {3, 17, 2, 24};
  const AnyTensor x = IotaF32(shape);
  std::vector<int64_t> perm = {0, 1, 2, 3};
  do {
    SCOPED_TRACE(testing::Message()
                 << "perm " << perm[0] << perm[1] << perm[2] << perm[3]);
    OpAttrs attrs;
    attrs.SetArray<int64_t>("perm", perm);
    auto y = Run("nn.transpose", {x}, attrs);
    ASSERT_TRUE(y.ok()) << y.status();
    const std::vector<float> got = y->template values<float>();
    std::vector<int64_t> out_shape(4), strides = {17 * 2 * 24, 2 * 24, 24, 1};
    for (int d = 0; d < 4; ++d) out_shape[d] = shape[perm[d]];
    ASSERT_EQ(y->shape, out_shape);
    int64_t position = 0;
    bool all_equal = true;
    for (int64_t a = 0; a < out_shape[0]; ++a)
      for (int64_t b = 0; b < out_shape[1]; ++b)
        for (int64_t c = 0; c < out_shape[2]; ++c)
          for (int64_t d = 0; d < out_shape[3]; ++d) {
            const int64_t source = a * strides[perm[0]] + b * strides[perm[1]] +
                                   c * strides[perm[2]] + d * strides[perm[3]];
            all_equal &= got[position++] == static_cast<float>(source);
          }
    EXPECT_TRUE(all_equal);
  } while (std::next_permutation(perm.begin(), perm.end()));
  // 64-bit elements of a 16 x 9 matrix.
  AnyTensor matrix{DType::kI64, {16, 9}, std::vector<char>(144 * 8)};
  for (int64_t i = 0; i < 144; ++i) {
    std::memcpy(matrix.bytes.data() + i * 8, &i, 8);
  }
  auto transposed = Run("nn.transpose", {matrix});
  ASSERT_TRUE(transposed.ok()) << transposed.status();
  const std::vector<int64_t> got = transposed->template values<int64_t>();
  for (int64_t i = 0; i < 9; ++i) {
    for (int64_t j = 0; j < 16; ++j) ASSERT_EQ(got[i * 16 + j], j * 9 + i);
  }
}

TEST_F(ShapeOpsTest, Expand) {
  auto column =
      Run("nn.expand", {F32({3, 1}, {1, 2, 3})}, Ints("shape", {2, 1, 2}));
  ASSERT_TRUE(column.ok()) << column.status();
  EXPECT_EQ(column->shape, (Shape{2, 3, 2}));
  EXPECT_THAT(column->values<float>(),
              ElementsAre(1, 1, 2, 2, 3, 3, 1, 1, 2, 2, 3, 3));
  // The shape may be smaller than the input's (bidirectional broadcast).
  auto row = Run("nn.expand", {I64({1, 3}, {4, 5, 6})}, Ints("shape", {2, 1}));
  ASSERT_TRUE(row.ok()) << row.status();
  EXPECT_EQ(row->shape, (Shape{2, 3}));
  EXPECT_THAT(row->values<int64_t>(), ElementsAre(4, 5, 6, 4, 5, 6));
  EXPECT_THAT(Error("nn.expand", {F32({3}, {1, 2, 3})}, Ints("shape", {2})),
              HasSubstr("nn.expand: shapes [3] and [2] do not broadcast"));
  EXPECT_THAT(Error("nn.expand", {F32({3}, {1, 2, 3})}, Ints("shape", {-3})),
              HasSubstr("nn.expand: invalid shape [-3]"));
}

//===--- Concat, split ----------------------------------------------------===//

TEST_F(ShapeOpsTest, Concat) {
  auto rows = Run("nn.concat", {F32({1, 2}, {1, 2}), F32({2, 2}, {3, 4, 5, 6})},
                  Int("axis", 0));
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->shape, (Shape{3, 2}));
  EXPECT_THAT(rows->values<float>(), ElementsAre(1, 2, 3, 4, 5, 6));

  auto columns = Run("nn.concat",
                     {I64({2, 1}, {1, 2}), I64({2, 2}, {3, 4, 5, 6}),
                      I64({2, 0}, {}), I64({2, 1}, {7, 8})},
                     Int("axis", -1));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_EQ(columns->shape, (Shape{2, 4}));
  EXPECT_THAT(columns->values<int64_t>(), ElementsAre(1, 3, 4, 7, 2, 5, 6, 8));

  // The middle axis of rank 3, bool elements.
  auto middle = Run(
      "nn.concat",
      {Bool({2, 1, 2}, {true, false, false, true}),
       Bool({2, 2, 2}, {false, false, true, true, true, true, false, false})},
      Int("axis", 1));
  ASSERT_TRUE(middle.ok()) << middle.status();
  EXPECT_EQ(middle->shape, (Shape{2, 3, 2}));
  EXPECT_THAT(middle->values<bool>(),
              ElementsAre(true, false, false, false, true, true,  //
                          false, true, true, true, false, false));

  EXPECT_THAT(Error("nn.concat", {F32({1, 2}, {1, 2}), F32({1, 3}, {1, 2, 3})},
                    Int("axis", 0)),
              HasSubstr("nn.concat: argument 1 has shape [1, 3], which "
                        "differs from [1, 2] outside axis 0"));
  EXPECT_THAT(
      Error("nn.concat", {F32({1}, {1}), I64({1}, {1})}, Int("axis", 0)),
      HasSubstr("nn.concat: argument 1 is i64, not f32"));
  EXPECT_THAT(Error("nn.concat", {F32({1}, {1})}, Int("axis", 1)),
              HasSubstr("nn.concat: axis 1 is out of range for rank 1"));
  EXPECT_THAT(Error("nn.concat", {F32({1}, {1})}),
              HasSubstr("nn.concat: attribute `axis` is required"));
}

TEST_F(ShapeOpsTest, Split) {
  AnyTensor x = I64({2, 4}, {1, 2, 3, 4, 5, 6, 7, 8});
  auto halves = RunN("nn.split", {x}, Int("axis", -1), 2);
  ASSERT_TRUE(halves.ok()) << halves.status();
  EXPECT_EQ((*halves)[0].shape, (Shape{2, 2}));
  EXPECT_THAT((*halves)[0].values<int64_t>(), ElementsAre(1, 2, 5, 6));
  EXPECT_THAT((*halves)[1].values<int64_t>(), ElementsAre(3, 4, 7, 8));

  OpAttrs sizes = Ints("split", {1, 0, 3});
  sizes.Set("axis", int64_t{1});
  auto parts = RunN("nn.split", {x}, sizes, 3);
  ASSERT_TRUE(parts.ok()) << parts.status();
  EXPECT_EQ((*parts)[0].shape, (Shape{2, 1}));
  EXPECT_EQ((*parts)[1].shape, (Shape{2, 0}));
  EXPECT_EQ((*parts)[2].shape, (Shape{2, 3}));
  EXPECT_THAT((*parts)[0].values<int64_t>(), ElementsAre(1, 5));
  EXPECT_THAT((*parts)[2].values<int64_t>(), ElementsAre(2, 3, 4, 6, 7, 8));

  auto rows = RunN("nn.split", {IotaF32({2, 3})}, OpAttrs(), 2);
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_THAT((*rows)[1].values<float>(), ElementsAre(3, 4, 5));
  EXPECT_EQ((*rows)[1].shape, (Shape{1, 3}));

  OpAttrs bad = Ints("split", {1, 2});
  bad.Set("axis", int64_t{1});
  EXPECT_THAT(Error("nn.split", {x}, bad, 2),
              HasSubstr("nn.split: split sizes [1, 2] sum to 3, not 4"));
  EXPECT_THAT(Error("nn.split", {x}, bad, 3),
              HasSubstr("nn.split: split has 2 sizes for 3 results"));
  EXPECT_THAT(Error("nn.split", {x}, Int("axis", 1), 3),
              HasSubstr("nn.split: axis 1 of [2, 4] does not split into 3"));
}

//===--- Slice, gather, where ---------------------------------------------===//

TEST_F(ShapeOpsTest, SliceWithClampingAndSteps) {
  AnyTensor x = IotaF32({3, 4});  // Rows 0-3, 4-7, 8-11.
  OpAttrs basic = Ints("starts", {1, 0});
  basic.SetArray<int64_t>("ends", {2, 3});
  auto r = Run("nn.slice", {x}, basic);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape, (Shape{1, 3}));
  EXPECT_THAT(r->values<float>(), ElementsAre(4, 5, 6));

  // Axis -1 from 1 to past the end, step 2; ends clamp.
  OpAttrs stepped = Ints("starts", {1});
  stepped.SetArray<int64_t>("ends", {std::numeric_limits<int64_t>::max()});
  stepped.SetArray<int64_t>("axes", {-1});
  stepped.SetArray<int64_t>("steps", {2});
  auto s = Run("nn.slice", {x}, stepped);
  ASSERT_TRUE(s.ok()) << s.status();
  EXPECT_EQ(s->shape, (Shape{3, 2}));
  EXPECT_THAT(s->values<float>(), ElementsAre(1, 3, 5, 7, 9, 11));

  // Reversal of both axes of an i64 tensor: start -1, end INT64_MIN.
  OpAttrs reverse = Ints("starts", {-1, -1});
  reverse.SetArray<int64_t>("ends", {std::numeric_limits<int64_t>::min(),
                                     std::numeric_limits<int64_t>::min()});
  reverse.SetArray<int64_t>("axes", {0, 1});
  reverse.SetArray<int64_t>("steps", {-1, -2});
  auto rev = Run("nn.slice", {I64({2, 3}, {1, 2, 3, 4, 5, 6})}, reverse);
  ASSERT_TRUE(rev.ok()) << rev.status();
  EXPECT_EQ(rev->shape, (Shape{2, 2}));
  EXPECT_THAT(rev->values<int64_t>(), ElementsAre(6, 4, 3, 1));

  // An empty range gives a zero-sized dimension.
  OpAttrs empty = Ints("starts", {3});
  empty.SetArray<int64_t>("ends", {1});
  auto e = Run("nn.slice", {x}, empty);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->shape, (Shape{0, 4}));

  OpAttrs zero_step = Ints("starts", {0});
  zero_step.SetArray<int64_t>("ends", {1});
  zero_step.SetArray<int64_t>("steps", {0});
  EXPECT_THAT(Error("nn.slice", {x}, zero_step),
              HasSubstr("nn.slice: steps must not be 0"));
  OpAttrs lengths = Ints("starts", {0, 0});
  lengths.SetArray<int64_t>("ends", {1});
  EXPECT_THAT(Error("nn.slice", {x}, lengths),
              HasSubstr("nn.slice: starts, ends, axes and steps differ"));
  OpAttrs axis = Ints("starts", {0});
  axis.SetArray<int64_t>("ends", {1});
  axis.SetArray<int64_t>("axes", {2});
  EXPECT_THAT(Error("nn.slice", {x}, axis),
              HasSubstr("nn.slice: axis 2 is out of range for rank 2"));
}

TEST_F(ShapeOpsTest, Gather) {
  AnyTensor x = IotaF32({3, 2});
  auto rows = Run("nn.gather", {x, I64({2, 2}, {0, 2, -1, 1})});
  ASSERT_TRUE(rows.ok()) << rows.status();
  EXPECT_EQ(rows->shape, (Shape{2, 2, 2}));
  EXPECT_THAT(rows->values<float>(), ElementsAre(0, 1, 4, 5, 4, 5, 2, 3));

  auto columns =
      Run("nn.gather", {I64({2, 3}, {1, 2, 3, 4, 5, 6}), I32({2}, {2, -3})},
          Int("axis", -1));
  ASSERT_TRUE(columns.ok()) << columns.status();
  EXPECT_EQ(columns->shape, (Shape{2, 2}));
  EXPECT_THAT(columns->values<int64_t>(), ElementsAre(3, 1, 6, 4));

  // A scalar index drops the axis.
  auto scalar = Run("nn.gather", {x, I64({}, {1})});
  ASSERT_TRUE(scalar.ok());
  EXPECT_EQ(scalar->shape, (Shape{2}));
  EXPECT_THAT(scalar->values<float>(), ElementsAre(2, 3));

  EXPECT_THAT(Error("nn.gather", {x, I64({2}, {0, 3})}),
              HasSubstr("nn.gather: index 3 is out of range for axis 0 of "
                        "size 3"));
  EXPECT_THAT(Error("nn.gather", {x, I32({1}, {-4})}),
              HasSubstr("nn.gather: index -4 is out of range"));
  EXPECT_THAT(Error("nn.gather", {x, F32({1}, {0})}),
              HasSubstr("nn.gather: indices are f32"));
  EXPECT_THAT(Error("nn.gather", {x, I64({1}, {0})}, Int("axis", 2)),
              HasSubstr("nn.gather: axis 2 is out of range for rank 2"));
}

TEST_F(ShapeOpsTest, WhereBroadcastsAllThree) {
  // cond [2, 1], x [3], y scalar -> [2, 3].
  auto r = Run("nn.where", {Bool({2, 1}, {true, false}), F32({3}, {1, 2, 3}),
                            F32({}, {-1})});
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape, (Shape{2, 3}));
  EXPECT_THAT(r->values<float>(), ElementsAre(1, 2, 3, -1, -1, -1));

  auto ints =
      Run("nn.where", {Bool({3}, {false, true, false}), I64({2, 1}, {10, 20}),
                       I64({2, 3}, {1, 2, 3, 4, 5, 6})});
  ASSERT_TRUE(ints.ok()) << ints.status();
  EXPECT_EQ(ints->shape, (Shape{2, 3}));
  EXPECT_THAT(ints->values<int64_t>(), ElementsAre(1, 10, 3, 4, 20, 6));

  EXPECT_THAT(Error("nn.where", {F32({1}, {1}), F32({1}, {1}), F32({1}, {1})}),
              HasSubstr("nn.where: the condition is f32"));
  EXPECT_THAT(
      Error("nn.where", {Bool({1}, {true}), F32({1}, {1}), I64({1}, {1})}),
      HasSubstr("nn.where: x is f32 but y is i64"));
  EXPECT_THAT(Error("nn.where", {Bool({2}, {true, false}), F32({3}, {1, 2, 3}),
                                 F32({1}, {1})}),
              HasSubstr("nn.where: shapes [2] and [3] do not broadcast"));
}

//===--- Cast, pad --------------------------------------------------------===//

OpAttrs To(DType dtype) {
  OpAttrs attrs;
  attrs.Set("to", dtype);
  return attrs;
}

// Shape functions accept f16 and bf16 for the ops a device computes in
// them (one registry for every device); the CPU computes those in f32 and
// rounds the results back.
TEST_F(ShapeOpsTest, HalfPrecisionIsComputedInF32OnTheCpu) {
  auto half = Run("nn.cast", {Make<float>({3}, {1.5f, -2.f, 0.1f})},
                  To(DType::kF16));
  ASSERT_TRUE(half.ok()) << half.status();
  auto relu = Run("nn.relu", {*half});
  ASSERT_TRUE(relu.ok()) << relu.status();
  ASSERT_EQ(relu->dtype, DType::kF16);
  std::vector<float> values;
  for (Half h : relu->values<Half>()) values.push_back(h.ToFloat());
  EXPECT_THAT(values, ElementsAre(1.5f, 0.f, Half::FromFloat(0.1f).ToFloat()));
  // 1.5 + 1.5 and so on, rounded to f16.
  auto sum = Run("nn.add", {*half, *half});
  ASSERT_TRUE(sum.ok()) << sum.status();
  values.clear();
  for (Half h : sum->values<Half>()) values.push_back(h.ToFloat());
  EXPECT_THAT(values, ElementsAre(3.f, -4.f, Half::FromFloat(0.2f).ToFloat()));
  auto bf16 = Run("nn.cast", {Make<float>({2}, {4.f, -1.f})},
                  To(DType::kBF16));
  ASSERT_TRUE(bf16.ok());
  auto total = Run("nn.reduce_sum", {*bf16});
  ASSERT_TRUE(total.ok()) << total.status();
  ASSERT_EQ(total->dtype, DType::kBF16);
  EXPECT_EQ(total->values<BFloat16>()[0].ToFloat(), 3.f);
  // A linear resize of halves (a GPU model's upsampling): 1.5 and -2
  // blended at align_corners' midpoint.
  OpAttrs linear;
  linear.SetString("mode", "linear");
  linear.SetString("coordinate_transformation_mode", "align_corners");
  linear.SetArray<int64_t>("sizes", {1, 1, 3});
  auto pair =
      Run("nn.cast", {Make<float>({1, 1, 2}, {1.5f, -2.f})}, To(DType::kF16));
  ASSERT_TRUE(pair.ok()) << pair.status();
  auto resized = Run("nn.resize", {*pair}, linear);
  ASSERT_TRUE(resized.ok()) << resized.status();
  ASSERT_EQ(resized->dtype, DType::kF16);
  values.clear();
  for (Half h : resized->values<Half>()) values.push_back(h.ToFloat());
  EXPECT_THAT(values, ElementsAre(1.5f, -0.25f, -2.f));
  // Mixed dtypes are an error of the shape function.
  auto mixed = Run("nn.matmul", {*half, Make<float>({3}, {1, 2, 3})});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(),
              HasSubstr("arguments are f16 and f32; they must have one dtype"));
}

TEST_F(ShapeOpsTest, Cast) {
  AnyTensor x = F32({2, 2}, {1.5f, -2.5f, 0.0f, 3.0f});
  auto i64 = Run("nn.cast", {x}, To(DType::kI64));
  ASSERT_TRUE(i64.ok()) << i64.status();
  EXPECT_EQ(i64->shape, (Shape{2, 2}));
  EXPECT_THAT(i64->values<int64_t>(), ElementsAre(1, -2, 0, 3));
  auto i32 = Run("nn.cast", {x}, To(DType::kI32));
  ASSERT_TRUE(i32.ok());
  EXPECT_THAT(i32->values<int32_t>(), ElementsAre(1, -2, 0, 3));
  auto b = Run("nn.cast", {x}, To(DType::kI1));
  ASSERT_TRUE(b.ok());
  EXPECT_THAT(b->values<bool>(), ElementsAre(true, true, false, true));
  auto back = Run("nn.cast", {I64({3}, {-7, 0, 1LL << 24})}, To(DType::kF32));
  ASSERT_TRUE(back.ok());
  EXPECT_THAT(back->values<float>(), ElementsAre(-7, 0, 16777216.0f));
  auto from_bool = Run("nn.cast", {Bool({2}, {true, false})}, To(DType::kF32));
  ASSERT_TRUE(from_bool.ok());
  EXPECT_THAT(from_bool->values<float>(), ElementsAre(1, 0));

  auto half = Run("nn.cast", {x}, To(DType::kF16));
  ASSERT_TRUE(half.ok()) << half.status();
  std::vector<float> halves;
  for (Half h : half->values<Half>()) halves.push_back(h.ToFloat());
  EXPECT_THAT(halves, ElementsAre(1.5f, -2.5f, 0.0f, 3.0f));
  auto half_back = Run("nn.cast", {*half}, To(DType::kF32));
  ASSERT_TRUE(half_back.ok());
  EXPECT_EQ(half_back->values<float>(), x.values<float>());
  auto bf16 = Run("nn.cast", {x}, To(DType::kBF16));
  ASSERT_TRUE(bf16.ok());
  std::vector<float> bf;
  for (BFloat16 h : bf16->values<BFloat16>()) bf.push_back(h.ToFloat());
  EXPECT_THAT(bf, ElementsAre(1.5f, -2.5f, 0.0f, 3.0f));

  // Out-of-range floats saturate rather than invoke undefined behavior.
  auto big = Run("nn.cast", {F32({2}, {1e10f, -1e10f})}, To(DType::kI32));
  ASSERT_TRUE(big.ok());
  EXPECT_THAT(big->values<int32_t>(),
              ElementsAre(std::numeric_limits<int32_t>::max(),
                          std::numeric_limits<int32_t>::min()));

  EXPECT_THAT(Error("nn.cast", {x}, To(DType::kString)),
              HasSubstr("nn.cast: cannot cast f32 to str"));
  EXPECT_THAT(Error("nn.cast", {x}),
              HasSubstr("nn.cast: attribute `to` (a dtype) is required"));
}

TEST_F(ShapeOpsTest, PadConstantReflectEdge) {
  AnyTensor x = F32({2, 3}, {1, 2, 3, 4, 5, 6});
  OpAttrs constant = Ints("pads", {1, 0, 0, 2});
  constant.Set("value", 9.0f);
  auto c = Run("nn.pad", {x}, constant);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->shape, (Shape{3, 5}));
  EXPECT_THAT(c->values<float>(), ElementsAre(9, 9, 9, 9, 9,  //
                                              1, 2, 3, 9, 9,  //
                                              4, 5, 6, 9, 9));

  OpAttrs reflect = Ints("pads", {0, 2, 0, 1});
  reflect.SetString("mode", "reflect");
  auto r = Run("nn.pad", {I64({2, 3}, {1, 2, 3, 4, 5, 6})}, reflect);
  ASSERT_TRUE(r.ok()) << r.status();
  EXPECT_EQ(r->shape, (Shape{2, 6}));
  EXPECT_THAT(r->values<int64_t>(),
              ElementsAre(3, 2, 1, 2, 3, 2, 6, 5, 4, 5, 6, 5));

  OpAttrs edge = Ints("pads", {1, 1, 0, 0});
  edge.SetString("mode", "edge");
  auto e = Run("nn.pad", {x}, edge);
  ASSERT_TRUE(e.ok()) << e.status();
  EXPECT_EQ(e->shape, (Shape{3, 4}));
  EXPECT_THAT(e->values<float>(),
              ElementsAre(1, 1, 2, 3, 1, 1, 2, 3, 4, 4, 5, 6));

  // wrap (opset 19): the axis repeats cyclically, further than its size
  // too; with a crop at the other end.
  OpAttrs wrap = Ints("pads", {1, 4, 0, -1});
  wrap.SetString("mode", "wrap");
  auto w = Run("nn.pad", {I64({2, 3}, {1, 2, 3, 4, 5, 6})}, wrap);
  ASSERT_TRUE(w.ok()) << w.status();
  EXPECT_EQ(w->shape, (Shape{3, 6}));
  EXPECT_THAT(w->values<int64_t>(), ElementsAre(6, 4, 5, 6, 4, 5,  //
                                                3, 1, 2, 3, 1, 2,  //
                                                6, 4, 5, 6, 4, 5));

  // Negative pads crop; an i64 constant.
  OpAttrs crop = Ints("pads", {0, -1, 1, 0});
  crop.Set("value", 7.0f);
  auto k = Run("nn.pad", {I64({2, 3}, {1, 2, 3, 4, 5, 6})}, crop);
  ASSERT_TRUE(k.ok()) << k.status();
  EXPECT_EQ(k->shape, (Shape{3, 2}));
  EXPECT_THAT(k->values<int64_t>(), ElementsAre(2, 3, 5, 6, 7, 7));

  EXPECT_THAT(Error("nn.pad", {x}, Ints("pads", {1, 1})),
              HasSubstr("nn.pad: pads has 2 values; rank 2 needs 4"));
  OpAttrs deep = Ints("pads", {0, 3, 0, 0});
  deep.SetString("mode", "reflect");
  EXPECT_THAT(Error("nn.pad", {x}, deep),
              HasSubstr("nn.pad: pads of 3 on axis 1 of size 3 are too large"));
  OpAttrs mode = Ints("pads", {0, 0, 0, 0});
  mode.SetString("mode", "mirror");
  EXPECT_THAT(Error("nn.pad", {x}, mode), HasSubstr("nn.pad: unknown mode"));
  OpAttrs wrap_empty = Ints("pads", {0, 1, 0, 0});
  wrap_empty.SetString("mode", "wrap");
  EXPECT_THAT(Error("nn.pad", {I64({2, 0}, {})}, wrap_empty),
              HasSubstr("too large for wrap mode"));
  EXPECT_THAT(Error("nn.pad", {x}, Ints("pads", {0, -4, 0, 0})),
              HasSubstr("nn.pad: negative pads remove more than axis 1"));
}

//===--- Shape, size, constant_of_shape -----------------------------------===//

TEST_F(ShapeOpsTest, ShapeSizeAndConstantOfShape) {
  AnyTensor x = I64({2, 3, 4}, {});
  x.bytes.resize(24 * sizeof(int64_t));
  auto all = Run("nn.shape", {x});
  ASSERT_TRUE(all.ok()) << all.status();
  EXPECT_EQ(all->shape, (Shape{3}));
  EXPECT_THAT(all->values<int64_t>(), ElementsAre(2, 3, 4));
  OpAttrs range = Int("start", -2);
  range.Set("end", int64_t{10});
  auto tail = Run("nn.shape", {x}, range);
  ASSERT_TRUE(tail.ok());
  EXPECT_THAT(tail->values<int64_t>(), ElementsAre(3, 4));
  auto none = Run("nn.shape", {x}, Int("start", 2));
  ASSERT_TRUE(none.ok());
  EXPECT_THAT(none->values<int64_t>(), ElementsAre(4));
  EXPECT_THAT(Error("nn.shape", {x, x}),
              HasSubstr("nn.shape: takes 1 argument"));

  OpAttrs above = Int("k", 1);
  auto eye = Run("nn.eye_like", {I64({2, 3}, {0, 0, 0, 0, 0, 0})}, above);
  ASSERT_TRUE(eye.ok()) << eye.status();
  EXPECT_EQ(eye->dtype, DType::kI64);
  EXPECT_THAT(eye->values<int64_t>(), ElementsAre(0, 1, 0, 0, 0, 1));
  EXPECT_THAT(Error("nn.eye_like", {x}), HasSubstr("input must be 2-D"));

  auto size = Run("nn.size", {x});
  ASSERT_TRUE(size.ok()) << size.status();
  EXPECT_EQ(size->dtype, DType::kI64);
  EXPECT_EQ(size->shape, (Shape{}));
  EXPECT_THAT(size->values<int64_t>(), ElementsAre(24));

  OpAttrs value = Ints("shape", {2, 2});
  value.Set("value", 1.5f);
  auto c = Run("nn.constant_of_shape", {}, value);
  ASSERT_TRUE(c.ok()) << c.status();
  EXPECT_EQ(c->dtype, DType::kF32);
  EXPECT_EQ(c->shape, (Shape{2, 2}));
  EXPECT_THAT(c->values<float>(), ElementsAre(1.5f, 1.5f, 1.5f, 1.5f));
  auto zeros = Run("nn.constant_of_shape", {}, Ints("shape", {3}));
  ASSERT_TRUE(zeros.ok());
  EXPECT_THAT(zeros->values<float>(), ElementsAre(0, 0, 0));
  EXPECT_THAT(Error("nn.constant_of_shape", {}, Ints("shape", {2, -1})),
              HasSubstr("nn.constant_of_shape: invalid shape [2, -1]"));
  EXPECT_THAT(Error("nn.constant_of_shape", {x}, Ints("shape", {2})),
              HasSubstr("nn.constant_of_shape: takes 0 arguments"));
}

}  // namespace
}  // namespace asyncrt::nn
