#!/usr/bin/env python3
"""PyTorch's per-iteration time on lazy_benchmark's loops.

The loops of benchmarks/lazy_benchmark.cc, on Debian's torch (CPU), under
torch.inference_mode:

  BM_LazyChain50  50 elementwise ops (add, mul, relu, sub, neg by turns;
                  the binary ones with a second 1,024-float tensor) on
                  1,024 floats
  BM_LazyMlp      3 layers (linear with bias, exact GELU, layer norm) of
                  width 256 at batch 1

Peers:
  torch_eager  the loop called eagerly
  torch_jit    the loop traced by torch.jit.trace and torch.jit.freeze'd

Appends Google Benchmark records (real_time in ns, the median of repeated
timed batches) to OUT.json, lazy_benchmark's --benchmark_out, so that
benchmarks/summarize.py pairs them with AsyncRT's.

  torch_peer.py OUT.json [--seconds S]
"""
import argparse
import json
import os
import statistics
import time

import torch


class Chain(torch.nn.Module):
    def forward(self, h, c):
        for i in range(50):
            k = i % 5
            if k == 0:
                h = h + c
            elif k == 1:
                h = h * c
            elif k == 2:
                h = torch.relu(h)
            elif k == 3:
                h = h - c
            else:
                h = -h
        return h


class Mlp(torch.nn.Module):
    def __init__(self, width=256, layers=3):
        super().__init__()
        self.linears = torch.nn.ModuleList(
            [torch.nn.Linear(width, width) for _ in range(layers)])
        self.norms = torch.nn.ModuleList(
            [torch.nn.LayerNorm(width) for _ in range(layers)])

    def forward(self, h):
        for linear, norm in zip(self.linears, self.norms):
            h = norm(torch.nn.functional.gelu(linear(h)))
        return h


def per_iteration_ns(fn, seconds):
    """Median over batches of the time per call, after a warm-up."""
    for _ in range(20):
        fn()
    batch = 1
    while True:  # A batch of about 10 ms.
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        if time.perf_counter() - start > 0.01:
            break
        batch *= 2
    samples = []
    deadline = time.perf_counter() + seconds
    while time.perf_counter() < deadline or len(samples) < 5:
        start = time.perf_counter()
        for _ in range(batch):
            fn()
        samples.append((time.perf_counter() - start) / batch * 1e9)
    return statistics.median(samples)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("out")
    parser.add_argument("--seconds", type=float, default=2.0)
    args = parser.parse_args()
    torch.manual_seed(0)
    data = {"context": {}, "benchmarks": []}
    if os.path.exists(args.out):
        with open(args.out) as f:
            data = json.load(f)
    data["context"]["torch_version"] = torch.__version__
    data["context"]["torch_threads"] = torch.get_num_threads()

    x = torch.rand(1024) - 0.5
    c = torch.rand(1024) - 0.5
    chain = Chain().eval()
    mlp = Mlp().eval()
    row = torch.rand(1, 256) - 0.5
    with torch.inference_mode():
        traced_chain = torch.jit.freeze(torch.jit.trace(chain, (x, c)).eval())
        traced_mlp = torch.jit.freeze(torch.jit.trace(mlp, (row,)).eval())
        cases = [
            ("LazyChain50", "torch_eager", lambda: chain(x, c)),
            ("LazyChain50", "torch_jit", lambda: traced_chain(x, c)),
            ("LazyMlp", "torch_eager", lambda: mlp(row)),
            ("LazyMlp", "torch_jit", lambda: traced_mlp(row)),
        ]
        for case, peer, fn in cases:
            ns = per_iteration_ns(fn, args.seconds)
            print(f"{case} {peer}: {ns / 1000:.1f} us", flush=True)
            name = f"BM_{case}/{peer}"
            data["benchmarks"].append({
                "name": name, "run_name": name, "run_type": "iteration",
                "iterations": 1, "real_time": ns, "cpu_time": ns,
                "time_unit": "ns",
            })
    with open(args.out, "w") as f:
        json.dump(data, f, indent=1)


if __name__ == "__main__":
    main()
