// Kernels that make constant tensor handles: corert.const_dense_tensor
// (decoded once per BEF file), const_dense_tensor_on (copied to a device
// once), synthetic_dense_tensor_on (benchmarks' pseudo-random weights),
// create_dense_tensor.DTYPE and const_string_tensor.
#include "kernels/core_runtime/constant_kernels.h"

#include <algorithm>
#include <cmath>
#include <complex>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/kernels/tensor_attributes.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/dtype.h"
#include "asyncrt/tensor/string_host_tensor.h"

namespace asyncrt {
namespace {

using bef::AttributeKind;

absl::StatusOr<TensorHandle> DenseHandle(HostContext* host,
                                         const TensorMetadata& metadata,
                                         const void* data, size_t size,
                                         size_t count) {
  auto tensor =
      DenseHostTensor::CreateUninitialized(metadata, *host->allocator());
  if (!tensor) return absl::ResourceExhaustedError("Cannot allocate tensor");
  size_t element_size = DTypeSize(metadata.dtype);
  int64_t n = metadata.shape.GetNumElements();
  if (count != 1 && static_cast<int64_t>(count) != n) {
    return absl::InvalidArgumentError(
        absl::StrCat(count, " values for a tensor of ", n, " elements"));
  }
  if (count * element_size != size) {
    return absl::InvalidArgumentError("malformed tensor value");
  }
  char* out = static_cast<char*>(tensor->data());
  for (int64_t i = 0; i < n; ++i) {
    std::memcpy(
        out + i * element_size,
        static_cast<const char*>(data) + (count == 1 ? 0 : i) * element_size,
        element_size);
  }
  return TensorHandle(
      &host->host_device(), metadata,
      MakeAvailableAsyncValueRef<DenseHostTensor>(std::move(*tensor)));
}

// corert.const_dense_tensor {value = dense<...>}.
absl::StatusOr<TensorHandle> ConstDenseTensor(AsyncKernelFrame* frame) {
  const bef::Attribute* value = frame->GetAttribute("value");
  if (value == nullptr) return absl::InvalidArgumentError("missing 'value'");
  HostContext* host = frame->GetHostContext();
  // Decoded once per file; every call shares the read-only tensor.
  auto tensor = ConstantTensorFromAttribute(frame->bef_file(), *value,
                                            *host->allocator());
  if (!tensor.ok()) return tensor.status();
  TensorMetadata metadata = tensor->metadata();
  return TensorHandle(
      &host->host_device(), metadata,
      MakeAvailableAsyncValueRef<DenseHostTensor>(*std::move(tensor)));
}

// `constant` on `device`: a handle of its host tensor on the host, else
// the copy kept for the device (made by the first call; made again if it
// failed).
TensorHandle OnDevice(const DecodedConstant& constant, Device& device,
                      AsyncKernelFrame* frame) {
  HostContext* host = frame->GetHostContext();
  const DenseHostTensor& tensor = constant.tensor();
  auto on_host = [&] {
    return TensorHandle(
        &host->host_device(), tensor.metadata(),
        MakeAvailableAsyncValueRef<DenseHostTensor>(tensor.CopyRef()));
  };
  if (&device == &host->host_device()) return on_host();
  const ExecutionContext& exec_ctx = frame->GetExecutionContext();
  std::shared_ptr<const void> copy = constant.GetOrMakeCopy(
      device.incarnation(),
      [&]() -> std::shared_ptr<const void> {
        return std::make_shared<const TensorHandle>(
            on_host().TransferTo(exec_ctx, device));
      },
      [](const void* kept) {
        return static_cast<const TensorHandle*>(kept)->GetErrorIfPresent() ==
               nullptr;
      });
  return static_cast<const TensorHandle*>(copy.get())->CopyRef();
}

// corert.const_dense_tensor_on %device {value = dense<...>}: the constant on
// `device`, copied there once per file and device and shared by every call
// after (a model's weights on a GPU); on the host, as const_dense_tensor.
absl::StatusOr<TensorHandle> ConstDenseTensorOn(RemainingArguments args,
                                                AsyncKernelFrame* frame) {
  const bef::Attribute* value = frame->GetAttribute("value");
  if (value == nullptr) return absl::InvalidArgumentError("missing 'value'");
  const RCReference<Device>* device =
      args.size() == 1 ? args[0]->GetIfPresent<RCReference<Device>>() : nullptr;
  if (device == nullptr || *device == nullptr) {
    return absl::InvalidArgumentError("expects one !tfrt.device operand");
  }
  HostContext* host = frame->GetHostContext();
  absl::StatusOr<const DecodedConstant*> decoded =
      DecodedConstantOf(frame->bef_file(), *value, *host->allocator());
  if (!decoded.ok()) return decoded.status();
  return OnDevice(**decoded, **device, frame);
}

// Synthetic weights of one shape (keyed by the `shape` attribute), by dtype
// and seed.
struct SyntheticWeights {
  mutable std::mutex mutex;
  mutable std::map<std::pair<std::string, int64_t>,
                   std::unique_ptr<DecodedConstant>>
      by_dtype_and_seed;
};

// Deterministic pseudo-random values for synthetic weights of `metadata`
// (see corert.synthetic_dense_tensor_on).
absl::StatusOr<DenseHostTensor> MakeSyntheticTensor(
    const TensorMetadata& metadata, int64_t seed) {
  // Outside the host allocator: like a model's weights mapped from its
  // file, these live as long as the program, not a request.
  const size_t bytes = static_cast<size_t>(metadata.shape.GetNumElements()) *
                       DTypeSize(metadata.dtype);
  void* memory =
      std::aligned_alloc(64, (std::max<size_t>(bytes, 1) + 63) / 64 * 64);
  if (memory == nullptr) {
    return absl::ResourceExhaustedError("cannot allocate weights");
  }
  std::optional<DenseHostTensor> tensor = DenseHostTensor(
      metadata,
      HostBuffer::CreateFromExternal(
          memory, bytes, [](void* data, size_t) { std::free(data); }));
  const TensorShape& shape = metadata.shape;
  float low = 0.5f, high = 1.5f;
  if (shape.GetRank() >= 2) {
    const float bound =
        1.0f / std::sqrt(static_cast<float>(
                   shape.GetNumElements() /
                   std::max<int64_t>(1, shape.GetDimensionSize(0))));
    low = -bound;
    high = bound;
  }
  uint64_t state = 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(seed + 1);
  auto next = [&] {
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return low + (high - low) * static_cast<float>(state >> 40) /
                     static_cast<float>(1ull << 24);
  };
  const int64_t n = shape.GetNumElements();
  switch (metadata.dtype) {
    case DType::kF32: {
      float* out = static_cast<float*>(tensor->data());
      for (int64_t i = 0; i < n; ++i) out[i] = next();
      break;
    }
    case DType::kF16: {
      Half* out = static_cast<Half*>(tensor->data());
      for (int64_t i = 0; i < n; ++i) out[i] = Half::FromFloat(next());
      break;
    }
    case DType::kBF16: {
      BFloat16* out = static_cast<BFloat16*>(tensor->data());
      for (int64_t i = 0; i < n; ++i) out[i] = BFloat16::FromFloat(next());
      break;
    }
    default:
      return absl::InvalidArgumentError(
          absl::StrCat("synthetic weights of ", DTypeName(metadata.dtype),
                       ": only f32, f16 and bf16"));
  }
  tensor->buffer()->MarkReadOnly();
  return std::move(*tensor);
}

// corert.synthetic_dense_tensor_on %device {shape, dtype, seed}: made once
// per file, copied to `device` once, as const_dense_tensor_on.
absl::StatusOr<TensorHandle> SyntheticDenseTensorOn(RemainingArguments args,
                                                    AsyncKernelFrame* frame) {
  const bef::Attribute* shape_attribute = frame->GetAttribute("shape");
  const bef::Attribute* dtype_attribute = frame->GetAttribute("dtype");
  const bef::Attribute* seed_attribute = frame->GetAttribute("seed");
  const RCReference<Device>* device =
      args.size() == 1 ? args[0]->GetIfPresent<RCReference<Device>>() : nullptr;
  if (!shape_attribute || !dtype_attribute || !seed_attribute ||
      !seed_attribute->IsScalar() || device == nullptr || *device == nullptr) {
    return absl::InvalidArgumentError(
        "expects a !tfrt.device operand and shape, dtype and seed");
  }
  auto dims = DimensionsAttribute(shape_attribute);
  if (!dims.ok()) return dims.status();
  const std::string dtype_name(dtype_attribute->bytes);
  std::optional<DType> dtype = ParseDType(dtype_name);
  if (!dtype) return absl::InvalidArgumentError("unknown dtype " + dtype_name);
  const int64_t seed = static_cast<int64_t>(seed_attribute->bits);
  std::shared_ptr<const void> slot = frame->bef_file().GetOrDecode(
      *shape_attribute, [] { return std::make_shared<SyntheticWeights>(); });
  const auto& weights = *static_cast<const SyntheticWeights*>(slot.get());
  const DecodedConstant* decoded = nullptr;
  {
    std::lock_guard<std::mutex> lock(weights.mutex);
    std::unique_ptr<DecodedConstant>& entry =
        weights.by_dtype_and_seed[{dtype_name, seed}];
    if (!entry) {
      absl::StatusOr<DenseHostTensor> tensor =
          MakeSyntheticTensor(TensorMetadata(*dtype, TensorShape(*dims)), seed);
      if (!tensor.ok()) return tensor.status();
      entry = std::make_unique<DecodedConstant>(*std::move(tensor));
    }
    decoded = entry.get();
  }
  return OnDevice(*decoded, **device, frame);
}

// corert.create_dense_tensor.DTYPE {shape = [...], value = [...]}: `value`
// holds elements of the op's dtype T, one (repeated) or one per element;
// complex elements may be (real, imaginary) pairs of their float type.
template <typename T>
absl::StatusOr<TensorHandle> CreateDenseTensor(AsyncKernelFrame* frame) {
  constexpr DType kDType = GetDType<T>();
  auto dims = DimensionsAttribute(frame->GetAttribute("shape"));
  if (!dims.ok()) return dims.status();
  const bef::Attribute* value = frame->GetAttribute("value");
  if (!value) return absl::InvalidArgumentError("missing 'value'");
  std::optional<DType> dtype;
  const void* data = nullptr;
  size_t size = 0, count = 0;
  if (value->kind == AttributeKind::kArray) {
    dtype = DTypeOfAttributeKind(value->element_kind);
    data = value->bytes.data();
    size = value->bytes.size();
    count = value->count;
    const bool pairs = (kDType == DType::kComplex64 && dtype == DType::kF32) ||
                       (kDType == DType::kComplex128 && dtype == DType::kF64);
    if (pairs && count % 2 == 0) {
      dtype = kDType;
      count /= 2;
    }
  } else if (value->IsScalar()) {
    dtype = DTypeOfAttributeKind(value->kind);
    data = &value->bits;
    size = bef::ScalarSize(value->kind);
    count = 1;
  }
  if (dtype != kDType) {
    return absl::InvalidArgumentError(
        absl::StrCat("'value' must hold ", DTypeName(kDType), " elements"));
  }
  return DenseHandle(frame->GetHostContext(),
                     TensorMetadata(kDType, TensorShape(*dims)), data, size,
                     count);
}

// corert.const_string_tensor {shape = [...], value = ["a", ...]}.
absl::StatusOr<TensorHandle> ConstStringTensor(AsyncKernelFrame* frame) {
  auto tensor = StringTensorFromAttributes(frame->bef_file(),
                                           frame->GetAttribute("shape"),
                                           frame->GetAttribute("value"));
  if (!tensor.ok()) return tensor.status();
  TensorMetadata metadata = tensor->metadata();
  return TensorHandle(
      &frame->GetHostContext()->host_device(), metadata,
      MakeAvailableAsyncValueRef<StringHostTensor>(*std::move(tensor)));
}

}  // namespace

void RegisterConstantTensorKernels(KernelRegistry& registry) {
  auto add = [&](absl::string_view name, KernelDefinition kernel) {
    MustAddKernel(registry, name, kernel);
  };
  add("corert.const_dense_tensor", ASYNCRT_KERNEL(ConstDenseTensor));
  add("corert.const_dense_tensor_on", ASYNCRT_KERNEL(ConstDenseTensorOn));
  add("corert.synthetic_dense_tensor_on",
      ASYNCRT_KERNEL(SyntheticDenseTensorOn));
  add("corert_sync.const_dense_tensor", ASYNCRT_KERNEL(ConstDenseTensor));
  add("corert.const_string_tensor", ASYNCRT_KERNEL(ConstStringTensor));
  // Bound to the element type of their dtype (bool and i1 are both bool).
  auto add_create_dense_tensor = [&](absl::string_view dtype,
                                     KernelDefinition kernel) {
    for (absl::string_view dialect : {"corert", "corert_sync"}) {
      add(absl::StrCat(dialect, ".create_dense_tensor.", dtype), kernel);
    }
  };
  add_create_dense_tensor("i1", ASYNCRT_KERNEL(CreateDenseTensor<bool>));
  add_create_dense_tensor("bool", ASYNCRT_KERNEL(CreateDenseTensor<bool>));
  add_create_dense_tensor("i8", ASYNCRT_KERNEL(CreateDenseTensor<int8_t>));
  add_create_dense_tensor("i16", ASYNCRT_KERNEL(CreateDenseTensor<int16_t>));
  add_create_dense_tensor("i32", ASYNCRT_KERNEL(CreateDenseTensor<int32_t>));
  add_create_dense_tensor("i64", ASYNCRT_KERNEL(CreateDenseTensor<int64_t>));
  add_create_dense_tensor("ui8", ASYNCRT_KERNEL(CreateDenseTensor<uint8_t>));
  add_create_dense_tensor("ui16", ASYNCRT_KERNEL(CreateDenseTensor<uint16_t>));
  add_create_dense_tensor("ui32", ASYNCRT_KERNEL(CreateDenseTensor<uint32_t>));
  add_create_dense_tensor("ui64", ASYNCRT_KERNEL(CreateDenseTensor<uint64_t>));
  add_create_dense_tensor("f16", ASYNCRT_KERNEL(CreateDenseTensor<Half>));
  add_create_dense_tensor("bf16", ASYNCRT_KERNEL(CreateDenseTensor<BFloat16>));
  add_create_dense_tensor("f32", ASYNCRT_KERNEL(CreateDenseTensor<float>));
  add_create_dense_tensor("f64", ASYNCRT_KERNEL(CreateDenseTensor<double>));
  add_create_dense_tensor(
      "complex64", ASYNCRT_KERNEL(CreateDenseTensor<std::complex<float>>));
  add_create_dense_tensor(
      "complex128", ASYNCRT_KERNEL(CreateDenseTensor<std::complex<double>>));
}

}  // namespace asyncrt
