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
//   The binary-data extension (Triton's and KServe's): the body is that
//   many bytes of JSON (the Inference-Header-Content-Length header) and
//   then raw tensor bytes (row-major, little-endian), in input order, for
//   each input whose "parameters" give "binary_data_size" instead of
//   "data". Outputs go back the same way when the request asks
//   ("parameters": {"binary_data_output": true}, or per output in
//   "outputs": [{"name", "parameters": {"binary_data": true}}]).
//
// Every malformed body (not JSON, wrong structure, ragged lists, a name or
// dtype the signature does not have, a count that does not fit) is an
// InvalidArgument naming what is wrong; nothing aborts. Inputs come back
// in signature order.
//
// Thread-safety: pure functions.
#ifndef ASYNCRT_SERVING_JSON_CODEC_H_
#define ASYNCRT_SERVING_JSON_CODEC_H_

#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/serving/signature.h"
#include "asyncrt/serving/serving_tensor.h"
#include "asyncrt/tensor/dense_host_tensor.h"

namespace asyncrt::serving {

struct PredictRequest {
  std::vector<ServingTensor> inputs;  // In signature order.
  bool row_format = false;              // "instances" rather than "inputs".
};

absl::StatusOr<PredictRequest> ParseTfServingPredict(
    absl::string_view body, const Signature& signature,
    HostAllocator& allocator);
// The reply to a request of `row_format`; `outputs` in signature order.
absl::StatusOr<std::string> WriteTfServingPredict(
    const std::vector<ServingTensor>& outputs, const Signature& signature,
    bool row_format);

struct KServeInferRequest {
  std::vector<ServingTensor> inputs;  // In signature order.
  // Which outputs go back as binary data: all of them, or these.
  bool all_outputs_binary = false;
  std::vector<std::string> binary_outputs;
};

// `body` is JSON; or, with `json_length`, that many bytes of JSON and then
// the inputs' binary data, which must be used up exactly.
absl::StatusOr<KServeInferRequest> ParseKServeInfer(
    absl::string_view body, const Signature& signature,
    HostAllocator& allocator,
    std::optional<size_t> json_length = std::nullopt);

struct KServeInferReply {
  std::string body;
  // The JSON's length when some outputs follow it as binary data (the
  // reply's Inference-Header-Content-Length); nullopt for all JSON.
  std::optional<size_t> json_length;
};

// The reply; outputs as binary data where `request` (if given) asks.
absl::StatusOr<KServeInferReply> WriteKServeInfer(
    absl::string_view model_name, absl::string_view model_version,
    const std::vector<ServingTensor>& outputs, const Signature& signature,
    const KServeInferRequest* request = nullptr);

// {"error": "message"} (TF Serving's and KServe's error body).
std::string ErrorJson(absl::string_view message);

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_JSON_CODEC_H_
