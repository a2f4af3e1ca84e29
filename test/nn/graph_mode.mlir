// The nn.* ops in graph mode: the same registry, shape functions and CPU
// implementations that eager execution uses, run by corert.executeop.
// REQUIRES: nn_ops
// The shape error of the last function makes bef_executor exit non-zero.
// RUN: not bef_executor %s 2>&1 | FileCheck %s

// CHECK-LABEL: --- Running 'conv_relu_pool'
func.func @conv_relu_pool() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [1, 1, 3, 3], values = [1.0 : f32, 2.0 : f32, 3.0 : f32, 4.0 : f32, 5.0 : f32, 6.0 : f32, 7.0 : f32, 8.0 : f32, 9.0 : f32] } : 1
  %w = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [1, 1, 2, 2], values = [1.0 : f32] } : 1
  %twenty = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [], values = [20.0 : f32] } : 1
  // 2x2 window sums of 1..9.
  %conv = corert.executeop(%cpu) "nn.conv"(%x, %w) { strides = [1, 1] } : 1
  // CHECK-NEXT: shape = [1, 1, 2, 2], values = [1.200000e+01, 1.600000e+01, 2.400000e+01, 2.800000e+01]
  %ch1 = "corert.print_tensorhandle"(%conv, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %shifted = corert.executeop(%cpu) "nn.sub"(%conv, %twenty) : 1
  %relu = corert.executeop(%cpu) "nn.relu"(%shifted) : 1
  // CHECK-NEXT: shape = [1, 1, 2, 2], values = [0.000000e+00, 0.000000e+00, 4.000000e+00, 8.000000e+00]
  %ch2 = "corert.print_tensorhandle"(%relu, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %pool = corert.executeop(%cpu) "nn.global_average_pool"(%relu) : 1
  // CHECK-NEXT: shape = [1, 1, 1, 1], values = [3.000000e+00]
  %ch3 = "corert.print_tensorhandle"(%pool, %ch2) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch3 : !tfrt.chain
}

// Results kept in oneDNN's layout (result_layout = "onednn", what the model
// compiler's -nn-assign-layouts sets) flow into the next convolution as
// input and residual; an op that reads plain tensors (nn.relu) gets them
// converted. A 1x1 convolution summing two channels of ones gives 2; the
// second adds its input: 2 + 2 + 2 = 6.
// CHECK-LABEL: --- Running 'onednn_layouts'
func.func @onednn_layouts() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %x = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [1, 2, 2, 2], values = [1.0 : f32] } : 1
  %w = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [2, 2, 1, 1], values = [1.0 : f32] } : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [2], values = [0.0 : f32] } : 1
  %a = corert.executeop(%cpu) "nn.conv"(%x, %w) { result_layout = "onednn" } : 1
  // CHECK-NEXT: OneDnnTensor dtype = f32, shape = [1, 2, 2, 2], layout = {{[a-dA-D0-9]+}}, values = [2.000000e+00, 2.000000e+00
  %ch1 = "corert.print_tensorhandle"(%a, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %s = corert.executeop(%cpu) "nn.conv"(%a, %w, %b, %a) { result_layout = "onednn" } : 1
  %p = corert.executeop(%cpu) "nn.max_pool"(%s) { kernel_shape = [2, 2], result_layout = "onednn" } : 1
  %g = corert.executeop(%cpu) "nn.global_average_pool"(%p) : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2, 1, 1], values = [6.000000e+00, 6.000000e+00]
  %ch2 = "corert.print_tensorhandle"(%g, %ch1) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  %r = corert.executeop(%cpu) "nn.relu"(%s) : 1
  // CHECK-NEXT: DenseHostTensor dtype = f32, shape = [1, 2, 2, 2], values = [6.000000e+00, 6.000000e+00
  %ch3 = "corert.print_tensorhandle"(%r, %ch2) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch3 : !tfrt.chain
}

// CHECK-LABEL: --- Running 'shape_error'
func.func @shape_error() -> !tfrt.chain {
  %ch0 = tfrt.new.chain
  %null = "corert.create_null_op_handler"() : () -> !corert.ophandler
  %cpu = "corert.create_cpu_op_handler"(%null) : (!corert.ophandler) -> !corert.ophandler
  %a = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [2, 3], values = [1.0 : f32] } : 1
  %b = corert.executeop(%cpu) "tfrt_test.create_dense_tensor"() { shape = [4, 2], values = [1.0 : f32] } : 1
  // The error names the op and the shapes, at the op's location.
  // CHECK: graph_mode.mlir:[[@LINE+1]]:8: error: {{.*}}nn.matmul: inner dimensions differ: [2, 3] x [4, 2]
  %c = corert.executeop(%cpu) "nn.matmul"(%a, %b) : 1
  %ch1 = "corert.print_tensorhandle"(%c, %ch0) : (!corert.tensorhandle, !tfrt.chain) -> !tfrt.chain
  tfrt.return %ch1 : !tfrt.chain
}
