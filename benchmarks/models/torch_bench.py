#!/usr/bin/python3
"""Times one of the exported test models on PyTorch (eager, CPU).

The PyTorch peer of `asyncrt-run --benchmark --json`: builds the very model
that tools/models/export_models.py exports (its MODELS constructors,
torch.manual_seed(0), randomize(), eval mode, so the same weights), feeds it
numpy RandomState(0) normal values of the model's input shape with the
batch given, and times each forward call under torch.inference_mode() after
torch.set_num_threads(THREADS). Prints one JSON object:

  {"p50_ms", "p90_ms", "p99_ms", "calls_per_s", "peak_rss_bytes"}

With --cache-dir, the randomised weights are saved there after the first
build (one file per model and version of export_models.py) and loaded on
later runs, which skips the batch-norm calibration (seconds per run).

There is no "load_ms": building the model from its Python definition (and
calibrating its batch-norm statistics) is not a load time comparable to
reading a model file, so it is left out. peak_rss_bytes is ru_maxrss of the
whole process: the interpreter, torch's libraries, model construction and
the runs. Percentiles are picked as asyncrt-run picks them (the sorted
value at index round(p * (n - 1))).

Usage:
  /usr/bin/python3 benchmarks/models/torch_bench.py --model resnet50 \
      [--batch 1] [--threads 2] [--warmup 5] [--iterations 20] \
      [--cache-dir DIR]

Needs Debian's python3-torch and python3-torchvision (and
libopenblas0-pthread for a fair BLAS), which only /usr/bin/python3 sees.
"""

import argparse
import hashlib
import json
import os
import resource
import sys
import time

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(_HERE, os.pardir, os.pardir, "tools",
                                "models"))

import export_models  # pylint: disable=wrong-import-position
import numpy as np  # pylint: disable=wrong-import-position
import torch  # pylint: disable=wrong-import-position


def percentile(sorted_values, p):
    """Returns the value at index round(p * (n - 1)) of sorted_values."""
    if not sorted_values:
        return 0.0
    index = int(p * (len(sorted_values) - 1) + 0.5)
    return sorted_values[min(index, len(sorted_values) - 1)]


def _cache_path(cache_dir, name):
    """Returns the weights cache file of a model for this export_models.py."""
    with open(export_models.__file__, "rb") as f:
        version = hashlib.sha1(f.read()).hexdigest()[:12]
    return os.path.join(cache_dir, f"{name}-{version}.pt")


def build(name, batch, cache_dir=None):
    """Builds a model as export_models.build() does, at another batch size.

    Args:
      name: a key of export_models.MODELS.
      batch: the input's batch size, or None for the model's own.
      cache_dir: where built weights are kept between runs, or None.

    Returns:
      (model in eval mode, input tensor).
    """
    make, shape = export_models.MODELS[name]
    if batch is not None:
        shape = (batch,) + tuple(shape[1:])
    torch.manual_seed(0)
    model = make()
    cache = _cache_path(cache_dir, name) if cache_dir else None
    if cache and os.path.exists(cache):
        model.load_state_dict(torch.load(cache))
    else:
        export_models.randomize(model, shape)
        if cache:
            os.makedirs(cache_dir, exist_ok=True)
            torch.save(model.state_dict(), cache + ".tmp")
            os.replace(cache + ".tmp", cache)
    model.eval()
    x = np.random.RandomState(0).standard_normal(shape).astype(np.float32)
    return model, torch.from_numpy(x)


def run(model, x, warmup, iterations):
    """Returns the latencies in ms of iterations forward calls."""
    times = []
    with torch.inference_mode():
        for _ in range(warmup):
            model(x)
        for _ in range(iterations):
            start = time.perf_counter_ns()
            model(x)
            times.append((time.perf_counter_ns() - start) / 1e6)
    return times


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n", 1)[0])
    parser.add_argument("--model", required=True,
                        choices=sorted(export_models.MODELS))
    parser.add_argument("--batch", type=int, default=None,
                        help="batch size (default: the model's own, 1)")
    parser.add_argument("--threads", type=int, default=2,
                        help="torch.set_num_threads (default 2)")
    parser.add_argument("--warmup", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=20)
    parser.add_argument("--cache-dir", default=None,
                        help="keep built weights here between runs")
    args = parser.parse_args(argv)
    if args.model == "bert" and args.batch not in (None, 1):
        parser.error("the bert model is written for batch 1 only")
    if args.threads < 1 or args.iterations < 1 or args.warmup < 0:
        parser.error("--threads and --iterations must be >= 1, "
                     "--warmup >= 0")

    # Before building: the batch-norm calibration runs on these threads too.
    torch.set_num_threads(args.threads)
    model, x = build(args.model, args.batch, args.cache_dir)
    times = run(model, x, args.warmup, args.iterations)
    total_ms = sum(times)
    ordered = sorted(times)
    result = {
        "p50_ms": percentile(ordered, 0.5),
        "p90_ms": percentile(ordered, 0.9),
        "p99_ms": percentile(ordered, 0.99),
        "calls_per_s": 1e3 * len(times) / total_ms if total_ms > 0 else 0.0,
        "peak_rss_bytes":
            resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024,
    }
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
