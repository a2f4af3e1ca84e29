// The nn.* op set: the neural-network ops that models run, registered in the
// op registry that eager execution (CoreRuntime::Execute) and graph
// execution (`corert.executeop` in BEF) share, each with its shape function
// and its CPU implementation. Linking asyncrt::nn_ops registers them.
//
// Semantics follow the ONNX operator of the same name (attributes keep
// ONNX's names: strides, pads, dilations, group, auto_pad, kernel_shape,
// axis, alpha, ...). The op set and what each supports: docs/nn_ops.md.
//
// Computation is in f32; an argument of another dtype is an error that
// names the op and the argument. Thread-safety: the ops may run
// concurrently on any threads.
#ifndef ASYNCRT_BACKENDS_NN_OPS_H_
#define ASYNCRT_BACKENDS_NN_OPS_H_

#include "asyncrt/core_runtime/op_registry.h"

namespace asyncrt::nn {

// Elementwise ops: nn.add, nn.sub, nn.mul, nn.div, nn.pow, nn.max, nn.min
// (numpy broadcasting), nn.relu, nn.leaky_relu, nn.clip, nn.sigmoid,
// nn.hard_sigmoid, nn.hard_swish, nn.tanh, nn.erf, nn.gelu, nn.exp, nn.log,
// nn.sqrt, nn.neg, nn.abs, nn.identity; nn.softmax and nn.log_softmax.
void RegisterElementwiseOps(OpRegistry& registry);

// Ops on oneDNN: nn.matmul (numpy matmul), nn.conv (1-D and 2-D, groups,
// dilations, explicit and automatic padding, optional bias), nn.max_pool,
// nn.average_pool, nn.global_average_pool.
void RegisterOneDnnOps(OpRegistry& registry);

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_NN_OPS_H_
