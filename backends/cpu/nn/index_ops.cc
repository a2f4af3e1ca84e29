// Index, selection and rearrangement nn.* ops on the CPU (ONNX semantics,
// opset 13-17): nn.arg_max, nn.arg_min, nn.cum_sum, nn.tile, nn.trilu,
// nn.gather_elements, nn.depth_to_space, nn.space_to_depth, nn.hardmax and
// nn.top_k.
//
// Ops along one axis see x as [outer, n, inner] (row-major): their loops
// run over outer, then along the axis, with the contiguous inner dimension
// innermost, keeping per-inner state (the best value so far, the running
// sum) in a row. Rearrangements (tile, depth_to_space, space_to_depth) are
// strided views copied with CopyView (copy_util.h), which merges contiguous
// runs into memcpy; they and trilu and gather_elements move elements by
// byte size, for every fixed-size dtype.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <numeric>
#include <optional>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/copy_util.h"
#include "backends/cpu/nn/nn_util.h"

// Shape functions check many things in a row; these keep each check to a
// line. Local to this file.
#define INDEX_OPS_RETURN_IF_ERROR(expr) \
  if (absl::Status status = (expr); !status.ok()) return status
#define INDEX_OPS_ASSIGN_OR_RETURN(name, expr)               \
  auto name##_or = (expr);                                   \
  if (!name##_or.ok()) return std::move(name##_or).status(); \
  const auto& name = *name##_or

namespace asyncrt::nn {
namespace {

//===--- Helpers ----------------------------------------------------------===//

template <typename... Parts>
absl::Status Error(absl::string_view op, const Parts&... parts) {
  return OpError(op, absl::StrCat(parts...));
}

const DenseHostTensor& Input(const OpInvocation& invocation, size_t i) {
  return static_cast<const DenseHostTensor&>(invocation.argument(i));
}

absl::Status Arity(absl::string_view op, ArgumentMetadata args,
                   absl::Span<TensorMetadata> results, size_t num_args,
                   size_t num_results = 1) {
  if (args.size() != num_args || results.size() != num_results) {
    return Error(op, "takes ", num_args,
                 num_args == 1 ? " argument" : " arguments", " and has ",
                 num_results, num_results == 1 ? " result" : " results",
                 "; got ", args.size(), " and ", results.size());
  }
  return absl::OkStatus();
}

// Ops that move elements by bytes take every dtype but strings.
absl::Status RequireFixedSize(absl::string_view op, DType dtype) {
  if (dtype == DType::kString || dtype == DType::kInvalid) {
    return Error(op, "dtype ", DTypeName(dtype), " is not supported");
  }
  return absl::OkStatus();
}

absl::Status RequireRealNumber(absl::string_view op, DType dtype) {
  if (!IsRealNumber(dtype)) {
    return Error(op, "dtype ", DTypeName(dtype),
                 " is not supported; x must be an integer, f32 or f64");
  }
  return absl::OkStatus();
}

absl::StatusOr<int64_t> RequiredInteger(absl::string_view op,
                                        const OpAttrs& attrs,
                                        absl::string_view name) {
  std::optional<int64_t> value = attrs.GetInteger(name);
  if (!value)
    return Error(op, "attribute `", name, "` (an integer) is required");
  return *value;
}

// x as [outer, n, inner] around `axis`.
struct AxisSplit {
  int axis;
  int64_t outer, n, inner;
};

AxisSplit SplitAt(const TensorShape& shape, int axis) {
  const auto dims = shape.GetDimensions();
  return {axis, Product(dims, 0, axis), dims[axis],
          Product(dims, axis + 1, dims.size())};
}

// The `axis` attribute (`fallback` if absent) of x, which needs rank >= 1.
absl::StatusOr<AxisSplit> PlanAxis(absl::string_view op, const TensorShape& x,
                                   const OpAttrs& attrs, int64_t fallback) {
  if (x.GetRank() == 0) return Error(op, "x must have rank >= 1");
  INDEX_OPS_ASSIGN_OR_RETURN(
      axis, NormalizeAxis(op, attrs.GetInteger("axis").value_or(fallback),
                          x.GetRank()));
  return SplitAt(x, axis);
}

Dims DimsOf(const TensorShape& shape) {
  return Dims(shape.GetDimensions().begin(), shape.GetDimensions().end());
}

//===--- nn.arg_max, nn.arg_min -------------------------------------------===//

template <bool kMax>
constexpr absl::string_view ArgName() {
  return kMax ? "nn.arg_max" : "nn.arg_min";
}

template <bool kMax>
absl::StatusOr<AxisSplit> PlanArg(const TensorMetadata& x,
                                  const OpAttrs& attrs) {
  constexpr absl::string_view kOp = ArgName<kMax>();
  INDEX_OPS_ASSIGN_OR_RETURN(split, PlanAxis(kOp, x.shape, attrs, 0));
  if (split.n == 0) {
    return Error(kOp, "axis ", split.axis, " of ", x.shape.DebugString(),
                 " is empty");
  }
  return split;
}

template <bool kMax>
absl::Status ArgMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                         absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = ArgName<kMax>();
  INDEX_OPS_RETURN_IF_ERROR(Arity(kOp, args, results, 1));
  INDEX_OPS_RETURN_IF_ERROR(RequireRealNumber(kOp, args[0].dtype));
  INDEX_OPS_ASSIGN_OR_RETURN(split, PlanArg<kMax>(args[0], attrs));
  Dims dims = DimsOf(args[0].shape);
  if (attrs.GetInteger("keepdims").value_or(1) != 0) {
    dims[split.axis] = 1;
  } else {
    dims.erase(dims.begin() + split.axis);
  }
  results[0] = TensorMetadata(DType::kI64, dims);
  return absl::OkStatus();
}

// Per outer slice: the best value so far of each inner position, in a row
// of `best`, updated by each row along the axis. `kLast`: ties go to the
// later index.
template <bool kMax, bool kLast, typename T>
void ArgReduce(const T* x, const AxisSplit& s, int64_t* out) {
  std::vector<T> best(s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    const T* slice = x + o * s.n * s.inner;
    int64_t* index = out + o * s.inner;
    std::copy_n(slice, s.inner, best.data());
    std::fill_n(index, s.inner, 0);
    for (int64_t k = 1; k < s.n; ++k) {
      const T* row = slice + k * s.inner;
      for (int64_t j = 0; j < s.inner; ++j) {
        const T v = row[j];
        bool better;
        if constexpr (kMax) {
          better = kLast ? v >= best[j] : v > best[j];
        } else {
          better = kLast ? v <= best[j] : v < best[j];
        }
        if (better) {
          best[j] = v;
          index[j] = k;
        }
      }
    }
  }
}

template <bool kMax>
void ArgOp(OpInvocation& invocation) {
  constexpr absl::string_view kOp = ArgName<kMax>();
  const DenseHostTensor& x = Input(invocation, 0);
  absl::StatusOr<AxisSplit> split =
      PlanArg<kMax>(x.metadata(), invocation.attrs);
  if (!split.ok()) return FailAll(invocation, kOp, split.status().message());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kOp, invocation.result_metadata[0]);
  if (!result) return;
  const bool last =
      invocation.attrs.GetInteger("select_last_index").value_or(0);
  int64_t* out = result->elements<int64_t>().data();
  DispatchRealNumber(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    const T* in = x.elements<T>().data();
    if (last) {
      ArgReduce<kMax, true>(in, *split, out);
    } else {
      ArgReduce<kMax, false>(in, *split, out);
    }
  });
  invocation.results[0] = std::move(result);
}

//===--- nn.cum_sum -------------------------------------------------------===//

constexpr absl::string_view kCumSum = "nn.cum_sum";

absl::StatusOr<AxisSplit> PlanCumSum(const TensorMetadata& x,
                                     const OpAttrs& attrs) {
  INDEX_OPS_ASSIGN_OR_RETURN(axis, RequiredInteger(kCumSum, attrs, "axis"));
  if (x.shape.GetRank() == 0) return Error(kCumSum, "x must have rank >= 1");
  INDEX_OPS_ASSIGN_OR_RETURN(normalized,
                             NormalizeAxis(kCumSum, axis, x.shape.GetRank()));
  return SplitAt(x.shape, normalized);
}

absl::Status CumSumMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  INDEX_OPS_RETURN_IF_ERROR(Arity(kCumSum, args, results, 1));
  const DType dtype = args[0].dtype;
  if (dtype != DType::kF32 && dtype != DType::kF64 && dtype != DType::kI32 &&
      dtype != DType::kI64) {
    return Error(kCumSum, "dtype ", DTypeName(dtype),
                 " is not supported; x must be f32, f64, i32 or i64");
  }
  INDEX_OPS_RETURN_IF_ERROR(PlanCumSum(args[0], attrs).status());
  results[0] = args[0];
  return absl::OkStatus();
}

template <typename T>
void CumSumImpl(const T* x, T* y, const AxisSplit& s, bool exclusive,
                bool reverse) {
  std::vector<T> acc(s.inner);
  for (int64_t o = 0; o < s.outer; ++o) {
    std::fill(acc.begin(), acc.end(), T(0));
    for (int64_t step = 0; step < s.n; ++step) {
      const int64_t k = reverse ? s.n - 1 - step : step;
      const T* src = x + (o * s.n + k) * s.inner;
      T* dst = y + (o * s.n + k) * s.inner;
      // src may be dst (the result in x's buffer): read before writing.
      if (exclusive) {
        for (int64_t j = 0; j < s.inner; ++j) {
          const T v = src[j];
          dst[j] = acc[j];
          acc[j] = Wrapping(acc[j], v, std::plus<>());
        }
      } else {
        for (int64_t j = 0; j < s.inner; ++j) {
          acc[j] = Wrapping(acc[j], src[j], std::plus<>());
          dst[j] = acc[j];
        }
      }
    }
  }
}

void CumSum(OpInvocation& invocation) {
  const DenseHostTensor& x = Input(invocation, 0);
  absl::StatusOr<AxisSplit> split = PlanCumSum(x.metadata(), invocation.attrs);
  if (!split.ok())
    return FailAll(invocation, kCumSum, split.status().message());
  const bool exclusive = invocation.attrs.GetInteger("exclusive").value_or(0);
  const bool reverse = invocation.attrs.GetInteger("reverse").value_or(0);
  // Each element is read before it is written: x's buffer may be reused.
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kCumSum, invocation.result_metadata[0], 0b1);
  if (!result) return;
  auto run = [&](auto tag) {
    using T = typename decltype(tag)::type;
    CumSumImpl<T>(x.elements<T>().data(), result->elements<T>().data(), *split,
                  exclusive, reverse);
  };
  switch (x.dtype()) {
    case DType::kF64:
      run(TypeTag<double>{});
      break;
    case DType::kI32:
      run(TypeTag<int32_t>{});
      break;
    case DType::kI64:
      run(TypeTag<int64_t>{});
      break;
    default:
      run(TypeTag<float>{});
  }
  invocation.results[0] = std::move(result);
}

//===--- nn.tile ----------------------------------------------------------===//

constexpr absl::string_view kTile = "nn.tile";

absl::Status TileMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                          absl::Span<TensorMetadata> results) {
  INDEX_OPS_RETURN_IF_ERROR(Arity(kTile, args, results, 1));
  INDEX_OPS_RETURN_IF_ERROR(RequireFixedSize(kTile, args[0].dtype));
  auto repeats = attrs.GetIntegerArray("repeats");
  if (!repeats) {
    return Error(kTile, "attribute `repeats` (an integer array) is required");
  }
  const TensorShape& x = args[0].shape;
  if (static_cast<int>(repeats->size()) != x.GetRank()) {
    return Error(kTile, "repeats has ", repeats->size(), " values; x ",
                 x.DebugString(), " has rank ", x.GetRank());
  }
  Dims dims = DimsOf(x);
  for (size_t d = 0; d < dims.size(); ++d) {
    const int64_t r = (*repeats)[d];
    if (r < 0) return Error(kTile, "repeats[", d, "] = ", r, " is negative");
    if (__builtin_mul_overflow(dims[d], r, &dims[d])) {
      return Error(kTile, "the result's dimension ", d, " overflows");
    }
  }
  if (!CheckedProduct(dims)) return Error(kTile, "the result is too large");
  results[0] = TensorMetadata(args[0].dtype, dims);
  return absl::OkStatus();
}

void Tile(OpInvocation& invocation) {
  const DenseHostTensor& x = Input(invocation, 0);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kTile, invocation.result_metadata[0]);
  if (!result) return;
  // The result as [r0, d0, r1, d1, ...]: x's strides, 0 along repeats.
  const auto dims = x.shape().GetDimensions();
  const auto repeats = *invocation.attrs.GetIntegerArray("repeats");
  const Dims x_strides = DenseStrides(dims);
  Dims view, src_strides;
  for (size_t d = 0; d < dims.size(); ++d) {
    view.push_back(repeats[d]);
    src_strides.push_back(0);
    view.push_back(dims[d]);
    src_strides.push_back(x_strides[d]);
  }
  CopyView(static_cast<const char*>(x.data()), src_strides,
           static_cast<char*>(result->data()), DenseStrides(view), view,
           DTypeSize(x.dtype()));
  invocation.results[0] = std::move(result);
}

//===--- nn.trilu ---------------------------------------------------------===//

constexpr absl::string_view kTrilu = "nn.trilu";

absl::Status TriluMetadata(ArgumentMetadata args, const OpAttrs&,
                           absl::Span<TensorMetadata> results) {
  INDEX_OPS_RETURN_IF_ERROR(Arity(kTrilu, args, results, 1));
  INDEX_OPS_RETURN_IF_ERROR(RequireFixedSize(kTrilu, args[0].dtype));
  if (args[0].shape.GetRank() < 2) {
    return Error(kTrilu, "x ", args[0].shape.DebugString(),
                 " must have rank >= 2");
  }
  results[0] = args[0];
  return absl::OkStatus();
}

// Keeps the elements on and above (upper) or on and below (lower) the
// k-th diagonal of each matrix, j - i >= k or j - i <= k; zeroes the rest
// (zero bytes: 0 in every dtype).
void Trilu(OpInvocation& invocation) {
  const DenseHostTensor& x = Input(invocation, 0);
  const bool upper = invocation.attrs.GetInteger("upper").value_or(1) != 0;
  const auto dims = x.shape().GetDimensions();
  const int rank = dims.size();
  const int64_t rows = dims[rank - 2], cols = dims[rank - 1];
  // Beyond the matrix, every k selects all or nothing.
  const int64_t k = std::clamp<int64_t>(
      invocation.attrs.GetInteger("k").value_or(0), -rows - 1, cols + 1);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kTrilu, invocation.result_metadata[0], 0b1);
  if (!result) return;
  const size_t size = DTypeSize(x.dtype());
  const char* src = static_cast<const char*>(x.data());
  char* dst = static_cast<char*>(result->data());
  const int64_t matrices = Product(dims, 0, rank - 2);
  for (int64_t m = 0; m < matrices; ++m) {
    for (int64_t i = 0; i < rows; ++i) {
      const int64_t offset = (m * rows + i) * cols * size;
      // Columns [begin, end) are kept.
      int64_t begin = 0, end = cols;
      if (upper) {
        begin = std::clamp<int64_t>(i + k, 0, cols);
      } else {
        end = std::clamp<int64_t>(i + k + 1, 0, cols);
      }
      if (dst != src && end > begin) {
        std::memcpy(dst + offset + begin * size, src + offset + begin * size,
                    (end - begin) * size);
      }
      if (begin > 0) std::memset(dst + offset, 0, begin * size);
      if (end < cols) {
        std::memset(dst + offset + end * size, 0, (cols - end) * size);
      }
    }
  }
  invocation.results[0] = std::move(result);
}

//===--- nn.gather_elements -----------------------------------------------===//

constexpr absl::string_view kGatherElements = "nn.gather_elements";

// The axis of nn.gather_elements or nn.scatter_elements (`op`): indices
// of data's rank, no larger than data but along the axis.
absl::StatusOr<int> PlanGatherElements(const TensorMetadata& data,
                                       const TensorMetadata& indices,
                                       const OpAttrs& attrs,
                                       absl::string_view op = kGatherElements) {
  const int rank = data.shape.GetRank();
  if (rank == 0) return Error(op, "data must have rank >= 1");
  if (indices.shape.GetRank() != rank) {
    return Error(op, "indices ", indices.shape.DebugString(), " and data ",
                 data.shape.DebugString(), " must have the same rank");
  }
  INDEX_OPS_ASSIGN_OR_RETURN(
      axis, NormalizeAxis(op, attrs.GetInteger("axis").value_or(0), rank));
  for (int d = 0; d < rank; ++d) {
    if (d != axis &&
        indices.shape.GetDimensionSize(d) > data.shape.GetDimensionSize(d)) {
      return Error(op, "indices ", indices.shape.DebugString(), " exceed data ",
                   data.shape.DebugString(), " in dimension ", d);
    }
  }
  return axis;
}

absl::Status GatherElementsMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                                    absl::Span<TensorMetadata> results) {
  INDEX_OPS_RETURN_IF_ERROR(Arity(kGatherElements, args, results, 2));
  INDEX_OPS_RETURN_IF_ERROR(RequireFixedSize(kGatherElements, args[0].dtype));
  if (args[1].dtype != DType::kI32 && args[1].dtype != DType::kI64) {
    return Error(kGatherElements, "indices are ", DTypeName(args[1].dtype),
                 "; they must be i32 or i64");
  }
  INDEX_OPS_RETURN_IF_ERROR(
      PlanGatherElements(args[0], args[1], attrs).status());
  results[0] = TensorMetadata(args[0].dtype, args[1].shape);
  return absl::OkStatus();
}

// out[i...] = data[i...] with the axis coordinate replaced by
// indices[i...]: rows of the indices' shape, data offsets by data's
// strides with the axis left out, the index added per element.
template <typename Index, typename Element>
void GatherElementsImpl(const char* data, const TensorShape& data_shape,
                        const Index* indices, const TensorShape& shape,
                        int axis, char* out) {
  const Dims dims = DimsOf(shape);
  const int rank = dims.size();
  Dims data_strides = DenseStrides(data_shape.GetDimensions());
  const int64_t axis_stride = data_strides[axis];
  const int64_t n = data_shape.GetDimensionSize(axis);
  data_strides[axis] = 0;
  const int64_t inner = dims[rank - 1];
  const bool inner_is_axis = axis == rank - 1;
  int64_t row = 0;
  ForEachRow<1>(dims, {data_strides}, [&](const std::array<int64_t, 1>& at) {
    const Index* idx = indices + row * inner;
    const char* base = data + at[0] * sizeof(Element);
    char* dst = out + row * inner * sizeof(Element);
    for (int64_t j = 0; j < inner; ++j) {
      const int64_t i = idx[j] < 0 ? idx[j] + n : idx[j];
      const int64_t offset = inner_is_axis ? i : i * axis_stride + j;
      std::memcpy(dst + j * sizeof(Element), base + offset * sizeof(Element),
                  sizeof(Element));
    }
    ++row;
  });
}

void GatherElements(OpInvocation& invocation) {
  const DenseHostTensor& data = Input(invocation, 0);
  const DenseHostTensor& indices = Input(invocation, 1);
  absl::StatusOr<int> axis =
      PlanGatherElements(data.metadata(), indices.metadata(), invocation.attrs);
  if (!axis.ok()) {
    return FailAll(invocation, kGatherElements, axis.status().message());
  }
  const int64_t n = data.shape().GetDimensionSize(*axis);
  const int64_t count = indices.NumElements();
  auto run = [&](auto index_tag) {
    using Index = typename decltype(index_tag)::type;
    const Index* idx = indices.elements<Index>().data();
    // Indices are data, seen only here: one outside [-n, n) fails the op.
    for (int64_t i = 0; i < count; ++i) {
      if (idx[i] < -n || idx[i] >= n) {
        return FailAll(
            invocation, kGatherElements,
            absl::StrCat("index ", idx[i], " is out of range for axis ", *axis,
                         " of size ", n));
      }
    }
    AsyncValueRef<DenseHostTensor> result = AllocateResult(
        invocation, kGatherElements, invocation.result_metadata[0]);
    if (!result) return;
    if (count > 0) {
      WithBlock(DTypeSize(data.dtype()), [&](auto element_tag) {
        using Element = typename decltype(element_tag)::type;
        GatherElementsImpl<Index, Element>(
            static_cast<const char*>(data.data()), data.shape(), idx,
            indices.shape(), *axis, static_cast<char*>(result->data()));
      });
    }
    invocation.results[0] = std::move(result);
  };
  if (indices.dtype() == DType::kI32) {
    run(TypeTag<int32_t>{});
  } else {
    run(TypeTag<int64_t>{});
  }
}

//===--- nn.scatter_elements ----------------------------------------------===//

constexpr absl::string_view kScatterElements = "nn.scatter_elements";

// ONNX ScatterElements: data with updates[p] written (or combined by
// `reduction`) at p's position with the axis coordinate indices[p].
absl::Status ScatterElementsMetadata(ArgumentMetadata args,
                                     const OpAttrs& attrs,
                                     absl::Span<TensorMetadata> results) {
  INDEX_OPS_RETURN_IF_ERROR(Arity(kScatterElements, args, results, 3));
  INDEX_OPS_RETURN_IF_ERROR(RequireFixedSize(kScatterElements, args[0].dtype));
  if (args[1].dtype != DType::kI32 && args[1].dtype != DType::kI64) {
    return Error(kScatterElements, "indices are ", DTypeName(args[1].dtype),
                 "; they must be i32 or i64");
  }
  if (args[2].dtype != args[0].dtype || args[2].shape != args[1].shape) {
    return Error(kScatterElements, "updates ", args[2].shape.DebugString(),
                 " of ", DTypeName(args[2].dtype),
                 " must have the indices' shape and data's dtype");
  }
  INDEX_OPS_RETURN_IF_ERROR(
      PlanGatherElements(args[0], args[1], attrs, kScatterElements).status());
  INDEX_OPS_ASSIGN_OR_RETURN(reduction,
                             ScatterReductionOf(kScatterElements, attrs));
  if (reduction != ScatterReduction::kNone && !IsRealNumber(args[0].dtype)) {
    return Error(kScatterElements, "a reduction needs numbers, not ",
                 DTypeName(args[0].dtype));
  }
  results[0] = args[0];
  return absl::OkStatus();
}

void ScatterElements(OpInvocation& invocation) {
  const DenseHostTensor& data = Input(invocation, 0);
  const DenseHostTensor& indices = Input(invocation, 1);
  const DenseHostTensor& updates = Input(invocation, 2);
  absl::StatusOr<int> axis = PlanGatherElements(
      data.metadata(), indices.metadata(), invocation.attrs, kScatterElements);
  absl::StatusOr<ScatterReduction> reduction =
      ScatterReductionOf(kScatterElements, invocation.attrs);
  if (!axis.ok() || !reduction.ok()) {
    return FailAll(invocation, kScatterElements,
                   (!axis.ok() ? axis.status() : reduction.status()).message());
  }
  const int rank = data.shape().GetRank();
  const Dims strides = DenseStrides(data.shape().GetDimensions());
  const int64_t n = data.shape().GetDimensionSize(*axis);
  const int64_t count = indices.NumElements();
  // Every update's offset in data, checking its index first.
  std::vector<int64_t> offsets(count);
  absl::Status status;
  auto offsets_of = [&](auto index_tag) {
    using Index = typename decltype(index_tag)::type;
    const Index* idx = indices.elements<Index>().data();
    for (int64_t p = 0; p < count; ++p) {
      int64_t i = idx[p];
      if (i < -n || i >= n) {
        status = absl::InvalidArgumentError(absl::StrCat(
            "index ", i, " is out of range for axis ", *axis, " of size ", n));
        return;
      }
      if (i < 0) i += n;
      int64_t rest = p, offset = 0;
      for (int d = rank - 1; d >= 0; --d) {
        const int64_t dim = indices.shape().GetDimensionSize(d);
        offset += (d == *axis ? i : rest % dim) * strides[d];
        rest /= dim;
      }
      offsets[p] = offset;
    }
  };
  if (indices.dtype() == DType::kI32) {
    offsets_of(TypeTag<int32_t>{});
  } else {
    offsets_of(TypeTag<int64_t>{});
  }
  if (!status.ok()) {
    return FailAll(invocation, kScatterElements, status.message());
  }
  AsyncValueRef<DenseHostTensor> result = AllocateResult(
      invocation, kScatterElements, invocation.result_metadata[0]);
  if (!result) return;
  if (data.DataSizeInBytes() > 0) {
    std::memcpy(result->data(), data.data(), data.DataSizeInBytes());
  }
  if (*reduction == ScatterReduction::kNone) {
    const size_t size = DTypeSize(data.dtype());
    char* out = static_cast<char*>(result->data());
    const char* in = static_cast<const char*>(updates.data());
    for (int64_t p = 0; p < count; ++p) {
      std::memcpy(out + offsets[p] * size, in + p * size, size);
    }
  } else {
    DispatchRealNumber(data.dtype(), [&](auto tag) {
      using T = typename decltype(tag)::type;
      T* out = static_cast<T*>(result->data());
      const T* in = updates.elements<T>().data();
      for (int64_t p = 0; p < count; ++p) {
        out[offsets[p]] =
            ApplyScatterReduction(*reduction, out[offsets[p]], in[p]);
      }
    });
  }
  invocation.results[0] = std::move(result);
}

//===--- nn.negative_log_likelihood_loss ----------------------------------===//

constexpr absl::string_view kNllLoss = "nn.negative_log_likelihood_loss";

enum class Reduction { kNone, kSum, kMean };

struct NllPlan {
  int64_t batch, classes, inner;
  Reduction reduction;
  std::optional<int64_t> ignore_index;
};

// ONNX NegativeLogLikelihoodLoss: input [N, C, d...] (f32, f64), target
// [N, d...] (i32, i64), an optional weight [C]; `reduction` (mean, sum,
// none), `ignore_index`.
absl::StatusOr<NllPlan> PlanNllLoss(ArgumentMetadata args,
                                    const OpAttrs& attrs) {
  if (args.size() != 2 && args.size() != 3) {
    return Error(kNllLoss, "takes input, target and an optional weight");
  }
  const TensorMetadata& input = args[0];
  const TensorMetadata& target = args[1];
  if (input.dtype != DType::kF32 && input.dtype != DType::kF64) {
    return Error(kNllLoss, "input is ", DTypeName(input.dtype),
                 "; it must be f32 or f64");
  }
  if (target.dtype != DType::kI32 && target.dtype != DType::kI64) {
    return Error(kNllLoss, "target is ", DTypeName(target.dtype),
                 "; it must be i32 or i64");
  }
  const auto dims = input.shape.GetDimensions();
  if (dims.size() < 2) {
    return Error(kNllLoss, "input ", input.shape.DebugString(),
                 " must be N x C x ...");
  }
  Dims expected = {dims[0]};
  expected.insert(expected.end(), dims.begin() + 2, dims.end());
  if (target.shape.GetDimensions() != absl::MakeConstSpan(expected)) {
    return Error(kNllLoss, "target ", target.shape.DebugString(),
                 " is not input ", input.shape.DebugString(),
                 " without its class dimension");
  }
  if (args.size() == 3 &&
      (args[2].dtype != input.dtype ||
       args[2].shape.GetDimensions() != absl::MakeConstSpan(&dims[1], 1))) {
    return Error(kNllLoss, "weight ", args[2].shape.DebugString(), " of ",
                 DTypeName(args[2].dtype), " is not [", dims[1], "] of ",
                 DTypeName(input.dtype));
  }
  NllPlan plan;
  plan.batch = dims[0];
  plan.classes = dims[1];
  plan.inner = 1;
  for (size_t d = 2; d < dims.size(); ++d) plan.inner *= dims[d];
  const std::string reduction(attrs.GetString("reduction").value_or("mean"));
  if (reduction == "none") {
    plan.reduction = Reduction::kNone;
  } else if (reduction == "sum") {
    plan.reduction = Reduction::kSum;
  } else if (reduction == "mean") {
    plan.reduction = Reduction::kMean;
  } else {
    return Error(kNllLoss, "reduction '", reduction,
                 "' is not none, sum or mean");
  }
  plan.ignore_index = attrs.GetInteger("ignore_index");
  return plan;
}

absl::Status NllLossMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  if (results.size() != 1) return Error(kNllLoss, "has 1 result");
  INDEX_OPS_ASSIGN_OR_RETURN(plan, PlanNllLoss(args, attrs));
  results[0] = plan.reduction == Reduction::kNone
                   ? TensorMetadata(args[0].dtype, args[1].shape)
                   : TensorMetadata(args[0].dtype, TensorShape({}));
  return absl::OkStatus();
}

// loss[n, d] = -input[n, target[n, d], d] * weight[target[n, d]] (0 where
// the target is ignore_index); the mean divides the sum by the weights of
// the targets not ignored, as ONNX's reference does.
template <typename T, typename Index>
absl::Status NllLossImpl(const NllPlan& plan, const T* input,
                         const Index* target, const T* weight, T* out) {
  double sum = 0, weights = 0;
  for (int64_t n = 0; n < plan.batch; ++n) {
    for (int64_t j = 0; j < plan.inner; ++j) {
      const int64_t at = n * plan.inner + j;
      const int64_t t = target[at];
      double loss = 0, w = 0;
      if (!plan.ignore_index || t != *plan.ignore_index) {
        if (t < 0 || t >= plan.classes) {
          return absl::InvalidArgumentError(
              absl::StrCat(kNllLoss, ": target ", t, " is out of range for ",
                           plan.classes, " classes"));
        }
        w = weight ? static_cast<double>(weight[t]) : 1.0;
        loss = -static_cast<double>(
                   input[(n * plan.classes + t) * plan.inner + j]) *
               w;
      }
      if (plan.reduction == Reduction::kNone) out[at] = static_cast<T>(loss);
      sum += loss;
      weights += w;
    }
  }
  if (plan.reduction == Reduction::kSum) out[0] = static_cast<T>(sum);
  if (plan.reduction == Reduction::kMean) {
    out[0] = static_cast<T>(sum / weights);
  }
  return absl::OkStatus();
}

void NllLoss(OpInvocation& invocation) {
  const MetadataPointers metadata = ArgumentMetadataOf(invocation);
  absl::StatusOr<NllPlan> plan =
      PlanNllLoss(ArgumentMetadata(metadata), invocation.attrs);
  if (!plan.ok()) return FailAll(invocation, kNllLoss, plan.status().message());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kNllLoss, invocation.result_metadata[0]);
  if (!result) return;
  const DenseHostTensor& input = Input(invocation, 0);
  const DenseHostTensor& target = Input(invocation, 1);
  const DenseHostTensor* weight =
      invocation.arguments.size() == 3 ? &Input(invocation, 2) : nullptr;
  absl::Status status;
  auto run = [&](auto element_tag, auto index_tag) {
    using T = typename decltype(element_tag)::type;
    using Index = typename decltype(index_tag)::type;
    status = NllLossImpl<T, Index>(
        *plan, input.elements<T>().data(), target.elements<Index>().data(),
        weight ? weight->elements<T>().data() : nullptr,
        result->elements<T>().data());
  };
  auto with_index = [&](auto element_tag) {
    if (target.dtype() == DType::kI32) {
      run(element_tag, TypeTag<int32_t>{});
    } else {
      run(element_tag, TypeTag<int64_t>{});
    }
  };
  if (input.dtype() == DType::kF32) {
    with_index(TypeTag<float>{});
  } else {
    with_index(TypeTag<double>{});
  }
  if (!status.ok()) return FailAll(invocation, kNllLoss, status.message());
  invocation.results[0] = std::move(result);
}

//===--- nn.depth_to_space, nn.space_to_depth -----------------------------===//

// The rearrangement as a copy: the result viewed as 6-D (dense), and the
// strides of x that each of its dimensions steps by.
struct BlockView {
  Dims result, view, src_strides;
};

template <bool kToSpace>
constexpr absl::string_view BlockName() {
  return kToSpace ? "nn.depth_to_space" : "nn.space_to_depth";
}

template <bool kToSpace>
absl::StatusOr<BlockView> PlanBlocks(const TensorMetadata& x,
                                     const OpAttrs& attrs) {
  constexpr absl::string_view kOp = BlockName<kToSpace>();
  if (x.shape.GetRank() != 4) {
    return Error(kOp, "x ", x.shape.DebugString(), " must be N x C x H x W");
  }
  INDEX_OPS_ASSIGN_OR_RETURN(b, RequiredInteger(kOp, attrs, "blocksize"));
  if (b <= 0) return Error(kOp, "blocksize ", b, " must be positive");
  const int64_t n = x.shape.GetDimensionSize(0),
                c = x.shape.GetDimensionSize(1),
                h = x.shape.GetDimensionSize(2),
                w = x.shape.GetDimensionSize(3);
  const int64_t hw = h * w, chw = c * hw;
  BlockView plan;
  if constexpr (kToSpace) {
    const absl::string_view mode = attrs.GetString("mode").value_or("DCR");
    if (mode != "DCR" && mode != "CRD") {
      return Error(kOp, "mode \"", mode, "\" is not DCR or CRD");
    }
    int64_t bb;
    if (__builtin_mul_overflow(b, b, &bb) || c % bb != 0) {
      return Error(kOp, "channels ", c, " are not a multiple of blocksize ", b,
                   " squared");
    }
    const int64_t depth = c / bb;
    if (!CheckedProduct({n, depth, h, b, w, b})) {
      return Error(kOp, "the result is too large");
    }
    plan.result = {n, depth, h * b, w * b};
    plan.view = {n, depth, h, b, w, b};
    // x as [N, b1, b2, C', H, W] (DCR) or [N, C', b1, b2, H, W] (CRD),
    // read in the order [N, C', H, b1, W, b2].
    if (mode == "DCR") {
      plan.src_strides = {chw, hw, w, b * depth * hw, 1, depth * hw};
    } else {
      plan.src_strides = {chw, bb * hw, w, b * hw, 1, hw};
    }
  } else {
    if (h % b != 0 || w % b != 0) {
      return Error(kOp, "height ", h, " and width ", w,
                   " are not multiples of blocksize ", b);
    }
    const int64_t ho = h / b, wo = w / b;
    if (!CheckedProduct({c, b, b}))
      return Error(kOp, "blocksize ", b, " is too large");
    plan.result = {n, c * b * b, ho, wo};
    plan.view = {n, b, b, c, ho, wo};
    // x as [N, C, H', b1, W', b2], read in the order [N, b1, b2, C, H', W'].
    plan.src_strides = {chw, w, 1, hw, b * w, b};
  }
  return plan;
}

template <bool kToSpace>
absl::Status BlocksMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = BlockName<kToSpace>();
  INDEX_OPS_RETURN_IF_ERROR(Arity(kOp, args, results, 1));
  INDEX_OPS_RETURN_IF_ERROR(RequireFixedSize(kOp, args[0].dtype));
  INDEX_OPS_ASSIGN_OR_RETURN(plan, PlanBlocks<kToSpace>(args[0], attrs));
  results[0] = TensorMetadata(args[0].dtype, plan.result);
  return absl::OkStatus();
}

template <bool kToSpace>
void Blocks(OpInvocation& invocation) {
  constexpr absl::string_view kOp = BlockName<kToSpace>();
  const DenseHostTensor& x = Input(invocation, 0);
  absl::StatusOr<BlockView> plan =
      PlanBlocks<kToSpace>(x.metadata(), invocation.attrs);
  if (!plan.ok()) return FailAll(invocation, kOp, plan.status().message());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kOp, invocation.result_metadata[0]);
  if (!result) return;
  CopyView(static_cast<const char*>(x.data()), plan->src_strides,
           static_cast<char*>(result->data()), DenseStrides(plan->view),
           plan->view, DTypeSize(x.dtype()));
  invocation.results[0] = std::move(result);
}

//===--- nn.hardmax -------------------------------------------------------===//

constexpr absl::string_view kHardmax = "nn.hardmax";

absl::Status HardmaxMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  INDEX_OPS_RETURN_IF_ERROR(Arity(kHardmax, args, results, 1));
  INDEX_OPS_RETURN_IF_ERROR(RequireF32(kHardmax, args));
  INDEX_OPS_RETURN_IF_ERROR(
      PlanAxis(kHardmax, args[0].shape, attrs, -1).status());
  results[0] = args[0];
  return absl::OkStatus();
}

void Hardmax(OpInvocation& invocation) {
  const DenseHostTensor& x = Input(invocation, 0);
  absl::StatusOr<AxisSplit> split =
      PlanAxis(kHardmax, x.shape(), invocation.attrs, -1);
  if (!split.ok())
    return FailAll(invocation, kHardmax, split.status().message());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kHardmax, invocation.result_metadata[0]);
  if (!result) return;
  const AxisSplit& s = *split;
  const float* in = x.elements<float>().data();
  float* out = result->elements<float>().data();
  std::fill_n(out, s.outer * s.n * s.inner, 0.0f);
  std::vector<float> best(s.inner);
  std::vector<int64_t> index(s.inner);
  for (int64_t o = 0; o < s.outer && s.n > 0; ++o) {
    const float* slice = in + o * s.n * s.inner;
    std::copy_n(slice, s.inner, best.data());
    std::fill(index.begin(), index.end(), 0);
    for (int64_t k = 1; k < s.n; ++k) {
      const float* row = slice + k * s.inner;
      for (int64_t j = 0; j < s.inner; ++j) {
        if (row[j] > best[j]) {
          best[j] = row[j];
          index[j] = k;
        }
      }
    }
    float* dst = out + o * s.n * s.inner;
    for (int64_t j = 0; j < s.inner; ++j) dst[index[j] * s.inner + j] = 1.0f;
  }
  invocation.results[0] = std::move(result);
}

//===--- nn.top_k ---------------------------------------------------------===//

constexpr absl::string_view kTopK = "nn.top_k";

struct TopKPlan {
  AxisSplit split;
  int64_t k;
};

absl::StatusOr<TopKPlan> PlanTopK(const TensorMetadata& x,
                                  const OpAttrs& attrs) {
  INDEX_OPS_ASSIGN_OR_RETURN(k, RequiredInteger(kTopK, attrs, "k"));
  INDEX_OPS_ASSIGN_OR_RETURN(split, PlanAxis(kTopK, x.shape, attrs, -1));
  if (k < 0 || k > split.n) {
    return Error(kTopK, "k = ", k, " is not in [0, ", split.n, "] (axis ",
                 split.axis, " of ", x.shape.DebugString(), ")");
  }
  return TopKPlan{split, k};
}

absl::Status TopKMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                          absl::Span<TensorMetadata> results) {
  INDEX_OPS_RETURN_IF_ERROR(Arity(kTopK, args, results, 1, 2));
  INDEX_OPS_RETURN_IF_ERROR(RequireRealNumber(kTopK, args[0].dtype));
  INDEX_OPS_ASSIGN_OR_RETURN(plan, PlanTopK(args[0], attrs));
  Dims dims = DimsOf(args[0].shape);
  dims[plan.split.axis] = plan.k;
  results[0] = TensorMetadata(args[0].dtype, dims);
  results[1] = TensorMetadata(DType::kI64, dims);
  return absl::OkStatus();
}

// a ranks before b: the larger (`largest`) or smaller value, NaN above
// every number, and of equal values the lower index.
template <typename T>
struct TopKOrder {
  const T* values;
  bool largest;
  bool operator()(int64_t a, int64_t b) const {
    const T va = values[a], vb = values[b];
    if constexpr (std::is_floating_point_v<T>) {
      const bool nan_a = std::isnan(va), nan_b = std::isnan(vb);
      if (nan_a || nan_b) {
        if (nan_a && nan_b) return a < b;
        return largest ? nan_a : nan_b;
      }
    }
    if (va != vb) return largest ? va > vb : va < vb;
    return a < b;
  }
};

template <typename T>
void TopKImpl(const T* x, const TopKPlan& plan, bool largest, bool sorted,
              T* values, int64_t* indices) {
  const AxisSplit& s = plan.split;
  const int64_t k = plan.k;
  std::vector<T> slice(s.n);
  std::vector<int64_t> order(s.n);
  const TopKOrder<T> before{slice.data(), largest};
  for (int64_t o = 0; o < s.outer; ++o) {
    for (int64_t j = 0; j < s.inner; ++j) {
      const T* src = x + o * s.n * s.inner + j;
      for (int64_t i = 0; i < s.n; ++i) slice[i] = src[i * s.inner];
      std::iota(order.begin(), order.end(), int64_t{0});
      if (sorted) {
        std::partial_sort(order.begin(), order.begin() + k, order.end(),
                          before);
      } else {
        // The k best, in the order of their indices.
        if (k < s.n) {
          std::nth_element(order.begin(), order.begin() + k, order.end(),
                           before);
        }
        std::sort(order.begin(), order.begin() + k);
      }
      T* value_out = values + o * k * s.inner + j;
      int64_t* index_out = indices + o * k * s.inner + j;
      for (int64_t i = 0; i < k; ++i) {
        value_out[i * s.inner] = slice[order[i]];
        index_out[i * s.inner] = order[i];
      }
    }
  }
}

void TopK(OpInvocation& invocation) {
  const DenseHostTensor& x = Input(invocation, 0);
  absl::StatusOr<TopKPlan> plan = PlanTopK(x.metadata(), invocation.attrs);
  if (!plan.ok()) return FailAll(invocation, kTopK, plan.status().message());
  const bool largest = invocation.attrs.GetInteger("largest").value_or(1) != 0;
  const bool sorted = invocation.attrs.GetInteger("sorted").value_or(1) != 0;
  AsyncValueRef<DenseHostTensor> values =
      AllocateResult(invocation, kTopK, invocation.result_metadata[0]);
  if (!values) return;
  AsyncValueRef<DenseHostTensor> indices =
      AllocateResult(invocation, kTopK, invocation.result_metadata[1]);
  if (!indices) return;
  DispatchRealNumber(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    TopKImpl<T>(x.elements<T>().data(), *plan, largest, sorted,
                values->elements<T>().data(),
                indices->elements<int64_t>().data());
  });
  invocation.results[0] = std::move(values);
  invocation.results[1] = std::move(indices);
}

}  // namespace

void RegisterIndexOps(OpRegistry& registry) {
  registry.AddOp("nn.arg_max", ArgMetadata<true>);
  registry.AddDispatch("nn.arg_max", "cpu", ArgOp<true>);
  registry.AddOp("nn.arg_min", ArgMetadata<false>);
  registry.AddDispatch("nn.arg_min", "cpu", ArgOp<false>);
  registry.AddOp("nn.cum_sum", CumSumMetadata);
  registry.AddDispatch("nn.cum_sum", "cpu", CumSum);
  registry.AddOp("nn.tile", TileMetadata);
  registry.AddDispatch("nn.tile", "cpu", Tile);
  registry.AddOp("nn.trilu", TriluMetadata);
  registry.AddDispatch("nn.trilu", "cpu", Trilu);
  registry.AddOp("nn.scatter_elements", ScatterElementsMetadata);
  registry.AddDispatch("nn.scatter_elements", "cpu", ScatterElements);
  registry.AddOp("nn.negative_log_likelihood_loss", NllLossMetadata);
  registry.AddDispatch("nn.negative_log_likelihood_loss", "cpu", NllLoss);
  registry.AddOp("nn.gather_elements", GatherElementsMetadata);
  registry.AddDispatch("nn.gather_elements", "cpu", GatherElements);
  registry.AddOp("nn.depth_to_space", BlocksMetadata<true>);
  registry.AddDispatch("nn.depth_to_space", "cpu", Blocks<true>);
  registry.AddOp("nn.space_to_depth", BlocksMetadata<false>);
  registry.AddDispatch("nn.space_to_depth", "cpu", Blocks<false>);
  registry.AddOp("nn.hardmax", HardmaxMetadata);
  registry.AddDispatch("nn.hardmax", "cpu", Hardmax);
  registry.AddOp("nn.top_k", TopKMetadata);
  registry.AddDispatch("nn.top_k", "cpu", TopK);
}

}  // namespace asyncrt::nn
