#!/usr/bin/env bash
# Runs AsyncRT's GPU tests and benchmarks from an archive made by
# tools/gpu/package.sh, on a machine with an NVIDIA GPU and CUDA 13 (its
# cuBLASLt is used, from /usr/local/cuda or an installed Python wheel).
#
#   run_gpu_suite.sh [OUT_DIR]
#
# Writes OUT_DIR/gpu_tests.xml and gpu_random_ops.xml (GoogleTest) and
# OUT_DIR/gpu_benchmark.json (Google Benchmark), and prints the test
# summary and the benchmark table.
set -uo pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:-$here/out}
mkdir -p "$out"
# CUDA's libraries the plug-in links: cuBLASLt from the toolkit, cuDNN from
# the toolkit or an installed wheel (nvidia-cudnn-cu13).
find_library_dir() {
  dirname "$(find /usr/local/cuda/ /usr/lib /opt -maxdepth 10 -name "$1" \
    2>/dev/null | head -1)"
}
cuda_libs=$(find_library_dir 'libcublasLt.so.13*')
cudnn_libs=$(find_library_dir 'libcudnn.so.9*')
export LD_LIBRARY_PATH="$here/lib:$cuda_libs:$cudnn_libs:/usr/local/cuda/lib64:${LD_LIBRARY_PATH:-}"
export ASYNCRT_CUDA_PLUGIN="$here/lib/libasyncrt_cuda.so"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm \
  --format=csv,noheader || true
echo "cuBLASLt from: $cuda_libs; cuDNN from: $cudnn_libs"
if ldd "$here/bin/cuda_plugin_test" "$here/lib/libasyncrt_cuda.so" | grep "not found"; then
  echo "missing shared libraries (above)"
fi
status=0
"$here/bin/cuda_plugin_test" --gtest_output="xml:$out/gpu_tests.xml" \
  2>&1 | tee "$out/gpu_tests.log" | grep -E "^\[  (FAILED|PASSED|SKIPPED) |Failure|error|Expected|Which is|element|CPU " | head -80
[[ ${PIPESTATUS[0]} == 0 ]] || status=1
# Random calls of every op on the real GPU: what the host side lets
# through must not fault the device either.
if [[ -x "$here/bin/cuda_plugin_random_ops_test" ]]; then
  "$here/bin/cuda_plugin_random_ops_test" \
    --gtest_output="xml:$out/gpu_random_ops.xml" 2>&1 |
    tee "$out/gpu_random_ops.log" | grep -E "^\[  (FAILED|PASSED) |Failure|computed" | head -20
  [[ ${PIPESTATUS[0]} == 0 ]] || status=1
fi
"$here/bin/gpu_benchmark" --benchmark_repetitions="${BENCH_REPETITIONS:-5}" \
  --benchmark_report_aggregates_only=true --benchmark_enable_random_interleaving=true \
  --benchmark_min_time="${BENCH_MIN_TIME:-0.3}" \
  --benchmark_out="$out/gpu_benchmark.json" --benchmark_out_format=json \
  2>&1 | grep -v "^\*\*\*" || status=1
exit $status
