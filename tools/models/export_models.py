#!/usr/bin/python3
"""Exports test models for AsyncRT's ONNX importer, with reference data.

Each model is written in the layout of ONNX's backend test data:

  OUT/<name>/model.onnx
  OUT/<name>/test_data_set_0/input_0.pb    (input_1.pb, ... for more inputs)
  OUT/<name>/test_data_set_0/output_0.pb

Every .pb file is one serialized onnx.TensorProto, made with
onnx.numpy_helper.from_array(array, name=<graph input/output name>). The
graph's input is named "input" and its output "output".

Models (fp32, batch 1 unless named otherwise, static shapes, opset 13,
constant folding on):

  resnet50     torchvision ResNet-50, input [1, 3, 224, 224].
  mobilenetv2  torchvision MobileNetV2, input [1, 3, 224, 224].
  bert         a BERT-base-style encoder written with torch.nn: 12 layers,
               hidden 768, 12 heads, FFN 3072, GELU, LayerNorm eps 1e-12,
               sequence 128. Its input is already-embedded activations
               [1, 128, 768] (no embedding lookup, no attention mask).
  bert_1layer  one layer of bert (exported only when named in --models).
  resnet50_b8  resnet50 (the same weights) at a static batch of 8, input
               [8, 3, 224, 224]. For the batch-8 benchmark
               (benchmarks/models/run_model_bench.py); exported only when
               named in --models.
  resnet18_bn  torchvision ResNet-18 with its BatchNormalization nodes kept
               (the compiler folds them).

Other architectures, small, for what they bring that the three above do
not (the model test's wider net; not benchmarked):

  squeezenet         torchvision SqueezeNet 1.1: pooling with ceil_mode.
  efficientnet_b0    torchvision EfficientNet-B0: SiLU (x * sigmoid(x))
                     and squeeze-and-excite blocks.
  mobilenetv3_small  torchvision MobileNetV3-small: hardswish and
                     hardsigmoid as exported before opset 14.
  regnet_y_400mf     torchvision RegNetY-400MF: grouped convolutions (8
                     channels a group) with squeeze-and-excite.
  densenet121        torchvision DenseNet-121: concatenations feeding batch
                     normalization and relu (pre-activation); exported
                     only when named in --models (a benchmark case).
  swin_tiny          torchvision's Swin Transformer at a small size (embed
                     32, depths 2-2, heads 2-4, window 7, 10 classes, input
                     [1, 3, 112, 112]): shifted windows (Range, ScatterND,
                     Roll as Slice/Concat), Dropout with its mask output,
                     LayerNorm, GELU, attention.
  lstm_tagger        a sequence tagger: a 2-layer bidirectional torch.nn.LSTM
                     (hidden 64, batch first) over [1, 50, 64] embedded
                     tokens, then a linear layer to 10 tags per token
                     (ONNX LSTM with initial states and no sequence_lens).
  gru_classifier     torch.nn.GRU (hidden 96, PyTorch's linear_before_reset)
                     over [1, 100, 40] features (a keyword-spotting shape),
                     its last hidden state through a linear layer to 12
                     classes.
  r3d_18             torchvision's video ResNet-18 (3-D convolutions
                     throughout, 3x7x7 stem) on a clip of 8 frames of
                     112 x 112, input [1, 3, 8, 112, 112].
  r2plus1d_18        torchvision's R(2+1)D-18: each 3-D convolution split
                     into a spatial 1x3x3 and a temporal 3x1x1 one; the
                     same clip. Exported only when named in --models.
  unet3d             a small 3-D U-Net (two levels, 8-32 channels):
                     MaxPool3d, ConvTranspose3d, concatenations of 5-D
                     tensors, batch normalizations (folded into the
                     convolutions); a volume [1, 1, 32, 64, 64].

Why random weights: nothing may be downloaded (no pretrained checkpoints),
and an importer test only needs the graph structure, real-sized tensors and
outputs that the runtime must reproduce. Weights come from
torch.manual_seed(0). Default initialisation leaves batch-norm statistics at
mean 0 / var 1 and norm-layer scales at 1 and biases at 0, which would hide
bugs (a skipped bias or a mixed-up mean/var still passes), so those are
randomised, and no parameter or buffer is left all zeros. Batch-norm
statistics are calibrated on random batches before being perturbed, so
that the output still depends on the input (see randomize()). Inputs are
numpy RandomState(0) normal values; reference outputs are PyTorch's on the
same input.

Exporting in eval mode with constant folding folds every BatchNormalization
into the preceding Conv, so the CNN graphs hold no BatchNormalization node.

Usage:
  /usr/bin/python3 tools/models/export_models.py --out DIR \
      [--models resnet50,mobilenetv2,bert] [--force] [--check] [--bench]

A model whose files all exist is skipped unless --force is given (build
trees cache them). --check runs onnx.checker on each model and prints its
size, node count, op types, output shape and the reference output's max abs.
--bench times PyTorch itself (the peer) at 1 and 2 threads.

Needs Debian's python3-torch, python3-torchvision and python3-onnx, which
only /usr/bin/python3 sees.
"""

import argparse
import collections
import math
import os
import pathlib
import statistics
import sys
import time

try:
    import numpy as np
    import torch
    from torch import nn
    import torchvision
except ImportError as e:
    sys.exit(f"error: {e}. Run with /usr/bin/python3 and "
             "install python3-torch python3-torchvision python3-onnx")

try:
    import onnx
    from onnx import numpy_helper
except ImportError:
    onnx = None
    numpy_helper = None

OPSET = 13
INPUT_NAME = "input"
OUTPUT_NAME = "output"
TEST_DIR = "test_data_set_0"


class BertLayer(nn.Module):
    """One post-LayerNorm BERT encoder layer, written out op by op."""

    def __init__(self, hidden, heads, ffn, seq, eps):
        super().__init__()
        self.heads = heads
        self.head_dim = hidden // heads
        self.hidden = hidden
        self.seq = seq
        self.query = nn.Linear(hidden, hidden)
        self.key = nn.Linear(hidden, hidden)
        self.value = nn.Linear(hidden, hidden)
        self.attn_out = nn.Linear(hidden, hidden)
        self.attn_norm = nn.LayerNorm(hidden, eps=eps)
        self.ffn_in = nn.Linear(hidden, ffn)
        self.gelu = nn.GELU()
        self.ffn_out = nn.Linear(ffn, hidden)
        self.ffn_norm = nn.LayerNorm(hidden, eps=eps)

    def _split_heads(self, x):
        # Python ints, not x.shape, so Reshape gets a constant shape.
        x = x.reshape(1, self.seq, self.heads, self.head_dim)
        return x.transpose(1, 2)  # [1, heads, seq, head_dim]

    def forward(self, x):
        q = self._split_heads(self.query(x))
        k = self._split_heads(self.key(x))
        v = self._split_heads(self.value(x))
        scores = torch.matmul(q, k.transpose(-1, -2))
        scores = scores / math.sqrt(self.head_dim)
        probs = torch.softmax(scores, dim=-1)
        ctx = torch.matmul(probs, v)  # [1, heads, seq, head_dim]
        ctx = ctx.transpose(1, 2).reshape(1, self.seq, self.hidden)
        x = self.attn_norm(x + self.attn_out(ctx))
        y = self.ffn_out(self.gelu(self.ffn_in(x)))
        return self.ffn_norm(x + y)


class BertEncoder(nn.Module):
    """A stack of BertLayer over already-embedded activations."""

    def __init__(self, layers=12, hidden=768, heads=12, ffn=3072, seq=128,
                 eps=1e-12):
        super().__init__()
        self.layers = nn.ModuleList(
            BertLayer(hidden, heads, ffn, seq, eps) for _ in range(layers))

    def forward(self, x):
        for layer in self.layers:
            x = layer(x)
        return x


class LstmTagger(nn.Module):
    """A bidirectional LSTM sequence tagger on embedded tokens."""

    def __init__(self, features=64, hidden=64, layers=2, tags=10):
        super().__init__()
        self.lstm = nn.LSTM(features, hidden, num_layers=layers,
                            bidirectional=True, batch_first=True)
        self.head = nn.Linear(2 * hidden, tags)

    def forward(self, x):
        y, _ = self.lstm(x)
        return self.head(y)


class GruClassifier(nn.Module):
    """A GRU over a feature sequence, classified by its last state."""

    def __init__(self, features=40, hidden=96, classes=12):
        super().__init__()
        self.gru = nn.GRU(features, hidden, batch_first=True)
        self.head = nn.Linear(hidden, classes)

    def forward(self, x):
        _, h = self.gru(x)
        return self.head(h[-1])


class UNet3d(nn.Module):
    """A small 3-D U-Net (volumetric segmentation): two levels."""

    def __init__(self, channels=1, width=8, classes=3):
        super().__init__()

        def block(cin, cout):
            return nn.Sequential(
                nn.Conv3d(cin, cout, 3, padding=1), nn.BatchNorm3d(cout),
                nn.ReLU(inplace=True),
                nn.Conv3d(cout, cout, 3, padding=1), nn.BatchNorm3d(cout),
                nn.ReLU(inplace=True))

        self.down1 = block(channels, width)
        self.down2 = block(width, 2 * width)
        self.pool = nn.MaxPool3d(2)
        self.bottom = block(2 * width, 4 * width)
        self.up2 = nn.ConvTranspose3d(4 * width, 2 * width, 2, stride=2)
        self.dec2 = block(4 * width, 2 * width)
        self.up1 = nn.ConvTranspose3d(2 * width, width, 2, stride=2)
        self.dec1 = block(2 * width, width)
        self.head = nn.Conv3d(width, classes, 1)

    def forward(self, x):
        d1 = self.down1(x)
        d2 = self.down2(self.pool(d1))
        b = self.bottom(self.pool(d2))
        u2 = self.dec2(torch.cat([self.up2(b), d2], dim=1))
        u1 = self.dec1(torch.cat([self.up1(u2), d1], dim=1))
        return self.head(u1)


# name -> (constructor, input shape)
MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(weights=None),
                 (1, 3, 224, 224)),
    "mobilenetv2": (lambda: torchvision.models.mobilenet_v2(weights=None),
                    (1, 3, 224, 224)),
    "bert": (BertEncoder, (1, 128, 768)),
    # One layer of bert: the GPU test's transformer with real weights (the
    # whole encoder's are too big to carry to a GPU machine).
    "bert_1layer": (lambda: BertEncoder(layers=1), (1, 128, 768)),
    # Same seed and calibration batches as resnet50, so the same weights.
    "resnet50_b8": (lambda: torchvision.models.resnet50(weights=None),
                    (8, 3, 224, 224)),
    # Exported with its BatchNormalization nodes (PyTorch folds them into
    # the convolutions otherwise), as other exporters leave them: the model
    # compiler folds them.
    "resnet18_bn": (lambda: torchvision.models.resnet18(weights=None),
                    (1, 3, 224, 224)),
    "squeezenet": (lambda: torchvision.models.squeezenet1_1(weights=None),
                   (1, 3, 224, 224)),
    "efficientnet_b0": (lambda: torchvision.models.efficientnet_b0(
        weights=None), (1, 3, 224, 224)),
    "mobilenetv3_small": (lambda: torchvision.models.mobilenet_v3_small(
        weights=None), (1, 3, 224, 224)),
    "regnet_y_400mf": (lambda: torchvision.models.regnet_y_400mf(
        weights=None), (1, 3, 224, 224)),
    "densenet121": (lambda: torchvision.models.densenet121(weights=None),
                    (1, 3, 224, 224)),
    "swin_tiny": (lambda: torchvision.models.swin_transformer.SwinTransformer(
        patch_size=[4, 4], embed_dim=32, depths=[2, 2], num_heads=[2, 4],
        window_size=[7, 7], num_classes=10), (1, 3, 112, 112)),
    "lstm_tagger": (LstmTagger, (1, 50, 64)),
    "gru_classifier": (GruClassifier, (1, 100, 40)),
    # Video: 8 frames of 112 x 112 (torchvision's clips are 16 frames).
    "r3d_18": (lambda: torchvision.models.video.r3d_18(weights=None),
               (1, 3, 8, 112, 112)),
    "r2plus1d_18": (lambda: torchvision.models.video.r2plus1d_18(
        weights=None), (1, 3, 8, 112, 112)),
    "unet3d": (UNet3d, (1, 1, 32, 64, 64)),
}
# Models exported without PyTorch's own batch-norm folding.
UNFOLDED_BATCH_NORM = ("resnet18_bn",)
# What --models exports by default (the model test's set).
DEFAULT_MODELS = ("resnet50", "mobilenetv2", "bert", "resnet18_bn",
                  "squeezenet", "efficientnet_b0", "mobilenetv3_small",
                  "regnet_y_400mf", "swin_tiny", "lstm_tagger",
                  "gru_classifier", "r3d_18", "unet3d")


def randomize(model, input_shape):
    """Gives norm layers non-trivial parameters and removes all-zero tensors.

    Batch-norm statistics are first calibrated: the model runs in training
    mode on a few random batches so that running_mean/running_var match the
    activations it really sees. Then each channel's mean is shifted by
    N(0, 0.1) standard deviations and its variance scaled by U(0.5, 1.5).
    Purely random statistics (mean 0, var ~1) do not fit the activations of a
    randomly initialised network: the input-dependent part of the signal
    then shrinks or grows at every layer until the output is nearly the same
    constant for every input, which would make a poor test.

    Args:
      model: the module to change in place.
      input_shape: the model's input shape; calibration uses batch 4.
    """
    bns = [m for m in model.modules()
           if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    with torch.no_grad():
        for m in model.modules():
            if isinstance(m, (nn.modules.batchnorm._BatchNorm, nn.LayerNorm)):
                if m.weight is not None:
                    m.weight.uniform_(0.5, 1.5)
                if m.bias is not None:
                    m.bias.normal_(0.0, 0.1)
        for t in list(model.parameters()) + list(model.buffers()):
            if t.is_floating_point() and not torch.any(t):
                t.normal_(0.0, 0.02)
        if bns:
            momenta = [m.momentum for m in bns]
            for m in bns:
                m.reset_running_stats()
                m.momentum = None  # cumulative average over the batches
            model.train()
            rng = np.random.RandomState(1)
            for _ in range(2):
                batch = rng.standard_normal((4,) + tuple(input_shape[1:]))
                model(torch.from_numpy(batch.astype(np.float32)))
            model.eval()
            for m, momentum in zip(bns, momenta):
                m.momentum = momentum
                std = m.running_var.sqrt()
                m.running_mean.add_(torch.randn_like(std) * 0.1 * std)
                m.running_var.mul_(torch.empty_like(std).uniform_(0.5, 1.5))


def model_paths(out_dir, name):
    """Returns (model.onnx path, test_data_set_0 dir) for one model."""
    root = pathlib.Path(out_dir) / name
    return root / "model.onnx", root / TEST_DIR


def build(name):
    """Builds one model and its input.

    Args:
      name: a key of MODELS.

    Returns:
      (model in eval mode, input as a float32 numpy array).
    """
    make, shape = MODELS[name]
    torch.manual_seed(0)
    model = make()
    randomize(model, shape)
    model.eval()
    x = np.random.RandomState(0).standard_normal(shape).astype(np.float32)
    return model, x


def export(name, out_dir):
    """Writes model.onnx, input_0.pb and output_0.pb for one model.

    Args:
      name: a key of MODELS.
      out_dir: the output root.
    """
    model, x = build(name)
    onnx_path, data_dir = model_paths(out_dir, name)
    data_dir.mkdir(parents=True, exist_ok=True)
    with torch.no_grad():
        y = model(torch.from_numpy(x)).numpy()
    # Exported outside no_grad: no fast path may change the traced graph.
    tmp = onnx_path.with_suffix(".onnx.tmp")
    # PRESERVE keeps an eval-mode model's batch norms as nodes (EVAL, the
    # default, folds them into the convolutions).
    training = (torch.onnx.TrainingMode.PRESERVE
                if name in UNFOLDED_BATCH_NORM else torch.onnx.TrainingMode.EVAL)
    torch.onnx.export(model, (torch.from_numpy(x),), str(tmp),
                      opset_version=OPSET,
                      do_constant_folding=name not in UNFOLDED_BATCH_NORM,
                      training=training,
                      input_names=[INPUT_NAME], output_names=[OUTPUT_NAME])
    write_tensor(data_dir / "input_0.pb", x, INPUT_NAME)
    write_tensor(data_dir / "output_0.pb", y, OUTPUT_NAME)
    os.replace(tmp, onnx_path)  # last, so a complete model means done


def write_tensor(path, array, name):
    """Writes array as a serialized onnx.TensorProto named name."""
    if numpy_helper is None:
        sys.exit("error: onnx is needed to write test data; "
                 "install python3-torch python3-torchvision python3-onnx")
    path.write_bytes(numpy_helper.from_array(array, name=name)
                     .SerializeToString())


def check(name, out_dir):
    """Checks one exported model and prints a summary of it.

    Args:
      name: a key of MODELS.
      out_dir: the output root.
    """
    onnx_path, data_dir = model_paths(out_dir, name)
    onnx.checker.check_model(str(onnx_path))
    model = onnx.load(str(onnx_path))
    ops = collections.Counter(n.op_type for n in model.graph.node)
    ref = onnx.TensorProto()
    ref.ParseFromString((data_dir / "output_0.pb").read_bytes())
    y = numpy_helper.to_array(ref)
    print(f"  {name}: {onnx_path.stat().st_size / 2**20:.1f} MiB, "
          f"{len(model.graph.node)} nodes, "
          f"{len(model.graph.initializer)} initializers, "
          f"output {ref.name} {list(y.shape)}, "
          f"max |output| {np.abs(y).max():.4g}, "
          f"output std {y.std():.4g}")
    print("    ops: " + ", ".join(
        f"{op} x{n}" for op, n in sorted(ops.items())))


def bench(name, threads, warmup=5, runs=20):
    """Returns PyTorch's median latency in ms for one model."""
    model, x = build(name)
    xt = torch.from_numpy(x)
    torch.set_num_threads(threads)
    times = []
    with torch.inference_mode():
        for i in range(warmup + runs):
            start = time.perf_counter()
            model(xt)
            if i >= warmup:
                times.append(time.perf_counter() - start)
    return statistics.median(times) * 1e3


def main():
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--out", required=True, help="output root directory")
    parser.add_argument("--models", default=",".join(DEFAULT_MODELS),
                        help="comma-separated subset of " + ",".join(MODELS))
    parser.add_argument("--force", action="store_true",
                        help="re-export models whose files already exist")
    parser.add_argument("--check", action="store_true",
                        help="run onnx.checker and print a summary per model")
    parser.add_argument("--bench", action="store_true",
                        help="print PyTorch's median latency at 1 and 2 "
                        "threads")
    args = parser.parse_args()

    names = [n for n in args.models.split(",") if n]
    unknown = [n for n in names if n not in MODELS]
    if unknown:
        parser.error(f"unknown model(s) {','.join(unknown)}; "
                     f"known: {','.join(MODELS)}")
    if onnx is None:
        sys.exit("error: No module named 'onnx'. "
                 "install python3-torch python3-torchvision python3-onnx")

    torch.set_num_threads(2)
    for name in names:
        onnx_path, data_dir = model_paths(args.out, name)
        done = onnx_path.exists() and (data_dir / "input_0.pb").exists() and (
            data_dir / "output_0.pb").exists()
        if done and not args.force:
            print(f"{name}: exists, skipped (--force to redo)")
        else:
            start = time.perf_counter()
            export(name, args.out)
            print(f"{name}: exported to {onnx_path.parent} in "
                  f"{time.perf_counter() - start:.1f} s")
        if args.check:
            check(name, args.out)

    if args.bench:
        print("PyTorch median latency, batch 1, 20 runs after 5 warm-ups:")
        for name in names:
            ms = [bench(name, t) for t in (1, 2)]
            print(f"  {name}: 1 thread {ms[0]:.1f} ms, "
                  f"2 threads {ms[1]:.1f} ms")
    return 0


if __name__ == "__main__":
    sys.exit(main())
