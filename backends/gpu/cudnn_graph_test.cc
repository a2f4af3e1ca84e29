// cuDNN's graphs as the CUDA plug-in builds them: every tensor and
// operation descriptor finalizes (cuDNN checks their attributes' types and
// shapes then), which needs no GPU; the plans and their results need one
// (cuda_plugin_test).
#include "backends/gpu/cudnn_graph.h"

#include <vector>

#include "gtest/gtest.h"

namespace asyncrt::gpu {
namespace {

StridedAttentionShape Bert(int64_t batch, int64_t row) {
  return {.batch = batch,
          .q_length = 128,
          .kv_length = 128,
          .q_heads = 12,
          .kv_heads = 12,
          .head_size = 64,
          .value_head_size = 64,
          .q_row = row,
          .k_row = row,
          .v_row = row,
          .y_row = 768};
}

TEST(CudnnGraphTest, AttentionGraphsFinalize) {
  for (cudnnDataType_t type : {CUDNN_DATA_HALF, CUDNN_DATA_BFLOAT16}) {
    // Q, K and V apart, and packed side by side in rows of 3 x 768.
    for (int64_t row : {768, 3 * 768}) {
      BackendDescriptors descriptors;
      const std::vector<cudnnBackendDescriptor_t> operations =
          AttentionOperations(descriptors, type, Bert(2, row));
      // Two products, the scale, max, subtraction, exponential, sum, log,
      // the statistics' addition and the division.
      ASSERT_EQ(operations.size(), 10u);
      for (cudnnBackendDescriptor_t op : operations) EXPECT_NE(op, nullptr);
    }
  }
  // Grouped query heads, unequal lengths, wider value heads.
  StridedAttentionShape grouped = {.batch = 1,
                                   .q_length = 77,
                                   .kv_length = 200,
                                   .q_heads = 8,
                                   .kv_heads = 2,
                                   .head_size = 64,
                                   .value_head_size = 128,
                                   .q_row = 8 * 64,
                                   .k_row = 2 * 64,
                                   .v_row = 2 * 128,
                                   .y_row = 8 * 128};
  BackendDescriptors descriptors;
  EXPECT_EQ(AttentionOperations(descriptors, CUDNN_DATA_HALF, grouped).size(),
            10u);
}

TEST(CudnnGraphTest, ShapesCuDnnRefusesGiveNoOperations) {
  // Dimensions that are not positive (cuDNN would divide by a zero one),
  // and query heads that do not divide into the key heads' groups.
  for (auto spoil : std::vector<void (*)(StridedAttentionShape&)>{
           [](StridedAttentionShape& g) { g.head_size = 0; },
           [](StridedAttentionShape& g) { g.head_size = -1; },
           [](StridedAttentionShape& g) { g.kv_heads = 0; },
           [](StridedAttentionShape& g) { g.batch = 0; },
           [](StridedAttentionShape& g) { g.q_length = 0; },
           [](StridedAttentionShape& g) { g.kv_heads = 5; }}) {
    StridedAttentionShape geometry = Bert(1, 768);
    spoil(geometry);
    BackendDescriptors descriptors;
    EXPECT_TRUE(
        AttentionOperations(descriptors, CUDNN_DATA_HALF, geometry).empty());
  }
}

}  // namespace
}  // namespace asyncrt::gpu
