// tfrt_test.* kernels of host tensors and core-runtime values: test
// helpers of TFRT's programs, kept out of the production kernel libraries.
#include <cstdio>
#include <cstring>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/kernels/core_runtime_kernels.h"
#include "asyncrt/kernels/tensor_attributes.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "testing/test_kernels.h"

namespace asyncrt {
namespace {

// tfrt_test.const_dense_attr {value = dense<...>}.
absl::StatusOr<DenseHostTensor> ConstDenseAttr(AsyncKernelFrame* frame) {
  const bef::Attribute* value = frame->GetAttribute("value");
  if (value == nullptr) {
    return absl::InvalidArgumentError("missing 'value' attribute");
  }
  return DenseTensorFromAttribute(*value,
                                  *frame->GetHostContext()->allocator());
}

// tfrt_test.slice_inplace.DTYPE.RANK(%input, %begin, %ch, %output): copies
// the block of `input` starting at `begin` (i64 per dimension) that has
// output's shape into `output`. Bound to its dtype's element type T and its
// rank at registration.
template <typename T, int kRank>
absl::StatusOr<Chain> SliceInPlace(const DenseHostTensor& input,
                                   const DenseHostTensor& begin, Chain,
                                   Argument<DenseHostTensor> output) {
  constexpr int rank = kRank;
  if (input.dtype() != GetDType<T>() || input.shape().GetRank() != rank) {
    return absl::InvalidArgumentError(absl::StrCat(
        "expected a ", DTypeName(GetDType<T>()), " input of rank ", rank));
  }
  if (begin.dtype() != DType::kI64 || begin.NumElements() != rank ||
      output->shape().GetRank() != rank || output->dtype() != input.dtype()) {
    return absl::InvalidArgumentError("slice operands do not match");
  }
  absl::Span<const int64_t> start = begin.elements<int64_t>();
  for (int d = 0; d < rank; ++d) {
    if (start[d] < 0 || start[d] + output->shape().GetDimensionSize(d) >
                            input.shape().GetDimensionSize(d)) {
      return absl::InvalidArgumentError("slice out of bounds");
    }
  }
  size_t size = DTypeSize(input.dtype());
  std::vector<int64_t> index(rank, 0);
  const char* from = static_cast<const char*>(input.data());
  char* to = static_cast<char*>(output->data());
  for (int64_t i = 0; i < output->NumElements(); ++i) {
    int64_t flat = 0;
    for (int d = 0; d < rank; ++d) {
      flat = flat * input.shape().GetDimensionSize(d) + start[d] + index[d];
    }
    std::memcpy(to + i * size, from + flat * size, size);
    for (int d = rank - 1; d >= 0; --d) {
      if (++index[d] < output->shape().GetDimensionSize(d)) break;
      index[d] = 0;
    }
  }
  return Chain();
}

// One !corert.tensorhandle result: the error, reported here.
absl::StatusOr<RCReference<AsyncValue>> ErrorTensorHandle() {
  return absl::InvalidArgumentError("invalid tensorhandle");
}

void PrintText(const std::string& text) {
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fflush(stdout);
}

Chain OpAttrsPrint(const OpAttrsHolder& attrs) {
  std::string text;
  attrs->Print(&text);
  PrintText(text);
  return Chain();
}

std::tuple<OpAttrsRef, Chain> OpAttrsFreeze(const OpAttrsHolder& attrs) {
  return {attrs->Freeze(), Chain()};
}

Chain OpAttrsRefPrint(const OpAttrsRef& attrs) {
  std::string text;
  attrs->Print(&text);
  PrintText(text);
  return Chain();
}

// tfrt_test.slice_inplace.DTYPE.RANK for ranks 0 to 4 (the ops of
// tfrt_test_ops.td).
template <typename T, int... kRanks>
void RegisterSliceInPlaceRanks(KernelRegistry& registry,
                               absl::string_view dtype,
                               std::integer_sequence<int, kRanks...>) {
  (MustAddKernel(registry,
                 absl::StrCat("tfrt_test.slice_inplace.", dtype, ".", kRanks),
                 ASYNCRT_KERNEL((SliceInPlace<T, kRanks>))),
   ...);
}

template <typename T>
void RegisterSliceInPlace(KernelRegistry& registry, absl::string_view dtype) {
  RegisterSliceInPlaceRanks<T>(registry, dtype,
                               std::make_integer_sequence<int, 5>());
}

}  // namespace

void RegisterTestTensorKernels(KernelRegistry& registry) {
  auto add = [&](const std::string& name, KernelDefinition kernel) {
    MustAddKernel(registry, name, kernel);
  };
  RegisterSliceInPlace<int32_t>(registry, "i32");
  RegisterSliceInPlace<int64_t>(registry, "i64");
  RegisterSliceInPlace<float>(registry, "f32");
  RegisterSliceInPlace<double>(registry, "f64");
  add("tfrt_test.const_dense_attr", ASYNCRT_KERNEL(ConstDenseAttr));
  add("tfrt_test.sync.const_dense_attr", ASYNCRT_KERNEL(ConstDenseAttr));
  add("tfrt_test.error_tensorhandle", ASYNCRT_KERNEL(ErrorTensorHandle));
  add("tfrt_test.corert.op_attrs_print", ASYNCRT_KERNEL(OpAttrsPrint));
  add("tfrt_test.corert.op_attrs_freeze", ASYNCRT_KERNEL(OpAttrsFreeze));
  add("tfrt_test.corert.op_attrs_ref_print", ASYNCRT_KERNEL(OpAttrsRefPrint));
}

}  // namespace asyncrt
