// The kernels outside oneDNN that split large tensors over the OpenMP team
// in latency mode (ParallelRanges: copies and transpositions, elementwise
// ops with and without broadcasting, fused elementwise chains, layer
// normalization) give the same bits on a team of four as on one thread,
// and the values the definition gives. Denormals are flushed on every
// thread of the team, ours and oneDNN's, unless kept.
#include <cmath>
#include <cstring>
#include <limits>
#include <string>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#if defined(__x86_64__) || defined(__i386__)
#include <xmmintrin.h>
#endif

namespace asyncrt::nn {
namespace {

int64_t Count(const std::vector<int64_t>& shape) {
  int64_t count = 1;
  for (int64_t d : shape) count *= d;
  return count;
}

class ParallelOpsTest : public EagerOpTest {
 protected:
  ~ParallelOpsTest() override { SetTeamSize(0); }

  // `op` on a team of one, then of four (more parts than this machine may
  // have cores: the split, not the speed, is under test); both results,
  // which must be equal to the bit.
  std::vector<float> OnOneAndFour(const std::string& op,
                                  const std::vector<Tensor32>& args,
                                  const OpAttrs& attrs = OpAttrs()) {
    SetTeamSize(1);
    absl::StatusOr<Tensor32> one = Run(op, args, attrs);
    SetTeamSize(4);
    absl::StatusOr<Tensor32> four = Run(op, args, attrs);
    SetTeamSize(0);
    EXPECT_TRUE(one.ok()) << one.status();
    EXPECT_TRUE(four.ok()) << four.status();
    if (!one.ok() || !four.ok()) return {};
    EXPECT_EQ(one->shape, four->shape);
    EXPECT_EQ(one->values.size(), four->values.size());
    EXPECT_EQ(std::memcmp(one->values.data(), four->values.data(),
                          one->values.size() * sizeof(float)),
              0)
        << op;
    return four->values;
  }
};

TEST_F(ParallelOpsTest, ElementwiseWithAndWithoutBroadcasting) {
  const std::vector<int64_t> shape = {4, 300, 128};
  const Tensor32 x{shape, RandomFloats(Count(shape), 1)};
  const Tensor32 y{shape, RandomFloats(Count(shape), 2)};
  const Tensor32 row{{1, 1, 128}, RandomFloats(128, 3)};
  const Tensor32 column{{4, 300, 1}, RandomFloats(1200, 4)};
  std::vector<float> sum = OnOneAndFour("nn.add", {x, y});
  std::vector<float> scaled = OnOneAndFour("nn.mul", {x, row});
  std::vector<float> shifted = OnOneAndFour("nn.sub", {column, x});
  std::vector<float> relu = OnOneAndFour("nn.relu", {x});
  ASSERT_EQ(sum.size(), x.values.size());
  for (int64_t i = 0; i < Count(shape); ++i) {
    ASSERT_EQ(sum[i], x.values[i] + y.values[i]);
    ASSERT_EQ(scaled[i], x.values[i] * row.values[i % 128]);
    ASSERT_EQ(shifted[i], column.values[i / 128] - x.values[i]);
    ASSERT_EQ(relu[i], x.values[i] > 0 ? x.values[i] : 0.0f);
  }
  // One long row is split too.
  const Tensor32 long_row{{100000}, RandomFloats(100000, 5)};
  std::vector<float> doubled = OnOneAndFour("nn.add", {long_row, long_row});
  ASSERT_EQ(doubled.size(), 100000u);
  for (int64_t i = 0; i < 100000; ++i) {
    ASSERT_EQ(doubled[i], 2 * long_row.values[i]);
  }
}

TEST_F(ParallelOpsTest, TranspositionsAndCopies) {
  const std::vector<int64_t> shape = {2, 96, 56, 57};
  const Tensor32 x{shape, RandomFloats(Count(shape), 6)};
  for (const std::vector<int64_t>& perm : std::vector<std::vector<int64_t>>{
           {0, 2, 3, 1}, {0, 3, 1, 2}, {1, 0, 2, 3}, {3, 2, 1, 0}}) {
    OpAttrs attrs;
    attrs.SetArray<int64_t>("perm", perm);
    std::vector<float> y = OnOneAndFour("nn.transpose", {x}, attrs);
    ASSERT_EQ(y.size(), x.values.size());
    const int64_t strides[] = {96 * 56 * 57, 56 * 57, 57, 1};
    const int64_t out[] = {shape[perm[0]], shape[perm[1]], shape[perm[2]],
                           shape[perm[3]]};
    int64_t position = 0;
    for (int64_t a = 0; a < out[0]; ++a)
      for (int64_t b = 0; b < out[1]; ++b)
        for (int64_t c = 0; c < out[2]; ++c)
          for (int64_t d = 0; d < out[3]; ++d) {
            const int64_t source = a * strides[perm[0]] + b * strides[perm[1]] +
                                   c * strides[perm[2]] + d * strides[perm[3]];
            ASSERT_EQ(y[position++], x.values[source]);
          }
  }
}

TEST_F(ParallelOpsTest, FusedChainAndLayerNorm) {
  const std::vector<int64_t> shape = {512, 384};
  const Tensor32 x{shape, RandomFloats(Count(shape), 7)};
  const Tensor32 y{shape, RandomFloats(Count(shape), 8)};
  // relu(x + y) * x.
  OpAttrs chain;
  chain.SetArray<int64_t>("ops", {0, 10, 2});
  chain.SetArray<int64_t>("operands", {0, 1, 2, -1, 3, 0});
  std::vector<float> fused =
      OnOneAndFour("nn.fused_elementwise", {x, y}, chain);
  ASSERT_EQ(fused.size(), x.values.size());
  for (int64_t i = 0; i < Count(shape); ++i) {
    const float sum = x.values[i] + y.values[i];
    ASSERT_EQ(fused[i], (sum > 0 ? sum : 0.0f) * x.values[i]);
  }
  const Tensor32 scale{{384}, RandomFloats(384, 9)};
  const Tensor32 bias{{384}, RandomFloats(384, 10)};
  OpAttrs last_axis;
  last_axis.Set("axis", int64_t{-1});
  std::vector<float> normalized =
      OnOneAndFour("nn.layer_normalization", {x, scale, bias}, last_axis);
  ASSERT_EQ(normalized.size(), x.values.size());
  for (int64_t r = 0; r < 512; r += 97) {
    double mean = 0, square = 0;
    for (int64_t j = 0; j < 384; ++j) mean += x.values[r * 384 + j];
    mean /= 384;
    for (int64_t j = 0; j < 384; ++j) {
      square += (x.values[r * 384 + j] - mean) * (x.values[r * 384 + j] - mean);
    }
    const double inverse = 1.0 / std::sqrt(square / 384 + 1e-5);
    for (int64_t j = 0; j < 384; ++j) {
      ASSERT_NEAR(normalized[r * 384 + j],
                  (x.values[r * 384 + j] - mean) * inverse * scale.values[j] +
                      bias.values[j],
                  1e-4);
    }
  }
}

#if defined(__x86_64__) || defined(__i386__)
// Denormal inputs read as zero and denormal results become zero on every
// thread that computes (the calling thread, our team's, oneDNN's), and the
// calling thread's own mode is as it was after the op; kept, they are
// computed exactly.
TEST_F(ParallelOpsTest, DenormalsAreFlushedOnEveryThreadUnlessKept) {
  const float tiny = std::numeric_limits<float>::denorm_min() * 1000;
  ASSERT_EQ(std::fpclassify(tiny), FP_SUBNORMAL);
  const std::vector<int64_t> shape = {4, 300, 128};
  const Tensor32 x{shape, std::vector<float>(Count(shape), tiny)};
  const Tensor32 ones{shape, std::vector<float>(Count(shape), 1.0f)};
  // A 3 x 3 convolution of 32 channels: each output sums 9 x 16 of them.
  const Tensor32 image{{1, 16, 12, 12}, std::vector<float>(16 * 144, tiny)};
  const Tensor32 weights{{32, 16, 3, 3}, std::vector<float>(32 * 144, 1.0f)};
  OpAttrs conv;
  conv.SetArray<int64_t>("pads", {1, 1, 1, 1});
  const unsigned before = _mm_getcsr();
  for (Denormals mode : {Denormals::kFlush, Denormals::kKeep}) {
    SetDenormals(mode);
    const bool flushed = mode == Denormals::kFlush;
    std::vector<float> product = OnOneAndFour("nn.mul", {x, ones});
    ASSERT_EQ(product.size(), x.values.size());
    for (float value : product) ASSERT_EQ(value, flushed ? 0.0f : tiny);
    for (int team : {1, 4}) {
      SetTeamSize(team);
      absl::StatusOr<Tensor32> sums = Run("nn.conv", {image, weights}, conv);
      ASSERT_TRUE(sums.ok()) << sums.status();
      for (float value : sums->values) {
        if (flushed) {
          ASSERT_EQ(value, 0.0f) << "team of " << team;
        } else {
          ASSERT_EQ(std::fpclassify(value), FP_SUBNORMAL) << "team of " << team;
        }
      }
    }
    SetTeamSize(0);
    // The controls; the exception flags the ops raised stay raised.
    EXPECT_EQ(_mm_getcsr() & ~0x3fu, before & ~0x3fu);
  }
  SetDenormals(Denormals::kFlush);
}
#endif

}  // namespace
}  // namespace asyncrt::nn
