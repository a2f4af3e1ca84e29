// nn.reverse_sequence (ONNX ReverseSequence): for each batch entry b, the
// first sequence_lens[b] steps along `time_axis` reversed, the rest kept.
// `batch_axis` and `time_axis` are 0 and 1 (either way round; defaults 1
// and 0); sequence_lens is i64 (or i32), one per batch entry, each at most
// the number of steps.
#include <cstdint>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kReverse = "nn.reverse_sequence";

struct Axes {
  int batch = 1;
  int time = 0;
};

absl::StatusOr<Axes> AxesOf(const OpAttrs& attrs) {
  Axes axes;
  axes.batch = static_cast<int>(attrs.GetInteger("batch_axis").value_or(1));
  axes.time = static_cast<int>(attrs.GetInteger("time_axis").value_or(0));
  if (!((axes.batch == 0 && axes.time == 1) ||
        (axes.batch == 1 && axes.time == 0))) {
    return OpError(kReverse, "batch_axis and time_axis must be 0 and 1");
  }
  return axes;
}

absl::Status ReverseMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  if (args.size() != 2 || results.size() != 1) {
    return OpError(kReverse, "takes input and sequence_lens, and has 1 result");
  }
  absl::StatusOr<Axes> axes = AxesOf(attrs);
  if (!axes.ok()) return axes.status();
  if (args[0].shape.GetRank() < 2 || args[0].dtype == DType::kString) {
    return OpError(kReverse, absl::StrCat("input ", args[0].shape.DebugString(),
                                          " must be of rank 2 or more"));
  }
  const int64_t batch = args[0].shape.GetDimensionSize(axes->batch);
  if ((args[1].dtype != DType::kI64 && args[1].dtype != DType::kI32) ||
      args[1].shape.GetRank() != 1 ||
      args[1].shape.GetDimensionSize(0) != batch) {
    return OpError(kReverse, absl::StrCat("sequence_lens must be ", batch,
                                          " integers, one per batch entry"));
  }
  results[0] = args[0];
  return absl::OkStatus();
}

void Reverse(OpInvocation& invocation) {
  absl::StatusOr<Axes> axes = AxesOf(invocation.attrs);
  if (!axes.ok()) return FailAll(invocation, kReverse, axes.status().message());
  const auto& x = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const auto& lens =
      static_cast<const DenseHostTensor&>(invocation.argument(1));
  const auto dims = x.shape().GetDimensions();
  const int64_t steps = dims[axes->time];
  const int64_t batch = dims[axes->batch];
  std::vector<int64_t> length(batch);
  for (int64_t b = 0; b < batch; ++b) {
    length[b] = lens.dtype() == DType::kI64 ? lens.elements<int64_t>()[b]
                                            : lens.elements<int32_t>()[b];
    if (length[b] < 0 || length[b] > steps) {
      return FailAll(invocation, kReverse,
                     absl::StrCat("sequence_lens[", b, "] is ", length[b],
                                  "; there are ", steps, " steps"));
    }
  }
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kReverse, invocation.result_metadata[0]);
  if (!result) return;
  // Each (time, batch) pair owns a contiguous slice of the trailing dims.
  size_t slice = DTypeSize(x.dtype());
  for (size_t d = 2; d < dims.size(); ++d) slice *= dims[d];
  const char* in = static_cast<const char*>(x.data());
  char* out = static_cast<char*>(result->data());
  auto offset = [&](int64_t t, int64_t b) {
    const int64_t first = axes->time == 0 ? t : b;
    const int64_t second = axes->time == 0 ? b : t;
    return (first * dims[1] + second) * slice;
  };
  for (int64_t b = 0; b < batch; ++b) {
    for (int64_t t = 0; t < steps; ++t) {
      const int64_t from = t < length[b] ? length[b] - 1 - t : t;
      std::memcpy(out + offset(t, b), in + offset(from, b), slice);
    }
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterReverseSequenceOp(OpRegistry& registry) {
  registry.AddOp("nn.reverse_sequence", ReverseMetadata);
  registry.AddDispatch("nn.reverse_sequence", "cpu", Reverse);
}

}  // namespace asyncrt::nn
