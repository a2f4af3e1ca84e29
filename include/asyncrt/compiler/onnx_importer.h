// The ONNX importer: an ONNX model (a serialized onnx.ModelProto) to an MLIR
// module holding one function in the nn dialect.
//
//   mlir::OwningOpRef<mlir::ModuleOp> module = asyncrt::ImportOnnxModel(
//       bytes, "model.onnx", &context, asyncrt::OnnxImportOptions());
//
// The function (`@main` by default) takes the graph's inputs that are not
// initializers, in order, and returns the graph's outputs, in order. Node
// names become the locations of their ops; initializers become nn.constant
// ops whose values are dense resources named after them. Shapes are static:
// symbolic input dimensions take OnnxImportOptions::default_dimension and
// every result type is inferred by the runtime op's shape function.
// Constant subgraphs (shape arithmetic: Shape, Gather, Concat, ...) are
// evaluated at import time by the runtime's own ops, and inputs the runtime
// op takes as attributes (Reshape's shape, Slice's starts, ...) must be
// constant after that.
//
// Errors (a malformed or truncated file, a dangling value name, a cycle, an
// unsupported op, opset or dtype) are emitted as MLIR diagnostics that name
// the node, and the result is null; the importer never aborts on bad input.
//
// Thread-safety: one import per MLIRContext at a time; imports in distinct
// contexts may run concurrently. Blocking: evaluating constant subgraphs
// waits for the runtime's ops.
#ifndef ASYNCRT_COMPILER_ONNX_IMPORTER_H_
#define ASYNCRT_COMPILER_ONNX_IMPORTER_H_

#include <cstdint>
#include <map>
#include <string>

#include "llvm/ADT/StringRef.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OwningOpRef.h"

namespace asyncrt {

struct OnnxImportOptions {
  // The value of a graph input dimension that is symbolic or unknown.
  int64_t default_dimension = 1;
  // The name of the imported function.
  std::string function_name = "main";
  // Graph inputs given a value at compile time (a serialized
  // onnx.TensorProto per input name): they become constants, not function
  // arguments. For models whose shape inputs (Reshape's shape, ...) are
  // graph inputs, as in ONNX's node tests.
  std::map<std::string, std::string> constant_inputs;
};

// The lowest and highest opset of the default ONNX domain that imports.
inline constexpr int64_t kMinOnnxOpset = 6;
inline constexpr int64_t kMaxOnnxOpset = 22;

mlir::OwningOpRef<mlir::ModuleOp> ImportOnnxModel(
    llvm::StringRef bytes, llvm::StringRef file_name,
    mlir::MLIRContext* context, const OnnxImportOptions& options = {});

}  // namespace asyncrt

#endif  // ASYNCRT_COMPILER_ONNX_IMPORTER_H_
