// nn.gather_nd and nn.scatter_nd (ONNX GatherND and ScatterND): slices of
// data addressed by tuples of indices in the last dimension of `indices`.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kGatherNd = "nn.gather_nd";
constexpr absl::string_view kScatterNd = "nn.scatter_nd";

const DenseHostTensor& Input(const OpInvocation& invocation, size_t i) {
  return static_cast<const DenseHostTensor&>(invocation.argument(i));
}

// The addressing both ops share: `batch` groups (GatherND's batch_dims
// leading dimensions, equal in data and indices), each with `tuples` index
// tuples of `depth` coordinates, each selecting a slice of `slice`
// elements at the data offsets that `strides` give.
struct NdPlan {
  int64_t batch = 1, tuples = 1, depth = 0, slice = 1, batch_stride = 1;
  Dims dims, strides;  // Of the `depth` addressed dimensions.
  Dims result;         // GatherND's result shape.
};

absl::StatusOr<NdPlan> PlanNd(absl::string_view op, const TensorMetadata& data,
                              const TensorMetadata& indices,
                              int64_t batch_dims) {
  if (indices.dtype != DType::kI32 && indices.dtype != DType::kI64) {
    return OpError(op, absl::StrCat("indices are ", DTypeName(indices.dtype),
                                    "; they must be i32 or i64"));
  }
  if (data.dtype == DType::kString || data.dtype == DType::kInvalid) {
    return OpError(
        op, absl::StrCat("dtype ", DTypeName(data.dtype), " is not supported"));
  }
  const auto d = data.shape.GetDimensions();
  const auto i = indices.shape.GetDimensions();
  const int64_t r = d.size(), q = i.size();
  if (q < 1 || r < 1 || batch_dims < 0 || batch_dims >= std::min(r, q)) {
    return OpError(op,
                   absl::StrCat("data ", data.shape.DebugString(), ", indices ",
                                indices.shape.DebugString(), " and batch_dims ",
                                batch_dims, " do not fit"));
  }
  NdPlan plan;
  plan.depth = i[q - 1];
  if (plan.depth < 1 || plan.depth > r - batch_dims) {
    return OpError(
        op, absl::StrCat("index tuples of ", plan.depth,
                         " coordinates for data ", data.shape.DebugString()));
  }
  for (int64_t k = 0; k < batch_dims; ++k) {
    if (d[k] != i[k]) {
      return OpError(op, absl::StrCat("batch dimension ", k,
                                      " differs: ", data.shape.DebugString(),
                                      " and ", indices.shape.DebugString()));
    }
    plan.batch *= d[k];
  }
  for (int64_t k = batch_dims; k < q - 1; ++k) plan.tuples *= i[k];
  for (int64_t k = batch_dims + plan.depth; k < r; ++k) plan.slice *= d[k];
  plan.strides.assign(plan.depth, 0);
  int64_t stride = plan.slice;
  for (int64_t k = plan.depth - 1; k >= 0; --k) {
    plan.dims.insert(plan.dims.begin(), d[batch_dims + k]);
    plan.strides[k] = stride;
    stride *= d[batch_dims + k];
  }
  plan.batch_stride = stride;
  plan.result.assign(i.begin(), i.end() - 1);
  plan.result.insert(plan.result.end(), d.begin() + batch_dims + plan.depth,
                     d.end());
  return plan;
}

// Each tuple's element offset in data, checking each coordinate.
absl::StatusOr<std::vector<int64_t>> Offsets(absl::string_view op,
                                             const NdPlan& plan,
                                             const DenseHostTensor& indices) {
  std::vector<int64_t> offsets(plan.batch * plan.tuples);
  auto run = [&](auto tag) -> absl::Status {
    using Index = typename decltype(tag)::type;
    const Index* idx = indices.elements<Index>().data();
    for (int64_t b = 0; b < plan.batch; ++b) {
      for (int64_t t = 0; t < plan.tuples; ++t) {
        const int64_t tuple = b * plan.tuples + t;
        int64_t offset = b * plan.batch_stride;
        for (int64_t k = 0; k < plan.depth; ++k) {
          int64_t c = idx[tuple * plan.depth + k];
          if (c < -plan.dims[k] || c >= plan.dims[k]) {
            return OpError(op, absl::StrCat("index ", c,
                                            " is out of range for a "
                                            "dimension of size ",
                                            plan.dims[k]));
          }
          if (c < 0) c += plan.dims[k];
          offset += c * plan.strides[k];
        }
        offsets[tuple] = offset;
      }
    }
    return absl::OkStatus();
  };
  absl::Status status = indices.dtype() == DType::kI32
                            ? run(TypeTag<int32_t>{})
                            : run(TypeTag<int64_t>{});
  if (!status.ok()) return status;
  return offsets;
}

absl::Status GatherNdMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                              absl::Span<TensorMetadata> results) {
  if (args.size() != 2 || results.size() != 1) {
    return OpError(kGatherNd, "takes data and indices, and has 1 result");
  }
  absl::StatusOr<NdPlan> plan = PlanNd(
      kGatherNd, args[0], args[1], attrs.GetInteger("batch_dims").value_or(0));
  if (!plan.ok()) return plan.status();
  results[0] = TensorMetadata(args[0].dtype, TensorShape(plan->result));
  return absl::OkStatus();
}

void GatherNd(OpInvocation& invocation) {
  const DenseHostTensor& data = Input(invocation, 0);
  const DenseHostTensor& indices = Input(invocation, 1);
  absl::StatusOr<NdPlan> plan =
      PlanNd(kGatherNd, data.metadata(), indices.metadata(),
             invocation.attrs.GetInteger("batch_dims").value_or(0));
  if (!plan.ok())
    return FailAll(invocation, kGatherNd, plan.status().message());
  absl::StatusOr<std::vector<int64_t>> offsets =
      Offsets(kGatherNd, *plan, indices);
  if (!offsets.ok()) {
    return FailAll(invocation, kGatherNd, offsets.status().message());
  }
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kGatherNd, invocation.result_metadata[0]);
  if (!result) return;
  const size_t bytes = plan->slice * DTypeSize(data.dtype());
  const char* in = static_cast<const char*>(data.data());
  char* out = static_cast<char*>(result->data());
  for (size_t t = 0; t < offsets->size(); ++t) {
    if (bytes == 0) break;
    std::memcpy(out + t * bytes, in + (*offsets)[t] * DTypeSize(data.dtype()),
                bytes);
  }
  invocation.results[0] = std::move(result);
}

// ONNX ScatterND: data with each slice that a tuple of indices addresses
// replaced by (or combined with) the matching slice of updates, whose shape
// is indices' without its last dimension, then data's addressed slice.
absl::Status ScatterNdMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                               absl::Span<TensorMetadata> results) {
  if (args.size() != 3 || results.size() != 1) {
    return OpError(kScatterNd,
                   "takes data, indices and updates, and has 1 result");
  }
  absl::StatusOr<NdPlan> plan = PlanNd(kScatterNd, args[0], args[1], 0);
  if (!plan.ok()) return plan.status();
  if (args[2].dtype != args[0].dtype ||
      args[2].shape.GetDimensions() != absl::MakeConstSpan(plan->result)) {
    return OpError(kScatterNd,
                   absl::StrCat("updates ", args[2].shape.DebugString(), " of ",
                                DTypeName(args[2].dtype), " are not [",
                                absl::StrJoin(plan->result, ", "), "] of ",
                                DTypeName(args[0].dtype)));
  }
  absl::StatusOr<ScatterReduction> reduction =
      ScatterReductionOf(kScatterNd, attrs);
  if (!reduction.ok()) return reduction.status();
  if (*reduction != ScatterReduction::kNone && !IsRealNumber(args[0].dtype)) {
    return OpError(kScatterNd, absl::StrCat("a reduction needs numbers, not ",
                                            DTypeName(args[0].dtype)));
  }
  results[0] = args[0];
  return absl::OkStatus();
}

void ScatterNd(OpInvocation& invocation) {
  const DenseHostTensor& data = Input(invocation, 0);
  const DenseHostTensor& indices = Input(invocation, 1);
  const DenseHostTensor& updates = Input(invocation, 2);
  absl::StatusOr<NdPlan> plan =
      PlanNd(kScatterNd, data.metadata(), indices.metadata(), 0);
  absl::StatusOr<ScatterReduction> reduction =
      ScatterReductionOf(kScatterNd, invocation.attrs);
  if (!plan.ok() || !reduction.ok()) {
    return FailAll(invocation, kScatterNd,
                   (!plan.ok() ? plan.status() : reduction.status()).message());
  }
  absl::StatusOr<std::vector<int64_t>> offsets =
      Offsets(kScatterNd, *plan, indices);
  if (!offsets.ok()) {
    return FailAll(invocation, kScatterNd, offsets.status().message());
  }
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kScatterNd, invocation.result_metadata[0]);
  if (!result) return;
  if (data.DataSizeInBytes() > 0) {
    std::memcpy(result->data(), data.data(), data.DataSizeInBytes());
  }
  const size_t element = DTypeSize(data.dtype());
  if (*reduction == ScatterReduction::kNone) {
    char* out = static_cast<char*>(result->data());
    const char* in = static_cast<const char*>(updates.data());
    for (size_t t = 0; t < offsets->size(); ++t) {
      std::memcpy(out + (*offsets)[t] * element, in + t * plan->slice * element,
                  plan->slice * element);
    }
  } else {
    DispatchRealNumber(data.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = static_cast<T*>(result->data());
      const T* in = updates.elements<T>().data();
      for (size_t t = 0; t < offsets->size(); ++t) {
        for (int64_t j = 0; j < plan->slice; ++j) {
          T& target = out[(*offsets)[t] + j];
          target = ApplyScatterReduction(*reduction, target,
                                         in[t * plan->slice + j]);
        }
      }
    });
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterNdIndexOps(OpRegistry& registry) {
  registry.AddOp("nn.gather_nd", GatherNdMetadata);
  registry.AddDispatch("nn.gather_nd", "cpu", GatherNd);
  registry.AddOp("nn.scatter_nd", ScatterNdMetadata);
  registry.AddDispatch("nn.scatter_nd", "cpu", ScatterNd);
}

}  // namespace asyncrt::nn
