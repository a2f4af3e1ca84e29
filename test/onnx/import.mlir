// The ONNX importer on models of ONNX's own test data: names, constants as
// dense resources, shape inference by the runtime's shape functions, and
// clear errors for unsupported or malformed models.
// REQUIRES: onnx
// RUN: asyncrt-translate -import-onnx %onnx_data/node/test_basic_conv_with_padding/model.onnx | FileCheck %s --check-prefix=CONV
// RUN: asyncrt-translate -import-onnx %onnx_data/pytorch-converted/test_Conv2d/model.onnx | FileCheck %s --check-prefix=WEIGHTS
// RUN: asyncrt-translate -import-onnx %onnx_data/pytorch-converted/test_Conv2d/model.onnx | asyncrt-opt -asyncrt-model-pipeline | asyncrt-translate -mlir-to-bef -o %t.bef
// RUN: not asyncrt-translate -import-onnx %onnx_data/node/test_unique_not_sorted_without_axis/model.onnx 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OP
// RUN: head -c 100 %onnx_data/pytorch-converted/test_Conv2d/model.onnx > %t.truncated.onnx
// RUN: not asyncrt-translate -import-onnx %t.truncated.onnx 2>&1 | FileCheck %s --check-prefix=TRUNCATED
// RUN: not asyncrt-translate -import-onnx %s 2>&1 | FileCheck %s --check-prefix=NOT_ONNX

// CONV: func.func @main(%arg0: tensor<1x1x5x5xf32>, %arg1: tensor<1x1x3x3xf32>) -> tensor<1x1x5x5xf32>
// CONV-NEXT: %0 = nn.conv %arg0, %arg1 {kernel_shape = [3, 3], pads = [1, 1, 1, 1]} : (tensor<1x1x5x5xf32>, tensor<1x1x3x3xf32>) -> tensor<1x1x5x5xf32>
// CONV-NEXT: return %0

// Initializers keep their names; large ones are dense resources.
// WEIGHTS: func.func @main(%arg0: tensor<2x3x7x5xf32>) -> tensor<2x4x5x4xf32>
// WEIGHTS-DAG: nn.constant dense<{{.*}}> : tensor<4xf32> {name = "2"}
// WEIGHTS-DAG: nn.constant dense_resource<"1"> : tensor<4x3x3x2xf32> {name = "1"}
// WEIGHTS: nn.conv
// WEIGHTS: dialect_resources

// UNKNOWN-OP: error: node 'Y' (Unique): unsupported op
// TRUNCATED: error: not a valid ONNX model
// NOT_ONNX: error: {{not a valid ONNX model|the model imports no opset}}
