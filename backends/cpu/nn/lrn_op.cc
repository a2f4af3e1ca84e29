// nn.lrn (ONNX LRN, AlexNet's local response normalization): each element
// divided by (bias + alpha / size * the sum of squares over `size`
// neighbouring channels) ** beta, the window from c - floor((size - 1) / 2)
// to c + ceil((size - 1) / 2), clipped to the channels.
#include <cmath>
#include <cstdint>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kLrn = "nn.lrn";

absl::StatusOr<int64_t> SizeOf(const OpAttrs& attrs) {
  std::optional<int64_t> size = attrs.GetInteger("size");
  if (!size || *size < 1) {
    return OpError(kLrn, "needs a positive `size` (the channels summed)");
  }
  return *size;
}

absl::Status LrnMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                         absl::Span<TensorMetadata> results) {
  if (args.size() != 1 || results.size() != 1) {
    return OpError(kLrn, "takes x and has 1 result");
  }
  if (absl::Status status = RequireF32(kLrn, args); !status.ok()) {
    return status;
  }
  if (args[0].shape.GetRank() < 3) {
    return OpError(kLrn, absl::StrCat("x must be N x C x D1 ..., not ",
                                      args[0].shape.DebugString()));
  }
  if (absl::StatusOr<int64_t> size = SizeOf(attrs); !size.ok()) {
    return size.status();
  }
  results[0] = args[0];
  return absl::OkStatus();
}

void Lrn(OpInvocation& invocation) {
  if (RefuseHalf(invocation, kLrn)) return;
  absl::StatusOr<int64_t> size = SizeOf(invocation.attrs);
  if (!size.ok()) return FailAll(invocation, kLrn, size.status().message());
  const float alpha = FloatAttr(invocation.attrs, "alpha", 1e-4f);
  const float beta = FloatAttr(invocation.attrs, "beta", 0.75f);
  const float bias = FloatAttr(invocation.attrs, "bias", 1.0f);
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kLrn, invocation.result_metadata[0]);
  if (!result) return;
  const int64_t batch = x.shape().GetDimensionSize(0);
  const int64_t channels = x.shape().GetDimensionSize(1);
  const int64_t inner = x.NumElements() / std::max<int64_t>(batch * channels, 1);
  const int64_t before = (*size - 1) / 2;
  const int64_t after = *size - 1 - before;
  const float* in = x.elements<float>().data();
  float* out = static_cast<float*>(result->data());
  for (int64_t n = 0; n < batch; ++n) {
    for (int64_t c = 0; c < channels; ++c) {
      const int64_t first = std::max<int64_t>(0, c - before);
      const int64_t last = std::min<int64_t>(channels - 1, c + after);
      for (int64_t i = 0; i < inner; ++i) {
        float sum = 0;
        for (int64_t k = first; k <= last; ++k) {
          const float v = in[(n * channels + k) * inner + i];
          sum += v * v;
        }
        const int64_t at = (n * channels + c) * inner + i;
        out[at] = in[at] / std::pow(bias + alpha / *size * sum, beta);
      }
    }
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterLrnOp(OpRegistry& registry) {
  registry.AddOp("nn.lrn", LrnMetadata);
  registry.AddDispatch("nn.lrn", "cpu", Lrn);
}

}  // namespace asyncrt::nn
