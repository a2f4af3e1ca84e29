// Shape and data-movement nn.* ops on the CPU: reshape, flatten, squeeze,
// unsqueeze, transpose, expand, concat, split, slice, gather, where, cast,
// pad, eye_like, shape, size and constant_of_shape (ONNX semantics; constant
// inputs are
// attributes, see nn_ops.h).
//
// Data movement is dtype-generic: elements move by byte size, so the ops
// work for every fixed-size dtype. Ops that only relabel the shape
// (reshape, flatten, squeeze, unsqueeze) share the argument's buffer. Other
// copies merge dimensions that are contiguous in source and destination
// first and move whole runs with memcpy; strided runs use fixed-size
// element copies that compile to plain loads and stores.
#include <algorithm>
#include <array>
#include <cmath>
#include <complex>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/backends/nn_ops.h"
#include "backends/cpu/nn/copy_util.h"
#include "backends/cpu/nn/nn_util.h"

// Shape functions check many things in a row; these keep each check to a
// line. Local to this file.
#define SHAPE_OPS_RETURN_IF_ERROR(expr) \
  if (absl::Status status = (expr); !status.ok()) return status
// Declares `name` as a const reference to the value of `expr` (a
// StatusOr), or returns its error.
#define SHAPE_OPS_ASSIGN_OR_RETURN(name, expr)               \
  auto name##_or = (expr);                                   \
  if (!name##_or.ok()) return std::move(name##_or).status(); \
  const auto& name = *name##_or

namespace asyncrt::nn {
namespace {

using ImplFn = void (*)(OpInvocation& invocation,
                        absl::Span<const TensorMetadata> results);
using IntArray = absl::InlinedVector<int64_t, 4>;

//===--- Helpers ----------------------------------------------------------===//

template <typename... Parts>
absl::Status Error(absl::string_view op, const Parts&... parts) {
  return OpError(op, absl::StrCat(parts...));
}

const DenseHostTensor& Arg(const OpInvocation& invocation, size_t i) {
  return static_cast<const DenseHostTensor&>(invocation.argument(i));
}

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ", "), "]");
}

absl::Status Arity(absl::string_view op, ArgumentMetadata args,
                   absl::Span<TensorMetadata> results, size_t num_args) {
  if (args.size() != num_args || results.size() != 1) {
    return Error(
        op, "takes ", num_args, num_args == 1 ? " argument" : " arguments",
        " and has 1 result; got ", args.size(), " and ", results.size());
  }
  return absl::OkStatus();
}

// Data movement copies bytes, which is wrong for std::string elements.
absl::Status RequireFixedSize(absl::string_view op, DType dtype) {
  if (dtype == DType::kString || dtype == DType::kInvalid) {
    return Error(op, "dtype ", DTypeName(dtype), " is not supported");
  }
  return absl::OkStatus();
}

// The checks every one-argument data-movement op starts with.
absl::Status MoveOp(absl::string_view op, ArgumentMetadata args,
                    absl::Span<TensorMetadata> results) {
  SHAPE_OPS_RETURN_IF_ERROR(Arity(op, args, results, 1));
  return RequireFixedSize(op, args[0].dtype);
}

absl::StatusOr<IntArray> RequiredArray(absl::string_view op,
                                       const OpAttrs& attrs,
                                       absl::string_view name) {
  auto values = attrs.GetIntegerArray(name);
  if (!values) {
    return Error(op, "attribute `", name, "` (an integer array) is required");
  }
  return *std::move(values);
}

// A number attribute of any type (f32, f64 or an integer), widened.
double NumberAttr(const OpAttrs& attrs, absl::string_view name,
                  double fallback) {
  if (auto value = attrs.Get<float>(name)) return *value;
  if (auto value = attrs.Get<double>(name)) return *value;
  if (auto value = attrs.GetInteger(name)) return static_cast<double>(*value);
  return fallback;
}

// Normalizes distinct axes of `rank`; an error names a repeated one.
absl::StatusOr<Dims> NormalizeAxes(absl::string_view op,
                                   absl::Span<const int64_t> axes, int rank) {
  // NormalizeAxis accepts axis 0 of a scalar; no op here has one.
  if (rank == 0 && !axes.empty()) {
    return Error(op, "axis ", axes[0], " is out of range for rank 0");
  }
  Dims result;
  for (int64_t axis : axes) {
    SHAPE_OPS_ASSIGN_OR_RETURN(normalized, NormalizeAxis(op, axis, rank));
    if (std::find(result.begin(), result.end(), normalized) != result.end()) {
      return Error(op, "axis ", axis, " is repeated");
    }
    result.push_back(normalized);
  }
  return result;
}

// The result as a new tensor over argument 0's buffer (no copy).
void ShareBuffer(OpInvocation& invocation,
                 absl::Span<const TensorMetadata> results) {
  invocation.results[0] = MakeAvailableAsyncValueRef<DenseHostTensor>(
      results[0], Arg(invocation, 0).buffer());
}

// Calls `kImpl` with the result metadata, which the core runtime always
// provides for an op with a shape function (running it late if an
// argument's metadata was unknown when the op was issued).
template <ImplFn kImpl>
void Dispatch(OpInvocation& invocation) {
  kImpl(invocation, invocation.result_metadata);
}

//===--- Reshape, flatten, squeeze, unsqueeze (views) ---------------------===//

absl::Status ReshapeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.reshape";
  SHAPE_OPS_RETURN_IF_ERROR(MoveOp(kOp, args, results));
  SHAPE_OPS_ASSIGN_OR_RETURN(shape, RequiredArray(kOp, attrs, "shape"));
  const bool allow_zero = attrs.GetInteger("allowzero").value_or(0) != 0;
  const TensorShape& in = args[0].shape;
  Dims dims;
  int inferred = -1;
  bool has_zero = false;
  for (size_t i = 0; i < shape.size(); ++i) {
    int64_t dim = shape[i];
    if (dim == -1) {
      if (inferred >= 0) {
        return Error(kOp, "-1 appears more than once in shape ",
                     DimsString(shape));
      }
      inferred = static_cast<int>(i);
      dim = 1;
    } else if (dim == 0 && !allow_zero) {
      // 0 copies the input's dimension.
      if (static_cast<int>(i) >= in.GetRank()) {
        return Error(kOp, "shape[", i, "] is 0 (copy) but the input ",
                     in.DebugString(), " has rank ", in.GetRank());
      }
      dim = in.GetDimensionSize(static_cast<int>(i));
    } else if (dim < 0) {
      return Error(kOp, "shape ", DimsString(shape),
                   " has a negative dimension");
    }
    has_zero |= dim == 0;
    dims.push_back(dim);
  }
  if (allow_zero && has_zero && inferred >= 0) {
    return Error(kOp, "shape has both 0 and -1 with allowzero = 1");
  }
  const int64_t count = in.GetNumElements();
  std::optional<int64_t> known = CheckedProduct(dims);
  if (!known) return Error(kOp, "shape ", DimsString(shape), " is too large");
  if (inferred >= 0) {
    if (*known == 0 || count % *known != 0) {
      return Error(kOp, "cannot infer the -1 in ", DimsString(shape), " for ",
                   in.DebugString(), " (", count, " elements)");
    }
    dims[inferred] = count / *known;
  } else if (*known != count) {
    return Error(kOp, "cannot reshape ", in.DebugString(), " (", count,
                 " elements) to ", DimsString(dims), " (", *known,
                 " elements)");
  }
  results[0] = TensorMetadata(args[0].dtype, dims);
  return absl::OkStatus();
}

absl::Status FlattenMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.flatten";
  SHAPE_OPS_RETURN_IF_ERROR(MoveOp(kOp, args, results));
  const int rank = args[0].shape.GetRank();
  int64_t axis = attrs.GetInteger("axis").value_or(1);
  // Flatten's axis ranges over [-rank, rank]: rank makes [n, 1].
  if (axis < -rank || axis > rank) {
    return Error(kOp, "axis ", axis, " is out of range for rank ", rank);
  }
  if (axis < 0) axis += rank;
  auto dims = args[0].shape.GetDimensions();
  results[0] = TensorMetadata(
      args[0].dtype, {Product(dims, 0, axis), Product(dims, axis, rank)});
  return absl::OkStatus();
}

absl::Status SqueezeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.squeeze";
  SHAPE_OPS_RETURN_IF_ERROR(MoveOp(kOp, args, results));
  const TensorShape& in = args[0].shape;
  const int rank = in.GetRank();
  std::vector<bool> drop(rank, false);
  if (auto axes = attrs.GetIntegerArray("axes")) {
    SHAPE_OPS_ASSIGN_OR_RETURN(normalized, NormalizeAxes(kOp, *axes, rank));
    for (int64_t axis : normalized) {
      if (in.GetDimensionSize(axis) != 1) {
        return Error(kOp, "cannot squeeze axis ", axis, " of size ",
                     in.GetDimensionSize(axis), " in ", in.DebugString());
      }
      drop[axis] = true;
    }
  } else {
    for (int d = 0; d < rank; ++d) drop[d] = in.GetDimensionSize(d) == 1;
  }
  Dims dims;
  for (int d = 0; d < rank; ++d) {
    if (!drop[d]) dims.push_back(in.GetDimensionSize(d));
  }
  results[0] = TensorMetadata(args[0].dtype, dims);
  return absl::OkStatus();
}

absl::Status UnsqueezeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                               absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.unsqueeze";
  SHAPE_OPS_RETURN_IF_ERROR(MoveOp(kOp, args, results));
  SHAPE_OPS_ASSIGN_OR_RETURN(axes, RequiredArray(kOp, attrs, "axes"));
  const TensorShape& in = args[0].shape;
  // Axes index the result, whose rank counts the new dimensions.
  const int rank = in.GetRank() + static_cast<int>(axes.size());
  SHAPE_OPS_ASSIGN_OR_RETURN(normalized, NormalizeAxes(kOp, axes, rank));
  Dims dims(rank, 1);
  std::vector<bool> inserted(rank, false);
  for (int64_t axis : normalized) inserted[axis] = true;
  for (int d = 0, i = 0; d < rank; ++d) {
    if (!inserted[d]) dims[d] = in.GetDimensionSize(i++);
  }
  results[0] = TensorMetadata(args[0].dtype, dims);
  return absl::OkStatus();
}

//===--- Transpose, expand ------------------------------------------------===//

absl::StatusOr<Dims> Permutation(const OpAttrs& attrs, int rank) {
  Dims perm;
  if (auto values = attrs.GetIntegerArray("perm")) {
    perm.assign(values->begin(), values->end());
  } else {
    for (int d = rank - 1; d >= 0; --d) perm.push_back(d);
  }
  std::vector<bool> seen(rank, false);
  bool valid = static_cast<int>(perm.size()) == rank;
  for (int64_t p : perm) {
    valid = valid && p >= 0 && p < rank && !seen[p];
    if (valid) seen[p] = true;
  }
  if (!valid) {
    return Error("nn.transpose", "perm ", DimsString(perm),
                 " is not a permutation of rank ", rank);
  }
  return perm;
}

absl::Status TransposeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                               absl::Span<TensorMetadata> results) {
  SHAPE_OPS_RETURN_IF_ERROR(MoveOp("nn.transpose", args, results));
  const TensorShape& in = args[0].shape;
  SHAPE_OPS_ASSIGN_OR_RETURN(perm, Permutation(attrs, in.GetRank()));
  Dims dims;
  for (int64_t p : perm) dims.push_back(in.GetDimensionSize(p));
  results[0] = TensorMetadata(args[0].dtype, dims);
  return absl::OkStatus();
}

void Transpose(OpInvocation& invocation,
               absl::Span<const TensorMetadata> results) {
  const DenseHostTensor& x = Arg(invocation, 0);
  const Dims perm = *Permutation(invocation.attrs, x.shape().GetRank());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.transpose", results[0]);
  if (!result) return;
  const Dims in_strides = DenseStrides(x.shape().GetDimensions());
  Dims src_strides;
  for (int64_t p : perm) src_strides.push_back(in_strides[p]);
  auto dims = results[0].shape.GetDimensions();
  CopyView(static_cast<const char*>(x.data()), src_strides,
           static_cast<char*>(result->data()), DenseStrides(dims), dims,
           DTypeSize(x.dtype()));
  invocation.results[0] = std::move(result);
}

absl::Status ExpandMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.expand";
  SHAPE_OPS_RETURN_IF_ERROR(MoveOp(kOp, args, results));
  SHAPE_OPS_ASSIGN_OR_RETURN(shape, RequiredArray(kOp, attrs, "shape"));
  if (!CheckedProduct(shape)) {
    return Error(kOp, "invalid shape ", DimsString(shape));
  }
  SHAPE_OPS_ASSIGN_OR_RETURN(
      out, BroadcastShapes(kOp, args[0].shape, TensorShape(shape)));
  results[0] = TensorMetadata(args[0].dtype, out);
  return absl::OkStatus();
}

void Expand(OpInvocation& invocation,
            absl::Span<const TensorMetadata> results) {
  const DenseHostTensor& x = Arg(invocation, 0);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.expand", results[0]);
  if (!result) return;
  const TensorShape& out = results[0].shape;
  CopyView(static_cast<const char*>(x.data()), BroadcastStrides(x.shape(), out),
           static_cast<char*>(result->data()),
           DenseStrides(out.GetDimensions()), out.GetDimensions(),
           DTypeSize(x.dtype()));
  invocation.results[0] = std::move(result);
}

//===--- Concat, split ----------------------------------------------------===//

absl::Status ConcatMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.concat";
  if (args.empty() || results.size() != 1) {
    return Error(kOp, "takes at least 1 argument and has 1 result");
  }
  SHAPE_OPS_RETURN_IF_ERROR(RequireFixedSize(kOp, args[0].dtype));
  std::optional<int64_t> axis_attr = attrs.GetInteger("axis");
  if (!axis_attr) return Error(kOp, "attribute `axis` is required");
  const TensorShape& first = args[0].shape;
  if (first.GetRank() == 0) return Error(kOp, "arguments must have rank >= 1");
  SHAPE_OPS_ASSIGN_OR_RETURN(axis,
                             NormalizeAxis(kOp, *axis_attr, first.GetRank()));
  Dims dims(first.GetDimensions().begin(), first.GetDimensions().end());
  for (size_t i = 1; i < args.size(); ++i) {
    const TensorShape& shape = args[i].shape;
    if (args[i].dtype != args[0].dtype) {
      return Error(kOp, "argument ", i, " is ", DTypeName(args[i].dtype),
                   ", not ", DTypeName(args[0].dtype));
    }
    bool match = shape.GetRank() == first.GetRank();
    for (int d = 0; match && d < first.GetRank(); ++d) {
      match = d == axis || shape.GetDimensionSize(d) == dims[d];
    }
    if (!match) {
      return Error(kOp, "argument ", i, " has shape ", shape.DebugString(),
                   ", which differs from ", first.DebugString(),
                   " outside axis ", axis);
    }
    dims[axis] += shape.GetDimensionSize(axis);
  }
  results[0] = TensorMetadata(args[0].dtype, dims);
  return absl::OkStatus();
}

// Copies each part to or from its place along `axis` in `whole` (dense,
// the concatenation); merged dimensions make each row one memcpy.
void MoveParts(bool split, const DenseHostTensor& whole, int axis,
               absl::Span<const TensorShape* const> shapes,
               absl::Span<char* const> parts) {
  const size_t element_size = DTypeSize(whole.dtype());
  const Dims strides = DenseStrides(whole.shape().GetDimensions());
  char* at = const_cast<char*>(static_cast<const char*>(whole.data()));
  for (size_t i = 0; i < parts.size(); ++i) {
    auto dims = shapes[i]->GetDimensions();
    const Dims dense = DenseStrides(dims);
    // Split writes the parts; concat writes `whole`, which it allocated.
    if (split) {
      CopyView(at, strides, parts[i], dense, dims, element_size);
    } else {
      CopyView(parts[i], dense, at, strides, dims, element_size);
    }
    at += dims[axis] * strides[axis] * element_size;
  }
}

void Concat(OpInvocation& invocation,
            absl::Span<const TensorMetadata> results) {
  const TensorShape& out = results[0].shape;
  const int axis = *NormalizeAxis(
      "nn.concat", *invocation.attrs.GetInteger("axis"), out.GetRank());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.concat", results[0]);
  if (!result) return;
  absl::InlinedVector<const TensorShape*, 4> shapes;
  absl::InlinedVector<char*, 4> parts;
  for (size_t i = 0; i < invocation.arguments.size(); ++i) {
    shapes.push_back(&Arg(invocation, i).shape());
    parts.push_back(
        const_cast<char*>(static_cast<const char*>(Arg(invocation, i).data())));
  }
  MoveParts(/*split=*/false, *result, axis, shapes, parts);
  invocation.results[0] = std::move(result);
}

// The sizes of nn.split's parts along `axis`.
absl::StatusOr<Dims> SplitSizes(absl::string_view op, const OpAttrs& attrs,
                                const TensorShape& shape, int axis,
                                size_t parts) {
  const int64_t dim = shape.GetDimensionSize(axis);
  if (auto split = attrs.GetIntegerArray("split")) {
    if (split->size() != parts) {
      return Error(op, "split has ", split->size(), " sizes for ", parts,
                   " results");
    }
    int64_t sum = 0;
    for (int64_t size : *split) {
      if (size < 0) return Error(op, "split sizes must not be negative");
      sum += size;
    }
    if (sum != dim) {
      return Error(op, "split sizes ", DimsString(*split), " sum to ", sum,
                   ", not ", dim, " (axis ", axis, " of ", shape.DebugString(),
                   ")");
    }
    return Dims(split->begin(), split->end());
  }
  if (dim % static_cast<int64_t>(parts) != 0) {
    return Error(op, "axis ", axis, " of ", shape.DebugString(),
                 " does not split into ", parts, " equal parts");
  }
  return Dims(parts, dim / static_cast<int64_t>(parts));
}

absl::Status SplitMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                           absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.split";
  if (args.size() != 1 || results.empty()) {
    return Error(kOp, "takes 1 argument and has at least 1 result");
  }
  SHAPE_OPS_RETURN_IF_ERROR(RequireFixedSize(kOp, args[0].dtype));
  const TensorShape& in = args[0].shape;
  if (in.GetRank() == 0) return Error(kOp, "the input must have rank >= 1");
  SHAPE_OPS_ASSIGN_OR_RETURN(
      axis,
      NormalizeAxis(kOp, attrs.GetInteger("axis").value_or(0), in.GetRank()));
  SHAPE_OPS_ASSIGN_OR_RETURN(sizes,
                             SplitSizes(kOp, attrs, in, axis, results.size()));
  Dims dims(in.GetDimensions().begin(), in.GetDimensions().end());
  for (size_t i = 0; i < results.size(); ++i) {
    dims[axis] = sizes[i];
    results[i] = TensorMetadata(args[0].dtype, dims);
  }
  return absl::OkStatus();
}

void Split(OpInvocation& invocation, absl::Span<const TensorMetadata> results) {
  const DenseHostTensor& x = Arg(invocation, 0);
  const int axis = *NormalizeAxis(
      "nn.split", invocation.attrs.GetInteger("axis").value_or(0),
      x.shape().GetRank());
  absl::InlinedVector<AsyncValueRef<DenseHostTensor>, 4> outputs;
  absl::InlinedVector<const TensorShape*, 4> shapes;
  absl::InlinedVector<char*, 4> parts;
  for (const TensorMetadata& metadata : results) {
    outputs.push_back(AllocateResult(invocation, "nn.split", metadata));
    if (!outputs.back()) return;
    shapes.push_back(&metadata.shape);
    parts.push_back(static_cast<char*>(outputs.back()->data()));
  }
  MoveParts(/*split=*/true, x, axis, shapes, parts);
  for (size_t i = 0; i < outputs.size(); ++i) {
    invocation.results[i] = std::move(outputs[i]);
  }
}

//===--- Slice ------------------------------------------------------------===//

struct SliceSpec {
  Dims start, step, count;  // Per dimension of the input.
};

absl::StatusOr<SliceSpec> SliceParams(const OpAttrs& attrs,
                                      const TensorShape& shape) {
  constexpr absl::string_view kOp = "nn.slice";
  SHAPE_OPS_ASSIGN_OR_RETURN(starts, RequiredArray(kOp, attrs, "starts"));
  SHAPE_OPS_ASSIGN_OR_RETURN(ends, RequiredArray(kOp, attrs, "ends"));
  const size_t n = starts.size();
  auto axes = attrs.GetIntegerArray("axes");
  auto steps = attrs.GetIntegerArray("steps");
  if (ends.size() != n || (axes && axes->size() != n) ||
      (steps && steps->size() != n)) {
    return Error(kOp, "starts, ends, axes and steps differ in length");
  }
  Dims axis_list;
  for (size_t i = 0; i < n; ++i) {
    axis_list.push_back(axes ? (*axes)[i] : static_cast<int64_t>(i));
  }
  const int rank = shape.GetRank();
  SHAPE_OPS_ASSIGN_OR_RETURN(normalized, NormalizeAxes(kOp, axis_list, rank));
  SliceSpec spec{
      Dims(rank, 0), Dims(rank, 1),
      Dims(shape.GetDimensions().begin(), shape.GetDimensions().end())};
  for (size_t i = 0; i < n; ++i) {
    const int axis = normalized[i];
    const int64_t dim = shape.GetDimensionSize(axis);
    const int64_t step = steps ? (*steps)[i] : 1;
    if (step == 0) return Error(kOp, "steps must not be 0");
    int64_t start = starts[i], end = ends[i], count = 0;
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    // ONNX clamping: to [0, dim] going forward, [-1, dim - 1] going back.
    if (dim == 0) {
      start = 0;
    } else if (step > 0) {
      start = std::clamp<int64_t>(start, 0, dim);
      end = std::clamp<int64_t>(end, 0, dim);
      count = end > start ? (end - start + step - 1) / step : 0;
    } else {
      start = std::clamp<int64_t>(start, 0, dim - 1);
      end = std::clamp<int64_t>(end, -1, dim - 1);
      count = start > end ? (start - end - step - 1) / -step : 0;
    }
    spec.start[axis] = start;
    spec.step[axis] = step;
    spec.count[axis] = count;
  }
  return spec;
}

absl::Status SliceMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                           absl::Span<TensorMetadata> results) {
  SHAPE_OPS_RETURN_IF_ERROR(MoveOp("nn.slice", args, results));
  SHAPE_OPS_ASSIGN_OR_RETURN(spec, SliceParams(attrs, args[0].shape));
  results[0] = TensorMetadata(args[0].dtype, spec.count);
  return absl::OkStatus();
}

void Slice(OpInvocation& invocation, absl::Span<const TensorMetadata> results) {
  const DenseHostTensor& x = Arg(invocation, 0);
  const SliceSpec spec = *SliceParams(invocation.attrs, x.shape());
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.slice", results[0]);
  if (!result) return;
  if (results[0].shape.GetNumElements() > 0) {
    // A view of the input: offset to the first element, strides scaled by
    // the steps (negative ones walk backwards).
    const Dims strides = DenseStrides(x.shape().GetDimensions());
    Dims src_strides(strides.size());
    int64_t offset = 0;
    for (size_t d = 0; d < strides.size(); ++d) {
      offset += spec.start[d] * strides[d];
      src_strides[d] = spec.step[d] * strides[d];
    }
    const size_t element_size = DTypeSize(x.dtype());
    CopyView(static_cast<const char*>(x.data()) + offset * element_size,
             src_strides, static_cast<char*>(result->data()),
             DenseStrides(spec.count), spec.count, element_size);
  }
  invocation.results[0] = std::move(result);
}

//===--- Gather, where ----------------------------------------------------===//

absl::Status GatherMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.gather";
  SHAPE_OPS_RETURN_IF_ERROR(Arity(kOp, args, results, 2));
  SHAPE_OPS_RETURN_IF_ERROR(RequireFixedSize(kOp, args[0].dtype));
  if (args[1].dtype != DType::kI32 && args[1].dtype != DType::kI64) {
    return Error(kOp, "indices are ", DTypeName(args[1].dtype),
                 "; they must be i32 or i64");
  }
  const TensorShape& data = args[0].shape;
  if (data.GetRank() == 0) return Error(kOp, "data must have rank >= 1");
  SHAPE_OPS_ASSIGN_OR_RETURN(
      axis,
      NormalizeAxis(kOp, attrs.GetInteger("axis").value_or(0), data.GetRank()));
  auto dims = data.GetDimensions();
  auto indices = args[1].shape.GetDimensions();
  Dims out(dims.begin(), dims.begin() + axis);
  out.insert(out.end(), indices.begin(), indices.end());
  out.insert(out.end(), dims.begin() + axis + 1, dims.end());
  results[0] = TensorMetadata(args[0].dtype, out);
  return absl::OkStatus();
}

void Gather(OpInvocation& invocation,
            absl::Span<const TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.gather";
  const DenseHostTensor& data = Arg(invocation, 0);
  const DenseHostTensor& indices = Arg(invocation, 1);
  auto index_at = [&, i32 = indices.dtype() == DType::kI32](int64_t i) {
    return i32 ? int64_t{indices.elements<int32_t>()[i]}
               : indices.elements<int64_t>()[i];
  };
  auto dims = data.shape().GetDimensions();
  const int axis = *NormalizeAxis(
      kOp, invocation.attrs.GetInteger("axis").value_or(0), dims.size());
  const int64_t n = dims[axis], count = indices.NumElements();
  // Indices are data, seen only here: one outside [-n, n) fails the op.
  for (int64_t i = 0; i < count; ++i) {
    if (index_at(i) < -n || index_at(i) >= n) {
      return FailAll(
          invocation, kOp,
          absl::StrCat("index ", index_at(i), " is out of range for axis ",
                       axis, " of size ", n));
    }
  }
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kOp, results[0]);
  if (!result) return;
  const size_t run =
      Product(dims, axis + 1, dims.size()) * DTypeSize(data.dtype());
  const char* src = static_cast<const char*>(data.data());
  char* dst = static_cast<char*>(result->data());
  for (int64_t o = 0; run > 0 && o < Product(dims, 0, axis); ++o) {
    for (int64_t i = 0; i < count; ++i, dst += run) {
      const int64_t index = index_at(i) < 0 ? index_at(i) + n : index_at(i);
      std::memcpy(dst, src + (o * n + index) * run, run);
    }
  }
  invocation.results[0] = std::move(result);
}

absl::Status WhereMetadata(ArgumentMetadata args, const OpAttrs&,
                           absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.where";
  SHAPE_OPS_RETURN_IF_ERROR(Arity(kOp, args, results, 3));
  if (args[0].dtype != DType::kI1) {
    return Error(kOp, "the condition is ", DTypeName(args[0].dtype),
                 "; it must be i1 (bool)");
  }
  SHAPE_OPS_RETURN_IF_ERROR(RequireFixedSize(kOp, args[1].dtype));
  if (args[1].dtype != args[2].dtype) {
    return Error(kOp, "x is ", DTypeName(args[1].dtype), " but y is ",
                 DTypeName(args[2].dtype));
  }
  SHAPE_OPS_ASSIGN_OR_RETURN(
      xy, BroadcastShapes(kOp, args[1].shape, args[2].shape));
  SHAPE_OPS_ASSIGN_OR_RETURN(out, BroadcastShapes(kOp, args[0].shape, xy));
  results[0] = TensorMetadata(args[1].dtype, out);
  return absl::OkStatus();
}

void Where(OpInvocation& invocation, absl::Span<const TensorMetadata> results) {
  const DenseHostTensor& cond = Arg(invocation, 0);
  const DenseHostTensor& x = Arg(invocation, 1);
  const DenseHostTensor& y = Arg(invocation, 2);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.where", results[0]);
  if (!result) return;
  const TensorShape& out = results[0].shape;
  const int64_t count = out.GetNumElements();
  Dims dims(out.GetDimensions().begin(), out.GetDimensions().end());
  Dims sc = BroadcastStrides(cond.shape(), out);
  Dims sx = BroadcastStrides(x.shape(), out);
  Dims sy = BroadcastStrides(y.shape(), out);
  if (dims.empty()) dims = sc = sx = sy = {1};  // A scalar walks as [1].
  const int64_t inner = dims.back();
  const bool* c = cond.elements<bool>().data();
  const char* px = static_cast<const char*>(x.data());
  const char* py = static_cast<const char*>(y.data());
  char* dst = static_cast<char*>(result->data());
  if (count == 0) return (void)(invocation.results[0] = std::move(result));
  WithBlock(DTypeSize(x.dtype()), [&](auto tag) {
    constexpr int64_t kSize = sizeof(typename decltype(tag)::type);
    ForEachRow<3>(dims, {sc, sx, sy}, [&](const std::array<int64_t, 3>& o) {
      for (int64_t j = 0; j < inner; ++j, dst += kSize) {
        const char* from = c[o[0] + j * sc.back()]
                               ? px + (o[1] + j * sx.back()) * kSize
                               : py + (o[2] + j * sy.back()) * kSize;
        std::memcpy(dst, from, kSize);
      }
    });
  });
  invocation.results[0] = std::move(result);
}

//===--- Cast -------------------------------------------------------------===//

template <typename T>
constexpr bool kIsHalf = std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;
template <typename T>
constexpr bool kIsCastable = std::is_arithmetic_v<T> || kIsHalf<T>;

// Booleans, integers and floats; not quantized, complex or string.
bool Castable(DType dtype) {
  return dtype >= DType::kI1 && dtype <= DType::kF64;
}

// One element converted as ONNX Cast does (to bool: nonzero is true).
template <typename To, typename From>
To Convert(From from) {
  if constexpr (kIsHalf<From>) {
    return Convert<To>(from.ToFloat());
  } else if constexpr (kIsHalf<To>) {
    return To::FromFloat(static_cast<float>(from));
  } else if constexpr (std::is_same_v<To, bool>) {
    return from != From{0};
  } else if constexpr (std::is_integral_v<To> &&
                       std::is_floating_point_v<From>) {
    // Out-of-range float to int is undefined in C++ (and unspecified in
    // ONNX): saturate, NaN to 0.
    if (std::isnan(from)) return 0;
    if (from <= static_cast<From>(std::numeric_limits<To>::min())) {
      return std::numeric_limits<To>::min();
    }
    if (from >= static_cast<From>(std::numeric_limits<To>::max())) {
      return std::numeric_limits<To>::max();
    }
    return static_cast<To>(from);
  } else {
    return static_cast<To>(from);
  }
}

absl::Status CastMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                          absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.cast";
  SHAPE_OPS_RETURN_IF_ERROR(Arity(kOp, args, results, 1));
  // A DType, or its name ("f16") where the attribute came as a string.
  std::optional<DType> to = attrs.Get<DType>("to");
  if (auto name = attrs.GetString("to"); !to && name) to = ParseDType(*name);
  if (!to) return Error(kOp, "attribute `to` (a dtype) is required");
  if (!Castable(args[0].dtype) || !Castable(*to)) {
    return Error(kOp, "cannot cast ", DTypeName(args[0].dtype), " to ",
                 DTypeName(*to));
  }
  results[0] = TensorMetadata(*to, args[0].shape);
  return absl::OkStatus();
}

void Cast(OpInvocation& invocation, absl::Span<const TensorMetadata> results) {
  const DenseHostTensor& x = Arg(invocation, 0);
  if (x.dtype() == results[0].dtype) return ShareBuffer(invocation, results);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.cast", results[0]);
  if (!result) return;
  const int64_t count = x.NumElements();
  DispatchByDType(x.dtype(), [&](auto from_tag) {
    using From = typename decltype(from_tag)::type;
    if constexpr (kIsCastable<From>) {
      DispatchByDType(results[0].dtype, [&](auto to_tag) {
        using To = typename decltype(to_tag)::type;
        if constexpr (kIsCastable<To>) {
          const From* in = static_cast<const From*>(x.data());
          To* out = static_cast<To*>(result->data());
          for (int64_t i = 0; i < count; ++i) out[i] = Convert<To>(in[i]);
        }
      });
    }
  });
  invocation.results[0] = std::move(result);
}

//===--- EyeLike ----------------------------------------------------------===//

// ONNX EyeLike: x's 2-D shape, ones on diagonal `k` (0: the main one, > 0
// above it), zeros elsewhere; of dtype `dtype`, else x's.
absl::Status EyeLikeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                             absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.eye_like";
  SHAPE_OPS_RETURN_IF_ERROR(Arity(kOp, args, results, 1));
  if (args[0].shape.GetRank() != 2) {
    return Error(kOp, "input must be 2-D, got ", args[0].shape.DebugString());
  }
  const DType dtype = attrs.Get<DType>("dtype").value_or(args[0].dtype);
  if (!Castable(dtype)) return Error(kOp, "cannot make ", DTypeName(dtype));
  results[0] = TensorMetadata(dtype, args[0].shape);
  return absl::OkStatus();
}

void EyeLike(OpInvocation& invocation, absl::Span<const TensorMetadata> results) {
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.eye_like", results[0]);
  if (!result) return;
  const int64_t rows = results[0].shape.GetDimensionSize(0);
  const int64_t cols = results[0].shape.GetDimensionSize(1);
  const int64_t k = invocation.attrs.GetInteger("k").value_or(0);
  DispatchByDType(results[0].dtype, [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsCastable<T>) {
      T* out = static_cast<T*>(result->data());
      std::fill(out, out + rows * cols, Convert<T>(0.0f));
      for (int64_t i = 0; i < rows; ++i) {
        const int64_t j = i + k;
        if (j >= 0 && j < cols) out[i * cols + j] = Convert<T>(1.0f);
      }
    }
  });
  invocation.results[0] = std::move(result);
}

//===--- Pad --------------------------------------------------------------===//

enum class PadMode { kConstant, kReflect, kEdge, kWrap };

absl::StatusOr<PadMode> PadModeOf(const OpAttrs& attrs) {
  const absl::string_view mode = attrs.GetString("mode").value_or("constant");
  if (mode == "constant") return PadMode::kConstant;
  if (mode == "reflect") return PadMode::kReflect;
  if (mode == "edge") return PadMode::kEdge;
  if (mode == "wrap") return PadMode::kWrap;  // ONNX opset 19.
  return Error("nn.pad", "unknown mode \"", mode,
               "\" (constant, reflect, edge or wrap)");
}

absl::Status PadMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                         absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.pad";
  SHAPE_OPS_RETURN_IF_ERROR(MoveOp(kOp, args, results));
  SHAPE_OPS_ASSIGN_OR_RETURN(pads, RequiredArray(kOp, attrs, "pads"));
  SHAPE_OPS_ASSIGN_OR_RETURN(mode, PadModeOf(attrs));
  const TensorShape& in = args[0].shape;
  const int rank = in.GetRank();
  if (static_cast<int>(pads.size()) != 2 * rank) {
    return Error(kOp, "pads has ", pads.size(), " values; rank ", rank,
                 " needs ", 2 * rank);
  }
  Dims dims;
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = in.GetDimensionSize(d);
    const int64_t most = std::max(pads[d], pads[d + rank]);
    // Reflection mirrors about the edge element, so it needs more elements
    // than the pad; edge and wrap need one to repeat.
    if (most > 0 && (mode == PadMode::kReflect
                         ? most >= dim
                         : (mode == PadMode::kEdge || mode == PadMode::kWrap) &&
                               dim == 0)) {
      return Error(kOp, "pads of ", most, " on axis ", d, " of size ", dim,
                   " are too large for ",
                   mode == PadMode::kEdge   ? "edge"
                   : mode == PadMode::kWrap ? "wrap"
                                            : "reflect",
                   " mode");
    }
    const int64_t out = dim + pads[d] + pads[d + rank];
    if (out < 0) {
      return Error(kOp, "negative pads remove more than axis ", d, " of size ",
                   dim, " has");
    }
    dims.push_back(out);
  }
  results[0] = TensorMetadata(args[0].dtype, dims);
  return absl::OkStatus();
}

void Pad(OpInvocation& invocation, absl::Span<const TensorMetadata> results) {
  const DenseHostTensor& x = Arg(invocation, 0);
  const IntArray pads = *invocation.attrs.GetIntegerArray("pads");
  const PadMode mode = *PadModeOf(invocation.attrs);
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.pad", results[0]);
  if (!result) return;
  const size_t element_size = DTypeSize(x.dtype());
  alignas(16) char fill[16] = {};  // The constant, as one element.
  const double value = NumberAttr(invocation.attrs, "value", 0.0);
  DispatchByDType(x.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (kIsCastable<T>) {
      T v = Convert<T>(value);
      std::memcpy(fill, &v, sizeof(T));
    } else if constexpr (!std::is_same_v<T, std::string>) {
      T v(value);  // Complex: the real part.
      std::memcpy(fill, &v, sizeof(T));
    }
  });
  auto in_dims = x.shape().GetDimensions();
  auto out_dims = results[0].shape.GetDimensions();
  const int rank = static_cast<int>(in_dims.size());
  const int64_t count = results[0].shape.GetNumElements();
  char* dst = static_cast<char*>(result->data());
  const char* src = static_cast<const char*>(x.data());
  if (count > 0 && rank == 0) std::memcpy(dst, src, element_size);
  if (count == 0 || rank == 0) {
    invocation.results[0] = std::move(result);
    return;
  }
  // For each output coordinate, the input coordinate it reads; -1 for the
  // constant.
  std::vector<std::vector<int64_t>> map(rank);
  for (int d = 0; d < rank; ++d) {
    const int64_t dim = in_dims[d];
    for (int64_t o = 0; o < out_dims[d]; ++o) {
      const int64_t i = o - pads[d];
      if (i >= 0 && i < dim) {
        map[d].push_back(i);
      } else if (mode == PadMode::kConstant) {
        map[d].push_back(-1);
      } else if (mode == PadMode::kEdge) {
        map[d].push_back(std::clamp<int64_t>(i, 0, dim - 1));
      } else if (mode == PadMode::kWrap) {
        map[d].push_back((i % dim + dim) % dim);  // Cyclic, any distance.
      } else {
        map[d].push_back(i < 0 ? -i : 2 * (dim - 1) - i);
      }
    }
  }
  const Dims strides = DenseStrides(in_dims);
  const int64_t width = out_dims[rank - 1];
  // Output columns [lo, hi) read input columns in order: one memcpy.
  const int64_t lo = std::clamp<int64_t>(pads[rank - 1], 0, width);
  const int64_t hi =
      std::clamp<int64_t>(pads[rank - 1] + in_dims[rank - 1], lo, width);
  const std::vector<int64_t>& columns = map[rank - 1];
  Dims index(rank, 0);
  for (int64_t row = 0; row < count / width; ++row) {
    char* out = dst + row * width * element_size;
    int64_t offset = 0;
    bool constant = false;
    for (int d = 0; d < rank - 1; ++d) {
      constant |= map[d][index[d]] < 0;
      offset += map[d][index[d]] * strides[d];
    }
    if (constant) {
      FillRun(out, width, fill, element_size);
    } else {
      const char* in = src + offset * element_size;
      auto pad = [&](int64_t j) {
        std::memcpy(out + j * element_size,
                    columns[j] < 0 ? fill : in + columns[j] * element_size,
                    element_size);
      };
      for (int64_t j = 0; j < lo; ++j) pad(j);
      if (hi > lo) {
        std::memcpy(out + lo * element_size, in + columns[lo] * element_size,
                    (hi - lo) * element_size);
      }
      for (int64_t j = hi; j < width; ++j) pad(j);
    }
    for (int d = rank - 2; d >= 0; --d) {
      if (++index[d] < out_dims[d]) break;
      index[d] = 0;
    }
  }
  invocation.results[0] = std::move(result);
}

//===--- Shape, size, constant_of_shape -----------------------------------===//

// ONNX Shape's [start, end) range of the dimensions, clamped.
std::pair<int64_t, int64_t> ShapeRange(const OpAttrs& attrs, int rank) {
  auto clamp = [rank](int64_t v) {
    return std::clamp<int64_t>(v < 0 ? v + rank : v, 0, rank);
  };
  const int64_t start = clamp(attrs.GetInteger("start").value_or(0));
  const int64_t end = clamp(attrs.GetInteger("end").value_or(rank));
  return {start, std::max(start, end)};
}

absl::Status ShapeMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                           absl::Span<TensorMetadata> results) {
  SHAPE_OPS_RETURN_IF_ERROR(Arity("nn.shape", args, results, 1));
  auto [start, end] = ShapeRange(attrs, args[0].shape.GetRank());
  results[0] = TensorMetadata(DType::kI64, {end - start});
  return absl::OkStatus();
}

void Shape(OpInvocation& invocation, absl::Span<const TensorMetadata> results) {
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.shape", results[0]);
  if (!result) return;
  auto dims = invocation.argument(0).shape().GetDimensions();
  auto [start, end] = ShapeRange(invocation.attrs, dims.size());
  std::copy(dims.begin() + start, dims.begin() + end,
            result->elements<int64_t>().begin());
  invocation.results[0] = std::move(result);
}

absl::Status SizeMetadata(ArgumentMetadata args, const OpAttrs&,
                          absl::Span<TensorMetadata> results) {
  SHAPE_OPS_RETURN_IF_ERROR(Arity("nn.size", args, results, 1));
  results[0] = TensorMetadata(DType::kI64, TensorShape({}));
  return absl::OkStatus();
}

void Size(OpInvocation& invocation, absl::Span<const TensorMetadata> results) {
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.size", results[0]);
  if (!result) return;
  result->elements<int64_t>()[0] = invocation.argument(0).shape().GetNumElements();
  invocation.results[0] = std::move(result);
}

absl::Status ConstantOfShapeMetadata(ArgumentMetadata args,
                                     const OpAttrs& attrs,
                                     absl::Span<TensorMetadata> results) {
  constexpr absl::string_view kOp = "nn.constant_of_shape";
  SHAPE_OPS_RETURN_IF_ERROR(Arity(kOp, args, results, 0));
  SHAPE_OPS_ASSIGN_OR_RETURN(shape, RequiredArray(kOp, attrs, "shape"));
  if (!CheckedProduct(shape)) {
    return Error(kOp, "invalid shape ", DimsString(shape));
  }
  results[0] = TensorMetadata(DType::kF32, shape);
  return absl::OkStatus();
}

void ConstantOfShape(OpInvocation& invocation,
                     absl::Span<const TensorMetadata> results) {
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, "nn.constant_of_shape", results[0]);
  if (!result) return;
  auto elements = result->elements<float>();
  std::fill(elements.begin(), elements.end(),
            static_cast<float>(NumberAttr(invocation.attrs, "value", 0.0)));
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterShapeOps(OpRegistry& registry) {
#define SHAPE_OPS_REGISTER(NAME, SHAPE, IMPL) \
  registry.AddOp(NAME, SHAPE);                \
  registry.AddDispatch(NAME, "cpu", Dispatch<IMPL>)
  SHAPE_OPS_REGISTER("nn.reshape", ReshapeMetadata, ShareBuffer);
  SHAPE_OPS_REGISTER("nn.flatten", FlattenMetadata, ShareBuffer);
  SHAPE_OPS_REGISTER("nn.squeeze", SqueezeMetadata, ShareBuffer);
  SHAPE_OPS_REGISTER("nn.unsqueeze", UnsqueezeMetadata, ShareBuffer);
  SHAPE_OPS_REGISTER("nn.transpose", TransposeMetadata, Transpose);
  SHAPE_OPS_REGISTER("nn.expand", ExpandMetadata, Expand);
  SHAPE_OPS_REGISTER("nn.concat", ConcatMetadata, Concat);
  SHAPE_OPS_REGISTER("nn.split", SplitMetadata, Split);
  SHAPE_OPS_REGISTER("nn.slice", SliceMetadata, Slice);
  SHAPE_OPS_REGISTER("nn.gather", GatherMetadata, Gather);
  SHAPE_OPS_REGISTER("nn.where", WhereMetadata, Where);
  SHAPE_OPS_REGISTER("nn.cast", CastMetadata, Cast);
  SHAPE_OPS_REGISTER("nn.pad", PadMetadata, Pad);
  SHAPE_OPS_REGISTER("nn.eye_like", EyeLikeMetadata, EyeLike);
  SHAPE_OPS_REGISTER("nn.shape", ShapeMetadata, Shape);
  SHAPE_OPS_REGISTER("nn.size", SizeMetadata, Size);
  SHAPE_OPS_REGISTER("nn.constant_of_shape", ConstantOfShapeMetadata,
                     ConstantOfShape);
#undef SHAPE_OPS_REGISTER
}

}  // namespace asyncrt::nn
