// Internal to the ONNX importer: ONNX tensors as the importer holds them.
#ifndef ASYNCRT_COMPILER_ONNX_ONNX_TENSOR_UTIL_H_
#define ASYNCRT_COMPILER_ONNX_ONNX_TENSOR_UTIL_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "asyncrt/tensor/dtype.h"
#include "onnx/onnx_pb.h"

namespace asyncrt::onnx_internal {

// A constant tensor known at import time: an initializer, a Constant node
// or the result of evaluating a node whose inputs are all constant.
struct ConstTensor {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> dims;
  std::vector<char> bytes;  // Row-major, DTypeSize(dtype) per element.

  int64_t NumElements() const {
    int64_t n = 1;
    for (int64_t d : dims) n *= d;
    return n;
  }
};

// The runtime dtype of an ONNX TensorProto data type; nullopt for those the
// runtime lacks (strings, complex, ...).
std::optional<DType> DTypeOfOnnx(int32_t type);
// The ONNX data type of a runtime dtype; UNDEFINED where ONNX has none.
int32_t OnnxTypeOf(DType dtype);
// "FLOAT", "INT64", ... for messages.
std::string OnnxTypeName(int32_t type);

// The element count of `dims`, or an error for negative or huge shapes.
absl::StatusOr<int64_t> CheckedElements(absl::Span<const int64_t> dims);

// The elements of a TensorProto (raw or typed fields), checked against its
// shape. Unimplemented for dtypes the runtime lacks and external data.
absl::StatusOr<ConstTensor> ReadTensorProto(const onnx::TensorProto& proto);

}  // namespace asyncrt::onnx_internal

#endif  // ASYNCRT_COMPILER_ONNX_ONNX_TENSOR_UTIL_H_
