// Tensors in the JSON bodies of TF Serving's REST API and of KServe's v2
// (Open Inference Protocol) REST API, on RapidJSON.
//
// TF Serving :predict
//   row format      {"instances": [row, row, ...]}: each row one input's
//                   value (one input) or an object of them by name; the
//                   rows stack along a new first (batch) dimension. The
//                   reply is {"predictions": [...]}, likewise by row.
//   columnar format {"inputs": value} or {"inputs": {"name": value}}; the
//                   reply is {"outputs": value} or {"outputs": {...}}.
//   Values are nested lists of numbers or booleans; NaN, Infinity and
//   -Infinity are accepted and written.
// KServe v2 infer
//   {"inputs": [{"name", "shape", "datatype": "FP32", "data": [...]}]}; the
//   reply {"model_name", "model_version", "outputs": [{"name", "shape",
//   "datatype", "data"}]} with data flattened.
//
// Every malformed body (not JSON, wrong structure, ragged lists, a name or
// dtype the signature does not have, a count that does not fit) is an
// InvalidArgument naming what is wrong; nothing aborts. Inputs come back
// in signature order.
//
// Thread-safety: pure functions.
#ifndef ASYNCRT_SERVING_JSON_CODEC_H_
#define ASYNCRT_SERVING_JSON_CODEC_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/serving/signature.h"
#include "asyncrt/tensor/dense_host_tensor.h"

namespace asyncrt::serving {

struct PredictRequest {
  std::vector<DenseHostTensor> inputs;  // In signature order.
  bool row_format = false;              // "instances" rather than "inputs".
};

absl::StatusOr<PredictRequest> ParseTfServingPredict(
    absl::string_view body, const Signature& signature,
    HostAllocator& allocator);
// The reply to a request of `row_format`; `outputs` in signature order.
absl::StatusOr<std::string> WriteTfServingPredict(
    const std::vector<DenseHostTensor>& outputs, const Signature& signature,
    bool row_format);

absl::StatusOr<std::vector<DenseHostTensor>> ParseKServeInfer(
    absl::string_view body, const Signature& signature,
    HostAllocator& allocator);
absl::StatusOr<std::string> WriteKServeInfer(
    absl::string_view model_name, absl::string_view model_version,
    const std::vector<DenseHostTensor>& outputs, const Signature& signature);

// {"error": "message"} (TF Serving's and KServe's error body).
std::string ErrorJson(absl::string_view message);

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_JSON_CODEC_H_
