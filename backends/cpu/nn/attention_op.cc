// nn.attention: ONNX's Attention (opset 23) on 3-D operands, the op the
// model compiler fuses a transformer's attention into for devices
// (-nn-fuse-attention). The CPU computes it row by row in f32: a reference
// more than a fast path (the host pipeline keeps the matrix products on
// oneDNN).
#include <algorithm>
#include <array>
#include <cmath>
#include <optional>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kOp = "nn.attention";

// Q [B, Sq, Hq * D], K [B, Skv, Hkv * D], V [B, Skv, Hkv * Dv]; query head
// h reads key and value head h / (Hq / Hkv) (grouped-query attention).
// Packed (one operand, `qkv_widths`): Q, K and V side by side in each row
// of [B, S, Hq * D + Hkv * D + Hkv * Dv], a fused projection's result.
struct AttentionPlan {
  int64_t batch, q_length, kv_length, q_heads, kv_heads, head_size,
      value_head_size;
  // Where Q, K and V start in their operands' rows and how far apart their
  // rows are, in elements.
  int64_t q_offset = 0, k_offset = 0, v_offset = 0;
  int64_t q_row, k_row, v_row;
  float scale;
};

absl::StatusOr<AttentionPlan> PlanAttention(ArgumentMetadata args,
                                            const OpAttrs& attrs) {
  const std::optional<absl::Span<const int64_t>> widths =
      attrs.GetArray<int64_t>("qkv_widths");
  if (args.size() != (widths ? 1 : 3)) {
    return OpError(kOp,
                   "takes Q, K and V, or one operand holding them side by "
                   "side with qkv_widths (a mask or a cache is not "
                   "supported yet)");
  }
  if (absl::Status status = RequireFloat(kOp, args); !status.ok()) {
    return status;
  }
  for (size_t i = 0; i < args.size(); ++i) {
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
  using Dims = std::array<int64_t, 3>;
  Dims q, k, v;
  AttentionPlan plan;
  if (widths) {
    const auto packed = args[0].shape.GetDimensions();
    if (widths->size() != 3 || (*widths)[0] < 1 || (*widths)[1] < 1 ||
        (*widths)[2] < 1 ||
        (*widths)[0] + (*widths)[1] + (*widths)[2] != packed[2]) {
      return OpError(kOp, absl::StrCat("qkv_widths must be three positive "
                                       "widths that add up to the operand's "
                                       "hidden size, ",
                                       packed[2]));
    }
    q = {packed[0], packed[1], (*widths)[0]};
    k = {packed[0], packed[1], (*widths)[1]};
    v = {packed[0], packed[1], (*widths)[2]};
    plan.q_row = plan.k_row = plan.v_row = packed[2];
    plan.k_offset = q[2];
    plan.v_offset = q[2] + k[2];
  } else {
    auto dims = [&](int i) {
      const auto d = args[i].shape.GetDimensions();
      return Dims{d[0], d[1], d[2]};
    };
    q = dims(0);
    k = dims(1);
    v = dims(2);
    plan.q_row = q[2];
    plan.k_row = k[2];
    plan.v_row = v[2];
  }
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
    auto text = [](const Dims& d) {
      return absl::StrCat("[", d[0], ", ", d[1], ", ", d[2], "]");
    };
    return OpError(kOp, absl::StrCat("K ", text(k), " and V ", text(v),
                                     " do not match Q ", text(q)));
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
  const AttentionPlan& p = *plan;
  const bool packed = invocation.arguments.size() == 1;
  const float* q = data(0) + p.q_offset;
  const float* k = data(packed ? 0 : 1) + p.k_offset;
  const float* v = data(packed ? 0 : 2) + p.v_offset;
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kOp, invocation.result_metadata[0]);
  if (!result) return;
  float* y = result->elements<float>().data();
  const int64_t group = p.q_heads / p.kv_heads;
  const int64_t q_row = p.q_row, k_row = p.k_row, v_row = p.v_row;
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
