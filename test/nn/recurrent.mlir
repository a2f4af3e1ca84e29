// Recurrent layers compiled to BEF: their ONNX attributes, a list of
// activation names and their alpha and beta arrays among them, reach the
// runtime op intact. One unit, two steps: x = [1, -2], W = R = 0.5,
// biases 0.1 + 0.2. With Relu: h1 = relu(0.5 + 0.3) = 0.8, h2 =
// relu(-1 + 0.4 + 0.3) = 0. With Affine (alpha 2, beta 0.5): h1 = 2 * 0.8
// + 0.5 = 2.1, h2 = 2 * (-1 + 1.05 + 0.3) + 0.5 = 1.2.
// REQUIRES: nn_ops
// RUN: asyncrt-opt -asyncrt-model-pipeline %s | FileCheck %s
// RUN: asyncrt-opt -asyncrt-model-pipeline %s | grep -v '^}$' > %t.mlir
// RUN: sed -n 's|^// DRIVER: ||p' %s >> %t.mlir
// RUN: asyncrt-translate -mlir-to-bef %t.mlir -o %t.bef
// RUN: bef_executor --devices=cpu --functions=print_main %t.bef | FileCheck %s --check-prefix=EXEC
// A direction the op does not know fails verification with the runtime
// op's own message:
// RUN: sed -n 's|^// BADOP: ||p' %s | not asyncrt-opt 2>&1 | FileCheck %s --check-prefix=BAD
// BAD: nn.lstm: direction 'both' is not forward, reverse or bidirectional
// BADOP: func.func @bad(%x: tensor<2x1x1xf32>, %w: tensor<1x4x1xf32>) -> tensor<2x1x1x1xf32> {
// BADOP:   %y = nn.lstm %x, %w, %w {direction = "both"} : (tensor<2x1x1xf32>, tensor<1x4x1xf32>, tensor<1x4x1xf32>) -> tensor<2x1x1x1xf32>
// BADOP:   return %y : tensor<2x1x1x1xf32>
// BADOP: }

// CHECK-LABEL: func.func @main()
// CHECK: corert.executeop(%{{.*}}) "nn.rnn"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {activations = ["Relu"]} : 2
// CHECK: corert.executeop(%{{.*}}) "nn.rnn"(%{{.*}}, %{{.*}}, %{{.*}}, %{{.*}}) {activation_alpha = [2.000000e+00 : f32], activation_beta = [5.000000e-01 : f32], activations = ["Affine"]} : 2
func.func @main() -> (tensor<2x1x1x1xf32>, tensor<1x1x1xf32>, tensor<2x1x1x1xf32>) {
  %x = nn.constant dense<[[[1.0]], [[-2.0]]]> : tensor<2x1x1xf32> : tensor<2x1x1xf32>
  %w = nn.constant dense<0.5> : tensor<1x1x1xf32> : tensor<1x1x1xf32>
  %b = nn.constant dense<[[0.1, 0.2]]> : tensor<1x2xf32> : tensor<1x2xf32>
  %y, %y_h = nn.rnn %x, %w, %w, %b {activations = ["Relu"]} : (tensor<2x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x2xf32>) -> (tensor<2x1x1x1xf32>, tensor<1x1x1xf32>)
  %a, %a_h = nn.rnn %x, %w, %w, %b {activations = ["Affine"], activation_alpha = [2.0 : f32], activation_beta = [0.5 : f32]} : (tensor<2x1x1xf32>, tensor<1x1x1xf32>, tensor<1x1x1xf32>, tensor<1x2xf32>) -> (tensor<2x1x1x1xf32>, tensor<1x1x1xf32>)
  return %y, %y_h, %a : tensor<2x1x1x1xf32>, tensor<1x1x1xf32>, tensor<2x1x1x1xf32>
}

// EXEC-LABEL: --- Running 'print_main'
// EXEC-NEXT: shape = [2, 1, 1, 1], values = [8.000000e-01, 0.000000e+00]
// EXEC-NEXT: shape = [1, 1, 1], values = [0.000000e+00]
// EXEC-NEXT: shape = [2, 1, 1, 1], values = [2.100000e+00, 1.200000e+00]
// DRIVER: func.func @print_main() -> !tfrt.chain {
// DRIVER:   %ch0 = tfrt.new.chain
// DRIVER:   %y, %y_h, %a = tfrt.call @main() : () -> (!corert.tensorhandle, !corert.tensorhandle, !corert.tensorhandle)
// DRIVER:   %ch1 = corert.print_tensorhandle %y, %ch0
// DRIVER:   %ch2 = corert.print_tensorhandle %y_h, %ch1
// DRIVER:   %ch3 = corert.print_tensorhandle %a, %ch2
// DRIVER:   tfrt.return %ch3 : !tfrt.chain
// DRIVER: }
// DRIVER: }
