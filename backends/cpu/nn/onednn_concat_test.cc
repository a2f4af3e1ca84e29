// nn.concat on OneDnnTensors (onednn_concat.cc): parts in a channel-blocked
// layout are joined in it (each part of each image copied whole), with the
// result in that layout or plain as asked; parts that a copy cannot join
// (mixed layouts, channel counts that pad the blocks) go through oneDNN's
// concat or plain copies. Every result against the plain kernel's.
#include <string>
#include <utility>
#include <vector>

#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_test_util.h"
#include "backends/cpu/nn/onednn_util.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "oneapi/dnnl/dnnl.hpp"

namespace asyncrt::nn {
namespace {

class OneDnnConcatTest : public EagerOpTest {
 protected:
  TensorHandle Make(const Tensor32& tensor, bool read_only = false) {
    absl::StatusOr<TensorHandle> made = Handle(tensor, read_only);
    EXPECT_TRUE(made.ok()) << made.status();
    return made.ok() ? *std::move(made) : TensorHandle();
  }

  // nn.concat of `parts` along `axis`, read back plain; its result's
  // tensor type in `type`, oneDNN's verbose log of the op in `log`.
  absl::StatusOr<Tensor32> Concat(std::vector<TensorHandle> parts, int axis,
                                  bool onednn_result, std::string* type,
                                  std::string* log = nullptr) {
    for (TensorHandle& part : parts) core_->Await(part);
    OpAttrs attrs;
    attrs.Set<int64_t>("axis", axis);
    if (onednn_result) attrs.SetString("result_layout", "onednn");
    dnnl::set_verbose(1);
    ::testing::internal::CaptureStdout();
    TensorHandle whole = Execute("nn.concat", std::move(parts), attrs);
    const Tensor* tensor = core_->Await(whole);
    const std::string captured = ::testing::internal::GetCapturedStdout();
    dnnl::set_verbose(0);
    if (log != nullptr) *log = captured;
    if (tensor != nullptr) *type = std::string(tensor->tensor_type().name());
    return Read(whole);
  }
};

TEST_F(OneDnnConcatTest, BlockedPartsJoinInTheirLayout) {
  // Two images; 16, 32 and 16 channels (whole blocks), and 8 and 24 (the
  // blocks padded: oneDNN's concat instead of copies); a plain part among
  // blocked ones.
  const std::vector<std::vector<int64_t>> channel_sets = {
      {16, 32, 16}, {8, 24}, {16, 16}};
  for (size_t set = 0; set < channel_sets.size(); ++set) {
    std::vector<Tensor32> parts;
    for (size_t i = 0; i < channel_sets[set].size(); ++i) {
      const int64_t c = channel_sets[set][i];
      parts.push_back({{2, c, 5, 7}, RandomFloats(2 * c * 35, 10 * set + i)});
    }
    OpAttrs axis1;
    axis1.Set<int64_t>("axis", 1);
    absl::StatusOr<Tensor32> expected = Run("nn.concat", parts, axis1);
    ASSERT_TRUE(expected.ok()) << expected.status();
    for (bool onednn_result : {false, true}) {
      SCOPED_TRACE(testing::Message() << "set " << set << ", result "
                                      << (onednn_result ? "onednn" : "plain"));
      std::vector<TensorHandle> handles;
      for (size_t i = 0; i < parts.size(); ++i) {
        // The last set mixes a plain part in.
        handles.push_back(set == 2 && i == 1 ? Make(parts[i])
                                             : InOneDnnLayout(parts[i]));
      }
      std::string type, log;
      absl::StatusOr<Tensor32> whole =
          Concat(std::move(handles), 1, onednn_result, &type, &log);
      ASSERT_TRUE(whole.ok()) << whole.status();
      EXPECT_EQ(whole->shape, expected->shape);
      EXPECT_EQ(whole->values, expected->values);
      if (set == 0) {
        EXPECT_EQ(type, onednn_result ? "OneDnnHost" : "DenseHost");
        // Whole blocks: copied, neither reordered nor through oneDNN's
        // concat, when the result stays blocked.
        if (onednn_result) {
          EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("exec,cpu")))
              << log;
        }
      }
    }
  }
}

// Parts in different layouts (a DenseNet block's first part from a pooling
// in nhwc, the rest from blocked convolutions): the odd ones reordered into
// the layout most of the elements are in, channel blocks before plain, then
// all copied whole, never oneDNN's concat (its reference code for mixed
// layouts).
TEST_F(OneDnnConcatTest, MixedLayoutsJoinInTheMostCommonOne) {
  const std::vector<Tensor32> parts = {
      {{2, 16, 5, 7}, RandomFloats(2 * 16 * 35, 1)},
      {{2, 32, 5, 7}, RandomFloats(2 * 32 * 35, 2)},
      {{2, 16, 5, 7}, RandomFloats(2 * 16 * 35, 3)}};
  OpAttrs axis1;
  axis1.Set<int64_t>("axis", 1);
  absl::StatusOr<Tensor32> expected = Run("nn.concat", parts, axis1);
  ASSERT_TRUE(expected.ok()) << expected.status();
  std::vector<TensorHandle> handles;
  handles.push_back(InOneDnnLayout(parts[0], /*compute_layout=*/""));
  handles.push_back(InOneDnnLayout(parts[1]));
  handles.push_back(InOneDnnLayout(parts[2]));
  std::string type, log;
  absl::StatusOr<Tensor32> whole = Concat(std::move(handles), 1,
                                          /*onednn_result=*/true, &type, &log);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->values, expected->values);
  EXPECT_EQ(type, "OneDnnHost");
  // Under AVX2 oneDNN's own choice is also 8-channel blocks: no odd part.
  if (OneDnnHasAvx512()) {
    EXPECT_THAT(log, ::testing::HasSubstr("exec,cpu,reorder")) << log;
  }
  EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("exec,cpu,concat")))
      << log;

  // A plain part bigger than the blocked one: still joined in blocks (the
  // plain part reordered into them, not the blocked part out of them).
  const std::vector<Tensor32> unequal = {
      {{1, 64, 5, 7}, RandomFloats(64 * 35, 4)},
      {{1, 16, 5, 7}, RandomFloats(16 * 35, 5)}};
  expected = Run("nn.concat", unequal, axis1);
  ASSERT_TRUE(expected.ok()) << expected.status();
  handles.clear();
  handles.push_back(Make(unequal[0]));
  handles.push_back(InOneDnnLayout(unequal[1]));
  whole = Concat(std::move(handles), 1, /*onednn_result=*/true, &type, &log);
  ASSERT_TRUE(whole.ok()) << whole.status();
  EXPECT_EQ(whole->values, expected->values);
  EXPECT_THAT(
      log, ::testing::HasSubstr(OneDnnHasAvx512() ? "dst_f32::blocked:aBcd16b"
                                                  : "dst_f32::blocked:aBcd8b"))
      << log;
  EXPECT_THAT(log, ::testing::Not(::testing::HasSubstr("exec,cpu,concat")))
      << log;
}

// Along another axis, or with an axis counted from the end, the values are
// the plain kernel's.
TEST_F(OneDnnConcatTest, OtherAxes) {
  const Tensor32 a{{1, 16, 3, 4}, RandomFloats(16 * 12, 1)};
  const Tensor32 b{{1, 16, 3, 4}, RandomFloats(16 * 12, 2)};
  for (int axis : {-3, 2, 3}) {
    SCOPED_TRACE(testing::Message() << "axis " << axis);
    OpAttrs attrs;
    attrs.Set<int64_t>("axis", axis);
    absl::StatusOr<Tensor32> expected = Run("nn.concat", {a, b}, attrs);
    ASSERT_TRUE(expected.ok()) << expected.status();
    std::vector<TensorHandle> handles;
    handles.push_back(InOneDnnLayout(a));
    handles.push_back(InOneDnnLayout(b));
    std::string type;
    absl::StatusOr<Tensor32> whole =
        Concat(std::move(handles), axis, /*onednn_result=*/false, &type);
    ASSERT_TRUE(whole.ok()) << whole.status();
    EXPECT_EQ(whole->shape, expected->shape);
    EXPECT_EQ(whole->values, expected->values);
  }
}

}  // namespace
}  // namespace asyncrt::nn
