// nn.attention: ONNX's Attention (opset 23) on 3-D operands, the op the
// model compiler fuses a transformer's attention into for devices
// (-nn-fuse-attention). The CPU computes it row by row in f32: a reference
// more than a fast path (the host pipeline keeps the matrix products on
// oneDNN).
#include <algorithm>
#include <cmath>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kOp = "nn.attention";

// Q [B, Sq, Hq * D], K [B, Skv, Hkv * D], V [B, Skv, Hkv * Dv]; query head
// h reads key and value head h / (Hq / Hkv) (grouped-query attention).
struct AttentionPlan {
  int64_t batch, q_length, kv_length, q_heads, kv_heads, head_size,
      value_head_size;
  float scale;
};

absl::StatusOr<AttentionPlan> PlanAttention(ArgumentMetadata args,
                                            const OpAttrs& attrs) {
  if (args.size() != 3) {
    return OpError(kOp,
                   "takes Q, K and V (a mask or a cache is not "
                   "supported yet)");
  }
  if (absl::Status status = RequireFloat(kOp, args); !status.ok()) {
    return status;
  }
  for (size_t i = 0; i < 3; ++i) {
    if (args[i].shape.GetRank() != 3) {
      return OpError(kOp, absl::StrCat("Q, K and V must be batch x sequence x "
                                       "hidden, got ",
                                       args[i].shape.DebugString()));
    }
    if (args[i].dtype != args[0].dtype) {
      return OpError(kOp, "Q, K and V must have one dtype");
    }
  }
  if (attrs.GetInteger("is_causal").value_or(0) != 0 ||
      attrs.Get<float>("softcap").value_or(0.f) != 0.f) {
    return OpError(kOp, "is_causal and softcap are not supported yet");
  }
  const auto q = args[0].shape.GetDimensions();
  const auto k = args[1].shape.GetDimensions();
  const auto v = args[2].shape.GetDimensions();
  AttentionPlan plan;
  plan.batch = q[0];
  plan.q_length = q[1];
  plan.kv_length = k[1];
  plan.q_heads = attrs.GetInteger("q_num_heads").value_or(0);
  plan.kv_heads = attrs.GetInteger("kv_num_heads").value_or(plan.q_heads);
  if (plan.q_heads < 1 || plan.kv_heads < 1 ||
      plan.q_heads % plan.kv_heads != 0 || q[2] % plan.q_heads != 0 ||
      v[2] % plan.kv_heads != 0) {
    return OpError(
        kOp, absl::StrCat("q_num_heads ", plan.q_heads, " and kv_num_heads ",
                          plan.kv_heads, " do not divide Q's hidden size ",
                          q[2], " and V's ", v[2], " and each other"));
  }
  plan.head_size = q[2] / plan.q_heads;
  plan.value_head_size = v[2] / plan.kv_heads;
  if (k[0] != plan.batch || v[0] != plan.batch || v[1] != plan.kv_length ||
      k[2] != plan.kv_heads * plan.head_size) {
    return OpError(kOp,
                   absl::StrCat("K ", args[1].shape.DebugString(), " and V ",
                                args[2].shape.DebugString(), " do not match Q ",
                                args[0].shape.DebugString()));
  }
  plan.scale = attrs.Get<float>("scale").value_or(
      1.f / std::sqrt(static_cast<float>(plan.head_size)));
  return plan;
}

absl::Status AttentionMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                               absl::Span<TensorMetadata> results) {
  if (results.size() != 1) return OpError(kOp, "has 1 result");
  absl::StatusOr<AttentionPlan> plan = PlanAttention(args, attrs);
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(
      args[0].dtype,
      {plan->batch, plan->q_length, plan->q_heads * plan->value_head_size});
  return absl::OkStatus();
}

void Attention(OpInvocation& invocation) {
  if (RefuseHalf(invocation, kOp)) return;
  const MetadataPointers metadata = ArgumentMetadataOf(invocation);
  absl::StatusOr<AttentionPlan> plan =
      PlanAttention(ArgumentMetadata(metadata), invocation.attrs);
  if (!plan.ok()) return FailAll(invocation, kOp, plan.status().message());
  auto data = [&](int i) {
    return static_cast<const DenseHostTensor&>(invocation.argument(i))
        .elements<float>()
        .data();
  };
  const float *q = data(0), *k = data(1), *v = data(2);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kOp, invocation.result_metadata[0]);
  if (!result) return;
  float* y = result->elements<float>().data();
  const AttentionPlan& p = *plan;
  const int64_t group = p.q_heads / p.kv_heads;
  const int64_t q_row = p.q_heads * p.head_size;
  const int64_t k_row = p.kv_heads * p.head_size;
  const int64_t v_row = p.kv_heads * p.value_head_size;
  const int64_t y_row = p.q_heads * p.value_head_size;
  std::vector<float> scores(p.kv_length);
  for (int64_t b = 0; b < p.batch; ++b) {
    for (int64_t h = 0; h < p.q_heads; ++h) {
      const int64_t kv_head = h / group;
      for (int64_t i = 0; i < p.q_length; ++i) {
        const float* query = q + (b * p.q_length + i) * q_row + h * p.head_size;
        float max = -INFINITY;
        for (int64_t j = 0; j < p.kv_length; ++j) {
          const float* key =
              k + (b * p.kv_length + j) * k_row + kv_head * p.head_size;
          float dot = 0;
          for (int64_t d = 0; d < p.head_size; ++d) dot += query[d] * key[d];
          scores[j] = dot * p.scale;
          max = std::max(max, scores[j]);
        }
        float sum = 0;
        for (float& s : scores) sum += (s = std::exp(s - max));
        float* out = y + (b * p.q_length + i) * y_row + h * p.value_head_size;
        std::fill_n(out, p.value_head_size, 0.f);
        for (int64_t j = 0; j < p.kv_length; ++j) {
          const float weight = scores[j] / sum;
          const float* value =
              v + (b * p.kv_length + j) * v_row + kv_head * p.value_head_size;
          for (int64_t d = 0; d < p.value_head_size; ++d) {
            out[d] += weight * value[d];
          }
        }
      }
    }
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterAttentionOp(OpRegistry& registry) {
  registry.AddOp("nn.attention", AttentionMetadata);
  registry.AddDispatch("nn.attention", "cpu", Attention);
}

}  // namespace asyncrt::nn
