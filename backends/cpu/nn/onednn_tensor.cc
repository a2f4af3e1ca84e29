#include "backends/cpu/nn/onednn_tensor.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/tensor/conversion_registry.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/onednn_util.h"

namespace asyncrt::nn {

std::string OneDnnLayoutName(const dnnl::memory::desc& desc) {
  const dnnl_memory_desc_t& md = desc.data;
  if (md.format_kind != dnnl_blocked) return "opaque";
  const dnnl_blocking_desc_t& blocking = md.format_desc.blocking;
  std::vector<int> order(md.ndims);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](int a, int b) {
    return blocking.strides[a] > blocking.strides[b];
  });
  std::vector<bool> blocked(md.ndims, false);
  for (int i = 0; i < blocking.inner_nblks; ++i) {
    blocked[blocking.inner_idxs[i]] = true;
  }
  std::string name;
  for (int dim : order) {
    name.push_back(static_cast<char>((blocked[dim] ? 'A' : 'a') + dim));
  }
  for (int i = 0; i < blocking.inner_nblks; ++i) {
    absl::StrAppend(&name, blocking.inner_blks[i]);
    name.push_back(static_cast<char>('a' + blocking.inner_idxs[i]));
  }
  return name;
}

namespace {

// Copies `tensor`'s elements into `out` in the plain (row-major) layout.
// Throws dnnl::error.
void ReorderToPlain(const OneDnnTensor& tensor, void* out) {
  if (tensor.NumElements() == 0) return;
  const dnnl::memory::desc plain = PlainF32(tensor.desc().dims());
  const std::string layout = OneDnnLayoutName(tensor.desc());
  // Made once per layout and shape (an opaque layout, which the name does
  // not tell apart, every time).
  auto make = [&] {
    return dnnl::primitive(dnnl::reorder(dnnl::reorder::primitive_desc(
        CpuEngine(), tensor.desc(), CpuEngine(), plain, PrimitiveAttr())));
  };
  PrimitiveStep step{
      layout == "opaque"
          ? make()
          : CachedPrimitive(
                absl::StrCat(layout, "|",
                             absl::StrJoin(tensor.desc().dims(), "x")),
                make),
      {{DNNL_ARG_FROM, Wrap(tensor.desc(), tensor.data())},
       {DNNL_ARG_TO, Wrap(plain, out)}}};
  ExecutePrimitives(absl::MakeConstSpan(&step, 1));
}

// A reorder into the plain layout: what every op that does not know
// OneDnnTensors reads.
RCReference<AsyncValue> OneDnnToDense(const Tensor& src, const Device&,
                                      const Device&, TensorType,
                                      const ExecutionContext& exec_ctx) {
  const auto& tensor = static_cast<const OneDnnTensor&>(src);
  AsyncValueRef<DenseHostTensor> dense =
      DenseHostTensor::MakeUninitializedAsyncValue(
          tensor.metadata(), *exec_ctx.host()->allocator());
  if (!dense) {
    return MakeErrorAsyncValueRef(absl::StrCat(
        "cannot allocate ", tensor.shape().DebugString(),
        " to convert a OneDnnTensor to a DenseHostTensor"));
  }
  try {
    ReorderToPlain(tensor, dense->data());
  } catch (const dnnl::error& error) {
    return MakeErrorAsyncValueRef(absl::StrCat(
        "converting a OneDnnTensor to a DenseHostTensor: oneDNN: ",
        error.what()));
  }
  return dense;
}

}  // namespace

TensorType OneDnnTensor::Type() {
  static const TensorType type = TensorType::Register("OneDnnHost");
  return type;
}

void OneDnnTensor::Print(std::string* out) const {
  absl::StrAppend(out, "OneDnnTensor ", metadata().DebugString(),
                  ", layout = ", OneDnnLayoutName(desc_), ", values = ");
  // The values in logical (row-major) order, as a DenseHostTensor prints
  // them.
  std::vector<float> plain(NumElements());
  try {
    ReorderToPlain(*this, plain.data());
  } catch (const dnnl::error& error) {
    absl::StrAppend(out, "<oneDNN: ", error.what(), ">");
    return;
  }
  internal::AppendElementList(dtype(), plain.data(), NumElements(), out);
}

absl::StatusOr<OneDnnOperand> GetOneDnnOperand(absl::string_view op,
                                               const Tensor& tensor,
                                               const dnnl::memory::dims& dims) {
  if (tensor.tensor_type() == DenseHostTensorType()) {
    return OneDnnOperand{PlainF32(dims),
                         static_cast<const DenseHostTensor&>(tensor).data()};
  }
  if (tensor.tensor_type() == OneDnnTensor::Type()) {
    const auto& onednn = static_cast<const OneDnnTensor&>(tensor);
    if (onednn.desc().dims() != dims) {
      return OpError(op, absl::StrCat("a OneDnnTensor of shape ",
                                      tensor.shape().DebugString(),
                                      " has other oneDNN dimensions"));
    }
    return OneDnnOperand{onednn.desc(), onednn.data()};
  }
  return OpError(op, absl::StrCat("cannot read a ",
                                  tensor.tensor_type().name(), " tensor"));
}

absl::StatusOr<bool> WantsOneDnnResult(absl::string_view op,
                                       const OpAttrs& attrs) {
  std::optional<absl::string_view> layout = attrs.GetString("result_layout");
  if (!layout || *layout == "plain") return false;
  if (*layout == "onednn") return true;
  return OpError(op, absl::StrCat("unknown result_layout '", *layout,
                                  "' (plain or onednn)"));
}

void RegisterOneDnnTensor() {
  RegisterTensorPayloadType<OneDnnTensor>();
  TensorConversionRegistry::Global().Register(
      OneDnnTensor::Type(), DenseHostTensorType(), &OneDnnToDense);
}

}  // namespace asyncrt::nn
