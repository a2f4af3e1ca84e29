// Tensors in ONNX's TensorProto form: the files of ONNX's test data
// (`input_0.pb`, `output_0.pb`) that asyncrt-run reads and writes.
//
// Thread-safe (no shared state). Never blocks.
#ifndef ASYNCRT_COMPILER_ONNX_TENSORS_H_
#define ASYNCRT_COMPILER_ONNX_TENSORS_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/tensor/dense_host_tensor.h"

namespace asyncrt {

// A host tensor holding the serialized onnx.TensorProto `bytes`.
// InvalidArgument for bytes that do not parse or whose data does not match
// the shape; Unimplemented for dtypes the runtime lacks (strings, complex)
// and external data.
absl::StatusOr<DenseHostTensor> ParseOnnxTensor(absl::string_view bytes,
                                                HostAllocator& allocator);

// `tensor` as a serialized onnx.TensorProto named `name` (raw data).
// Unimplemented for a dtype ONNX lacks.
absl::StatusOr<std::string> SerializeOnnxTensor(const DenseHostTensor& tensor,
                                                absl::string_view name);

// One input or output of an ONNX graph as the model's interface sees it.
struct OnnxValueInfo {
  std::string name;
  DType dtype = DType::kInvalid;  // kInvalid: not a tensor the runtime has.
  // -1 for a symbolic or unknown dimension; nullopt for an unknown rank.
  std::optional<std::vector<int64_t>> shape;
};
struct OnnxGraphInterface {
  std::vector<OnnxValueInfo> inputs;  // Without initializers, in order.
  std::vector<OnnxValueInfo> outputs;
};

// The inputs and outputs of the serialized onnx.ModelProto `bytes`: what
// the imported function takes and returns, in order (the model server's
// signature). InvalidArgument for bytes that do not parse.
absl::StatusOr<OnnxGraphInterface> ReadOnnxGraphInterface(
    absl::string_view bytes);

}  // namespace asyncrt

#endif  // ASYNCRT_COMPILER_ONNX_TENSORS_H_
