#!/usr/bin/env bash
# Packs what the GPU tests and benchmarks need to run on a GPU machine that
# has CUDA but none of AsyncRT's Debian packages: the GPU test and benchmark
# programs, the CUDA plug-in, and every shared library they load that is
# neither glibc's nor CUDA's (Abseil, oneDNN, OpenMP, Google Benchmark),
# stripped, into one archive.
#
#   tools/gpu/package.sh [BUILD_DIR] [OUT.tar.xz]
#
# On the GPU machine: tar xf OUT.tar.xz -C DIR && DIR/run_gpu_suite.sh
set -euo pipefail
build=${1:-build}
out=${2:-$build/asyncrt-gpu.tar.xz}
programs=(cuda_plugin_test cuda_plugin_random_ops_test gpu_benchmark)
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/bin" "$stage/lib"
for program in "${programs[@]}"; do
  if [[ -x "$build/bin/$program" ]]; then
    strip -o "$stage/bin/$program" "$build/bin/$program"
  fi
done
strip -o "$stage/lib/libasyncrt_cuda.so" "$build/lib/libasyncrt_cuda.so"
# Shared libraries beside the system's C/C++ runtime and CUDA's.
for program in "$stage"/bin/* "$stage/lib/libasyncrt_cuda.so"; do
  ldd "$program" | awk '/=> \// {print $3}'
done | sort -u | while read -r library; do
  case "$(basename "$library")" in
    libc.so*|libm.so*|libdl.so*|librt.so*|libpthread.so*|ld-linux*|\
    libgcc_s.so*|libstdc++.so*|libcuda*|libcublas*|libcudnn*|libnv*) ;;
    *) strip -o "$stage/lib/$(basename "$library")" "$library" ;;
  esac
done
cp "$(dirname "$0")/run_gpu_suite.sh" "$stage/"
tar -C "$stage" -cJf "$out" .
echo "$out: $(du -h "$out" | cut -f1)"
