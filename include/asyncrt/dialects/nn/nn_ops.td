//===- nn_ops.td - The model-level nn dialect --------------*- tablegen -*-===//
//
// `nn.*`: neural-network ops on tensors at the model level, what the ONNX
// importer produces and the model compiler's passes rewrite. Each op is the
// runtime op of the same name (docs/nn_ops.md): the same operands, the same
// attributes (ONNX's names) and the same shape function. Operands are
// declared here; attributes are not, because the runtime's shape function
// is their single definition: the RuntimeShapeFunction trait runs it in the
// verifier, so a module verifies exactly when the runtime would accept each
// op on its operand types.
//
//===----------------------------------------------------------------------===//

#ifndef ASYNCRT_DIALECTS_NN_NN_OPS_TD_
#define ASYNCRT_DIALECTS_NN_NN_OPS_TD_

include "mlir/IR/BuiltinAttributeInterfaces.td"
include "mlir/IR/DialectBase.td"
include "mlir/IR/OpBase.td"
include "mlir/Interfaces/SideEffectInterfaces.td"

def NN_Dialect : Dialect {
  let name = "nn";
  let summary = "neural-network ops at the model level (ONNX semantics)";
  let description = [{
    Ops on ranked tensors, one per runtime `nn.*` op. Their attributes keep
    ONNX's names and are checked, with the operand types, by the runtime
    op's shape function; the result types must be what it infers.
  }];
  let cppNamespace = "::asyncrt::nn";
  let usePropertiesForAttributes = 0;
}

// Verifies the op with the runtime op's shape function (nn_dialect.h).
def NN_RuntimeShapeFunction : NativeOpTrait<"RuntimeShapeFunction"> {
  let cppNamespace = "::asyncrt::nn";
}

class NN_Op<string mnemonic, list<Trait> traits = []>
    : Op<NN_Dialect, mnemonic, !listconcat([Pure, NN_RuntimeShapeFunction],
                                           traits)> {
  let results = (outs AnyTensor:$result);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
}

class NN_UnaryOp<string mnemonic, string what> : NN_Op<mnemonic> {
  let summary = what;
  let arguments = (ins AnyTensor:$x);
}

class NN_BinaryOp<string mnemonic, string what> : NN_Op<mnemonic> {
  let summary = what # " with numpy broadcasting";
  let arguments = (ins AnyTensor:$a, AnyTensor:$b);
}

def NN_AddOp : NN_BinaryOp<"add", "a + b">;
def NN_SubOp : NN_BinaryOp<"sub", "a - b">;
def NN_MulOp : NN_BinaryOp<"mul", "a * b">;
def NN_DivOp : NN_BinaryOp<"div", "a / b">;
def NN_PowOp : NN_BinaryOp<"pow", "a ** b">;
def NN_MaxOp : NN_BinaryOp<"max", "max(a, b)">;
def NN_MinOp : NN_BinaryOp<"min", "min(a, b)">;
def NN_ModOp : NN_BinaryOp<"mod", "a mod b (`fmod`: the dividend's sign)">;
def NN_BitShiftOp : NN_BinaryOp<"bit_shift",
    "a shifted by b bits, `direction` LEFT or RIGHT (unsigned integers)">;
def NN_EqualOp : NN_BinaryOp<"equal", "a == b">;
def NN_LessOp : NN_BinaryOp<"less", "a < b">;
def NN_LessOrEqualOp : NN_BinaryOp<"less_or_equal", "a <= b">;
def NN_GreaterOp : NN_BinaryOp<"greater", "a > b">;
def NN_GreaterOrEqualOp : NN_BinaryOp<"greater_or_equal", "a >= b">;
def NN_AndOp : NN_BinaryOp<"and", "a and b (bool)">;
def NN_OrOp : NN_BinaryOp<"or", "a or b (bool)">;
def NN_XorOp : NN_BinaryOp<"xor", "a xor b (bool)">;
def NN_BitwiseAndOp : NN_BinaryOp<"bitwise_and", "a & b (integers)">;
def NN_BitwiseOrOp : NN_BinaryOp<"bitwise_or", "a | b (integers)">;
def NN_BitwiseXorOp : NN_BinaryOp<"bitwise_xor", "a ^ b (integers)">;
def NN_PReluOp : NN_BinaryOp<"prelu", "x, or slope * x where x < 0">;
def NN_MatMulOp : NN_Op<"matmul"> {
  let summary = "numpy matmul, with fusions";
  let description = [{
    `nn.matmul %a, %b[, %bias[, %sum]]`: `%bias` (one value per column) is
    added to the product, then `%sum` (a residual of the result's shape),
    then `activation` is applied, as for nn.conv ("relu", "leaky_relu",
    "clip", "gelu", "linear": `activation_alpha` * x + `activation_beta`).
    The fusion pass folds the ops that follow a matmul into it.
  }];
  let arguments = (ins AnyTensor:$a, AnyTensor:$b,
                   Variadic<AnyTensor>:$bias_and_sum);
}

def NN_ReluOp : NN_UnaryOp<"relu", "max(x, 0)">;
def NN_SigmoidOp : NN_UnaryOp<"sigmoid", "1 / (1 + exp(-x))">;
def NN_TanhOp : NN_UnaryOp<"tanh", "tanh(x)">;
def NN_ErfOp : NN_UnaryOp<"erf", "erf(x)">;
def NN_ExpOp : NN_UnaryOp<"exp", "exp(x)">;
def NN_LogOp : NN_UnaryOp<"log", "log(x)">;
def NN_SqrtOp : NN_UnaryOp<"sqrt", "sqrt(x)">;
def NN_NegOp : NN_UnaryOp<"neg", "-x">;
def NN_AbsOp : NN_UnaryOp<"abs", "|x|">;
def NN_IdentityOp : NN_UnaryOp<"identity", "x">;
def NN_SignOp : NN_UnaryOp<"sign", "-1, 0 or 1">;
def NN_FloorOp : NN_UnaryOp<"floor", "floor(x)">;
def NN_CeilOp : NN_UnaryOp<"ceil", "ceil(x)">;
def NN_RoundOp : NN_UnaryOp<"round", "x rounded, halves to even">;
def NN_ReciprocalOp : NN_UnaryOp<"reciprocal", "1 / x">;
def NN_SinOp : NN_UnaryOp<"sin", "sin(x)">;
def NN_CosOp : NN_UnaryOp<"cos", "cos(x)">;
def NN_TanOp : NN_UnaryOp<"tan", "tan(x)">;
def NN_AsinOp : NN_UnaryOp<"asin", "asin(x)">;
def NN_AcosOp : NN_UnaryOp<"acos", "acos(x)">;
def NN_AtanOp : NN_UnaryOp<"atan", "atan(x)">;
def NN_SinhOp : NN_UnaryOp<"sinh", "sinh(x)">;
def NN_CoshOp : NN_UnaryOp<"cosh", "cosh(x)">;
def NN_AsinhOp : NN_UnaryOp<"asinh", "asinh(x)">;
def NN_AcoshOp : NN_UnaryOp<"acosh", "acosh(x)">;
def NN_AtanhOp : NN_UnaryOp<"atanh", "atanh(x)">;
def NN_SoftplusOp : NN_UnaryOp<"softplus", "log(1 + exp(x))">;
def NN_SoftsignOp : NN_UnaryOp<"softsign", "x / (1 + |x|)">;
def NN_MishOp : NN_UnaryOp<"mish", "x * tanh(softplus(x))">;
def NN_EluOp : NN_UnaryOp<"elu", "x, or alpha * (exp(x) - 1) where x < 0">;
def NN_CeluOp : NN_UnaryOp<"celu", "continuously differentiable elu">;
def NN_SeluOp : NN_UnaryOp<"selu", "gamma * elu(x) with alpha">;
def NN_ThresholdedReluOp
    : NN_UnaryOp<"thresholded_relu", "x where x > alpha, else 0">;
def NN_ShrinkOp : NN_UnaryOp<"shrink",
    "x + bias where x < -lambd, x - bias where x > lambd, else 0">;
def NN_NotOp : NN_UnaryOp<"not", "not x (bool)">;
def NN_BitwiseNotOp : NN_UnaryOp<"bitwise_not", "~x (integers)">;
def NN_IsNanOp : NN_UnaryOp<"is_nan", "x is NaN (bool)">;
def NN_IsInfOp : NN_UnaryOp<"is_inf", "x is infinite (bool)">;
def NN_GeluOp : NN_UnaryOp<"gelu", "x * Phi(x) (exact, erf form)">;
def NN_LeakyReluOp : NN_UnaryOp<"leaky_relu", "x or alpha * x">;
def NN_ClipOp : NN_UnaryOp<"clip", "x clamped to [min, max]">;
def NN_HardSigmoidOp : NN_UnaryOp<"hard_sigmoid", "clamp(alpha * x + beta)">;
def NN_HardSwishOp : NN_UnaryOp<"hard_swish", "x * hard_sigmoid(x)">;
def NN_SoftmaxOp : NN_UnaryOp<"softmax", "softmax along `axis`">;
def NN_LogSoftmaxOp : NN_UnaryOp<"log_softmax", "log of softmax">;
def NN_MaxPoolOp : NN_UnaryOp<"max_pool", "max pooling">;
def NN_AveragePoolOp : NN_UnaryOp<"average_pool", "average pooling">;
def NN_GlobalAveragePoolOp
    : NN_UnaryOp<"global_average_pool", "mean over spatial dimensions">;
def NN_ReduceMeanOp : NN_UnaryOp<"reduce_mean", "mean over `axes`">;
def NN_ReduceSumOp : NN_UnaryOp<"reduce_sum", "sum over `axes`">;
def NN_ReduceMaxOp : NN_UnaryOp<"reduce_max", "max over `axes`">;
def NN_ReduceMinOp : NN_UnaryOp<"reduce_min", "min over `axes`">;
def NN_ReduceProdOp : NN_UnaryOp<"reduce_prod", "product over `axes`">;
def NN_ReduceL1Op : NN_UnaryOp<"reduce_l1", "sum of |x| over `axes`">;
def NN_ReduceL2Op
    : NN_UnaryOp<"reduce_l2", "sqrt of the sum of x * x over `axes`">;
def NN_ReduceSumSquareOp
    : NN_UnaryOp<"reduce_sum_square", "sum of x * x over `axes`">;
def NN_ReduceLogSumOp : NN_UnaryOp<"reduce_log_sum", "log of the sum over `axes`">;
def NN_ReduceLogSumExpOp
    : NN_UnaryOp<"reduce_log_sum_exp", "log of the sum of exp(x) over `axes`">;
def NN_ArgMaxOp : NN_UnaryOp<"arg_max", "index (i64) of the max along `axis`">;
def NN_ArgMinOp : NN_UnaryOp<"arg_min", "index (i64) of the min along `axis`">;
def NN_CumSumOp : NN_UnaryOp<"cum_sum", "running sum along `axis`">;
def NN_TileOp : NN_UnaryOp<"tile", "x repeated `repeats` times per dimension">;
def NN_TriluOp
    : NN_UnaryOp<"trilu", "upper or lower triangles, from diagonal `k`">;
def NN_DepthToSpaceOp
    : NN_UnaryOp<"depth_to_space", "channels moved into spatial blocks">;
def NN_SpaceToDepthOp
    : NN_UnaryOp<"space_to_depth", "spatial blocks moved into channels">;
def NN_HardmaxOp : NN_UnaryOp<"hardmax", "1 at the first max along `axis`">;
def NN_ReshapeOp : NN_UnaryOp<"reshape", "x with shape `shape`">;
def NN_FlattenOp : NN_UnaryOp<"flatten", "x as a matrix split at `axis`">;
def NN_SqueezeOp : NN_UnaryOp<"squeeze", "x without unit `axes`">;
def NN_UnsqueezeOp : NN_UnaryOp<"unsqueeze", "x with unit `axes` added">;
def NN_TransposeOp : NN_UnaryOp<"transpose", "x permuted by `perm`">;
def NN_ExpandOp : NN_UnaryOp<"expand", "x broadcast to `shape`">;
def NN_CastOp : NN_UnaryOp<"cast", "x converted to dtype `to`">;
def NN_PadOp : NN_UnaryOp<"pad", "x padded by `pads`">;
def NN_ResizeOp : NN_UnaryOp<"resize", "x resized by `scales` or to `sizes`">;
def NN_SliceOp : NN_UnaryOp<"slice", "x sliced by `starts`, `ends`, ...">;
def NN_ShapeOp : NN_UnaryOp<"shape", "the shape of x (i64)">;
def NN_SizeOp : NN_UnaryOp<"size", "the number of elements of x (i64, 0-d)">;
def NN_EyeLikeOp : NN_UnaryOp<"eye_like",
    "ones on diagonal `k` of x's 2-D shape, of `dtype` (else x's)">;

def NN_AttentionOp : NN_Op<"attention"> {
  let summary = "scaled dot-product attention over heads (ONNX Attention)";
  let description = [{
    `nn.attention %q, %k, %v {q_num_heads = H}`: ONNX's Attention (opset 23)
    on batch x sequence x hidden operands, each hidden dimension the heads'
    vectors side by side: per head, softmax(q k^T * `scale`) v (`scale`
    1 / sqrt(head size) unless given), the result batch x q-sequence x
    (H x value head size). `kv_num_heads` (default H) divides H: query
    heads share key and value heads in groups. Made by -nn-fuse-attention
    from the matrix products, softmax and head transposes of a
    transformer's attention. Packed: `nn.attention %qkv {qkv_widths =
    [Nq, Nk, Nv], ...}` takes Q, K and V side by side in each row of one
    operand (one sequence for all three), as a fused projection of Q, K and
    V makes them (-nn-fuse-qkv).
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs);
}

def NN_ConvOp : NN_Op<"conv"> {
  let summary = "convolution (1-D and 2-D, grouped, dilated), with fusions";
  let description = [{
    `nn.conv %x, %w[, %bias[, %sum]]`. The fusion pass folds what follows a
    convolution into it: `%sum` (a residual of the result's shape) is added
    to the result, then `activation` ("relu", "leaky_relu" with
    `activation_alpha`, "clip" between `activation_alpha` and
    `activation_beta`, "gelu", "linear": `activation_alpha` * x +
    `activation_beta`) is applied, both as oneDNN post-ops.
    `result_layout = "onednn"` (set by -nn-assign-layouts) keeps the result
    in oneDNN's layout for the convolutions and pooling that read it.
    `data_format = "NHWC"` (set by -nn-channels-last for CUDA devices; also
    on the pooling ops): x, the sum and the result are N x H x W x C and w
    is M x kH x kW x C/group; the CPU computes NCHW only and refuses it.
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$w,
                   Variadic<AnyTensor>:$bias_and_sum);
}

def NN_ConvTransposeOp : NN_Op<"conv_transpose"> {
  let summary = "transposed convolution (1-D and 2-D, grouped, dilated)";
  let description = [{
    `nn.conv_transpose %x, %w[, %bias]`: ONNX ConvTranspose; `%w` is
    C x M/group x kernel..., with `output_padding` and `output_shape`.
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$w, Optional<AnyTensor>:$bias);
}

def NN_GemmOp : NN_Op<"gemm"> {
  let summary = "alpha * op(A) x op(B) + beta * C";
  let arguments = (ins AnyTensor:$a, AnyTensor:$b, Optional<AnyTensor>:$c);
}

def NN_BatchNormalizationOp : NN_Op<"batch_normalization"> {
  let summary = "inference batch normalization";
  let arguments = (ins AnyTensor:$x, AnyTensor:$scale, AnyTensor:$bias,
                   AnyTensor:$mean, AnyTensor:$variance);
}

def NN_InstanceNormalizationOp : NN_Op<"instance_normalization"> {
  let summary = "instance normalization: each (n, c) plane to mean 0, "
                "variance 1, then scale and bias per channel";
  let arguments = (ins AnyTensor:$x, AnyTensor:$scale, AnyTensor:$bias);
}

def NN_LayerNormalizationOp : NN_Op<"layer_normalization"> {
  let summary = "layer normalization over dimensions [axis, rank)";
  let description = [{
    One result (the normalized x), or three: also each row's mean and
    inverse standard deviation, of x's shape with the normalized
    dimensions 1 (ONNX's optional Mean and InvStdDev outputs).
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$scale,
                   Optional<AnyTensor>:$bias);
  let results = (outs Variadic<AnyTensor>:$outputs);
}

def NN_GatherOp : NN_Op<"gather"> {
  let summary = "entries of `data` along `axis` at `indices`";
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices);
}

def NN_GatherElementsOp : NN_Op<"gather_elements"> {
  let summary = "`data` at `indices` along `axis`, element by element";
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices);
}

def NN_NegativeLogLikelihoodLossOp : NN_Op<"negative_log_likelihood_loss"> {
  let summary = "ONNX NegativeLogLikelihoodLoss";
  let description = [{
    `nn.negative_log_likelihood_loss %input, %target[, %weight]`: input
    [N, C, d...] (f32, f64), target [N, d...] (i32, i64), an optional
    weight per class; `reduction` ("mean", "sum", "none") and
    `ignore_index` as ONNX. The ONNX importer also builds
    SoftmaxCrossEntropyLoss from it and `nn.log_softmax`.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$target,
                   Variadic<AnyTensor>:$weight);
}

def NN_ScatterElementsOp : NN_Op<"scatter_elements"> {
  let summary = "`data` with `updates` written at `indices` along `axis`";
  let description = [{
    ONNX ScatterElements: `reduction` none (the last write wins), add, mul,
    max or min.
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices,
                   AnyTensor:$updates);
}

def NN_GatherNdOp : NN_Op<"gather_nd"> {
  let summary = "slices of `data` at tuples of `indices` (ONNX GatherND)";
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices);
}

def NN_ScatterNdOp : NN_Op<"scatter_nd"> {
  let summary = "`data` with slices at tuples of `indices` replaced";
  let description = [{
    ONNX ScatterND: `reduction` none (the last write wins), add, mul, max or
    min.
  }];
  let arguments = (ins AnyTensor:$data, AnyTensor:$indices,
                   AnyTensor:$updates);
}

def NN_QuantizeLinearOp : NN_Op<"quantize_linear"> {
  let summary = "saturate(round(x / scale) + zero_point), 8-bit";
  let description = [{
    ONNX QuantizeLinear: x f32 or i32; scale f32 and zero point (u8 or i8,
    the result's dtype; u8 without one) of one value, or one per index of
    dimension `axis` (default 1); ties round to even.
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$scale,
                   Optional<AnyTensor>:$zero_point);
}

def NN_DequantizeLinearOp : NN_Op<"dequantize_linear"> {
  let summary = "(x - zero_point) * scale, f32";
  let description = [{
    ONNX DequantizeLinear: x u8, i8 or i32; scale and zero point as for
    nn.quantize_linear.
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$scale,
                   Optional<AnyTensor>:$zero_point);
}

def NN_DynamicQuantizeLinearOp : NN_Op<"dynamic_quantize_linear"> {
  let summary = "x quantized to u8 over [min(x, 0), max(x, 0)]";
  let description = [{
    ONNX DynamicQuantizeLinear: three results, the u8 tensor, its scale
    (f32) and its zero point (u8), both scalars.
  }];
  let arguments = (ins AnyTensor:$x);
  let results = (outs AnyTensor:$y, AnyTensor:$y_scale,
                 AnyTensor:$y_zero_point);
}

def NN_GridSampleOp : NN_Op<"grid_sample"> {
  let summary = "x sampled at the normalized positions of grid (2-D)";
  let description = [{
    ONNX GridSample (PyTorch's grid_sample): x N x C x H x W, grid
    N x H' x W' x 2 of (x, y) in [-1, 1], result N x C x H' x W'; `mode`
    bilinear (linear), nearest or bicubic (cubic), `padding_mode` zeros,
    border or reflection, `align_corners`.
  }];
  let arguments = (ins AnyTensor:$x, AnyTensor:$grid);
}

def NN_LrnOp : NN_Op<"lrn"> {
  let summary = "local response normalization across channels";
  let description = [{
    ONNX LRN: x / (bias + alpha / size * sum of x^2 over `size` channels
    around c) ** beta; x N x C x D1 ....
  }];
  let arguments = (ins AnyTensor:$x);
}

def NN_EinsumOp : NN_Op<"einsum"> {
  let summary = "Einstein summation over the operands, by `equation`";
  let description = [{
    ONNX Einsum (numpy's einsum): terms of letters and `...`, an explicit
    output after `->` or the letters used once; f32 or f64.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs);
}

def NN_ReverseSequenceOp : NN_Op<"reverse_sequence"> {
  let summary = "each batch entry's first sequence_lens steps reversed";
  let description = [{
    ONNX ReverseSequence: `batch_axis` and `time_axis` 1 and 0 (default) or
    0 and 1; sequence_lens one integer per batch entry.
  }];
  let arguments = (ins AnyTensor:$input, AnyTensor:$sequence_lens);
}

class NN_RecurrentOp<string mnemonic, string what> : NN_Op<mnemonic> {
  let summary = what # " over a sequence";
  let description = [{
    ONNX's recurrent layer of the same name: X, W, R, then optionally B,
    sequence_lens, initial_h (and for LSTM initial_c and P), only trailing
    ones left out; ONNX's attributes (hidden_size, direction, layout,
    activations, activation_alpha, activation_beta, clip, and LSTM's
    input_forget, GRU's linear_before_reset). Results Y, Y_h (and Y_c),
    leading ones as many as used.
  }];
  let arguments = (ins Variadic<AnyTensor>:$operands);
  let results = (outs Variadic<AnyTensor>:$results);
}

def NN_RnnOp : NN_RecurrentOp<"rnn", "a simple recurrent layer">;
def NN_GruOp : NN_RecurrentOp<"gru", "a gated recurrent unit layer">;
def NN_LstmOp : NN_RecurrentOp<"lstm", "a long short-term memory layer">;

def NN_FusedElementwiseOp : NN_Op<"fused_elementwise"> {
  let summary = "a chain of f32 elementwise ops in one pass";
  let description = [{
    What -nn-fuse-elementwise makes of elementwise ops whose intermediate
    results nothing else reads: `ops` lists their opcodes, `operands` two
    value indices per op (inputs first, then op results; -1 for none), and
    the result is the last op's (asyncrt/backends/fused_elementwise.h).
    Each input has the result's shape or one element.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs);
}

def NN_TopKOp : NN_Op<"top_k"> {
  let summary = "the `k` largest (or smallest) values along `axis`";
  let description = [{
    Two results: the values (x's dtype) and their indices (i64), along
    `axis` of length `k`; `largest` and `sorted` (both 1 by default) as
    ONNX TopK; of equal values the lower index comes first.
  }];
  let arguments = (ins AnyTensor:$x);
  let results = (outs AnyTensor:$values, AnyTensor:$indices);
}

def NN_WhereOp : NN_Op<"where"> {
  let summary = "x where condition, else y (numpy broadcasting)";
  let arguments = (ins AnyTensor:$condition, AnyTensor:$x, AnyTensor:$y);
}

def NN_ConcatOp : NN_Op<"concat"> {
  let summary = "tensors joined along `axis`";
  let arguments = (ins Variadic<AnyTensor>:$inputs);
}

def NN_SplitOp : NN_Op<"split"> {
  let summary = "x cut along `axis` into one result per part";
  let arguments = (ins AnyTensor:$x);
  let results = (outs Variadic<AnyTensor>:$outputs);
}

def NN_ConstantOfShapeOp : NN_Op<"constant_of_shape"> {
  let summary = "a tensor of `shape` filled with `value`";
  let arguments = (ins);
}

// Not a runtime op: a constant tensor (an ONNX initializer or Constant
// node), lowered to corert.const_dense_tensor.
def NN_ConstantOp : Op<NN_Dialect, "constant", [Pure, ConstantLike]> {
  let summary = "a constant tensor";
  let description = [{
    Initializers keep their ONNX names in `name`; their values are dense
    resources (`dense_resource<...>`) so that large weights are stored
    once, as bytes.
  }];
  let arguments = (ins ElementsAttr:$value, OptionalAttr<StrAttr>:$name);
  let results = (outs AnyTensor:$result);
  let assemblyFormat = "$value attr-dict `:` type($result)";
  let hasVerifier = 1;
  let hasFolder = 1;
}

// Not an nn op: a runtime op the dialect does not model, kept as it is so
// that a traced program (docs/lazy.md) runs every op it recorded.
def NN_RuntimeOp : Op<NN_Dialect, "runtime_op"> {
  let summary = "a runtime registry op by name";
  let description = [{
    `nn.runtime_op %a, %b {op_name = "tfrt_test.add", ...}`: the runtime op
    `op_name` on the operands, with the other attributes as its own.
    Verified by that op's shape function; lowered to corert.executeop of
    `op_name`. The model passes leave it alone (no fusion, layout or
    planned buffer), and it is not pure: the runtime op may have effects
    the compiler cannot see.
  }];
  let arguments = (ins Variadic<AnyTensor>:$inputs, StrAttr:$op_name);
  let results = (outs Variadic<AnyTensor>:$outputs);
  let assemblyFormat =
      "operands attr-dict `:` functional-type(operands, results)";
  let hasVerifier = 1;
}

#endif  // ASYNCRT_DIALECTS_NN_NN_OPS_TD_
