// nn.attention as cuDNN's fused attention (see cudnn_graph.h): one graph
//
//   s = q k^T             (MATMUL, f32 virtual)
//   s' = s * scale        (POINTWISE MUL, the scale passed by value)
//   m = max(s') per row   (REDUCTION MAX)
//   e = exp(s' - m)       (POINTWISE SUB, EXP)
//   z = sum(e) per row    (REDUCTION ADD)
//   m + log z             (POINTWISE LOG, ADD: the softmax's statistics,
//                          virtual, which the pattern has)
//   p = e / z             (POINTWISE DIV, in the operands' type)
//   y = p v               (MATMUL)
//
// which cuDNN's heuristics give to its flash-attention engine (the pattern
// cuDNN's frontend builds for scaled_dot_product_flash_attention in
// inference): one kernel, the scores never in memory. K is described as
// K^T (its last two dimensions and strides swapped), as the engine wants.
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "backends/gpu/cudnn_graph.h"

namespace asyncrt::gpu {
namespace {

constexpr int64_t kUidQ = 1, kUidK = 2, kUidV = 3, kUidY = 4, kUidScale = 5;
constexpr int64_t kUidFirstVirtual = 100;

// c = a b, batched over the leading dimensions, computed in f32.
cudnnBackendDescriptor_t MatmulOperation(BackendDescriptors& descriptors,
                                         cudnnBackendDescriptor_t a,
                                         cudnnBackendDescriptor_t b,
                                         cudnnBackendDescriptor_t c) {
  cudnnBackendDescriptor_t matmul =
      descriptors.Make(CUDNN_BACKEND_MATMUL_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  if (matmul == nullptr ||
      cudnnBackendSetAttribute(matmul, CUDNN_ATTR_MATMUL_COMP_TYPE,
                               CUDNN_TYPE_DATA_TYPE, 1,
                               &compute) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendFinalize(matmul) != CUDNN_STATUS_SUCCESS) {
    return nullptr;
  }
  return DescriptorOf(descriptors, CUDNN_BACKEND_OPERATION_MATMUL_DESCRIPTOR,
                      {{CUDNN_ATTR_OPERATION_MATMUL_ADESC, a},
                       {CUDNN_ATTR_OPERATION_MATMUL_BDESC, b},
                       {CUDNN_ATTR_OPERATION_MATMUL_CDESC, c},
                       {CUDNN_ATTR_OPERATION_MATMUL_DESC, matmul}});
}

// y = `reduction` of x over the dimensions where y has 1, in f32.
cudnnBackendDescriptor_t ReductionOperation(BackendDescriptors& descriptors,
                                            cudnnReduceTensorOp_t reduction,
                                            cudnnBackendDescriptor_t x,
                                            cudnnBackendDescriptor_t y) {
  cudnnBackendDescriptor_t reduce =
      descriptors.Make(CUDNN_BACKEND_REDUCTION_DESCRIPTOR);
  const cudnnDataType_t compute = CUDNN_DATA_FLOAT;
  if (reduce == nullptr ||
      cudnnBackendSetAttribute(reduce, CUDNN_ATTR_REDUCTION_OPERATOR,
                               CUDNN_TYPE_REDUCTION_OPERATOR_TYPE, 1,
                               &reduction) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendSetAttribute(reduce, CUDNN_ATTR_REDUCTION_COMP_TYPE,
                               CUDNN_TYPE_DATA_TYPE, 1,
                               &compute) != CUDNN_STATUS_SUCCESS ||
      cudnnBackendFinalize(reduce) != CUDNN_STATUS_SUCCESS) {
    return nullptr;
  }
  return DescriptorOf(descriptors, CUDNN_BACKEND_OPERATION_REDUCTION_DESCRIPTOR,
                      {{CUDNN_ATTR_OPERATION_REDUCTION_XDESC, x},
                       {CUDNN_ATTR_OPERATION_REDUCTION_YDESC, y},
                       {CUDNN_ATTR_OPERATION_REDUCTION_DESC, reduce}});
}

}  // namespace

std::vector<cudnnBackendDescriptor_t> AttentionOperations(
    BackendDescriptors& d, cudnnDataType_t type,
    const StridedAttentionShape& g) {
  const int64_t b = g.batch, h = g.q_heads, hk = g.kv_heads;
  const int64_t sq = g.q_length, skv = g.kv_length;
  const int64_t dk = g.head_size, dv = g.value_head_size;
  // cuDNN divides by dimensions as it finalizes (a zero one is SIGFPE).
  for (int64_t dimension : {b, h, hk, sq, skv, dk, dv}) {
    if (dimension <= 0) return {};
  }
  // Operands in memory: [batch, heads, length, head], each head's columns
  // in its rows.
  cudnnBackendDescriptor_t q = BackendTensor(
      d, type, {b, h, sq, dk}, {sq * g.q_row, dk, g.q_row, 1}, kUidQ);
  cudnnBackendDescriptor_t k_transposed = BackendTensor(
      d, type, {b, hk, dk, skv}, {skv * g.k_row, dk, 1, g.k_row}, kUidK);
  cudnnBackendDescriptor_t v = BackendTensor(
      d, type, {b, hk, skv, dv}, {skv * g.v_row, dv, g.v_row, 1}, kUidV);
  cudnnBackendDescriptor_t y = BackendTensor(
      d, type, {b, h, sq, dv}, {sq * g.y_row, dv, g.y_row, 1}, kUidY);
  cudnnBackendDescriptor_t scale =
      BackendTensor(d, CUDNN_DATA_FLOAT, {1, 1, 1, 1}, {1, 1, 1, 1}, kUidScale,
                    /*is_virtual=*/false, /*by_value=*/true);
  // Values inside the graph: scores and per-row statistics.
  int64_t next_virtual = kUidFirstVirtual;
  auto scores = [&](cudnnDataType_t of) {
    return BackendTensor(d, of, {b, h, sq, skv},
                         {h * sq * skv, sq * skv, skv, 1}, next_virtual++,
                         /*is_virtual=*/true);
  };
  auto per_row = [&] {
    return BackendTensor(d, CUDNN_DATA_FLOAT, {b, h, sq, 1}, {h * sq, sq, 1, 1},
                         next_virtual++,
                         /*is_virtual=*/true);
  };
  cudnnBackendDescriptor_t products = scores(CUDNN_DATA_FLOAT);
  cudnnBackendDescriptor_t scaled = scores(CUDNN_DATA_FLOAT);
  cudnnBackendDescriptor_t row_max = per_row();
  cudnnBackendDescriptor_t shifted = scores(CUDNN_DATA_FLOAT);
  cudnnBackendDescriptor_t exponentials = scores(CUDNN_DATA_FLOAT);
  cudnnBackendDescriptor_t row_sum = per_row();
  cudnnBackendDescriptor_t log_sum = per_row();
  cudnnBackendDescriptor_t statistics = per_row();
  cudnnBackendDescriptor_t probabilities = scores(type);
  for (cudnnBackendDescriptor_t tensor :
       {q, k_transposed, v, y, scale, products, scaled, row_max, shifted,
        exponentials, row_sum, log_sum, statistics, probabilities}) {
    if (tensor == nullptr) return {};
  }
  std::vector<cudnnBackendDescriptor_t> operations = {
      MatmulOperation(d, q, k_transposed, products),
      PointwiseOperation(d, CUDNN_POINTWISE_MUL, products, scale, scaled,
                         nullptr),
      ReductionOperation(d, CUDNN_REDUCE_TENSOR_MAX, scaled, row_max),
      PointwiseOperation(d, CUDNN_POINTWISE_SUB, scaled, row_max, shifted,
                         nullptr),
      PointwiseOperation(d, CUDNN_POINTWISE_EXP, shifted, nullptr, exponentials,
                         nullptr),
      ReductionOperation(d, CUDNN_REDUCE_TENSOR_ADD, exponentials, row_sum),
      PointwiseOperation(d, CUDNN_POINTWISE_LOG, row_sum, nullptr, log_sum,
                         nullptr),
      PointwiseOperation(d, CUDNN_POINTWISE_ADD, row_max, log_sum, statistics,
                         nullptr),
      PointwiseOperation(d, CUDNN_POINTWISE_DIV, exponentials, row_sum,
                         probabilities, nullptr),
      MatmulOperation(d, probabilities, v, y),
  };
  for (cudnnBackendDescriptor_t op : operations) {
    if (op == nullptr) return {};
  }
  return operations;
}

std::optional<BackendPlan> MakeAttentionPlan(
    cudnnHandle_t handle, cudnnDataType_t type,
    const StridedAttentionShape& geometry, const AttentionBuffers& buffers,
    CudaDevice& device, cudaStream_t stream, std::string* why) {
  auto owned = std::make_unique<BackendDescriptors>();
  const std::vector<cudnnBackendDescriptor_t> operations =
      AttentionOperations(*owned, type, geometry);
  if (operations.empty()) {
    *why = "cuDNN refused one of the graph's tensors or operations";
    return std::nullopt;
  }
  return FastestPlan(
      handle, operations, std::move(owned),
      /*f32_operands=*/false, device, stream,
      [&](cudnnBackendDescriptor_t plan, void* workspace) {
        return ExecuteAttentionPlan(handle, plan, buffers, workspace) ==
               CUDNN_STATUS_SUCCESS;
      },
      why);
}

cudnnStatus_t ExecuteAttentionPlan(cudnnHandle_t handle,
                                   cudnnBackendDescriptor_t plan,
                                   const AttentionBuffers& buffers,
                                   void* workspace) {
  float scale = buffers.scale;
  const int64_t uids[] = {kUidQ, kUidK, kUidV, kUidY, kUidScale};
  void* const pointers[] = {const_cast<void*>(buffers.q),
                            const_cast<void*>(buffers.k),
                            const_cast<void*>(buffers.v), buffers.y, &scale};
  return ExecutePlan(handle, plan, uids, pointers, 5, workspace);
}

}  // namespace asyncrt::gpu
