// What the corert op kernels share (op_kernel_support.h).
#include "kernels/core_runtime/op_kernel_support.h"

#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/kernels/tensor_attributes.h"
#include "asyncrt/tensor/dtype.h"

namespace asyncrt {
namespace {

using bef::AttributeKind;

std::optional<OpAttrType> OpAttrTypeOfKind(AttributeKind kind) {
  std::optional<DType> dtype = DTypeOfAttributeKind(kind);
  return dtype ? OpAttrTypeForDType(*dtype) : std::nullopt;
}

}  // namespace

absl::Status AddAttribute(AsyncKernelFrame* frame, OpAttrs& attrs,
                          absl::string_view name,
                          const bef::Attribute& attribute,
                          size_t& next_function) {
  const bef::BefFile& file = frame->bef_file();
  if (auto type = OpAttrTypeOfKind(attribute.kind)) {
    attrs.SetRaw(name, *type, false, &attribute.bits,
                 bef::ScalarSize(attribute.kind), 1);
    return absl::OkStatus();
  }
  switch (attribute.kind) {
    case AttributeKind::kUnit:
      attrs.Set(name, true);
      return absl::OkStatus();
    case AttributeKind::kString:
      attrs.SetString(name, attribute.bytes);
      return absl::OkStatus();
    case AttributeKind::kArray: {
      auto type = OpAttrTypeOfKind(attribute.element_kind);
      if (!type) break;
      attrs.SetRaw(name, *type, true, attribute.bytes.data(),
                   attribute.bytes.size(), attribute.count);
      return absl::OkStatus();
    }
    case AttributeKind::kDense: {
      auto dtype = DTypeOfAttributeKind(attribute.element_kind);
      if (!dtype) break;
      attrs.SetDense(name, *dtype, attribute.shape, attribute.bytes.data(),
                     attribute.bytes.size());
      return absl::OkStatus();
    }
    case AttributeKind::kType: {
      absl::string_view type_name = file.type_name(attribute.index);
      std::optional<DType> dtype = ParseDType(type_name);
      if (!dtype) break;
      attrs.Set(name, *dtype);
      return absl::OkStatus();
    }
    case AttributeKind::kAggregate: {
      if (attribute.elements.empty()) {  // `[]`: an empty array.
        attrs.SetArray<int64_t>(name, absl::Span<const int64_t>());
        return absl::OkStatus();
      }
      // Mixed values (`[dense<..>, 1 : i64]`): each element by position.
      OpAttrs elements;
      for (size_t i = 0; i < attribute.elements.size(); ++i) {
        absl::Status status =
            AddAttribute(frame, elements, absl::StrCat(i),
                         file.attribute(attribute.elements[i]), next_function);
        if (!status.ok()) return status;
      }
      attrs.SetAggregate(name, elements);
      return absl::OkStatus();
    }
    case AttributeKind::kShape:
      attrs.SetShape(name, attribute.bits != 0 ? std::optional(attribute.shape)
                                               : std::nullopt);
      return absl::OkStatus();
    case AttributeKind::kFunction:
      if (next_function >= frame->GetNumFunctions()) break;
      attrs.SetFunc(name, frame->GetFunctionAt(next_function++));
      return absl::OkStatus();
    default:
      break;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unsupported value for op attribute '", name, "'"));
}

absl::Status AddAttributePairs(AsyncKernelFrame* frame, OpAttrs& attrs,
                               const bef::Attribute* pairs,
                               size_t& next_function) {
  if (!pairs) return absl::OkStatus();
  const bef::BefFile& file = frame->bef_file();
  if (pairs->kind != AttributeKind::kAggregate) {
    return absl::InvalidArgumentError("op attributes must be key/value pairs");
  }
  for (uint32_t element : pairs->elements) {
    const bef::Attribute& pair = file.attribute(element);
    if (pair.kind != AttributeKind::kAggregate || pair.elements.size() != 2 ||
        file.attribute(pair.elements[0]).kind != AttributeKind::kString) {
      return absl::InvalidArgumentError(
          "op attributes must be [\"key\", value] pairs");
    }
    absl::Status status =
        AddAttribute(frame, attrs, file.attribute(pair.elements[0]).bytes,
                     file.attribute(pair.elements[1]), next_function);
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

bool IsPropagated(const AsyncValue* error,
                  absl::Span<AsyncValue* const> arguments) {
  // Forwarded values share the status of the value they resolve to.
  const absl::Status* status = error->GetErrorIfPresent();
  for (AsyncValue* argument : arguments) {
    if (argument->GetErrorIfPresent() == status) return true;
    if (argument->IsConcrete() && argument->IsType<TensorHandle>()) {
      AsyncValue* tensor = argument->get<TensorHandle>().GetAsyncTensor();
      if (tensor && tensor->GetErrorIfPresent() == status) return true;
    }
  }
  return false;
}

namespace {

// Errors as SettleHandle says.
RCReference<AsyncValue> SettleError(AsyncValue* error,
                                    absl::Span<AsyncValue* const> arguments,
                                    const ExecutionContext& exec_ctx) {
  if (IsPropagated(error, arguments)) return FormRef(error);
  return EmitErrorAsync(exec_ctx, *error->GetErrorIfPresent());
}

}  // namespace

RCReference<AsyncValue> SettleHandle(TensorHandle handle,
                                     absl::Span<AsyncValue* const> arguments,
                                     const ExecutionContext& exec_ctx) {
  AsyncValue* tensor = handle.GetAsyncTensor();
  if (tensor->IsError()) return SettleError(tensor, arguments, exec_ctx);
  return MakeAvailableAsyncValueRef<TensorHandle>(std::move(handle));
}

RCReference<AsyncValue> SettleChain(RCReference<AsyncValue> chain,
                                    absl::Span<AsyncValue* const> arguments,
                                    const ExecutionContext& exec_ctx) {
  if (chain->IsError()) return SettleError(chain.get(), arguments, exec_ctx);
  return chain;
}

}  // namespace asyncrt
