// ONNX's operator schemas (libonnx), apart from the importer: their header
// needs C++ exceptions, which the rest of the compiler is built without.
#include <optional>
#include <string>

#include "compiler/onnx/onnx_importer_internal.h"
#include "onnx/defs/schema.h"

namespace asyncrt::onnx_internal {

std::optional<int> OnnxOpSinceVersion(const std::string& op, int64_t opset) {
  const onnx::OpSchema* schema =
      onnx::OpSchemaRegistry::Schema(op, static_cast<int>(opset));
  if (schema == nullptr) return std::nullopt;
  return schema->since_version();
}

}  // namespace asyncrt::onnx_internal
