#!/usr/bin/env bash
# Runs every benchmark program of a build with repetitions (interleaved, so
# drift on a noisy machine hits AsyncRT and its peers alike), then pairs
# AsyncRT with its peers into <build>/bench/summary.json and prints the table.
set -euo pipefail
build_dir=${1:-build}
out_dir="$build_dir/bench"
mkdir -p "$out_dir"
results=()
for bench in "$build_dir"/bin/*_benchmark; do
  name=$(basename "$bench")
  echo "== $name"
  "$bench" --benchmark_repetitions="${BENCH_REPETITIONS:-5}" \
    --benchmark_enable_random_interleaving=true \
    --benchmark_report_aggregates_only=true \
    --benchmark_min_time="${BENCH_MIN_TIME:-0.2}" \
    --benchmark_out="$out_dir/$name.json" --benchmark_out_format=json
  results+=("$out_dir/$name.json")
done
python3 "$(dirname "$0")/summarize.py" -o "$out_dir/summary.json" "${results[@]}"
