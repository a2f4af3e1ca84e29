// A servable model's signature: the names, dtypes and shapes of its inputs
// and outputs, as the serving APIs describe and check them. A model's
// function takes its inputs in signature order and returns its outputs in
// signature order.
//
// Where it comes from (model_repository.h): a `signature.json` in the
// version directory, or the model file (an ONNX graph's inputs and
// outputs), or, for neither, positional names with unknown dtypes and
// shapes.
//
//   {"inputs":  [{"name": "x", "dtype": "float32", "shape": [-1, 4]}],
//    "outputs": [{"name": "y", "dtype": "float32", "shape": [-1, 2]}]}
//
// Thread-safety: values.
#ifndef ASYNCRT_SERVING_SIGNATURE_H_
#define ASYNCRT_SERVING_SIGNATURE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/tensor/dtype.h"

namespace asyncrt::serving {

struct TensorSpec {
  std::string name;
  DType dtype = DType::kInvalid;  // kInvalid: any.
  // -1 for a dimension of any size; nullopt for any rank.
  std::optional<std::vector<int64_t>> shape;
};

struct Signature {
  std::vector<TensorSpec> inputs;
  std::vector<TensorSpec> outputs;
};

// Parses the JSON above. dtype names: float32 (or f32, FP32, DT_FLOAT),
// float64, float16, bfloat16, int8..int64, uint8, bool, string (or bytes,
// BYTES, DT_STRING: byte strings).
absl::StatusOr<Signature> ParseSignatureJson(absl::string_view json);

// `count` specs named `prefix`0, `prefix`1, ... of any dtype and shape.
std::vector<TensorSpec> PositionalSpecs(absl::string_view prefix, size_t count);

// OK if `dims` fit `spec`'s shape (-1 matches any size); else
// InvalidArgument: "`what` has shape [1, 2]; the model takes [-1, 4]".
absl::Status CheckShape(const TensorSpec& spec, absl::Span<const int64_t> dims,
                        absl::string_view what);

// Whether the serving APIs carry tensors of `dtype`: bool, 8- to 64-bit
// integers, uint8, the floats and strings.
bool IsServableDType(DType dtype);

// A dtype from any of the names above; kInvalid if none.
DType ParseDTypeName(absl::string_view name);
// TensorFlow's name ("DT_FLOAT") and KServe's ("FP32") of a dtype.
absl::string_view TfDTypeName(DType dtype);
absl::string_view KServeDTypeName(DType dtype);

}  // namespace asyncrt::serving

#endif  // ASYNCRT_SERVING_SIGNATURE_H_
