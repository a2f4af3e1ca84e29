#!/usr/bin/env python3
"""Pairs AsyncRT benchmarks with their peers and writes the ratios.

Reads Google Benchmark JSON files (written with --benchmark_format=json or
--benchmark_out=FILE --benchmark_out_format=json). In each file, every
benchmark named BM_<Case>/asyncrt is paired with every BM_<Case>/<peer> of the
same file. Writes a JSON list of records

  {"name": "<Case>", "asyncrt_ns": .., "peer": "<peer>", "peer_ns": ..,
   "ratio": asyncrt_ns / peer_ns}

and prints them as a table. A ratio below 1 means AsyncRT is faster.
Benchmarks with no peer are left out.

Times are per item: 1e9 / items_per_second where the benchmark reports items,
else real_time per iteration in ns. With --benchmark_repetitions the median
aggregate is used (or the median of the repetitions if aggregates are
missing).

Usage:
  summarize.py [-o OUT] IN.json [IN.json ...]
  summarize.py IN.json [IN.json ...] OUT.json

Without -o, a last argument that is not a Google Benchmark result file (it
does not exist yet, or holds no "benchmarks" list, e.g. an older summary) is
taken as the output; otherwise the output is build/bench/summary.json.
"""

import argparse
import json
import os
import statistics
import sys

DEFAULT_OUTPUT = os.path.join("build", "bench", "summary.json")
REFERENCE_PEER = "asyncrt"

_NS_PER_UNIT = {"ns": 1.0, "us": 1e3, "ms": 1e6, "s": 1e9}

# Name parts Google Benchmark appends for run options; not part of the case.
_OPTION_PREFIXES = ("iterations:", "repeats:", "threads:", "min_time:",
                    "min_warmup_time:")
_OPTION_PARTS = ("real_time", "manual_time", "process_time")


def _is_benchmark_file(path):
    try:
        with open(path, encoding="utf-8") as f:
            data = json.load(f)
    except (OSError, ValueError):
        return False
    return isinstance(data, dict) and isinstance(data.get("benchmarks"), list)


def _split_name(run_name):
    """'BM_X/peer[/args][/real_time]' -> ('X[/args]', 'peer'), else None."""
    parts = [p for p in run_name.split("/")
             if p not in _OPTION_PARTS and not p.startswith(_OPTION_PREFIXES)]
    if len(parts) < 2:
        return None
    case = parts[0]
    if case.startswith("BM_"):
        case = case[len("BM_"):]
    if len(parts) > 2:
        case = "/".join([case] + parts[2:])
    return case, parts[1]


def _ns_per_item(entry):
    ips = entry.get("items_per_second")
    if ips:
        return 1e9 / float(ips)
    unit = entry.get("time_unit", "ns")
    if unit not in _NS_PER_UNIT:
        raise ValueError(f"unknown time_unit {unit!r} in {entry.get('name')}")
    return float(entry["real_time"]) * _NS_PER_UNIT[unit]


def load_times(path):
    """Returns {(case, peer): ns per item} for one result file."""
    with open(path, encoding="utf-8") as f:
        data = json.load(f)
    medians = {}
    samples = {}
    for entry in data.get("benchmarks", []):
        if entry.get("error_occurred"):
            continue
        run_name = entry.get("run_name", entry["name"])
        key = _split_name(run_name)
        if key is None:
            continue
        run_type = entry.get("run_type", "iteration")
        if run_type == "aggregate":
            if entry.get("aggregate_name") == "median":
                medians[key] = _ns_per_item(entry)
        else:
            samples.setdefault(key, []).append(_ns_per_item(entry))
    times = {key: statistics.median(values) for key, values in samples.items()}
    times.update(medians)  # The reported median wins over our own.
    return times


def pair(times):
    """Records for every asyncrt benchmark that has a peer, in case order."""
    records = []
    for (case, peer), asyncrt_ns in times.items():
        if peer != REFERENCE_PEER:
            continue
        for (other_case, other_peer), peer_ns in times.items():
            if other_case != case or other_peer == REFERENCE_PEER:
                continue
            records.append({
                "name": case,
                "asyncrt_ns": asyncrt_ns,
                "peer": other_peer,
                "peer_ns": peer_ns,
                "ratio": asyncrt_ns / peer_ns if peer_ns > 0 else float("inf"),
            })
    return records


def _fmt_ns(ns):
    if ns >= 100:
        return f"{ns:,.0f}"
    if ns >= 10:
        return f"{ns:.1f}"
    return f"{ns:.2f}"


def text_table(header, rows):
    """Five columns (name, peer, AsyncRT, peer, ratio) as aligned text."""
    widths = [max(len(row[i]) for row in [header] + rows)
              for i in range(len(header))]
    # Text columns left-aligned, numbers right-aligned.
    align = ("<", "<", ">", ">", ">")

    def line(row):
        return "  ".join(f"{cell:{a}{w}}"
                         for cell, a, w in zip(row, align, widths))

    out = [line(header), "  ".join("-" * w for w in widths)]
    out.extend(line(row) for row in rows)
    return "\n".join(out)


def format_table(records):
    header = ("benchmark", "peer", "asyncrt ns", "peer ns", "ratio")
    rows = [(r["name"], r["peer"], _fmt_ns(r["asyncrt_ns"]),
             _fmt_ns(r["peer_ns"]), f"{r['ratio']:.2f}") for r in records]
    return text_table(header, rows)


def main(argv):
    parser = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0],
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog=__doc__.split("\n\n", 1)[1])
    parser.add_argument("paths", nargs="+", metavar="PATH")
    parser.add_argument("-o", "--output", help="summary JSON to write")
    args = parser.parse_args(argv)

    inputs = list(args.paths)
    output = args.output
    if output is None:
        if len(inputs) >= 2 and not _is_benchmark_file(inputs[-1]):
            output = inputs.pop()
        else:
            output = DEFAULT_OUTPUT

    records = []
    for path in inputs:
        if not _is_benchmark_file(path):
            parser.error(f"{path}: not a Google Benchmark JSON result file")
        records.extend(pair(load_times(path)))

    out_dir = os.path.dirname(output)
    if out_dir:
        os.makedirs(out_dir, exist_ok=True)
    with open(output, "w", encoding="utf-8") as f:
        json.dump(records, f, indent=2)
        f.write("\n")

    if records:
        print(format_table(records))
    else:
        print("no asyncrt benchmark with a peer found")
    print(f"\n{len(records)} pair(s) written to {output}"
          " (ratio = asyncrt_ns / peer_ns; below 1: AsyncRT faster)")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
