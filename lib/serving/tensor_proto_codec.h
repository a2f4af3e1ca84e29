// Tensors in the gRPC APIs' messages: TF Serving's TensorProto and KServe
// v2's InferInputTensor / InferOutputTensor, to and from serving tensors
// (dense, or strings: DT_STRING's string_val, BYTES' bytes_contents or raw
// elements each after a 4-byte little-endian length). Internal to
// lib/serving (grpc_server.cc).
//
// Every malformed message (an unsupported dtype, a count that does not fit
// the shape, bytes of the wrong length, a value out of its dtype's range)
// is an InvalidArgument naming the input; nothing aborts, and nothing is
// allocated before the message is known to fill it.
//
// Thread-safety: pure functions.
#ifndef ASYNCRT_LIB_SERVING_TENSOR_PROTO_CODEC_H_
#define ASYNCRT_LIB_SERVING_TENSOR_PROTO_CODEC_H_

#include <string>

#include "absl/status/statusor.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/serving/signature.h"
#include "asyncrt/serving/serving_tensor.h"
#include "kserve/grpc_predict_v2.pb.h"
#include "tensorflow/tensor.pb.h"

namespace asyncrt::serving {

// The most a TensorProto's single typed value may fill (TF Serving's
// broadcast rule): beyond it a few bytes of request would make the server
// allocate without bound.
inline constexpr size_t kMaxFilledTensorBytes = size_t{64} << 20;

tensorflow::DataType ToTfDataType(DType dtype);
DType FromTfDataType(tensorflow::DataType dtype);

// `proto` as a tensor of input `spec` (whose dtype and shape it must fit).
absl::StatusOr<ServingTensor> FromTensorProto(
    const tensorflow::TensorProto& proto, const TensorSpec& spec,
    HostAllocator& allocator);
// `tensor` as dtype, shape and tensor_content (string_val for strings).
absl::Status ToTensorProto(const ServingTensor& tensor,
                           tensorflow::TensorProto* proto);

// `input` (its elements in `raw` if not null, else in its contents) as a
// tensor of `spec`.
absl::StatusOr<ServingTensor> FromInferInput(
    const inference::ModelInferRequest::InferInputTensor& input,
    const std::string* raw, const TensorSpec& spec, HostAllocator& allocator);
// `tensor` as `output` (named `name`), its elements appended to `raw` if
// not null, else in its contents.
absl::Status ToInferOutput(const ServingTensor& tensor,
                           const std::string& name,
                           inference::ModelInferResponse::InferOutputTensor* output,
                           std::string* raw);

}  // namespace asyncrt::serving

#endif  // ASYNCRT_LIB_SERVING_TENSOR_PROTO_CODEC_H_
