// The CPU test ops of the contract (tfrt_test.*), registered in the op
// registry that eager execution and `corert.executeop` share: each with its
// shape function and its CPU dispatch function.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

#include "absl/base/attributes.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/tensor/coo_host_tensor.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/scalar_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"
#include "testing/test_kernels.h"

namespace asyncrt {
namespace {

//===--- Element arithmetic ----------------------------------------------===//

template <typename T>
constexpr bool kIsHalfLike =
    std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>;

template <typename T>
constexpr bool kIsArithmetic = kIsHalfLike<T> || (std::is_arithmetic_v<T> &&
                                                  !std::is_same_v<T, bool>);

template <typename T>
double ToDouble(T value) {
  if constexpr (kIsHalfLike<T>) {
    return value.ToFloat();
  } else {
    return static_cast<double>(value);
  }
}

template <typename T>
T FromDouble(double value) {
  if constexpr (kIsHalfLike<T>) {
    return T::FromFloat(static_cast<float>(value));
  } else {
    return static_cast<T>(value);
  }
}

template <typename T>
T AddValues(T a, T b) {
  if constexpr (kIsHalfLike<T>) {
    return T::FromFloat(a.ToFloat() + b.ToFloat());
  } else if constexpr (std::is_integral_v<T>) {
    using U = std::make_unsigned_t<T>;
    return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
  } else {
    return a + b;
  }
}

RCReference<AsyncValue> Error(absl::string_view message) {
  return MakeErrorAsyncValueRef(message);
}

void SetAllResults(OpInvocation& invocation, RCReference<AsyncValue> value) {
  for (auto& result : invocation.results) result = value;
}

// The result value: a DHT for `metadata`, in the buffer of an argument in
// the mask `reusable_arguments` when the op may write it, else new; or null
// and an allocation error in `invocation`. Inlined: it is on every
// elementwise op's path.
ABSL_ATTRIBUTE_ALWAYS_INLINE inline AsyncValueRef<DenseHostTensor> Allocate(
    OpInvocation& invocation, const TensorMetadata& metadata,
    uint64_t reusable_arguments = 0) {
  AsyncValueRef<DenseHostTensor> tensor =
      invocation.ReuseOrAllocateDense(metadata, reusable_arguments);
  if (!tensor) SetAllResults(invocation, Error("Cannot allocate tensor"));
  return tensor;
}

template <typename T>
RCReference<AsyncValue> Available(T&& tensor) {
  using Tensor = std::remove_cvref_t<T>;
  return MakeAvailableAsyncValueRef<Tensor>(std::forward<T>(tensor));
}

absl::StatusOr<TensorShape> ShapeAttribute(const OpAttrs& attrs) {
  auto dims = attrs.GetIntegerArray("shape");
  if (!dims) return absl::InvalidArgumentError("missing 'shape' attribute");
  for (int64_t d : *dims) {
    if (d < 0) return absl::InvalidArgumentError("negative dimension");
  }
  return TensorShape(*dims);
}

// The dtype of an OpAttrs entry's elements (`values = [1 : i32]`).
std::optional<DType> EntryDType(const OpAttrs::Entry& entry) {
  switch (entry.type) {
    case OpAttrType::kBool:
      return DType::kI1;
    case OpAttrType::kI8:
      return DType::kI8;
    case OpAttrType::kI16:
      return DType::kI16;
    case OpAttrType::kI32:
      return DType::kI32;
    case OpAttrType::kI64:
      return DType::kI64;
    case OpAttrType::kUI8:
      return DType::kUI8;
    case OpAttrType::kUI16:
      return DType::kUI16;
    case OpAttrType::kUI32:
      return DType::kUI32;
    case OpAttrType::kUI64:
      return DType::kUI64;
    case OpAttrType::kF16:
      return DType::kF16;
    case OpAttrType::kBF16:
      return DType::kBF16;
    case OpAttrType::kF32:
      return DType::kF32;
    case OpAttrType::kF64:
      return DType::kF64;
    default:
      return std::nullopt;
  }
}

//===--- create_dense_tensor / create_from_scalar ------------------------===//

absl::Status CreateDenseTensorMetadata(ArgumentMetadata, const OpAttrs& attrs,
                                       absl::Span<TensorMetadata> results) {
  absl::StatusOr<TensorShape> shape = ShapeAttribute(attrs);
  if (!shape.ok()) return shape.status();
  const OpAttrs::Entry* values = attrs.Find("values");
  std::optional<DType> dtype = values ? EntryDType(*values) : std::nullopt;
  if (!dtype) {
    return absl::InvalidArgumentError(
        "tfrt_test.create_dense_tensor needs a 'values' array attribute");
  }
  int64_t count = values->is_array ? values->count : 1;
  if (count != 1 && count != shape->GetNumElements()) {
    return absl::InvalidArgumentError(
        absl::StrCat("tfrt_test.create_dense_tensor: ", count,
                     " values for shape ", shape->DebugString()));
  }
  results[0] = TensorMetadata(*dtype, *shape);
  return absl::OkStatus();
}

void CreateDenseTensor(OpInvocation& invocation) {
  const TensorMetadata& metadata = invocation.result_metadata[0];
  auto tensor = Allocate(invocation, metadata);
  if (!tensor) return;
  const OpAttrs::Entry& values = *invocation.attrs.Find("values");
  const char* source = static_cast<const char*>(invocation.attrs.data(values));
  size_t element_size = DTypeSize(metadata.dtype);
  int64_t count = values.is_array ? values.count : 1;
  char* out = static_cast<char*>(tensor->data());
  for (int64_t i = 0; i < metadata.shape.GetNumElements(); ++i) {
    std::memcpy(out + i * element_size,
                source + (count == 1 ? 0 : i) * element_size, element_size);
  }
  invocation.results[0] = std::move(tensor);
}

absl::Status CreateFromScalarMetadata(ArgumentMetadata, const OpAttrs& attrs,
                                      absl::Span<TensorMetadata> results) {
  absl::StatusOr<TensorShape> shape = ShapeAttribute(attrs);
  if (!shape.ok()) return shape.status();
  const OpAttrs::Entry* value = attrs.Find("value");
  std::optional<DType> dtype = value ? EntryDType(*value) : std::nullopt;
  if (!dtype) {
    return absl::InvalidArgumentError(
        "test.create_from_scalar must have 'value' attribute");
  }
  results[0] = TensorMetadata(*dtype, *shape);
  return absl::OkStatus();
}

void CreateFromScalar(OpInvocation& invocation) {
  const OpAttrs::Entry& value = *invocation.attrs.Find("value");
  invocation.results[0] = Available(ScalarHostTensor(
      invocation.result_metadata[0], invocation.attrs.data(value)));
}

//===--- Element-wise ops -------------------------------------------------===//

absl::Status SameShapeMetadata(ArgumentMetadata args,
                               absl::Span<TensorMetadata> results,
                               std::optional<DType> result_dtype) {
  if (args.size() != 2) {
    return absl::InvalidArgumentError("expected two arguments");
  }
  if (args[0].dtype != args[1].dtype) {
    return absl::InvalidArgumentError("arguments have different dtypes");
  }
  if (args[0].shape != args[1].shape) {
    return absl::InvalidArgumentError(absl::StrCat(
        "arguments have incompatible shapes ", args[0].shape.DebugString(),
        " and ", args[1].shape.DebugString()));
  }
  // Assigned in place: no temporary shape.
  results[0].dtype = result_dtype.value_or(args[0].dtype);
  results[0].shape = args[0].shape;
  return absl::OkStatus();
}

absl::Status AddMetadata(ArgumentMetadata args, const OpAttrs&,
                         absl::Span<TensorMetadata> results) {
  return SameShapeMetadata(args, results, std::nullopt);
}

absl::Status EqualMetadata(ArgumentMetadata args, const OpAttrs&,
                           absl::Span<TensorMetadata> results) {
  return SameShapeMetadata(args, results, DType::kI1);
}

// Element i of a dense or scalar host tensor.
template <typename T>
T ElementAt(const Tensor& tensor, int64_t i) {
  if (tensor.tensor_type() == ScalarHostTensorType()) {
    return static_cast<const ScalarHostTensor&>(tensor).GetValue<T>();
  }
  return static_cast<const DenseHostTensor&>(tensor).elements<T>()[i];
}

// Applies `fn` element-wise to two same-shape tensors: a scalar result if
// both are scalar host tensors, a dense one otherwise.
template <typename Fn>
void BinaryElementwise(OpInvocation& invocation, DType result_dtype,
                       absl::string_view op_name, Fn fn) {
  const Tensor& a = invocation.argument(0);
  const Tensor& b = invocation.argument(1);
  if (a.dtype() != b.dtype() || a.shape() != b.shape()) {
    return SetAllResults(
        invocation, Error(absl::StrCat(op_name, ": incompatible arguments")));
  }
  // The shape function's answer when it ran; the same, computed, if not.
  std::optional<TensorMetadata> computed_metadata;
  const TensorMetadata& metadata =
      invocation.result_metadata.empty()
          ? computed_metadata.emplace(result_dtype, a.shape())
          : invocation.result_metadata[0];
  bool both_scalar = a.tensor_type() == ScalarHostTensorType() &&
                     b.tensor_type() == ScalarHostTensorType();
  bool supported = DispatchByDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsArithmetic<T>) {
      return false;
    } else {
      using R = decltype(fn(T(), T()));
      if (both_scalar) {
        invocation.results[0] = Available(ScalarHostTensor(
            a.shape(), fn(ElementAt<T>(a, 0), ElementAt<T>(b, 0))));
        return true;
      }
      // In place when an argument's buffer is the op's alone: element i
      // is read before it is written.
      AsyncValueRef<DenseHostTensor> out =
          Allocate(invocation, metadata, /*reusable_arguments=*/0b11);
      if (!out) return true;
      // Element pointers and strides, found once: a scalar host tensor
      // repeats its one value (stride 0).
      T a_value{}, b_value{};
      auto elements_of = [](const Tensor& t, T& value) -> const T* {
        if (t.tensor_type() == ScalarHostTensorType()) {
          value = ElementAt<T>(t, 0);
          return &value;
        }
        return static_cast<const DenseHostTensor&>(t).elements<T>().data();
      };
      const T* a_data = elements_of(a, a_value);
      const T* b_data = elements_of(b, b_value);
      const int64_t a_stride = a_data == &a_value ? 0 : 1;
      const int64_t b_stride = b_data == &b_value ? 0 : 1;
      R* elements = out->template elements<R>().data();
      for (int64_t i = 0, n = a.NumElements(); i < n; ++i) {
        elements[i] = fn(a_data[i * a_stride], b_data[i * b_stride]);
      }
      invocation.results[0] = std::move(out);
      return true;
    }
  });
  if (!supported) {
    SetAllResults(invocation,
                  Error(absl::StrCat(op_name, ": unsupported dtype ",
                                     DTypeName(a.dtype()))));
  }
}

void Add(OpInvocation& invocation) {
  BinaryElementwise(invocation, invocation.argument(0).dtype(), "tfrt_test.add",
                    [](auto x, auto y) { return AddValues(x, y); });
}

void Equal(OpInvocation& invocation) {
  BinaryElementwise(
      invocation, DType::kI1, "tfrt_test.equal",
      [](auto x, auto y) -> bool { return ToDouble(x) == ToDouble(y); });
}

//===--- Reductions -------------------------------------------------------===//

absl::StatusOr<int> AxisAttribute(const OpAttrs& attrs, int rank) {
  std::optional<int64_t> axis = attrs.GetInteger("axis");
  if (!axis) return absl::InvalidArgumentError("missing 'axis' attribute");
  if (*axis < 0) *axis += rank;
  if (*axis < 0 || *axis >= rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("axis ", *axis, " out of range for rank ", rank));
  }
  return static_cast<int>(*axis);
}

TensorShape ReducedShape(const TensorShape& shape, int axis) {
  std::vector<int64_t> dims;
  for (int i = 0; i < shape.GetRank(); ++i) {
    if (i != axis) dims.push_back(shape.GetDimensionSize(i));
  }
  return TensorShape(dims);
}

absl::Status ReduceMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results,
                            std::optional<DType> dtype) {
  absl::StatusOr<int> axis = AxisAttribute(attrs, args[0].shape.GetRank());
  if (!axis.ok()) return axis.status();
  results[0] = TensorMetadata(dtype.value_or(args[0].dtype),
                              ReducedShape(args[0].shape, *axis));
  return absl::OkStatus();
}

absl::Status ArgmaxMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  return ReduceMetadata(args, attrs, results, DType::kI32);
}

absl::Status ReduceMeanMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                                absl::Span<TensorMetadata> results) {
  return ReduceMetadata(args, attrs, results, std::nullopt);
}

// Calls fn(outer, inner, axis_size, axis_stride-free index helper) over the
// reduction of `shape` along `axis`: for each output element, the input
// indices outer * axis_size * inner + k * inner + in.
template <typename Fn>
void ForEachReduction(const TensorShape& shape, int axis, Fn fn) {
  int64_t outer = 1, inner = 1;
  for (int i = 0; i < axis; ++i) outer *= shape.GetDimensionSize(i);
  for (int i = axis + 1; i < shape.GetRank(); ++i) {
    inner *= shape.GetDimensionSize(i);
  }
  int64_t size = shape.GetDimensionSize(axis);
  for (int64_t o = 0; o < outer; ++o) {
    for (int64_t in = 0; in < inner; ++in) {
      fn(
          o * inner + in,
          [=](int64_t k) { return (o * size + k) * inner + in; }, size);
    }
  }
}

template <bool kArgmax>
void Reduce(OpInvocation& invocation) {
  const auto& input =
      static_cast<const DenseHostTensor&>(invocation.argument(0));
  absl::StatusOr<int> axis =
      AxisAttribute(invocation.attrs, input.shape().GetRank());
  if (!axis.ok()) {
    return SetAllResults(invocation, MakeErrorAsyncValueRef(axis.status()));
  }
  TensorMetadata metadata(kArgmax ? DType::kI32 : input.dtype(),
                          ReducedShape(input.shape(), *axis));
  auto out = Allocate(invocation, metadata);
  if (!out) return;
  bool supported = DispatchByDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsArithmetic<T>) {
      return false;
    } else {
      absl::Span<const T> in = input.elements<T>();
      ForEachReduction(
          input.shape(), *axis, [&](int64_t o, auto index, int64_t size) {
            if constexpr (kArgmax) {
              int32_t best = 0;
              for (int64_t k = 1; k < size; ++k) {
                if (ToDouble(in[index(k)]) > ToDouble(in[index(best)]))
                  best = k;
              }
              out->template elements<int32_t>()[o] = best;
            } else {
              double sum = 0;
              for (int64_t k = 0; k < size; ++k) sum += ToDouble(in[index(k)]);
              out->template elements<T>()[o] =
                  FromDouble<T>(size ? sum / size : 0);
            }
          });
      return true;
    }
  });
  if (!supported) {
    return SetAllResults(invocation, Error("unsupported dtype for reduction"));
  }
  invocation.results[0] = std::move(out);
}

//===--- matmul -----------------------------------------------------------===//

absl::Status MatmulMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                            absl::Span<TensorMetadata> results) {
  if (args.size() != 2 || args[0].shape.GetRank() != 2 ||
      args[1].shape.GetRank() != 2) {
    return absl::InvalidArgumentError("matmul takes two rank-2 tensors");
  }
  if (args[0].dtype != args[1].dtype) {
    return absl::InvalidArgumentError("matmul arguments have different dtypes");
  }
  bool ta = attrs.Get<bool>("transpose_a").value_or(false);
  bool tb = attrs.Get<bool>("transpose_b").value_or(false);
  const TensorShape& a = args[0].shape;
  const TensorShape& b = args[1].shape;
  int64_t k_a = a.GetDimensionSize(ta ? 0 : 1);
  int64_t k_b = b.GetDimensionSize(tb ? 1 : 0);
  if (k_a != k_b) {
    return absl::InvalidArgumentError(
        "matmul arguments have incompatible shapes");
  }
  int64_t m = a.GetDimensionSize(ta ? 1 : 0);
  int64_t n = b.GetDimensionSize(tb ? 0 : 1);
  results[0] = TensorMetadata(args[0].dtype, TensorShape({m, n}));
  return absl::OkStatus();
}

void Matmul(OpInvocation& invocation) {
  const auto& a = static_cast<const DenseHostTensor&>(invocation.argument(0));
  const auto& b = static_cast<const DenseHostTensor&>(invocation.argument(1));
  bool ta = invocation.attrs.Get<bool>("transpose_a").value_or(false);
  bool tb = invocation.attrs.Get<bool>("transpose_b").value_or(false);
  const TensorMetadata* arguments[] = {&a.metadata(), &b.metadata()};
  TensorMetadata metadata[1];
  absl::Status status = MatmulMetadata(
      ArgumentMetadata(arguments), invocation.attrs, absl::MakeSpan(metadata));
  if (!status.ok()) {
    return SetAllResults(invocation, MakeErrorAsyncValueRef(status));
  }
  auto out = Allocate(invocation, metadata[0]);
  if (!out) return;
  int64_t m = metadata[0].shape.GetDimensionSize(0);
  int64_t n = metadata[0].shape.GetDimensionSize(1);
  int64_t k = a.shape().GetDimensionSize(ta ? 0 : 1);
  int64_t a_cols = a.shape().GetDimensionSize(1);
  int64_t b_cols = b.shape().GetDimensionSize(1);
  bool supported = DispatchByDType(a.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsArithmetic<T>) {
      return false;
    } else {
      absl::Span<const T> x = a.elements<T>();
      absl::Span<const T> y = b.elements<T>();
      absl::Span<T> z = out->template elements<T>();
      for (int64_t i = 0; i < m; ++i) {
        for (int64_t j = 0; j < n; ++j) {
          double sum = 0;
          for (int64_t p = 0; p < k; ++p) {
            T lhs = ta ? x[p * a_cols + i] : x[i * a_cols + p];
            T rhs = tb ? y[j * b_cols + p] : y[p * b_cols + j];
            sum += ToDouble(lhs) * ToDouble(rhs);
          }
          z[i * n + j] = FromDouble<T>(sum);
        }
      }
      return true;
    }
  });
  if (!supported) return SetAllResults(invocation, Error("unsupported dtype"));
  invocation.results[0] = std::move(out);
}

//===--- Unary ops --------------------------------------------------------===//

absl::Status SameMetadata(ArgumentMetadata args, const OpAttrs&,
                          absl::Span<TensorMetadata> results) {
  if (args.size() != 1) {
    return absl::InvalidArgumentError("expected one argument");
  }
  results[0] = args[0];
  return absl::OkStatus();
}

absl::StatusOr<DType> CastType(const OpAttrs& attrs) {
  std::optional<absl::string_view> name = attrs.GetString("type");
  std::optional<DType> dtype = name ? ParseDType(*name) : std::nullopt;
  if (!dtype) {
    if (auto type = attrs.Get<DType>("type")) return *type;
    return absl::InvalidArgumentError("cast needs a 'type' attribute");
  }
  return *dtype;
}

absl::Status CastMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                          absl::Span<TensorMetadata> results) {
  absl::StatusOr<DType> dtype = CastType(attrs);
  if (!dtype.ok()) return dtype.status();
  results[0] = TensorMetadata(*dtype, args[0].shape);
  return absl::OkStatus();
}

void Cast(OpInvocation& invocation) {
  const auto& input =
      static_cast<const DenseHostTensor&>(invocation.argument(0));
  absl::StatusOr<DType> dtype = CastType(invocation.attrs);
  if (!dtype.ok()) {
    return SetAllResults(invocation, MakeErrorAsyncValueRef(dtype.status()));
  }
  auto out = Allocate(invocation, TensorMetadata(*dtype, input.shape()));
  if (!out) return;
  bool supported = DispatchByDType(input.dtype(), [&](auto in_tag) {
    using In = typename decltype(in_tag)::type;
    return DispatchByDType(*dtype, [&](auto out_tag) {
      using Out = typename decltype(out_tag)::type;
      if constexpr (!kIsArithmetic<In> || !kIsArithmetic<Out>) {
        return false;
      } else {
        absl::Span<const In> from = input.elements<In>();
        absl::Span<Out> to = out->template elements<Out>();
        for (size_t i = 0; i < from.size(); ++i) {
          to[i] = FromDouble<Out>(ToDouble(from[i]));
        }
        return true;
      }
    });
  });
  if (!supported) return SetAllResults(invocation, Error("unsupported cast"));
  invocation.results[0] = std::move(out);
}

void Relu(OpInvocation& invocation) {
  const auto& input =
      static_cast<const DenseHostTensor&>(invocation.argument(0));
  // In place when the input's buffer is the op's alone: element i is read
  // before it is written.
  AsyncValueRef<DenseHostTensor> out =
      Allocate(invocation, input.metadata(), /*reusable_arguments=*/1);
  if (!out) return;
  bool supported = DispatchByDType(input.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (!kIsArithmetic<T>) {
      return false;
    } else {
      absl::Span<const T> from = input.elements<T>();
      absl::Span<T> to = out->template elements<T>();
      for (size_t i = 0; i < from.size(); ++i) {
        to[i] = ToDouble(from[i]) > 0 ? from[i] : FromDouble<T>(0);
      }
      return true;
    }
  });
  if (!supported) return SetAllResults(invocation, Error("unsupported dtype"));
  invocation.results[0] = std::move(out);
}

// Keeps the odd elements of an i32 vector: the result shape depends on the
// data, so the op has no shape function.
void OddCollector(OpInvocation& invocation) {
  const auto& input =
      static_cast<const DenseHostTensor&>(invocation.argument(0));
  if (input.dtype() != DType::kI32 || input.shape().GetRank() != 1) {
    return SetAllResults(invocation,
                         Error("odd_collector takes a rank-1 i32 tensor"));
  }
  std::vector<int32_t> odd;
  for (int32_t v : input.elements<int32_t>()) {
    if (v % 2 != 0) odd.push_back(v);
  }
  auto out =
      Allocate(invocation,
               TensorMetadata(DType::kI32, {static_cast<int64_t>(odd.size())}));
  if (!out) return;
  std::copy(odd.begin(), odd.end(), out->template elements<int32_t>().begin());
  invocation.results[0] = std::move(out);
}

// Copies a reference to the argument on the work queue: the result is
// computed asynchronously.
// A value that becomes `value` later, from the work queue.
RCReference<AsyncValue> ForwardLater(HostContext* host,
                                     RCReference<AsyncValue> value) {
  RCReference<IndirectAsyncValue> result = MakeIndirectAsyncValue();
  EnqueueWork(host, [value = std::move(value), result]() mutable {
    result->ForwardTo(std::move(value));
  });
  return result;
}

void AsyncNoop(OpInvocation& invocation) {
  invocation.results[0] =
      ForwardLater(invocation.host(), FormRef(invocation.arguments[0]));
}

// tfrt_test.add.denseonly3: the sum, made available later from the work
// queue (its handle's metadata is known at once, its tensor is not).
void AddLater(OpInvocation& invocation) {
  Add(invocation);
  invocation.results[0] =
      ForwardLater(invocation.host(), std::move(invocation.results[0]));
}

void Print(OpInvocation& invocation) {
  std::string text;
  invocation.argument(0).Print(&text);
  text.push_back('\n');
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

void ErrorTensor(OpInvocation& invocation) {
  SetAllResults(invocation,
                Error("error from test.error.tensor implementation"));
}

void Identity(OpInvocation& invocation) {
  invocation.results[0] = FormRef(invocation.arguments[0]);
}

absl::Status CreateCooMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                               absl::Span<TensorMetadata> results) {
  absl::StatusOr<TensorShape> shape = ShapeAttribute(attrs);
  if (!shape.ok()) return shape.status();
  if (args.size() != 2 || args[0].dtype != DType::kI64 ||
      args[0].shape.GetRank() != 2 || args[1].shape.GetRank() != 1 ||
      args[0].shape.GetDimensionSize(0) != args[1].shape.GetDimensionSize(0) ||
      args[0].shape.GetDimensionSize(1) != shape->GetRank()) {
    return absl::InvalidArgumentError(
        "create_coo_tensor takes i64 indices [nnz, rank] and values [nnz]");
  }
  results[0] = TensorMetadata(args[1].dtype, *shape);
  return absl::OkStatus();
}

void CreateCooTensor(OpInvocation& invocation) {
  const auto& indices =
      static_cast<const DenseHostTensor&>(invocation.argument(0));
  const auto& values =
      static_cast<const DenseHostTensor&>(invocation.argument(1));
  const TensorShape& shape = invocation.result_metadata.empty()
                                 ? TensorShape()
                                 : invocation.result_metadata[0].shape;
  // Every coordinate must lie inside the dense shape.
  absl::Span<const int64_t> coords = indices.elements<int64_t>();
  int rank = shape.GetRank();
  for (size_t i = 0; i < coords.size(); ++i) {
    int64_t dim = shape.GetDimensionSize(static_cast<int>(i % rank));
    if (coords[i] < 0 || coords[i] >= dim) {
      return SetAllResults(invocation, Error("COO index out of range"));
    }
  }
  invocation.results[0] = Available(CooHostTensor(
      shape, values.dtype(), indices.CopyRef(), values.CopyRef()));
}

}  // namespace

void RegisterTestOps(OpRegistry& registry) {
  registry.AddOp("tfrt_test.create_dense_tensor", CreateDenseTensorMetadata);
  registry.AddDispatch("tfrt_test.create_dense_tensor", "cpu",
                       CreateDenseTensor);
  registry.AddOp("tfrt_test.create_from_scalar", CreateFromScalarMetadata);
  registry.AddDispatch("tfrt_test.create_from_scalar", "cpu", CreateFromScalar);
  registry.AddOp("tfrt_test.add", AddMetadata);
  registry.AddDispatch("tfrt_test.add", "cpu", Add, kOpAcceptsScalarHost);
  for (const char* name :
       {"tfrt_test.add.denseonly", "tfrt_test.add.denseonly2"}) {
    registry.AddOp(name, AddMetadata);
    registry.AddDispatch(name, "cpu", Add);
  }
  registry.AddOp("tfrt_test.add.denseonly3", AddMetadata);
  registry.AddDispatch("tfrt_test.add.denseonly3", "cpu", AddLater);
  registry.AddOp("tfrt_test.equal", EqualMetadata);
  registry.AddDispatch("tfrt_test.equal", "cpu", Equal, kOpAcceptsScalarHost);
  registry.AddOp("tfrt_test.argmax", ArgmaxMetadata);
  registry.AddDispatch("tfrt_test.argmax", "cpu", Reduce<true>);
  registry.AddOp("tfrt_test.reduce_mean", ReduceMeanMetadata);
  registry.AddDispatch("tfrt_test.reduce_mean", "cpu", Reduce<false>);
  registry.AddOp("tfrt_test.matmul", MatmulMetadata);
  registry.AddDispatch("tfrt_test.matmul", "cpu", Matmul);
  registry.AddOp("tfrt_test.cast", CastMetadata);
  registry.AddDispatch("tfrt_test.cast", "cpu", Cast);
  registry.AddOp("tfrt_test.relu", SameMetadata);
  registry.AddDispatch("tfrt_test.relu", "cpu", Relu);
  registry.AddOp("tfrt_test.odd_collector", nullptr);
  registry.AddDispatch("tfrt_test.odd_collector", "cpu", OddCollector);
  registry.AddOp("tfrt_test.async.noop", SameMetadata);
  registry.AddDispatch("tfrt_test.async.noop", "cpu", AsyncNoop,
                       kOpAcceptsAnyHost);
  registry.AddOp("tfrt_test.async.noop_no_md", nullptr);
  registry.AddDispatch("tfrt_test.async.noop_no_md", "cpu", AsyncNoop,
                       kOpAcceptsAnyHost);
  registry.AddOp("tfrt_test.print", nullptr);
  registry.AddDispatch("tfrt_test.print", "cpu", Print, kOpAcceptsAnyHost);
  registry.AddOp("tfrt_test.error.tensor", SameMetadata);
  registry.AddDispatch("tfrt_test.error.tensor", "cpu", ErrorTensor,
                       kOpAcceptsAnyHost);
  registry.AddOp("tfrt_test.identity_dense_only", SameMetadata);
  registry.AddDispatch("tfrt_test.identity_dense_only", "cpu", Identity);
  registry.AddOp("tfrt_test.identity", SameMetadata);
  registry.AddDispatch("tfrt_test.identity", "cpu", Identity,
                       kOpAcceptsAnyHost);
  registry.AddOp("tfrt_test.create_coo_tensor", CreateCooMetadata);
  registry.AddDispatch("tfrt_test.create_coo_tensor", "cpu", CreateCooTensor);
}

}  // namespace asyncrt
