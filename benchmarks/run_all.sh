#!/usr/bin/env bash
# Runs every benchmark program of a build with repetitions (interleaved, so
# drift on a noisy machine hits AsyncRT and its peers alike), then pairs
# AsyncRT with its peers into <build>/bench/summary.json and prints the table
# (lazy_benchmark's PyTorch peers come from benchmarks/lazy/torch_peer.py).
# Then the model benchmarks (benchmarks/models/run_model_bench.py: ResNet-50,
# MobileNetV2 and BERT against ONNX Runtime and PyTorch, about 6 minutes on 2
# cores; BENCH_MODEL_ROUNDS rounds, default 3; BENCH_MODELS=0 skips them)
# merge their Model* records into the same summary. They export missing
# models into <build>/models and install onnxruntime-node into
# <build>/bench/ort on first use. Then the model server against an nginx
# static-file floor (benchmarks/serving/run_serving_bench.py, wrk on
# loopback; Serve* records).
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
# PyTorch's eager and TorchScript loops next to lazy_benchmark's (Debian's
# python3-torch, which a pyenv python3 may not see).
if [[ -f "$out_dir/lazy_benchmark.json" ]]; then
  echo "== lazy tensors: PyTorch peers"
  torch_python=python3
  [[ -x /usr/bin/python3 ]] && torch_python=/usr/bin/python3
  "$torch_python" "$(dirname "$0")/lazy/torch_peer.py" \
    "$out_dir/lazy_benchmark.json"
fi
python3 "$(dirname "$0")/summarize.py" -o "$out_dir/summary.json" "${results[@]}"
echo "== serving benchmark"
python3 "$(dirname "$0")/serving/run_serving_bench.py" --build "$build_dir"
if [[ "${BENCH_MODELS:-1}" != 0 ]]; then
  echo "== model benchmarks"
  python3 "$(dirname "$0")/models/run_model_bench.py" --build "$build_dir"
fi
