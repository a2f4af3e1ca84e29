// Kernels of the host tensor dialects: ts (shapes), tfrt_dht and
// tfrt_dht_sync (dense host tensors and buffers), tfrt_sht (string
// tensors) and coo (sparse tensors).
//
// Register payloads: !ts.shape TensorShape, !ts.partial_shape
// PartialTensorShape, fixed-rank shapes FixedRankShape<N>, !t.tensor a
// concrete host tensor (DenseHostTensor, CooHostTensor, StringHostTensor),
// !ht.host_buffer RCReference<HostBuffer>.
//
// Kernels named by dtype and rank (`create_uninitialized_tensor.i32.2`)
// are templates over the element type (and rank): registration binds each
// name to its instance, so no kernel reads its own name. Each checks its
// tensors and attributes against its dtype and rank. Attributes are read by
// the names the ODS ops give them (include/asyncrt/dialects/tensor/*.td).
#include "asyncrt/kernels/tensor_kernels.h"

#include <cinttypes>
#include <cmath>
#include <complex>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/kernels/tensor_attributes.h"
#include "asyncrt/tensor/coo_host_tensor.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/host_buffer.h"
#include "asyncrt/tensor/string_host_tensor.h"
#include "asyncrt/tensor/tensor_shape.h"

namespace asyncrt {
namespace {

using bef::AttributeKind;

void PrintLine(const std::string& text) {
  std::string line = text;
  line.push_back('\n');
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fflush(stdout);
}

// The attribute the op names `name`; an error if the program has none.
absl::StatusOr<const bef::Attribute*> NamedAttribute(AsyncKernelFrame* frame,
                                                     absl::string_view name) {
  const bef::Attribute* attribute = frame->GetAttribute(name);
  if (!attribute) {
    return absl::InvalidArgumentError(
        absl::StrCat("missing '", name, "' attribute"));
  }
  return attribute;
}

// OK if `tensor` has the kernel's dtype T (and, for Rank >= 0, its rank).
template <typename T, int Rank = -1>
absl::Status CheckTensor(const Tensor& tensor) {
  constexpr DType kDType = GetDType<T>();
  if (tensor.dtype() != kDType) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a tensor of dtype ", DTypeName(kDType),
                     ", got one of dtype ", DTypeName(tensor.dtype())));
  }
  if (Rank >= 0 && tensor.shape().GetRank() != Rank) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected a tensor of rank ", Rank, ", got one of shape ",
                     tensor.shape().DebugString()));
  }
  return absl::OkStatus();
}

//===--- ts ---------------------------------------------------------------===//

absl::StatusOr<TensorShape> BuildShape(AsyncKernelFrame* frame) {
  auto value = NamedAttribute(frame, "value");
  if (!value.ok()) return value.status();
  auto dims = DimensionsAttribute(*value);
  if (!dims.ok()) return dims.status();
  return TensorShape(*dims);
}

absl::StatusOr<PartialTensorShape> BuildPartialShape(AsyncKernelFrame* frame) {
  auto value = NamedAttribute(frame, "value");
  if (!value.ok()) return value.status();
  auto dims = IntegerArrayAttribute(*value);
  if (!dims.ok()) return dims.status();
  for (int64_t d : *dims) {
    if (d < PartialTensorShape::kUnknownDimSize) {
      return absl::InvalidArgumentError(absl::StrCat("invalid dimension ", d));
    }
  }
  return PartialTensorShape(absl::MakeConstSpan(*dims));
}

PartialTensorShape BuildUnrankedPartialShape() {
  return PartialTensorShape(std::nullopt);
}

// tfrt.constant.f16 {value = 1.0 : f16}: the attribute's raw half bits.
absl::StatusOr<Half> ConstantF16(AsyncKernelFrame* frame) {
  auto value = NamedAttribute(frame, "value");
  if (!value.ok()) return value.status();
  if ((*value)->kind != bef::AttributeKind::kF16) {
    return absl::InvalidArgumentError("expected an f16 'value'");
  }
  return Half{(*value)->scalar<uint16_t>()};
}

// TFRT prints a half's bit pattern, not its value.
Chain PrintF16(Half value) {
  PrintLine(absl::StrCat("f16 = ", value.bits));
  return Chain();
}

Chain PrintShape(const TensorShape& shape) {
  PrintLine(absl::StrCat("shape = ", shape.DebugString()));
  return Chain();
}

Chain PrintPartialShape(const PartialTensorShape& shape) {
  PrintLine(absl::StrCat("partial_tensor_shape = ", shape.DebugString()));
  return Chain();
}

bool EqualShape(const TensorShape& a, const TensorShape& b) { return a == b; }

int64_t GetNumElements(const TensorShape& shape) {
  return shape.GetNumElements();
}

// ts.get_dimension %shape, %index: the size of dimension `index`.
absl::StatusOr<int64_t> GetDimension(const TensorShape& shape, int32_t index) {
  if (index < 0 || index >= shape.GetRank()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dimension index ", index, " is out of range for shape ",
                     shape.DebugString()));
  }
  return shape.GetDimensionSize(index);
}

template <size_t N>
absl::StatusOr<FixedRankShape<N>> AsFixedRankShape(const TensorShape& shape) {
  return FixedRankShape<N>::FromTensorShape(shape);
}

template <size_t N>
Chain PrintFixedRankShape(const FixedRankShape<N>& shape) {
  PrintLine(absl::StrCat("fixed_rank_shape = ", shape.DebugString()));
  return Chain();
}

absl::StatusOr<TensorShape> ToShape(const PartialTensorShape& shape) {
  return shape.ToTensorShape();
}

PartialTensorShape ToPartialShape(const TensorShape& shape) {
  return PartialTensorShape::FromTensorShape(shape);
}

//===--- tfrt_dht: tensors ------------------------------------------------===//

// create_uninitialized_tensor.DTYPE.RANK {shape = [...]}.
template <typename T, int Rank>
absl::StatusOr<DenseHostTensor> CreateUninitializedTensor(
    AsyncKernelFrame* frame) {
  auto shape = NamedAttribute(frame, "shape");
  if (!shape.ok()) return shape.status();
  auto dims = DimensionsAttribute(*shape);
  if (!dims.ok()) return dims.status();
  if (dims->size() != static_cast<size_t>(Rank)) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected ", Rank, " dimensions, got ", dims->size()));
  }
  auto tensor = DenseHostTensor::CreateUninitialized(
      TensorMetadata(GetDType<T>(), TensorShape(*dims)),
      *frame->GetHostContext()->allocator());
  if (!tensor) return absl::ResourceExhaustedError("Cannot allocate tensor");
  return std::move(*tensor);
}

// The element bytes and count that `attribute` holds for a tensor of
// `dtype`: an array or dense attribute of that dtype, a scalar, or `[]`.
// Complex elements may also be written as (real, imaginary) pairs of their
// float type.
absl::StatusOr<std::pair<const void*, size_t>> ElementsOf(
    const bef::Attribute& attribute, DType dtype) {
  std::optional<DType> kind;
  if (attribute.kind == AttributeKind::kArray) {
    kind = DTypeOfAttributeKind(attribute.element_kind);
    if (kind == dtype) {
      return std::make_pair(static_cast<const void*>(attribute.bytes.data()),
                            size_t{attribute.count});
    }
    const bool pairs = (dtype == DType::kComplex64 && kind == DType::kF32) ||
                       (dtype == DType::kComplex128 && kind == DType::kF64);
    if (pairs && attribute.count % 2 == 0) {
      return std::make_pair(static_cast<const void*>(attribute.bytes.data()),
                            size_t{attribute.count / 2});
    }
  } else if (attribute.kind == AttributeKind::kDense) {
    kind = DTypeOfAttributeKind(attribute.element_kind);
    if (kind == dtype) {
      return std::make_pair(static_cast<const void*>(attribute.bytes.data()),
                            attribute.bytes.size() / DTypeSize(dtype));
    }
  } else if (attribute.IsScalar()) {
    kind = DTypeOfAttributeKind(attribute.kind);
    if (kind == dtype) {
      return std::make_pair(static_cast<const void*>(&attribute.bits),
                            size_t{1});
    }
  } else if (attribute.kind == AttributeKind::kAggregate &&
             attribute.elements.empty()) {
    return std::make_pair(static_cast<const void*>(nullptr), size_t{0});
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "attribute type does not match the tensor's dtype ", DTypeName(dtype)));
}

// fill_tensor_with_constant.DTYPE %t {value}: every element.
template <typename T>
absl::Status FillWithConstant(DenseHostTensor& tensor,
                              AsyncKernelFrame* frame) {
  if (absl::Status status = CheckTensor<T>(tensor); !status.ok()) {
    return status;
  }
  auto value = NamedAttribute(frame, "value");
  if (!value.ok()) return value.status();
  auto elements = ElementsOf(**value, GetDType<T>());
  if (!elements.ok()) return elements.status();
  if (elements->second != 1) {
    return absl::InvalidArgumentError("expected one value");
  }
  T element;
  std::memcpy(&element, elements->first, sizeof(T));
  for (T& out : tensor.elements<T>()) out = element;
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<Chain> FillTensorWithConstant(Argument<DenseHostTensor> tensor,
                                             AsyncKernelFrame* frame) {
  if (absl::Status status = FillWithConstant<T>(*tensor, frame); !status.ok()) {
    return status;
  }
  return Chain();
}

template <typename T>
absl::Status SyncFillTensorWithConstant(Argument<DenseHostTensor> tensor,
                                        AsyncKernelFrame* frame) {
  return FillWithConstant<T>(*tensor, frame);
}

// set_tensor_with_constant_values.DTYPE %t {values}: one per element.
template <typename T>
absl::Status SetWithConstantValues(DenseHostTensor& tensor,
                                   AsyncKernelFrame* frame) {
  if (absl::Status status = CheckTensor<T>(tensor); !status.ok()) {
    return status;
  }
  auto values = NamedAttribute(frame, "values");
  if (!values.ok()) return values.status();
  auto elements = ElementsOf(**values, GetDType<T>());
  if (!elements.ok()) return elements.status();
  if (static_cast<int64_t>(elements->second) != tensor.NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Incorrect number of values for the tensor: ", elements->second,
        ", but expected ", tensor.NumElements()));
  }
  if (elements->second) {
    std::memcpy(tensor.data(), elements->first, tensor.DataSizeInBytes());
  }
  return absl::OkStatus();
}

template <typename T>
absl::StatusOr<Chain> SetTensorWithConstantValues(
    Argument<DenseHostTensor> tensor, AsyncKernelFrame* frame) {
  if (absl::Status status = SetWithConstantValues<T>(*tensor, frame);
      !status.ok()) {
    return status;
  }
  return Chain();
}

template <typename T>
absl::Status SyncSetTensorWithConstantValues(Argument<DenseHostTensor> tensor,
                                             AsyncKernelFrame* frame) {
  return SetWithConstantValues<T>(*tensor, frame);
}

// set_tensor_with_values.DTYPE(%t[, %ch], %v0, %v1, ...): the async op
// takes a chain after the tensor and returns one; the sync op neither.
template <typename T, bool kSync>
void SetTensorWithValues(AsyncKernelFrame* frame) {
  if (frame->GetNumArgs() < 1 ||
      !frame->GetArgAt(0)->IsType<DenseHostTensor>()) {
    return frame->ReportError(
        absl::InvalidArgumentError("the first operand must be a tensor"));
  }
  if (frame->GetNumResults() != (kSync ? 0u : 1u)) {
    return frame->ReportError(absl::InvalidArgumentError(
        kSync ? "takes no results" : "returns one chain"));
  }
  DenseHostTensor& tensor = frame->GetArgAt(0)->get<DenseHostTensor>();
  if (absl::Status status = CheckTensor<T>(tensor); !status.ok()) {
    return frame->ReportError(status);
  }
  size_t first = 1;
  if (!kSync && frame->GetNumArgs() > 1 &&
      frame->GetArgAt(1)->IsType<Chain>()) {
    first = 2;
  }
  size_t count = frame->GetNumArgs() - first;
  if (static_cast<int64_t>(count) != tensor.NumElements()) {
    return frame->ReportError(absl::InvalidArgumentError(
        absl::StrCat("Incorrect number of values for the tensor: ", count,
                     ", but expected ", tensor.NumElements())));
  }
  absl::Span<T> elements = tensor.elements<T>();
  for (size_t i = 0; i < count; ++i) {
    AsyncValue* value = frame->GetArgAt(first + i);
    if (!value->IsType<T>()) {
      return frame->ReportError(absl::InvalidArgumentError(
          absl::StrCat("value ", i, " is not a ", DTypeName(GetDType<T>()))));
    }
    elements[i] = value->get<T>();
  }
  if (!kSync) frame->EmplaceResultAt<Chain>(0);
}

Chain PrintTensor(RemainingArguments args) {
  const Tensor* tensor = args.size() ? GetTensorIfPresent(*args[0]) : nullptr;
  PrintLine(tensor ? tensor->ToString() : "<not a tensor>");
  return Chain();
}

void SyncPrintTensor(RemainingArguments args) { PrintTensor(args); }

// tensor_equal.DTYPE: both tensors of the dtype, equal shapes and elements.
template <typename T>
absl::StatusOr<bool> Equal(const DenseHostTensor& a, const DenseHostTensor& b) {
  for (const DenseHostTensor* tensor : {&a, &b}) {
    if (absl::Status status = CheckTensor<T>(*tensor); !status.ok()) {
      return status;
    }
  }
  return DenseTensorEqual(a, b);
}

template <typename T>
absl::StatusOr<std::tuple<bool, Chain>> TensorEqual(const DenseHostTensor& a,
                                                    const DenseHostTensor& b) {
  auto equal = Equal<T>(a, b);
  if (!equal.ok()) return equal.status();
  return std::make_tuple(*equal, Chain());
}

template <typename T>
absl::StatusOr<bool> SyncTensorEqual(const DenseHostTensor& a,
                                     const DenseHostTensor& b) {
  return Equal<T>(a, b);
}

// A float's sign and magnitude bits, to count the representable values
// between two floats of one type.
template <typename T>
struct FloatBits {
  bool nan;
  bool negative;
  uint64_t magnitude;
};

template <typename T>
FloatBits<T> BitsOf(T value) {
  if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
    return {std::isnan(value.ToFloat()), (value.bits & 0x8000) != 0,
            uint64_t{value.bits & 0x7fffu}};
  } else {
    using Bits = std::conditional_t<sizeof(T) == 4, uint32_t, uint64_t>;
    Bits bits;
    std::memcpy(&bits, &value, sizeof(bits));
    constexpr Bits kSign = Bits{1} << (8 * sizeof(Bits) - 1);
    return {std::isnan(value), (bits & kSign) != 0,
            static_cast<uint64_t>(bits & ~kSign)};
  }
}

// Whether x and y are at most `ulps` representable values apart. NaN is
// close to nothing; +0 and -0 are the same value.
template <typename T>
bool WithinUlps(T x, T y, uint64_t ulps) {
  FloatBits<T> a = BitsOf(x), b = BitsOf(y);
  if (a.nan || b.nan) return false;
  uint64_t distance;
  if (a.negative == b.negative) {
    distance = a.magnitude > b.magnitude ? a.magnitude - b.magnitude
                                         : b.magnitude - a.magnitude;
  } else {
    // Through zero; saturates (both magnitudes are below 2^63).
    distance = a.magnitude + b.magnitude;
  }
  return distance <= ulps;
}

// tensor_allclose[.Nulp].DTYPE. kUlps == 0: |a - b| <= 1e-8 + 1e-5 * |b|
// per element (DenseTensorAllClose); otherwise at most kUlps units in the
// last place apart.
template <typename T, uint64_t kUlps>
absl::StatusOr<bool> AllClose(const DenseHostTensor& a,
                              const DenseHostTensor& b) {
  for (const DenseHostTensor* tensor : {&a, &b}) {
    if (absl::Status status = CheckTensor<T>(*tensor); !status.ok()) {
      return status;
    }
  }
  if constexpr (kUlps == 0) {
    return DenseTensorAllClose(a, b, /*rtol=*/1e-5, /*atol=*/1e-8);
  } else {
    if (a.shape() != b.shape()) return false;
    absl::Span<const T> xs = a.elements<T>();
    absl::Span<const T> ys = b.elements<T>();
    for (size_t i = 0; i < xs.size(); ++i) {
      if (!WithinUlps(xs[i], ys[i], kUlps)) return false;
    }
    return true;
  }
}

template <typename T, uint64_t kUlps>
absl::StatusOr<std::tuple<bool, Chain>> TensorAllClose(
    const DenseHostTensor& a, const DenseHostTensor& b) {
  auto close = AllClose<T, kUlps>(a, b);
  if (!close.ok()) return close.status();
  return std::make_tuple(*close, Chain());
}

template <typename T>
absl::StatusOr<bool> SyncTensorAllClose(const DenseHostTensor& a,
                                        const DenseHostTensor& b) {
  return AllClose<T, 0>(a, b);
}

TensorShape GetTensorShape(RemainingArguments args) {
  const Tensor* tensor = GetTensorIfPresent(*args[0]);
  return tensor ? tensor->shape() : TensorShape();
}

//===--- tfrt_dht: buffers ------------------------------------------------===//

std::tuple<RCReference<HostBuffer>, Chain> GetBuffer(
    const DenseHostTensor& tensor) {
  return {tensor.buffer(), Chain()};
}

RCReference<HostBuffer> SyncGetBuffer(const DenseHostTensor& tensor) {
  return tensor.buffer();
}

Chain PrintBuffer(const RCReference<HostBuffer>& buffer) {
  PrintLine(buffer ? buffer->DebugString() : "HostBuffer<null>");
  return Chain();
}

void SyncPrintBuffer(const RCReference<HostBuffer>& buffer) {
  PrintBuffer(buffer);
}

absl::StatusOr<RCReference<HostBuffer>> AllocateBuffer(int64_t size,
                                                       int64_t alignment,
                                                       HostContext* host) {
  if (size < 0 || alignment <= 0 || (alignment & (alignment - 1))) {
    return absl::InvalidArgumentError("invalid buffer size or alignment");
  }
  auto buffer =
      HostBuffer::CreateUninitialized(size, alignment, *host->allocator());
  if (!buffer) return absl::ResourceExhaustedError("Cannot allocate buffer");
  return buffer;
}

absl::StatusOr<RCReference<HostBuffer>> GetBufferSlice(
    const RCReference<HostBuffer>& parent, int64_t offset, int64_t size) {
  if (offset < 0 || size < 0) {
    return absl::InvalidArgumentError("negative buffer slice");
  }
  auto slice = HostBuffer::CreateSlice(parent, offset, size);
  if (!slice) {
    return absl::InvalidArgumentError(
        absl::StrCat("slice [", offset, ", ", offset + size,
                     ") is outside a buffer of ", parent->size(), " bytes"));
  }
  return slice;
}

// make_tensor.DTYPE %buffer, %shape: a tensor of the dtype over the buffer.
template <typename T>
absl::StatusOr<DenseHostTensor> TensorOverBuffer(
    const RCReference<HostBuffer>& buffer, const TensorShape& shape) {
  TensorMetadata metadata(GetDType<T>(), shape);
  size_t needed = shape.GetNumElements() * sizeof(T);
  if (buffer->size() < needed) {
    return absl::InvalidArgumentError(absl::StrCat("buffer of ", buffer->size(),
                                                   " bytes is too small for ",
                                                   metadata.DebugString()));
  }
  return DenseHostTensor(metadata, buffer);
}

template <typename T>
absl::StatusOr<std::tuple<DenseHostTensor, Chain>> MakeTensor(
    const RCReference<HostBuffer>& buffer, const TensorShape& shape) {
  auto tensor = TensorOverBuffer<T>(buffer, shape);
  if (!tensor.ok()) return tensor.status();
  return std::make_tuple(*std::move(tensor), Chain());
}

template <typename T>
absl::StatusOr<DenseHostTensor> SyncMakeTensor(
    const RCReference<HostBuffer>& buffer, const TensorShape& shape) {
  return TensorOverBuffer<T>(buffer, shape);
}

//===--- tfrt_sht and coo -------------------------------------------------===//

// tfrt_sht.create_tensor {shape, values}.
absl::StatusOr<StringHostTensor> CreateStringTensor(AsyncKernelFrame* frame) {
  return StringTensorFromAttributes(frame->bef_file(),
                                    frame->GetAttribute("shape"),
                                    frame->GetAttribute("values"));
}

template <typename T, int Rank>
absl::StatusOr<std::tuple<CooHostTensor, Chain>> ConvertDhtToCoo(
    const DenseHostTensor& tensor, HostContext* host) {
  if (absl::Status status = CheckTensor<T, Rank>(tensor); !status.ok()) {
    return status;
  }
  auto coo = ConvertDenseToCoo(tensor, *host->allocator());
  if (!coo.ok()) return coo.status();
  return std::make_tuple(*std::move(coo), Chain());
}

template <typename T, int Rank>
absl::StatusOr<std::tuple<DenseHostTensor, Chain>> ConvertCooToDht(
    const CooHostTensor& tensor, HostContext* host) {
  if (absl::Status status = CheckTensor<T, Rank>(tensor); !status.ok()) {
    return status;
  }
  auto dense = ConvertCooToDense(tensor, *host->allocator());
  if (!dense.ok()) return dense.status();
  return std::make_tuple(*std::move(dense), Chain());
}

template <typename T, int Rank>
absl::StatusOr<std::tuple<bool, Chain>> CooEqual(const CooHostTensor& a,
                                                 const CooHostTensor& b) {
  for (const CooHostTensor* tensor : {&a, &b}) {
    if (absl::Status status = CheckTensor<T, Rank>(*tensor); !status.ok()) {
      return status;
    }
  }
  return std::make_tuple(CooTensorEqual(a, b), Chain());
}

//===--- Registration -----------------------------------------------------===//

void Add(KernelRegistry& registry, const std::string& name,
         KernelDefinition kernel) {
  MustAddKernel(registry, name, kernel);
}

// create_uninitialized_tensor.DTYPE.RANK of tfrt_dht and tfrt_dht_sync.
template <typename T, int Rank>
void RegisterCreateUninitializedTensor(KernelRegistry& registry,
                                       absl::string_view dtype) {
  for (absl::string_view dialect : {"tfrt_dht", "tfrt_dht_sync"}) {
    Add(registry,
        absl::StrCat(dialect, ".create_uninitialized_tensor.", dtype, ".",
                     Rank),
        ASYNCRT_KERNEL((CreateUninitializedTensor<T, Rank>)));
  }
}

template <typename T, int... kRanks>
void RegisterCreateUninitializedTensors(KernelRegistry& registry,
                                        absl::string_view dtype,
                                        std::integer_sequence<int, kRanks...>) {
  (RegisterCreateUninitializedTensor<T, kRanks>(registry, dtype), ...);
}

// The kernels of dtype T, named `dtype` (bool and i1 are both bool).
template <typename T>
void RegisterDTypeKernels(KernelRegistry& registry, absl::string_view dtype) {
  // Ranks 0 to 6, as TFRT's.
  RegisterCreateUninitializedTensors<T>(registry, dtype,
                                        std::make_integer_sequence<int, 7>());
  auto name = [&](absl::string_view dialect, absl::string_view op) {
    return absl::StrCat(dialect, ".", op, ".", dtype);
  };
  Add(registry, name("tfrt_dht", "fill_tensor_with_constant"),
      ASYNCRT_KERNEL(FillTensorWithConstant<T>));
  Add(registry, name("tfrt_dht_sync", "fill_tensor_with_constant"),
      ASYNCRT_KERNEL(SyncFillTensorWithConstant<T>));
  Add(registry, name("tfrt_dht", "set_tensor_with_constant_values"),
      ASYNCRT_KERNEL(SetTensorWithConstantValues<T>));
  Add(registry, name("tfrt_dht_sync", "set_tensor_with_constant_values"),
      ASYNCRT_KERNEL(SyncSetTensorWithConstantValues<T>));
  Add(registry, name("tfrt_dht", "set_tensor_with_values"),
      SetTensorWithValues<T, false>);
  Add(registry, name("tfrt_dht_sync", "set_tensor_with_values"),
      SetTensorWithValues<T, true>);
  Add(registry, name("tfrt_dht", "tensor_equal"),
      ASYNCRT_KERNEL(TensorEqual<T>));
  Add(registry, name("tfrt_dht_sync", "tensor_equal"),
      ASYNCRT_KERNEL(SyncTensorEqual<T>));
  Add(registry, name("tfrt_dht", "make_tensor"), ASYNCRT_KERNEL(MakeTensor<T>));
  Add(registry, name("tfrt_dht_sync", "make_tensor"),
      ASYNCRT_KERNEL(SyncMakeTensor<T>));
}

// coo.*.DTYPE.RANK: the COO kernels of dtype T, ranks 0 to 4 (the ops of
// coo_ops.td).
template <typename T, int Rank>
void RegisterCooKernels(KernelRegistry& registry, absl::string_view dtype) {
  const std::string suffix = absl::StrCat(dtype, ".", Rank);
  Add(registry, absl::StrCat("coo.convert_dht_to_coo.", suffix),
      ASYNCRT_KERNEL((ConvertDhtToCoo<T, Rank>)));
  Add(registry, absl::StrCat("coo.convert_coo_to_dht.", suffix),
      ASYNCRT_KERNEL((ConvertCooToDht<T, Rank>)));
  Add(registry, absl::StrCat("coo.tensor_equal.", suffix),
      ASYNCRT_KERNEL((CooEqual<T, Rank>)));
}

template <typename T, int... kRanks>
void RegisterCooRanks(KernelRegistry& registry, absl::string_view dtype,
                      std::integer_sequence<int, kRanks...>) {
  (RegisterCooKernels<T, kRanks>(registry, dtype), ...);
}

template <typename T>
void RegisterCooDType(KernelRegistry& registry, absl::string_view dtype) {
  RegisterCooRanks<T>(registry, dtype, std::make_integer_sequence<int, 5>());
}

// tensor_allclose.DTYPE and tensor_allclose.Nulp.DTYPE of float type T.
template <typename T>
void RegisterAllCloseKernels(KernelRegistry& registry,
                             absl::string_view dtype) {
  auto name = [&](absl::string_view variant) {
    return absl::StrCat("tfrt_dht.tensor_allclose.", variant, dtype);
  };
  Add(registry, name(""), ASYNCRT_KERNEL((TensorAllClose<T, 0>)));
  Add(registry, name("3ulp."), ASYNCRT_KERNEL((TensorAllClose<T, 3>)));
  Add(registry, name("1000ulp."), ASYNCRT_KERNEL((TensorAllClose<T, 1000>)));
  Add(registry, name("2000ulp."), ASYNCRT_KERNEL((TensorAllClose<T, 2000>)));
  Add(registry, name("100000ulp."),
      ASYNCRT_KERNEL((TensorAllClose<T, 100000>)));
}

}  // namespace

void RegisterTensorKernels(KernelRegistry& registry) {
  auto add = [&](const std::string& name, KernelDefinition kernel) {
    Add(registry, name, kernel);
  };
  // f16 scalars of the tfrt dialect live here, beside the Half type.
  add("tfrt.constant.f16", ASYNCRT_KERNEL(ConstantF16));
  add("tfrt.constant_s.f16", ASYNCRT_KERNEL(ConstantF16));
  add("tfrt.print.f16", ASYNCRT_KERNEL(PrintF16));
  add("ts.build_shape", ASYNCRT_KERNEL(BuildShape));
  add("ts.build_partial_shape", ASYNCRT_KERNEL(BuildPartialShape));
  add("ts.build_unranked_partial_shape",
      ASYNCRT_KERNEL(BuildUnrankedPartialShape));
  add("ts.print_shape", ASYNCRT_KERNEL(PrintShape));
  add("tfrt_dht.print_tensor_shape", ASYNCRT_KERNEL(PrintShape));
  add("ts.print_partial_shape", ASYNCRT_KERNEL(PrintPartialShape));
  add("ts.equal_shape", ASYNCRT_KERNEL(EqualShape));
  add("ts.get_dimension", ASYNCRT_KERNEL(GetDimension));
  add("ts.get_num_elements", ASYNCRT_KERNEL(GetNumElements));
  add("ts.to_shape", ASYNCRT_KERNEL(ToShape));
  add("ts.to_partial_shape", ASYNCRT_KERNEL(ToPartialShape));
  add("ts.as_fixed_rank_shape.0", ASYNCRT_KERNEL(AsFixedRankShape<0>));
  add("ts.as_fixed_rank_shape.1", ASYNCRT_KERNEL(AsFixedRankShape<1>));
  add("ts.as_fixed_rank_shape.2", ASYNCRT_KERNEL(AsFixedRankShape<2>));
  add("ts.as_fixed_rank_shape.3", ASYNCRT_KERNEL(AsFixedRankShape<3>));
  add("ts.as_fixed_rank_shape.4", ASYNCRT_KERNEL(AsFixedRankShape<4>));
  add("ts.print_fixed_rank_shape.0", ASYNCRT_KERNEL(PrintFixedRankShape<0>));
  add("ts.print_fixed_rank_shape.1", ASYNCRT_KERNEL(PrintFixedRankShape<1>));
  add("ts.print_fixed_rank_shape.2", ASYNCRT_KERNEL(PrintFixedRankShape<2>));
  add("ts.print_fixed_rank_shape.3", ASYNCRT_KERNEL(PrintFixedRankShape<3>));
  add("ts.print_fixed_rank_shape.4", ASYNCRT_KERNEL(PrintFixedRankShape<4>));

  // Per dtype: each name bound to the instance for its element type.
  RegisterDTypeKernels<bool>(registry, "i1");
  RegisterDTypeKernels<bool>(registry, "bool");
  RegisterDTypeKernels<int8_t>(registry, "i8");
  RegisterDTypeKernels<int16_t>(registry, "i16");
  RegisterDTypeKernels<int32_t>(registry, "i32");
  RegisterDTypeKernels<int64_t>(registry, "i64");
  RegisterDTypeKernels<uint8_t>(registry, "ui8");
  RegisterDTypeKernels<uint16_t>(registry, "ui16");
  RegisterDTypeKernels<uint32_t>(registry, "ui32");
  RegisterDTypeKernels<uint64_t>(registry, "ui64");
  RegisterDTypeKernels<Half>(registry, "f16");
  RegisterDTypeKernels<BFloat16>(registry, "bf16");
  RegisterDTypeKernels<float>(registry, "f32");
  RegisterDTypeKernels<double>(registry, "f64");
  RegisterDTypeKernels<std::complex<float>>(registry, "complex64");
  RegisterDTypeKernels<std::complex<double>>(registry, "complex128");

  RegisterCooDType<int32_t>(registry, "i32");
  RegisterCooDType<int64_t>(registry, "i64");
  RegisterCooDType<float>(registry, "f32");
  RegisterCooDType<double>(registry, "f64");

  RegisterAllCloseKernels<Half>(registry, "f16");
  RegisterAllCloseKernels<BFloat16>(registry, "bf16");
  RegisterAllCloseKernels<float>(registry, "f32");
  RegisterAllCloseKernels<double>(registry, "f64");
  add("tfrt_dht_sync.tensor_allclose.f32",
      ASYNCRT_KERNEL(SyncTensorAllClose<float>));
  add("tfrt_dht_sync.tensor_allclose.f64",
      ASYNCRT_KERNEL(SyncTensorAllClose<double>));

  add("tfrt_dht.print_tensor", ASYNCRT_KERNEL(PrintTensor));
  add("tfrt_dht_sync.print_tensor", ASYNCRT_KERNEL(SyncPrintTensor));
  add("coo.print_tensor", ASYNCRT_KERNEL(PrintTensor));
  for (absl::string_view dialect : {"tfrt_dht", "tfrt_dht_sync"}) {
    auto name = [&](absl::string_view op) {
      return absl::StrCat(dialect, ".", op);
    };
    add(name("get_tensor_shape"), ASYNCRT_KERNEL(GetTensorShape));
    add(name("allocate_buffer"), ASYNCRT_KERNEL(AllocateBuffer));
    add(name("get_buffer_slice"), ASYNCRT_KERNEL(GetBufferSlice));
  }
  add("tfrt_dht.get_buffer", ASYNCRT_KERNEL(GetBuffer));
  add("tfrt_dht_sync.get_buffer", ASYNCRT_KERNEL(SyncGetBuffer));
  add("tfrt_dht.print_buffer", ASYNCRT_KERNEL(PrintBuffer));
  add("tfrt_dht_sync.print_buffer", ASYNCRT_KERNEL(SyncPrintBuffer));
  add("tfrt_sht.create_tensor", ASYNCRT_KERNEL(CreateStringTensor));
}

}  // namespace asyncrt
