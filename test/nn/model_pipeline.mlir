// The model pipeline lowers nn ops to corert.executeop on the CPU op
// handler, in a form the BEF converter takes. (onnx_backend_test runs such
// programs on ONNX's test data.)
// REQUIRES: nn_ops
// RUN: asyncrt-opt -asyncrt-model-pipeline %s | FileCheck %s
// RUN: asyncrt-opt -asyncrt-model-pipeline %s | asyncrt-translate -mlir-to-bef -o %t.bef
// RUN: bef_executor --devices=cpu %t.bef | FileCheck %s --check-prefix=EXEC
// EXEC: 'main' returned !corert.tensorhandle value
// Each op costs 1 against a far higher threshold: the function is one
// stream, so a call runs wholly on the thread that makes it.
// RUN: asyncrt-opt -asyncrt-model-pipeline %s | asyncrt-opt -tfrt-print-stream 2>&1 | FileCheck %s --check-prefix=STREAM
// STREAM: remark: stream id: 0
// STREAM-NOT: stream id: {{[1-9]}}

// CHECK-LABEL: func.func @main() -> !corert.tensorhandle
// CHECK-NEXT: %[[CH:.*]] = tfrt.new.chain
// CHECK-NEXT: %[[CPU:.*]] = corert.get_op_handler %[[CH]] "cpu"
// CHECK-DAG: %[[X:.*]] = corert.const_dense_tensor dense<{{.*}}> : tensor<1x2xf32>
// CHECK-DAG: %[[W:.*]] = corert.const_dense_tensor dense<{{.*}}> : tensor<2x2xf32>
// The leaky relu is fused into the matmul (-nn-fuse).
// CHECK: %[[R:.*]] = corert.executeop(%[[CPU]]) "nn.matmul"(%[[X]], %[[W]]) {activation = "leaky_relu", activation_alpha = 1.000000e-01 : f32} : 1
// CHECK: tfrt.return %[[R]] : !corert.tensorhandle
func.func @main() -> tensor<1x2xf32> {
  %x = nn.constant dense<[[1.0, 1.0]]> : tensor<1x2xf32> : tensor<1x2xf32>
  %w = nn.constant dense<[[1.0, -1.0], [2.0, -2.0]]> : tensor<2x2xf32> : tensor<2x2xf32>
  %y = nn.matmul %x, %w : (tensor<1x2xf32>, tensor<2x2xf32>) -> tensor<1x2xf32>
  %r = nn.leaky_relu %y {alpha = 0.1 : f32} : (tensor<1x2xf32>) -> tensor<1x2xf32>
  return %r : tensor<1x2xf32>
}
