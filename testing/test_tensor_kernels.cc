// tfrt_test.* kernels of host tensors and core-runtime values: test
// helpers of TFRT's programs, kept out of the production kernel libraries.
#include <cstring>
#include <cstdio>
#include <string>
#include <tuple>
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
absl::StatusOr<DenseHostTensor> ConstDenseAttr(RawAttribute value,
                                               HostContext* host) {
  return DenseTensorFromAttribute(value.get(), *host->allocator());
}

// tfrt_test.slice_inplace.DTYPE.RANK(%input, %begin, %ch, %output): copies
// the block of `input` starting at `begin` (i64 per dimension) that has
// output's shape into `output`.
absl::StatusOr<Chain> SliceInPlace(const DenseHostTensor& input,
                                   const DenseHostTensor& begin, Chain,
                                   Argument<DenseHostTensor> output) {
  int rank = input.shape().GetRank();
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

}  // namespace

void RegisterTestTensorKernels(KernelRegistry& registry) {
  auto add = [&](const std::string& name, KernelDefinition kernel) {
    MustAddKernel(registry, name, kernel);
  };
  static constexpr const char* kDTypes[] = {
      "i1",  "bool", "i8",   "i16",  "i32", "i64", "ui8", "ui16",
      "ui32", "ui64", "f16", "bf16", "f32", "f64", "complex64", "complex128"};
  for (const char* dtype : kDTypes) {
    for (int rank = 0; rank <= 6; ++rank) {
      add(absl::StrCat("tfrt_test.slice_inplace.", dtype, ".", rank),
          ASYNCRT_KERNEL(SliceInPlace));
    }
  }
  add("tfrt_test.const_dense_attr", ASYNCRT_KERNEL(ConstDenseAttr));
  add("tfrt_test.sync.const_dense_attr", ASYNCRT_KERNEL(ConstDenseAttr));
  add("tfrt_test.error_tensorhandle", ASYNCRT_KERNEL(ErrorTensorHandle));
  add("tfrt_test.corert.op_attrs_print", ASYNCRT_KERNEL(OpAttrsPrint));
  add("tfrt_test.corert.op_attrs_freeze", ASYNCRT_KERNEL(OpAttrsFreeze));
  add("tfrt_test.corert.op_attrs_ref_print", ASYNCRT_KERNEL(OpAttrsRefPrint));
}

}  // namespace asyncrt
