#!/usr/bin/env python3
"""Where one call of a GPU model spends its GPU time, from Nsight Compute.

Reads the CSV of

  ncu --metrics gpu__time_duration.sum --csv --page raw \\
      --cache-control none --clock-control none -c 3000 \\
      gpu_benchmark --benchmark_filter=asyncrt_no_graphs/resnet50_f16 \\
      --benchmark_min_time=0.0001 > resnet50.csv

finds the calls (each begins with the kernel that began the first: the
input's cast), and prints the kernels of the last whole call grouped by
name: count, total microseconds, name. Each kernel is timed alone, so the
total is GPU time without launch gaps.

  kernel_breakdown.py resnet50.csv [--top N]
"""
import argparse
import collections
import csv
import re
import sys


def load(path):
    with open(path) as f:
        lines = f.read().splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith('"ID"'))
    rows = list(csv.reader(lines[header:]))
    names = rows[0]
    name_col = names.index("Kernel Name")
    time_col = names.index("gpu__time_duration.sum")
    grid_col = names.index("Grid Size")
    kernels = []
    for row in rows[1:]:
        if len(row) != len(names) or not row[0].isdigit():
            continue  # The units row.
        nanoseconds = float(row[time_col].replace(",", ""))
        kernels.append((row[name_col], row[grid_col], nanoseconds))
    return kernels


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("csv")
    parser.add_argument("--top", type=int, default=30)
    args = parser.parse_args()
    kernels = load(args.csv)
    if not kernels:
        sys.exit(f"{args.csv}: no kernels")
    first = kernels[0][:2]
    starts = [i for i, k in enumerate(kernels) if k[:2] == first]
    if len(starts) < 2:
        sys.exit(f"{args.csv}: fewer than two calls profiled (raise -c)")
    call = kernels[starts[-2]:starts[-1]]
    total = sum(k[2] for k in call) / 1000
    print(f"{len(starts) - 1} whole calls profiled; the last: "
          f"{len(call)} kernels, {total:.1f} us")
    groups = collections.defaultdict(lambda: [0, 0.0])
    for name, _, nanoseconds in call:
        short = re.sub(r"\(.*", "", name)[:100]
        groups[short][0] += 1
        groups[short][1] += nanoseconds / 1000
    for name, (count, micros) in sorted(groups.items(),
                                        key=lambda item: -item[1][1])[:args.top]:
        print(f"{count:5d} {micros:9.1f}  {name}")


if __name__ == "__main__":
    main()
