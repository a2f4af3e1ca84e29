#!/usr/bin/python3
"""Writes ONNX tests that Debian's ONNX test data lacks.

Mostly the operators that opsets 18 to 22 changed or added, and control
flow decided at compile time.

Debian's ONNX test data (libonnx-testdata, ONNX 1.12) stops at opset 17, so
these tests are made here, in the layout of ONNX's backend test data:

  OUT/<name>/model.onnx
  OUT/<name>/test_data_set_0/input_<i>.pb, output_<i>.pb

Each model is built with onnx.helper at the opset the test names, and its
expected outputs are computed here with numpy from the operators'
definitions (ONNX's Operators.md), not by AsyncRT. onnx_backend_test runs
them (the ctest onnx_opset_test: --models=OUT --fail-on-skip).

What they cover:
  opset 18  every Reduce* with its axes as an input and
            noop_with_empty_axes; Split's num_outputs (an uneven last part);
            Pad's axes input; Resize's axes; CenterCropPad;
            BitwiseAnd/Or/Xor/Not;
            GroupNormalization (per-group scale and bias).
  opset 19  Pad's wrap mode; AveragePool's dilations; Cast's saturate.
  opset 20  Gelu, exact and tanh.
  opset 21  GroupNormalization (per-channel scale and bias); QuantizeLinear's
            output_dtype and block_size; shape ops at their new version.
  opset 22  a small CNN (Conv, Relu, MaxPool, Flatten, Gemm) at the version
            that added bfloat16 to them.
  control   Loop with a trip count from a shape (carried sum, scan output),
  flow      If on a shape test (a branch reading the outer scope), Scan
            backwards over axis 1 with its outputs reversed on axis -1.
  quantized ONNX Runtime's quantized forms: quantize_dynamic's
            DynamicQuantizeLinear + MatMulInteger (per-column zero points),
            QLinearConv (per-channel weights, a bias), QLinearMatMul (per
            row and per column), MaxPool on int8.

Usage:
  /usr/bin/python3 tools/models/make_opset_tests.py --out DIR

Needs Debian's python3-onnx and python3-numpy (only /usr/bin/python3 sees
them). Rewrites DIR's tests every run (it takes well under a second).
"""

import argparse
import math
import pathlib
import sys

try:
    import numpy as np
    import onnx
    from onnx import helper, numpy_helper, TensorProto
except ImportError as e:
    sys.exit(f"error: {e}. Run with /usr/bin/python3 and install "
             "python3-onnx python3-numpy")

RNG = np.random.RandomState(0)


def floats(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def value_info(name, array):
    return helper.make_tensor_value_info(
        name, helper.np_dtype_to_tensor_dtype(array.dtype)
        if hasattr(helper, "np_dtype_to_tensor_dtype") else
        onnx.mapping.NP_TYPE_TO_TENSOR_TYPE[array.dtype], array.shape)


def write(out, name, opset, nodes, inputs, outputs, initializers=()):
    """Writes one test.

    Args:
      out: the output folder.
      name: the test's folder name.
      opset: the default domain's opset.
      nodes: the graph's nodes.
      inputs: [(name, array)] graph inputs and their test values.
      outputs: [(name, array)] graph outputs and their expected values.
      initializers: [(name, array)] constant inputs.
    """
    graph = helper.make_graph(
        nodes, name,
        [value_info(n, a) for n, a in inputs],
        [value_info(n, a) for n, a in outputs],
        [numpy_helper.from_array(a, n) for n, a in initializers])
    model = helper.make_model(
        graph, opset_imports=[helper.make_opsetid("", opset)],
        producer_name="make_opset_tests")
    model.ir_version = 8
    root = pathlib.Path(out) / name
    data = root / "test_data_set_0"
    data.mkdir(parents=True, exist_ok=True)
    (root / "model.onnx").write_bytes(model.SerializeToString())
    for kind, values in (("input", inputs), ("output", outputs)):
        for i, (n, a) in enumerate(values):
            (data / f"{kind}_{i}.pb").write_bytes(
                numpy_helper.from_array(a, n).SerializeToString())


def reductions(out):
    x = floats(2, 3, 4)
    positive = np.abs(x) + 0.5
    axes = np.array([-1, 0], dtype=np.int64)
    cases = [
        ("ReduceMean", lambda v: v.mean(axis=(2, 0), keepdims=True), x),
        ("ReduceMax", lambda v: v.max(axis=(2, 0), keepdims=True), x),
        ("ReduceMin", lambda v: v.min(axis=(2, 0), keepdims=True), x),
        ("ReduceProd", lambda v: v.prod(axis=(2, 0), keepdims=True), x),
        ("ReduceL1", lambda v: np.abs(v).sum(axis=(2, 0), keepdims=True), x),
        ("ReduceL2", lambda v: np.sqrt((v * v).sum(axis=(2, 0),
                                                   keepdims=True)), x),
        ("ReduceSumSquare", lambda v: (v * v).sum(axis=(2, 0),
                                                  keepdims=True), x),
        ("ReduceLogSum", lambda v: np.log(v.sum(axis=(2, 0),
                                                keepdims=True)), positive),
        ("ReduceLogSumExp", lambda v: np.log(np.exp(v).sum(
            axis=(2, 0), keepdims=True)), x),
    ]
    for op, reference, data in cases:
        write(out, f"opset18_{op.lower()}", 18,
              [helper.make_node(op, ["x", "axes"], ["y"])],
              [("x", data)], [("y", reference(data).astype(np.float32))],
              [("axes", axes)])
    # No axes: every axis (keepdims 0), or none with noop_with_empty_axes.
    write(out, "opset18_reduce_without_axes", 18,
          [helper.make_node("ReduceMean", ["x"], ["all"], keepdims=0),
           helper.make_node("ReduceMax", ["x"], ["none"],
                            noop_with_empty_axes=1)],
          [("x", x)],
          [("all", np.array(x.mean(), dtype=np.float32)), ("none", x)])


def split(out):
    x = floats(2, 7)
    write(out, "opset18_split_num_outputs", 18,
          [helper.make_node("Split", ["x"], ["a", "b", "c"], axis=1,
                            num_outputs=3)],
          [("x", x)], [("a", x[:, 0:3]), ("b", x[:, 3:6]), ("c", x[:, 6:7])])


def pad(out):
    x = floats(2, 3, 4)
    pads = np.array([1, 2, 0, 1], dtype=np.int64)  # Axes 0 and -1.
    write(out, "opset18_pad_axes", 18,
          [helper.make_node("Pad", ["x", "pads", "value", "axes"], ["y"])],
          [("x", x)],
          [("y", np.pad(x, ((1, 0), (0, 0), (2, 1)), constant_values=1.5))],
          [("pads", pads), ("value", np.array(1.5, dtype=np.float32)),
           ("axes", np.array([0, -1], dtype=np.int64))])
    y = floats(3, 4)
    write(out, "opset19_pad_wrap", 19,
          [helper.make_node("Pad", ["x", "pads"], ["y"], mode="wrap")],
          [("x", y)], [("y", np.pad(y, ((1, 2), (2, 1)), mode="wrap"))],
          [("pads", np.array([1, 2, 2, 1], dtype=np.int64))])


def resize(out):
    x = floats(1, 2, 3, 4)
    write(out, "opset18_resize_axes", 18,
          [helper.make_node("Resize", ["x", "", "", "sizes"], ["y"],
                            axes=[3, 2], mode="nearest",
                            coordinate_transformation_mode="asymmetric",
                            nearest_mode="floor")],
          [("x", x)], [("y", x.repeat(2, axis=2).repeat(2, axis=3))],
          [("sizes", np.array([8, 6], dtype=np.int64))])


def center_crop_pad(out):
    x = floats(5, 4, 3)
    # Axis 0 cropped 5 -> 3 (from 1), axis 2 padded 3 -> 6 (1 before, 2
    # after); axis 1 kept.
    write(out, "opset18_center_crop_pad", 18,
          [helper.make_node("CenterCropPad", ["x", "shape"], ["y"],
                            axes=[0, -1])],
          [("x", x)], [("y", np.pad(x[1:4], ((0, 0), (0, 0), (1, 2))))],
          [("shape", np.array([3, 6], dtype=np.int64))])


def bitwise(out):
    a = RNG.randint(-1000, 1000, size=(3, 4)).astype(np.int32)
    b = RNG.randint(-1000, 1000, size=(4,)).astype(np.int32)
    u = RNG.randint(0, 256, size=(5,)).astype(np.uint8)
    write(out, "opset18_bitwise", 18,
          [helper.make_node("BitwiseAnd", ["a", "b"], ["and"]),
           helper.make_node("BitwiseOr", ["a", "b"], ["or"]),
           helper.make_node("BitwiseXor", ["a", "b"], ["xor"]),
           helper.make_node("BitwiseNot", ["a"], ["not"]),
           helper.make_node("BitwiseNot", ["u"], ["not_u"])],
          [("a", a), ("b", b), ("u", u)],
          [("and", a & b), ("or", a | b), ("xor", a ^ b), ("not", ~a),
           ("not_u", ~u)])


def group_norm_reference(x, groups, scale, bias, epsilon):
    n, c = x.shape[:2]
    grouped = x.reshape(n, groups, -1).astype(np.float64)
    mean = grouped.mean(axis=2, keepdims=True)
    var = grouped.var(axis=2, keepdims=True)
    normalized = ((grouped - mean) / np.sqrt(var + epsilon)).reshape(x.shape)
    shape = (1, c) + (1,) * (x.ndim - 2)
    return (normalized * scale.reshape(shape) +
            bias.reshape(shape)).astype(np.float32)


def group_norm(out):
    x = floats(2, 6, 3, 4) * 2 + 0.5
    groups, epsilon = 3, 1e-3
    scale18, bias18 = floats(groups), floats(groups)
    write(out, "opset18_group_normalization", 18,
          [helper.make_node("GroupNormalization", ["x", "scale", "bias"],
                            ["y"], num_groups=groups, epsilon=epsilon)],
          [("x", x)],
          [("y", group_norm_reference(x, groups, scale18.repeat(2),
                                      bias18.repeat(2), epsilon))],
          [("scale", scale18), ("bias", bias18)])
    scale21, bias21 = floats(6), floats(6)
    write(out, "opset21_group_normalization", 21,
          [helper.make_node("GroupNormalization", ["x", "scale", "bias"],
                            ["y"], num_groups=groups, epsilon=epsilon,
                            stash_type=1)],
          [("x", x)],
          [("y", group_norm_reference(x, groups, scale21, bias21, epsilon))],
          [("scale", scale21), ("bias", bias21)])


def average_pool(out):
    x = floats(1, 2, 6, 7)
    kernel, dilation = (2, 3), (2, 2)
    oh = 6 - (kernel[0] - 1) * dilation[0]
    ow = 7 - (kernel[1] - 1) * dilation[1]
    y = np.zeros((1, 2, oh, ow), dtype=np.float32)
    for i in range(oh):
        for j in range(ow):
            window = x[:, :, i:i + (kernel[0] - 1) * dilation[0] + 1:dilation[0],
                       j:j + (kernel[1] - 1) * dilation[1] + 1:dilation[1]]
            y[:, :, i, j] = window.mean(axis=(2, 3))
    write(out, "opset19_average_pool_dilations", 19,
          [helper.make_node("AveragePool", ["x"], ["y"],
                            kernel_shape=list(kernel),
                            dilations=list(dilation))],
          [("x", x)], [("y", y)])


def cast(out):
    x = floats(3, 4) * 100
    write(out, "opset19_cast_saturate", 19,
          [helper.make_node("Cast", ["x"], ["y"], to=TensorProto.FLOAT16,
                            saturate=1)],
          [("x", x)], [("y", x.astype(np.float16))])


def gelu(out):
    x = floats(4, 5) * 3
    erf = np.vectorize(math.erf)
    exact = 0.5 * x * (1 + erf(x / math.sqrt(2)))
    tanh = 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) *
                                  (x + 0.044715 * x ** 3)))
    write(out, "opset20_gelu", 20,
          [helper.make_node("Gelu", ["x"], ["exact"]),
           helper.make_node("Gelu", ["x"], ["tanh"], approximate="tanh")],
          [("x", x)],
          [("exact", exact.astype(np.float32)),
           ("tanh", tanh.astype(np.float32))])


def quantize(out):
    x = floats(2, 5) * 4
    scale = np.array(0.05, dtype=np.float32)
    q = np.clip(np.rint(x / scale), -128, 127).astype(np.int8)
    write(out, "opset21_quantize_output_dtype", 21,
          [helper.make_node("QuantizeLinear", ["x", "scale"], ["q"],
                            output_dtype=TensorProto.INT8, block_size=0,
                            saturate=1),
           helper.make_node("DequantizeLinear", ["q", "scale"], ["x2"],
                            block_size=0)],
          [("x", x)], [("q", q), ("x2", q.astype(np.float32) * scale)],
          [("scale", scale)])


def quantized_products(out):
    """ONNX Runtime's quantized forms: dynamic (MatMulInteger) and QOperator.

    Scales are powers of two, so that every product and sum is exact in f32
    and the expected values (ONNX's integer definitions) are the importer's
    dequantize-compute-quantize results exactly.
    """
    # quantize_dynamic's pattern: DynamicQuantizeLinear, MatMulInteger with
    # s8 weights and per-column zero points, the scales multiplied after.
    x = floats(2, 8, 768)
    w = RNG.randint(-128, 128, size=(768, 64)).astype(np.int8)
    w_zero = RNG.randint(-3, 4, size=(64,)).astype(np.int8)
    w_scale = (2.0 ** -RNG.randint(5, 9, size=(64,))).astype(np.float32)
    low, high = min(0.0, float(x.min())), max(0.0, float(x.max()))
    x_scale = np.float32((high - low) / 255)
    x_zero = np.uint8(np.clip(np.rint(-low / x_scale), 0, 255))
    xq = np.clip(np.rint(x / x_scale) + x_zero, 0, 255).astype(np.uint8)
    acc = np.matmul(xq.astype(np.int64) - int(x_zero),
                    w.astype(np.int64) - w_zero.astype(np.int64))
    y = acc.astype(np.int32).astype(np.float32) * (x_scale * w_scale)
    write(out, "quantized_dynamic_matmul_integer", 17,
          [helper.make_node("DynamicQuantizeLinear", ["x"],
                            ["xq", "x_scale", "x_zero"]),
           helper.make_node("MatMulInteger", ["xq", "w", "x_zero", "w_zero"],
                            ["acc"]),
           helper.make_node("Cast", ["acc"], ["accf"], to=TensorProto.FLOAT),
           helper.make_node("Mul", ["x_scale", "w_scale"], ["scale"]),
           helper.make_node("Mul", ["accf", "scale"], ["y"])],
          [("x", x)], [("y", y.astype(np.float32))],
          [("w", w), ("w_zero", w_zero), ("w_scale", w_scale)])

    def requantize(acc, scale, zero, dtype):
        info = np.iinfo(dtype)
        return np.clip(np.rint(acc * scale) + zero, info.min,
                       info.max).astype(dtype)

    # QLinearConv with weights per output channel and a bias.
    xq = RNG.randint(0, 256, size=(1, 3, 8, 8)).astype(np.uint8)
    x_scale, x_zero = np.float32(2.0 ** -4), np.uint8(128)
    wq = RNG.randint(-128, 128, size=(4, 3, 3, 3)).astype(np.int8)
    w_scale = np.array([2.0 ** -6, 2.0 ** -7, 2.0 ** -5, 2.0 ** -8],
                       dtype=np.float32)
    w_zero = np.zeros(4, dtype=np.int8)
    bias = RNG.randint(-5000, 5000, size=(4,)).astype(np.int32)
    y_scale, y_zero = np.float32(2.0 ** -1), np.uint8(100)
    padded = np.pad(xq.astype(np.int64) - int(x_zero),
                    ((0, 0), (0, 0), (1, 1), (1, 1)))
    acc = np.zeros((1, 4, 4, 4), dtype=np.int64)
    for m in range(4):
        for i in range(4):
            for j in range(4):
                window = padded[0, :, 2 * i:2 * i + 3, 2 * j:2 * j + 3]
                acc[0, m, i, j] = np.sum(window * wq[m].astype(np.int64))
    acc += bias.reshape(1, 4, 1, 1)
    scale = (x_scale * w_scale / y_scale).reshape(1, 4, 1, 1)
    yq = requantize(acc.astype(np.float64), scale, int(y_zero), np.uint8)
    write(out, "quantized_qlinear_conv_per_channel", 13,
          [helper.make_node("QLinearConv",
                            ["x", "x_scale", "x_zero", "w", "w_scale",
                             "w_zero", "y_scale", "y_zero", "bias"], ["y"],
                            pads=[1, 1, 1, 1], strides=[2, 2])],
          [("x", xq)], [("y", yq)],
          [("x_scale", x_scale), ("x_zero", x_zero), ("w", wq),
           ("w_scale", w_scale), ("w_zero", w_zero), ("y_scale", y_scale),
           ("y_zero", y_zero), ("bias", bias)])

    # QLinearMatMul with a per row and b per column.
    aq = RNG.randint(0, 256, size=(2, 3, 5)).astype(np.uint8)
    a_scale = np.array([2.0 ** -3, 2.0 ** -4, 2.0 ** -2], dtype=np.float32)
    a_zero = np.array([120, 128, 131], dtype=np.uint8)
    bq = RNG.randint(-128, 128, size=(5, 4)).astype(np.int8)
    b_scale = np.array([2.0 ** -5, 2.0 ** -6, 2.0 ** -4, 2.0 ** -5],
                       dtype=np.float32)
    b_zero = np.array([0, 1, -2, 3], dtype=np.int8)
    y_scale, y_zero = np.float32(2.0 ** 2), np.int8(-10)
    acc = np.matmul(aq.astype(np.int64) - a_zero.reshape(3, 1),
                    bq.astype(np.int64) - b_zero.astype(np.int64))
    scale = a_scale.reshape(3, 1) * b_scale.reshape(1, 4) / y_scale
    yq = requantize(acc.astype(np.float64), scale, int(y_zero), np.int8)
    write(out, "quantized_qlinear_matmul_per_axis", 13,
          [helper.make_node("QLinearMatMul",
                            ["a", "a_scale", "a_zero", "b", "b_scale",
                             "b_zero", "y_scale", "y_zero"], ["y"])],
          [("a", aq)], [("y", yq)],
          [("a_scale", a_scale), ("a_zero", a_zero), ("b", bq),
           ("b_scale", b_scale), ("b_zero", b_zero), ("y_scale", y_scale),
           ("y_zero", y_zero)])

    # MaxPool on i8 (quantized models pool their 8-bit values), ceil_mode.
    xq = RNG.randint(-128, 128, size=(1, 2, 5, 5)).astype(np.int8)
    padded = np.full((1, 2, 6, 6), -128, dtype=np.int8)
    padded[:, :, :5, :5] = xq
    yq = padded.reshape(1, 2, 3, 2, 3, 2).max(axis=(3, 5))
    write(out, "quantized_max_pool_int8", 13,
          [helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[2, 2],
                            strides=[2, 2], ceil_mode=1)],
          [("x", xq)], [("y", yq)])


def shape_ops(out):
    x = floats(2, 3, 4)
    y = x.transpose(2, 0, 1).reshape(4, 6)[None, :, :]
    write(out, "opset21_shape_ops", 21,
          [helper.make_node("Transpose", ["x"], ["t"], perm=[2, 0, 1]),
           helper.make_node("Reshape", ["t", "shape"], ["r"]),
           helper.make_node("Unsqueeze", ["r", "axis0"], ["u"]),
           helper.make_node("Identity", ["u"], ["y"]),
           helper.make_node("Flatten", ["u"], ["f"], axis=0),
           helper.make_node("Squeeze", ["f", "axis0"], ["s"]),
           helper.make_node("Shape", ["x"], ["shape_of_x"]),
           helper.make_node("Size", ["x"], ["size_of_x"])],
          [("x", x)],
          [("y", y), ("s", y.reshape(24)),
           ("shape_of_x", np.array([2, 3, 4], dtype=np.int64)),
           ("size_of_x", np.array(24, dtype=np.int64))],
          [("shape", np.array([4, 6], dtype=np.int64)),
           ("axis0", np.array([0], dtype=np.int64))])


def small_cnn(out):
    x = floats(1, 2, 6, 6)
    w, b = floats(3, 2, 3, 3), floats(3)
    fc_w, fc_b = floats(4, 12), floats(4)
    conv = np.zeros((1, 3, 4, 4), dtype=np.float64)
    for m in range(3):
        for i in range(4):
            for j in range(4):
                conv[0, m, i, j] = (x[0, :, i:i + 3, j:j + 3] * w[m]).sum() + b[m]
    relu = np.maximum(conv, 0)
    pooled = relu.reshape(1, 3, 2, 2, 2, 2).max(axis=(3, 5))
    y = pooled.reshape(1, 12) @ fc_w.T + fc_b
    write(out, "opset22_small_cnn", 22,
          [helper.make_node("Conv", ["x", "w", "b"], ["c"]),
           helper.make_node("Relu", ["c"], ["r"]),
           helper.make_node("MaxPool", ["r"], ["p"], kernel_shape=[2, 2],
                            strides=[2, 2]),
           helper.make_node("Flatten", ["p"], ["f"]),
           helper.make_node("Gemm", ["f", "fc_w", "fc_b"], ["y"], transB=1)],
          [("x", x)], [("y", y.astype(np.float32))],
          [("w", w), ("b", b), ("fc_w", fc_w), ("fc_b", fc_b)])


def control_flow(out):
    # Loop whose trip count folds from a shape (x's rows): a running sum of
    # the rows and each step's partial sum stacked (a scan output).
    x = floats(4, 3)
    body = helper.make_graph(
        [helper.make_node("Identity", ["cond_in"], ["cond_out"]),
         helper.make_node("Add", ["i", "one_i"], ["end"]),
         helper.make_node("Unsqueeze", ["i", "zero_axis"], ["start_1d"]),
         helper.make_node("Unsqueeze", ["end", "zero_axis"], ["end_1d"]),
         helper.make_node("Slice", ["x", "start_1d", "end_1d", "zero_axis"],
                          ["row"]),
         helper.make_node("Squeeze", ["row", "zero_axis"], ["row_1d"]),
         helper.make_node("Add", ["sum_in", "row_1d"], ["sum_out"]),
         helper.make_node("Identity", ["sum_out"], ["partial"])],
        "body",
        [helper.make_tensor_value_info("i", TensorProto.INT64, []),
         helper.make_tensor_value_info("cond_in", TensorProto.BOOL, []),
         helper.make_tensor_value_info("sum_in", TensorProto.FLOAT, [3])],
        [helper.make_tensor_value_info("cond_out", TensorProto.BOOL, []),
         helper.make_tensor_value_info("sum_out", TensorProto.FLOAT, [3]),
         helper.make_tensor_value_info("partial", TensorProto.FLOAT, [3])],
        [numpy_helper.from_array(np.array(1, dtype=np.int64), "one_i"),
         numpy_helper.from_array(np.array([0], dtype=np.int64),
                                 "zero_axis")])
    write(out, "control_flow_loop_over_rows", 16,
          [helper.make_node("Shape", ["x"], ["shape"]),
           helper.make_node("Gather", ["shape", "zero"], ["rows"], axis=0),
           helper.make_node("Loop", ["rows", "", "init"], ["sum", "partials"],
                            body=body)],
          [("x", x)],
          [("sum", x.sum(axis=0)), ("partials", np.cumsum(x, axis=0))],
          [("zero", np.array(0, dtype=np.int64)),
           ("init", np.zeros(3, dtype=np.float32))])
    # If on a shape test (x has more than 3 columns: no, so the else
    # branch, which reads x from the outer scope).
    then_branch = helper.make_graph(
        [helper.make_node("Neg", ["x"], ["then_out"])], "then", [],
        [helper.make_tensor_value_info("then_out", TensorProto.FLOAT,
                                       [4, 3])])
    else_branch = helper.make_graph(
        [helper.make_node("Abs", ["x"], ["else_out"])], "else", [],
        [helper.make_tensor_value_info("else_out", TensorProto.FLOAT,
                                       [4, 3])])
    write(out, "control_flow_if_on_a_shape", 16,
          [helper.make_node("Shape", ["x"], ["shape"]),
           helper.make_node("Gather", ["shape", "one"], ["columns"], axis=0),
           helper.make_node("Greater", ["columns", "three"], ["wide"]),
           helper.make_node("If", ["wide"], ["y"], then_branch=then_branch,
                            else_branch=else_branch)],
          [("x", x)], [("y", np.abs(x))],
          [("one", np.array(1, dtype=np.int64)),
           ("three", np.array(3, dtype=np.int64))])
    # Scan backwards over axis 1 of a [2, 5] input: a running product of
    # the columns (state [2]); the partial products stacked along axis 1,
    # in forward order of the iterations reversed (scan_output_directions).
    y = floats(2, 5)
    scan_body = helper.make_graph(
        [helper.make_node("Mul", ["state_in", "column"], ["state_out"]),
         helper.make_node("Identity", ["state_out"], ["step"])],
        "scan_body",
        [helper.make_tensor_value_info("state_in", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("column", TensorProto.FLOAT, [2])],
        [helper.make_tensor_value_info("state_out", TensorProto.FLOAT, [2]),
         helper.make_tensor_value_info("step", TensorProto.FLOAT, [2])])
    steps = []
    state = np.ones(2, dtype=np.float32)
    for t in range(4, -1, -1):
        state = state * y[:, t]
        steps.append(state)
    stacked = np.stack(steps[::-1], axis=1)
    write(out, "control_flow_scan_backwards", 16,
          [helper.make_node("Scan", ["init", "y"], ["final", "products"],
                            body=scan_body, num_scan_inputs=1,
                            scan_input_axes=[1], scan_input_directions=[1],
                            scan_output_axes=[-1],
                            scan_output_directions=[1])],
          [("y", y)], [("final", state), ("products", stacked)],
          [("init", np.ones(2, dtype=np.float32))])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", required=True, help="output folder")
    args = parser.parse_args()
    for make in (reductions, split, pad, resize, center_crop_pad, bitwise,
                 group_norm, average_pool, cast, gelu, quantize, shape_ops,
                 small_cnn, control_flow, quantized_products):
        make(args.out)


if __name__ == "__main__":
    main()
