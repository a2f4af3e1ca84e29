#!/usr/bin/env python3
"""PyTorch's latency on the GPU models of gpu_benchmark's BM_GpuModel cases.

Runs torchvision's ResNet-50 and MobileNetV2 (channels-last) and the BERT
encoder of tools/models/export_models.py (sequence 128) at batch 1 in f16
on the GPU (eval, torch.inference_mode, cudnn.benchmark on), each call
as AsyncRT's: an f32 input on the host copied to the GPU and cast, the
model, the output cast to f32 and copied back. Peers:

  torch_eager    the model called eagerly
  torch_compile  torch.compile(mode="reduce-overhead") (CUDA graphs)

Writes Google Benchmark JSON (BM_GpuModel/<peer>/<model>_f16, real_time in
microseconds, median of the calls) for benchmarks/summarize.py.

  torch_peer.py OUT.json [--iterations N] [--no-compile] [--models NAME...]

OUT.json, if it exists (gpu_benchmark's --benchmark_out), gets these
records appended, so that summarize.py pairs them with AsyncRT's.
"""
import argparse
import json
import os
import statistics
import sys
import time

import torch
import torchvision

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "..", "tools", "models"))
from export_models import BertEncoder  # noqa: E402  (the same encoder)

# name -> (model, input shape, channels-last)
MODELS = {
    "resnet50": (lambda: torchvision.models.resnet50(weights=None),
                 (1, 3, 224, 224), True),
    "mobilenetv2": (lambda: torchvision.models.mobilenet_v2(weights=None),
                    (1, 3, 224, 224), True),
    "bert": (BertEncoder, (1, 128, 768), False),
}


def time_calls(fn, x, iterations, warmup):
    for _ in range(warmup):
        fn(x)
    times = []
    for _ in range(iterations):
        start = time.perf_counter()
        fn(x)
        times.append((time.perf_counter() - start) * 1e6)
    return statistics.median(times)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--iterations", type=int, default=200)
    parser.add_argument("--no-compile", action="store_true")
    parser.add_argument("--models", nargs="+", choices=sorted(MODELS),
                        default=sorted(MODELS))
    args = parser.parse_args()
    # Without a cuDNN it can load (another cuDNN found first on
    # LD_LIBRARY_PATH: AsyncRT's run scripts set one), PyTorch silently
    # falls back to slower convolutions: a peer that is not PyTorch's best.
    try:
        cudnn = torch.backends.cudnn.version()
    except RuntimeError as error:
        sys.exit(f"torch_peer.py: PyTorch cannot use cuDNN ({error}); run "
                 "it without AsyncRT's LD_LIBRARY_PATH")
    if cudnn is None:
        sys.exit("torch_peer.py: PyTorch has no cuDNN")
    torch.backends.cudnn.benchmark = True
    torch.manual_seed(0)
    data = {"context": {}, "benchmarks": []}
    if os.path.exists(args.out):
        with open(args.out) as f:
            data = json.load(f)
    data["context"]["torch_gpu"] = torch.cuda.get_device_name()
    data["context"]["torch_version"] = torch.__version__
    data["context"]["torch_cudnn"] = cudnn
    records = data["benchmarks"]

    def save():
        # After each record: a run cut short keeps what it measured.
        with open(args.out, "w") as f:
            json.dump(data, f, indent=1)

    def call(model_fn, channels_last):
        def run(host_input):
            with torch.inference_mode():
                gpu = host_input.cuda().half()
                if channels_last:
                    gpu = gpu.contiguous(memory_format=torch.channels_last)
                return model_fn(gpu).float().cpu()
        return run

    models = {}
    for name, (make, shape, channels_last) in MODELS.items():
        if name not in args.models:
            continue
        model = make().eval().half().cuda()
        if channels_last:
            model = model.to(memory_format=torch.channels_last)
        models[name] = (model, torch.randn(*shape), channels_last)
    # Eager first for every model: compiling takes longest.
    runs = [("torch_eager", name, lambda m=model: m)
            for name, (model, _, _) in models.items()]
    if not args.no_compile:
        runs += [("torch_compile", name,
                  lambda m=model: torch.compile(m, mode="reduce-overhead"))
                 for name, (model, _, _) in models.items()]
    for peer, name, make_fn in runs:
        _, x, channels_last = models[name]
        us = time_calls(call(make_fn(), channels_last), x, args.iterations,
                        warmup=20)
        print(f"{name} {peer}: {us:.1f} us", flush=True)
        records.append({
            "name": f"BM_GpuModel/{peer}/{name}_f16/real_time",
            "run_name": f"BM_GpuModel/{peer}/{name}_f16/real_time",
            "run_type": "iteration", "iterations": args.iterations,
            "real_time": us, "cpu_time": us, "time_unit": "us",
        })
        save()


if __name__ == "__main__":
    main()
