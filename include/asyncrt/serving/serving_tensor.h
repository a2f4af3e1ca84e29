// ServingTensor: a tensor of a request or a reply, dense numbers (a
// DenseHostTensor) or strings (a StringHostTensor: TF Serving's DT_STRING,
// KServe's BYTES; arbitrary bytes, not only text).
//
// Ownership: holds its tensor; CopyRef shares it. Thread-safety: as the
// tensors (thread-compatible values).
#ifndef ASYNCRT_SERVING_SERVING_TENSOR_H_
#define ASYNCRT_SERVING_SERVING_TENSOR_H_

#include <cstdint>
#include <string>
#include <variant>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"

#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"

namespace asyncrt::serving {

class ServingTensor {
 public:
  // Implicit: a dense tensor or a string tensor is a serving tensor.
  ServingTensor(DenseHostTensor tensor)  // NOLINT(runtime/explicit)
      : value_(std::move(tensor)) {}
  ServingTensor(StringHostTensor tensor)  // NOLINT(runtime/explicit)
      : value_(std::move(tensor)) {}
  ServingTensor(ServingTensor&&) = default;
  ServingTensor& operator=(ServingTensor&&) = default;

  bool IsString() const {
    return std::holds_alternative<StringHostTensor>(value_);
  }
  const Tensor& tensor() const {
    return IsString() ? static_cast<const Tensor&>(strings())
                      : static_cast<const Tensor&>(dense());
  }
  DType dtype() const { return tensor().dtype(); }
  const TensorShape& shape() const { return tensor().shape(); }
  const TensorMetadata& metadata() const { return tensor().metadata(); }
  int64_t NumElements() const { return shape().GetNumElements(); }

  // The tensor as it is: dense() unless IsString(), strings() if it is.
  const DenseHostTensor& dense() const {
    return std::get<DenseHostTensor>(value_);
  }
  const StringHostTensor& strings() const {
    return std::get<StringHostTensor>(value_);
  }

  ServingTensor CopyRef() const {
    if (IsString()) return ServingTensor(strings().CopyRef());
    return ServingTensor(dense().CopyRef());
  }

  // A handle of this tensor on the host (moved in).
  TensorHandle ToHandle(CoreRuntime& core) && {
    if (!IsString()) {
      return core.MakeTensorHandle(std::get<DenseHostTensor>(std::move(value_)));
    }
    TensorMetadata metadata = strings().metadata();
    return TensorHandle(&core.GetHostContext()->host_device(), metadata,
                        MakeAvailableAsyncValueRef<StringHostTensor>(
                            std::get<StringHostTensor>(std::move(value_))));
  }

 private:
  std::variant<DenseHostTensor, StringHostTensor> value_;
};

// KServe's BYTES elements as binary data (Triton's layout, in the REST
// binary-data extension and gRPC's raw contents): each element a 4-byte
// little-endian length, then its bytes. Appends `strings` to `out`.
void AppendLengthPrefixed(absl::Span<const std::string> strings,
                          std::string* out);
// The elements of `data`, which must hold exactly `count` (InvalidArgument
// naming `what` otherwise: cut short, too many, too few).
absl::StatusOr<std::vector<std::string>> ParseLengthPrefixed(
    absl::string_view data, int64_t count, absl::string_view what);

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_SERVING_TENSOR_H_
