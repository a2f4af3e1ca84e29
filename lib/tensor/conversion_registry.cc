#include "asyncrt/tensor/conversion_registry.h"

#include "absl/strings/str_cat.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/tensor/coo_host_tensor.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/scalar_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"

namespace asyncrt {

namespace {

// An available value holding `result`, or an error value. Errors are not
// reported here: the caller (e.g. the core runtime's kernel) reports them
// once, where they surface.
template <typename T>
RCReference<AsyncValue> ToAsyncValue(absl::StatusOr<T> result) {
  if (!result.ok()) return MakeErrorAsyncValueRef(result.status());
  return MakeAvailableAsyncValueRef<T>(*std::move(result));
}

// The identity conversion of tensor class T: another reference to the same
// data.
template <typename T>
RCReference<AsyncValue> CopyRefConversion(const Tensor& src, const Device&,
                                          const Device&, TensorType,
                                          const ExecutionContext&) {
  return MakeAvailableAsyncValueRef<T>(static_cast<const T&>(src).CopyRef());
}

RCReference<AsyncValue> ScalarToDense(const Tensor& src, const Device&,
                                      const Device&, TensorType,
                                      const ExecutionContext& exec_ctx) {
  return ToAsyncValue(
      ConvertScalarToDense(static_cast<const ScalarHostTensor&>(src),
                           *exec_ctx.host()->allocator()));
}

RCReference<AsyncValue> CooToDense(const Tensor& src, const Device&,
                                   const Device&, TensorType,
                                   const ExecutionContext& exec_ctx) {
  return ToAsyncValue(
      ConvertCooToDense(static_cast<const CooHostTensor&>(src),
                        *exec_ctx.host()->allocator()));
}

RCReference<AsyncValue> DenseToCoo(const Tensor& src, const Device&,
                                   const Device&, TensorType,
                                   const ExecutionContext& exec_ctx) {
  return ToAsyncValue(
      ConvertDenseToCoo(static_cast<const DenseHostTensor&>(src),
                        *exec_ctx.host()->allocator()));
}

void RegisterHostConversions(TensorConversionRegistry& registry) {
  registry.Register(ScalarHostTensorType(), DenseHostTensorType(),
                    &ScalarToDense);
  registry.Register(CooHostTensorType(), DenseHostTensorType(), &CooToDense);
  registry.Register(DenseHostTensorType(), CooHostTensorType(), &DenseToCoo);
  registry.Register(DenseHostTensorType(), DenseHostTensorType(),
                    &CopyRefConversion<DenseHostTensor>);
  registry.Register(StringHostTensorType(), StringHostTensorType(),
                    &CopyRefConversion<StringHostTensor>);
  registry.Register(CooHostTensorType(), CooHostTensorType(),
                    &CopyRefConversion<CooHostTensor>);
  registry.Register(ScalarHostTensorType(), ScalarHostTensorType(),
                    &CopyRefConversion<ScalarHostTensor>);
}

}  // namespace

TensorConversionRegistry& TensorConversionRegistry::Global() {
  // Leaked: conversions may run during static destruction of other objects.
  static TensorConversionRegistry* registry = [] {
    auto* r = new TensorConversionRegistry();
    RegisterHostConversions(*r);
    return r;
  }();
  return *registry;
}

void TensorConversionRegistry::Register(TensorType src, TensorType dst,
                                        TensorConversionFn fn) {
  std::lock_guard<std::mutex> lock(mutex_);
  fns_[{src, dst}] = fn;
}

TensorConversionFn TensorConversionRegistry::Find(TensorType src,
                                                  TensorType dst) const {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = fns_.find({src, dst});
  return it == fns_.end() ? nullptr : it->second;
}

RCReference<AsyncValue> ConvertTensor(const Tensor& src,
                                      const Device& src_device,
                                      const Device& dst_device,
                                      TensorType dst_type,
                                      const ExecutionContext& exec_ctx) {
  TensorType src_type = src.tensor_type();
  TensorConversionFn fn =
      TensorConversionRegistry::Global().Find(src_type, dst_type);
  if (fn == nullptr) {
    return MakeErrorAsyncValueRef(absl::InvalidArgumentError(
        absl::StrCat("Cannot implictly convert ", src_type.name(), " to ",
                     dst_type.name())));
  }
  return fn(src, src_device, dst_device, dst_type, exec_ctx);
}

}  // namespace asyncrt
