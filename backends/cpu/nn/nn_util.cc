#include "backends/cpu/nn/nn_util.h"

#include <algorithm>

#include "absl/strings/str_cat.h"

namespace asyncrt::nn {

void FailAll(OpInvocation& invocation, absl::string_view op,
             absl::string_view message) {
  RCReference<AsyncValue> error =
      MakeErrorAsyncValueRef(absl::StrCat(op, ": ", message));
  for (auto& result : invocation.results) result = error;
}

AsyncValueRef<DenseHostTensor> AllocateResult(OpInvocation& invocation,
                                              absl::string_view op,
                                              const TensorMetadata& metadata,
                                              uint64_t reusable_arguments) {
  AsyncValueRef<DenseHostTensor> tensor =
      invocation.ReuseOrAllocateDense(metadata, reusable_arguments);
  if (!tensor) {
    FailAll(invocation, op,
            absl::StrCat("cannot allocate ", metadata.shape.DebugString()));
  }
  return tensor;
}

absl::Status OpError(absl::string_view op, absl::string_view message) {
  return absl::InvalidArgumentError(absl::StrCat(op, ": ", message));
}

absl::Status RequireF32(absl::string_view op, ArgumentMetadata args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].dtype != DType::kF32) {
      return OpError(
          op, absl::StrCat("argument ", i, " is ", DTypeName(args[i].dtype),
                           "; this op computes in f32 only"));
    }
  }
  return absl::OkStatus();
}

bool IsHalf(DType dtype) {
  return dtype == DType::kF16 || dtype == DType::kBF16;
}

absl::StatusOr<ScatterReduction> ScatterReductionOf(absl::string_view op,
                                                    const OpAttrs& attrs) {
  const absl::string_view name = attrs.GetString("reduction").value_or("none");
  if (name == "none") return ScatterReduction::kNone;
  if (name == "add") return ScatterReduction::kAdd;
  if (name == "mul") return ScatterReduction::kMul;
  if (name == "max") return ScatterReduction::kMax;
  if (name == "min") return ScatterReduction::kMin;
  return OpError(op, absl::StrCat("reduction '", name,
                                  "' is not none, add, mul, max or min"));
}

MetadataPointers ArgumentMetadataOf(const OpInvocation& invocation) {
  MetadataPointers pointers;
  for (size_t i = 0; i < invocation.arguments.size(); ++i) {
    pointers.push_back(&invocation.argument(i).metadata());
  }
  return pointers;
}

bool RefuseHalf(OpInvocation& invocation, absl::string_view op) {
  for (size_t i = 0; i < invocation.arguments.size(); ++i) {
    const DType dtype = invocation.argument(i).dtype();
    if (IsHalf(dtype)) {
      FailAll(invocation, op,
              absl::StrCat("argument ", i, " is ", DTypeName(dtype),
                           "; the CPU computes this op in f32 only: cast "
                           "it first (nn.cast)"));
      return true;
    }
  }
  return false;
}

absl::Status RequireFloat(absl::string_view op, ArgumentMetadata args) {
  for (size_t i = 0; i < args.size(); ++i) {
    const DType dtype = args[i].dtype;
    if (dtype != DType::kF32 && !IsHalf(dtype)) {
      return OpError(op, absl::StrCat("argument ", i, " is ", DTypeName(dtype),
                                      "; this op computes in f32 (f16 and "
                                      "bf16 on devices that have them)"));
    }
    if (dtype != args[0].dtype) {
      return OpError(
          op, absl::StrCat("arguments are ", DTypeName(args[0].dtype), " and ",
                           DTypeName(dtype), "; they must have one dtype"));
    }
  }
  return absl::OkStatus();
}

bool IsRealNumber(DType dtype) {
  switch (dtype) {
    case DType::kI8:
    case DType::kI16:
    case DType::kI32:
    case DType::kI64:
    case DType::kUI8:
    case DType::kUI16:
    case DType::kUI32:
    case DType::kUI64:
    case DType::kF32:
    case DType::kF64:
      return true;
    default:
      return false;
  }
}

absl::StatusOr<TensorShape> BroadcastShapes(absl::string_view op,
                                            const TensorShape& a,
                                            const TensorShape& b) {
  const int rank = std::max(a.GetRank(), b.GetRank());
  Dims dims(rank);
  for (int i = 0; i < rank; ++i) {
    // Right-aligned: dimension i of the result.
    const int ia = i - (rank - a.GetRank());
    const int ib = i - (rank - b.GetRank());
    const int64_t da = ia >= 0 ? a.GetDimensionSize(ia) : 1;
    const int64_t db = ib >= 0 ? b.GetDimensionSize(ib) : 1;
    if (da != db && da != 1 && db != 1) {
      return OpError(op, absl::StrCat("shapes ", a.DebugString(), " and ",
                                      b.DebugString(), " do not broadcast"));
    }
    dims[i] = da == 1 ? db : da;
  }
  return TensorShape(dims);
}

Dims BroadcastStrides(const TensorShape& shape, const TensorShape& out) {
  const int rank = out.GetRank();
  Dims strides(rank, 0);
  int64_t stride = 1;
  for (int i = shape.GetRank() - 1; i >= 0; --i) {
    const int64_t dim = shape.GetDimensionSize(i);
    strides[i + rank - shape.GetRank()] = dim == 1 ? 0 : stride;
    stride *= dim;
  }
  return strides;
}

float FloatAttr(const OpAttrs& attrs, absl::string_view name, float fallback) {
  if (auto value = attrs.Get<float>(name)) return *value;
  if (auto value = attrs.Get<double>(name)) return static_cast<float>(*value);
  return fallback;
}

absl::StatusOr<int> NormalizeAxis(absl::string_view op, int64_t axis,
                                  int rank) {
  if (axis < -rank || axis >= std::max(rank, 1)) {
    return OpError(
        op, absl::StrCat("axis ", axis, " is out of range for rank ", rank));
  }
  return static_cast<int>(axis < 0 ? axis + rank : axis);
}

}  // namespace asyncrt::nn
