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
// share one implementation that reads the dtype from the kernel's name and
// checks attribute element types against it.
#include <cinttypes>
#include <cstdio>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/kernels/tensor_attributes.h"
#include "asyncrt/kernels/tensor_kernels.h"
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

// The dtype in a kernel name's third component ("tfrt_dht.fill.i32").
absl::StatusOr<DType> DTypeFromKernelName(absl::string_view kernel_name) {
  std::vector<absl::string_view> parts = absl::StrSplit(kernel_name, '.');
  if (parts.size() >= 3) {
    if (auto dtype = ParseDType(parts[2])) return *dtype;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("no dtype in kernel name ", kernel_name));
}

// The first attribute, whatever its name (TFRT programs name it `value`,
// `shape` or `values` depending on the op and version).
const bef::Attribute* FirstAttribute(AsyncKernelFrame* frame) {
  return frame->GetNumAttributes() ? &frame->GetAttributeAt(0) : nullptr;
}

const bef::Attribute* NamedOrFirst(AsyncKernelFrame* frame,
                                   absl::string_view name) {
  const bef::Attribute* attribute = frame->GetAttribute(name);
  return attribute ? attribute : FirstAttribute(frame);
}

//===--- ts ---------------------------------------------------------------===//

absl::StatusOr<TensorShape> BuildShape(AsyncKernelFrame* frame) {
  auto dims = DimensionsAttribute(NamedOrFirst(frame, "value"));
  if (!dims.ok()) return dims.status();
  return TensorShape(*dims);
}

absl::StatusOr<PartialTensorShape> BuildPartialShape(AsyncKernelFrame* frame) {
  auto dims = IntegerArrayAttribute(NamedOrFirst(frame, "value"));
  if (!dims.ok()) return dims.status();
  for (int64_t d : *dims) {
    if (d < PartialTensorShape::kUnknownDimSize) {
      return absl::InvalidArgumentError(
          absl::StrCat("invalid dimension ", d));
    }
  }
  return PartialTensorShape(absl::MakeConstSpan(*dims));
}

PartialTensorShape BuildUnrankedPartialShape() {
  return PartialTensorShape(std::nullopt);
}

// tfrt.constant.f16 {value = 1.0 : f16}: the attribute's raw half bits.
absl::StatusOr<Half> ConstantF16(RawAttribute value) {
  if (value.get().kind != bef::AttributeKind::kF16) {
    return absl::InvalidArgumentError("expected an f16 attribute");
  }
  return Half{value.get().scalar<uint16_t>()};
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

absl::StatusOr<DenseHostTensor> CreateUninitializedTensor(
    AsyncKernelFrame* frame) {
  absl::StatusOr<DType> dtype = DTypeFromKernelName(frame->kernel_name());
  if (!dtype.ok()) return dtype.status();
  auto dims = DimensionsAttribute(NamedOrFirst(frame, "shape"));
  if (!dims.ok()) return dims.status();
  auto tensor = DenseHostTensor::CreateUninitialized(
      TensorMetadata(*dtype, TensorShape(*dims)),
      *frame->GetHostContext()->allocator());
  if (!tensor) return absl::ResourceExhaustedError("Cannot allocate tensor");
  return std::move(*tensor);
}

// Checks that `attribute` holds elements of the tensor's dtype; returns
// the element bytes and count.
absl::StatusOr<std::pair<const void*, size_t>> ElementsOf(
    const bef::Attribute& attribute, DType dtype) {
  std::optional<DType> kind;
  if (attribute.kind == AttributeKind::kArray) {
    kind = DTypeOfAttributeKind(attribute.element_kind);
    if (kind == dtype) return std::make_pair(static_cast<const void*>(attribute.bytes.data()), size_t{attribute.count});
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

// Little-endian scalar bytes of `attribute.bits` hold the value itself.
absl::StatusOr<Chain> FillTensorWithConstant(Argument<DenseHostTensor> tensor,
                                             AsyncKernelFrame* frame) {
  const bef::Attribute* value = NamedOrFirst(frame, "value");
  if (!value) return absl::InvalidArgumentError("missing value");
  auto elements = ElementsOf(*value, tensor->dtype());
  if (!elements.ok()) return elements.status();
  if (elements->second != 1) {
    return absl::InvalidArgumentError("expected one value");
  }
  size_t size = DTypeSize(tensor->dtype());
  char* data = static_cast<char*>(tensor->data());
  for (int64_t i = 0; i < tensor->NumElements(); ++i) {
    std::memcpy(data + i * size, elements->first, size);
  }
  return Chain();
}

absl::StatusOr<Chain> SetTensorWithConstantValues(
    Argument<DenseHostTensor> tensor, AsyncKernelFrame* frame) {
  const bef::Attribute* values = NamedOrFirst(frame, "values");
  if (!values) return absl::InvalidArgumentError("missing values");
  auto elements = ElementsOf(*values, tensor->dtype());
  if (!elements.ok()) return elements.status();
  if (static_cast<int64_t>(elements->second) != tensor->NumElements()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "Incorrect number of values for the tensor: ", elements->second,
        ", but expected ", tensor->NumElements()));
  }
  if (elements->second) {
    std::memcpy(tensor->data(), elements->first, tensor->DataSizeInBytes());
  }
  return Chain();
}

// set_tensor_with_values.DTYPE(%t, %ch, %v0, %v1, ...).
void SetTensorWithValues(AsyncKernelFrame* frame) {
  if (frame->GetNumArgs() < 1 || !frame->GetArgAt(0)->IsType<DenseHostTensor>()) {
    return frame->ReportError(
        absl::InvalidArgumentError("the first operand must be a tensor"));
  }
  DenseHostTensor& tensor = frame->GetArgAt(0)->get<DenseHostTensor>();
  size_t first = 1;
  if (frame->GetNumArgs() > 1 && frame->GetArgAt(1)->IsType<Chain>()) first = 2;
  size_t count = frame->GetNumArgs() - first;
  if (static_cast<int64_t>(count) != tensor.NumElements()) {
    return frame->ReportError(absl::InvalidArgumentError(absl::StrCat(
        "Incorrect number of values for the tensor: ", count,
        ", but expected ", tensor.NumElements())));
  }
  bool ok = DispatchByDType(tensor.dtype(), [&](auto tag) {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_void_v<T> || std::is_same_v<T, std::string>) {
      return false;
    } else {
      for (size_t i = 0; i < count; ++i) {
        AsyncValue* value = frame->GetArgAt(first + i);
        if (!value->IsType<T>()) return false;
        tensor.elements<T>()[i] = value->get<T>();
      }
      return true;
    }
  });
  if (!ok) {
    return frame->ReportError(
        absl::InvalidArgumentError("value types do not match the tensor"));
  }
  frame->EmplaceResultAt<Chain>(0);
}

Chain PrintTensor(RemainingArguments args) {
  const Tensor* tensor = args.size() ? GetTensorIfPresent(*args[0]) : nullptr;
  PrintLine(tensor ? tensor->ToString() : "<not a tensor>");
  return Chain();
}

std::tuple<bool, Chain> TensorEqual(const DenseHostTensor& a,
                                    const DenseHostTensor& b) {
  return {DenseTensorEqual(a, b), Chain()};
}

std::tuple<bool, Chain> TensorAllClose(const DenseHostTensor& a,
                                       const DenseHostTensor& b) {
  return {DenseTensorAllClose(a, b, /*rtol=*/1e-5, /*atol=*/1e-8), Chain()};
}

TensorShape GetTensorShape(RemainingArguments args) {
  const Tensor* tensor = GetTensorIfPresent(*args[0]);
  return tensor ? tensor->shape() : TensorShape();
}

// tfrt_dht_sync variants return no chain.
absl::Status SyncFillTensorWithConstant(Argument<DenseHostTensor> tensor,
                                        AsyncKernelFrame* frame) {
  return FillTensorWithConstant(tensor, frame).status();
}

absl::Status SyncSetTensorWithConstantValues(Argument<DenseHostTensor> tensor,
                                             AsyncKernelFrame* frame) {
  return SetTensorWithConstantValues(tensor, frame).status();
}

void SyncPrintTensor(RemainingArguments args) { PrintTensor(args); }

//===--- tfrt_dht: buffers ------------------------------------------------===//

std::tuple<RCReference<HostBuffer>, Chain> GetBuffer(
    const DenseHostTensor& tensor) {
  return {tensor.buffer(), Chain()};
}

Chain PrintBuffer(const RCReference<HostBuffer>& buffer) {
  PrintLine(buffer ? buffer->DebugString() : "HostBuffer<null>");
  return Chain();
}

absl::StatusOr<RCReference<HostBuffer>> AllocateBuffer(int64_t size,
                                                       int64_t alignment,
                                                       HostContext* host) {
  if (size < 0 || alignment <= 0 || (alignment & (alignment - 1))) {
    return absl::InvalidArgumentError("invalid buffer size or alignment");
  }
  auto buffer = HostBuffer::CreateUninitialized(size, alignment,
                                                *host->allocator());
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
    return absl::InvalidArgumentError(absl::StrCat(
        "slice [", offset, ", ", offset + size, ") is outside a buffer of ",
        parent->size(), " bytes"));
  }
  return slice;
}

absl::StatusOr<std::tuple<DenseHostTensor, Chain>> MakeTensor(
    const RCReference<HostBuffer>& buffer, const TensorShape& shape,
    AsyncKernelFrame* frame) {
  absl::StatusOr<DType> dtype = DTypeFromKernelName(frame->kernel_name());
  if (!dtype.ok()) return dtype.status();
  TensorMetadata metadata(*dtype, shape);
  size_t needed = shape.GetNumElements() * DTypeSize(*dtype);
  if (buffer->size() < needed) {
    return absl::InvalidArgumentError(absl::StrCat(
        "buffer of ", buffer->size(), " bytes is too small for ",
        metadata.DebugString()));
  }
  return std::make_tuple(DenseHostTensor(metadata, buffer), Chain());
}

//===--- tfrt_sht and coo -------------------------------------------------===//

absl::StatusOr<StringHostTensor> CreateStringTensor(AsyncKernelFrame* frame) {
  const bef::Attribute* values = frame->GetAttribute("values");
  if (!values) values = frame->GetAttribute("value");
  return StringTensorFromAttributes(frame->bef_file(),
                                    frame->GetAttribute("shape"), values);
}

absl::StatusOr<std::tuple<CooHostTensor, Chain>> ConvertDhtToCoo(
    const DenseHostTensor& tensor, HostContext* host) {
  auto coo = ConvertDenseToCoo(tensor, *host->allocator());
  if (!coo.ok()) return coo.status();
  return std::make_tuple(*std::move(coo), Chain());
}

absl::StatusOr<std::tuple<DenseHostTensor, Chain>> ConvertCooToDht(
    const CooHostTensor& tensor, HostContext* host) {
  auto dense = ConvertCooToDense(tensor, *host->allocator());
  if (!dense.ok()) return dense.status();
  return std::make_tuple(*std::move(dense), Chain());
}

std::tuple<bool, Chain> CooEqual(const CooHostTensor& a,
                                 const CooHostTensor& b) {
  return {CooTensorEqual(a, b), Chain()};
}

}  // namespace

void RegisterTensorKernels(KernelRegistry& registry) {
  auto add = [&](const std::string& name, KernelDefinition kernel) {
    MustAddKernel(registry, name, kernel);
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

  static constexpr const char* kDTypes[] = {
      "i1",  "bool", "i8",   "i16",  "i32", "i64", "ui8", "ui16",
      "ui32", "ui64", "f16", "bf16", "f32", "f64", "complex64", "complex128"};
  for (const char* dtype : kDTypes) {
    for (const char* prefix : {"tfrt_dht", "tfrt_dht_sync"}) {
      std::string p = absl::StrCat(prefix, ".");
      for (int rank = 0; rank <= 6; ++rank) {
        add(absl::StrCat(p, "create_uninitialized_tensor.", dtype, ".", rank),
            ASYNCRT_KERNEL(CreateUninitializedTensor));
      }
      bool sync = absl::string_view(prefix) == "tfrt_dht_sync";
      add(absl::StrCat(p, "fill_tensor_with_constant.", dtype),
          sync ? ASYNCRT_KERNEL(SyncFillTensorWithConstant)
               : ASYNCRT_KERNEL(FillTensorWithConstant));
      add(absl::StrCat(p, "set_tensor_with_constant_values.", dtype),
          sync ? ASYNCRT_KERNEL(SyncSetTensorWithConstantValues)
               : ASYNCRT_KERNEL(SetTensorWithConstantValues));
      add(absl::StrCat(p, "set_tensor_with_values.", dtype),
          SetTensorWithValues);
      add(absl::StrCat(p, "tensor_equal.", dtype), ASYNCRT_KERNEL(TensorEqual));
      add(absl::StrCat(p, "make_tensor.", dtype), ASYNCRT_KERNEL(MakeTensor));
    }
    for (int rank = 0; rank <= 6; ++rank) {
      std::string suffix = absl::StrCat(dtype, ".", rank);
      add(absl::StrCat("coo.convert_dht_to_coo.", suffix),
          ASYNCRT_KERNEL(ConvertDhtToCoo));
      add(absl::StrCat("coo.convert_coo_to_dht.", suffix),
          ASYNCRT_KERNEL(ConvertCooToDht));
      add(absl::StrCat("coo.tensor_equal.", suffix), ASYNCRT_KERNEL(CooEqual));
    }
  }
  for (const char* dtype : {"f32", "f64"}) {
    add(absl::StrCat("tfrt_dht.tensor_allclose.", dtype),
        ASYNCRT_KERNEL(TensorAllClose));
    add(absl::StrCat("tfrt_dht_sync.tensor_allclose.", dtype),
        ASYNCRT_KERNEL(TensorAllClose));
  }
  for (const char* prefix : {"tfrt_dht", "tfrt_dht_sync"}) {
    add(absl::StrCat(prefix, ".print_tensor"),
        absl::string_view(prefix) == "tfrt_dht_sync"
            ? ASYNCRT_KERNEL(SyncPrintTensor)
            : ASYNCRT_KERNEL(PrintTensor));
    add(absl::StrCat(prefix, ".get_tensor_shape"),
        ASYNCRT_KERNEL(GetTensorShape));
    add(absl::StrCat(prefix, ".get_buffer"), ASYNCRT_KERNEL(GetBuffer));
    add(absl::StrCat(prefix, ".print_buffer"), ASYNCRT_KERNEL(PrintBuffer));
    add(absl::StrCat(prefix, ".allocate_buffer"),
        ASYNCRT_KERNEL(AllocateBuffer));
    add(absl::StrCat(prefix, ".get_buffer_slice"),
        ASYNCRT_KERNEL(GetBufferSlice));
  }
  add("tfrt_sht.create_tensor", ASYNCRT_KERNEL(CreateStringTensor));
}

}  // namespace asyncrt
