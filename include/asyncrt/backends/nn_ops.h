// The nn.* op set: the neural-network ops that models run, registered in the
// op registry that eager execution (CoreRuntime::Execute) and graph
// execution (`corert.executeop` in BEF) share, each with its shape function
// and its CPU implementation. Linking asyncrt::nn_ops registers them.
//
// Semantics follow the ONNX operator of the same name (attributes keep
// ONNX's names: strides, pads, dilations, group, auto_pad, kernel_shape,
// axis, alpha, ...). The op set and what each supports: docs/nn_ops.md.
//
// Arithmetic ops compute in f32, and an argument of another dtype is an
// error that names the op and the argument; shape and data-movement ops
// take every fixed-size dtype. Thread-safety: the ops may run concurrently
// on any threads.
#ifndef ASYNCRT_BACKENDS_NN_OPS_H_
#define ASYNCRT_BACKENDS_NN_OPS_H_

#include "asyncrt/core_runtime/op_registry.h"

namespace asyncrt::nn {

// How the ops on oneDNN share the machine. Debian's oneDNN computes a
// primitive on the calling thread and an OpenMP team; several runtime
// workers inside oneDNN with full teams at once would oversubscribe the
// cores.
enum class Threading {
  // One primitive at a time gets the whole OpenMP team (OMP_NUM_THREADS,
  // else every core): the lowest latency for one request. A worker that
  // reaches a primitive while another runs waits for it (briefly blocking
  // that worker) instead of starting a second team. The CPU kernels
  // outside oneDNN (copies and transpositions, elementwise ops and fused
  // chains of 32K elements or more, layer normalization) split large
  // tensors over the same team, under the same rule.
  kLatency,
  // Each primitive runs on its calling thread alone, and primitives on
  // different workers run at once: the most requests per second when
  // independent requests keep the workers busy.
  kThroughput,
};
// The process-wide policy; initially $ASYNCRT_NN_THREADING ("latency" or
// "throughput"), else kLatency. Thread-safe; applies to primitives started
// after the call.
void SetThreading(Threading threading);
Threading GetThreading();

// Denormal (subnormal) floats, below 1.2e-38 in f32, which x86 cores
// compute through a microcode assist costing up to a hundred times an
// ordinary operation: a model whose activations decay into them (a
// squeeze-and-excite gate, a swish) slows down by 10-25% on their account.
enum class Denormals {
  // Flushed to zero, as inputs and as results (x86's DAZ and FTZ), while
  // the ops compute: oneDNN's primitives and the kernels that split over
  // the OpenMP team. The calling thread's mode is restored after each op;
  // the OpenMP team threads a primitive runs on keep it. What TensorFlow
  // does on its CPU threads; differences stay below 1.2e-38.
  kFlush,
  // Computed exactly, at their cost.
  kKeep,
};
// The process-wide policy; initially $ASYNCRT_NN_DENORMALS ("flush" or
// "keep"), else kFlush. Thread-safe; applies to ops started after the call.
// A no-op off x86.
void SetDenormals(Denormals denormals);
Denormals GetDenormals();

// The OpenMP team of a primitive in latency mode: `threads`, or OpenMP's
// default for the process (OMP_NUM_THREADS, else every core) when 0.
// Thread-safe; applies to primitives started after the call.
void SetTeamSize(int threads);

// Elementwise ops: nn.add, nn.sub, nn.mul, nn.div, nn.pow, nn.max, nn.min
// (numpy broadcasting), nn.relu, nn.leaky_relu, nn.clip, nn.sigmoid,
// nn.hard_sigmoid, nn.hard_swish, nn.tanh, nn.erf, nn.gelu, nn.exp, nn.log,
// nn.sqrt, nn.neg, nn.abs, nn.identity; nn.softmax and nn.log_softmax.
void RegisterElementwiseOps(OpRegistry& registry);

// Ops on oneDNN: nn.matmul (numpy matmul), nn.conv and nn.conv_transpose
// (1-D, 2-D and 3-D, groups, dilations, explicit and automatic padding,
// optional bias), nn.max_pool, nn.average_pool, nn.global_average_pool
// (1-D, 2-D and 3-D).
void RegisterOneDnnOps(OpRegistry& registry);

// Shape and data-movement ops: nn.reshape, nn.flatten, nn.transpose,
// nn.squeeze, nn.unsqueeze, nn.expand, nn.concat, nn.split, nn.slice,
// nn.gather, nn.where, nn.cast, nn.pad, nn.shape, nn.constant_of_shape.
void RegisterShapeOps(OpRegistry& registry);

// Resampling: nn.resize (ONNX Resize and Upsample; nearest and linear
// modes, every coordinate transformation but tf_crop_and_resize).
void RegisterResizeOps(OpRegistry& registry);

// Normalizations, reductions and Gemm: nn.batch_normalization,
// nn.layer_normalization, nn.reduce_mean, nn.reduce_sum, nn.reduce_max,
// nn.reduce_min, nn.reduce_prod, nn.reduce_l1, nn.reduce_l2,
// nn.reduce_sum_square, nn.reduce_log_sum, nn.reduce_log_sum_exp, nn.gemm.
void RegisterNormalizationOps(OpRegistry& registry);

// Index, selection and rearrangement ops: nn.arg_max, nn.arg_min (i64
// results), nn.cum_sum, nn.tile, nn.trilu, nn.gather_elements,
// nn.depth_to_space, nn.space_to_depth, nn.hardmax and nn.top_k (two
// results: values and i64 indices).
void RegisterIndexOps(OpRegistry& registry);

// nn.gather_nd and nn.scatter_nd (ONNX GatherND with batch_dims, ScatterND
// with its reductions).
void RegisterNdIndexOps(OpRegistry& registry);
// nn.quantize_linear, dequantize_linear, dynamic_quantize_linear.
void RegisterQuantizeOps(OpRegistry& registry);
// nn.grid_sample.
void RegisterGridSampleOps(OpRegistry& registry);
// nn.lrn.
void RegisterLrnOp(OpRegistry& registry);
// nn.einsum.
void RegisterEinsumOp(OpRegistry& registry);
// nn.reverse_sequence.
void RegisterReverseSequenceOp(OpRegistry& registry);
// nn.rnn, nn.gru and nn.lstm (ONNX's recurrent layers).
void RegisterRecurrentOps(OpRegistry& registry);
// nn.attention (ONNX Attention on batch x sequence x hidden operands).
void RegisterAttentionOp(OpRegistry& registry);
// nn.fused_elementwise: chains of f32 elementwise ops in one pass
// (asyncrt/backends/fused_elementwise.h).
void RegisterFusedElementwiseOp(OpRegistry& registry);

// f16 and bf16 on the CPU: the shape functions of the arithmetic,
// activation, normalization, reduction, pooling and matrix ops accept them
// (devices compute in them); on the CPU those ops widen half arguments to
// f32, compute, and round each half result back. Registered after the
// others: it wraps their CPU implementations.
void ComputeHalvesInF32OnCpu(OpRegistry& registry);

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_NN_OPS_H_
