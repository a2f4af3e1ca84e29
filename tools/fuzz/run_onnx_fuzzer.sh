#!/usr/bin/env bash
# Builds the ONNX importer fuzzer with clang (libFuzzer + ASan) against the
# libraries of a configured build tree and runs it for FUZZ_SECONDS
# (default 20), seeded with small models of ONNX's backend test data.
# Exit status is libFuzzer's: non-zero on any crash or sanitizer report.
#
#   tools/fuzz/run_onnx_fuzzer.sh BUILD_DIR [OUT_DIR]
#
# Only the importer (compiler/onnx) and the target are compiled by clang
# and instrumented; the rest links as BUILD_DIR built it, with the link
# line of onnx_importer_test (read from BUILD_DIR/build.ninja) less
# GoogleTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: run_onnx_fuzzer.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-$build/fuzz_onnx}
seconds=${FUZZ_SECONDS:-20}
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ]; then
  echo "SKIP: clang++ not found; the ONNX fuzzer needs clang's libFuzzer"
  exit 0
fi
data=/usr/share/libonnx-testdata/data/node
if [ ! -d "$data" ]; then
  echo "SKIP: no seeds (libonnx-testdata is not installed)"
  exit 0
fi
libs=$(sed -n '/^build bin\/onnx_importer_test[ :]/,/^$/p' "$build/build.ninja" |
       sed -n 's/^ *LINK_LIBRARIES = //p')
if [ -z "$libs" ]; then
  echo "SKIP: $build/build.ninja has no onnx_importer_test (no ONNX importer)"
  exit 0
fi
llvm_include=$(sed -n 's/.*-isystem \([^ ]*llvm[^ ]*\/include\).*/\1/p' \
               "$build/build.ninja" | head -n 1)
mkdir -p "$out/corpus" "$out/obj"
flags=(-DASYNCRT_HAVE_ONNX_IMPORTER -DONNX_ML=1 -DONNX_NAMESPACE=onnx
       -I"$root/include" -I"$build/include" -I"$root" -isystem "$llvm_include"
       -std=c++20 -O1 -g -fno-exceptions -fsized-deallocation
       -fsanitize=fuzzer-no-link,address)
objects=()
for src in compiler/onnx/onnx_importer.cc compiler/onnx/onnx_node_import.cc \
           compiler/onnx/onnx_composite_import.cc compiler/onnx/onnx_control_flow.cc \
           compiler/onnx/onnx_quantized_import.cc \
           compiler/onnx/onnx_tensors.cc \
           tools/fuzz/onnx_importer_fuzzer.cc; do
  object="$out/obj/$(basename "$src" .cc).o"
  "$cxx" "${flags[@]}" -c "$root/$src" -o "$object"
  objects+=("$object")
done
# Library paths in the link line are relative to the build tree.
link=()
for item in $libs; do
  case "$item" in
    *libgtest*|*libgmock*) ;;
    lib/*) link+=("$build/$item") ;;
    *) link+=("$item") ;;
  esac
done
"$cxx" -fsanitize=fuzzer,address -fopenmp "${objects[@]}" "${link[@]}" \
  -o "$out/onnx_importer_fuzzer"
for test in test_add test_conv_with_strides_padding test_relu test_matmul_2d \
            test_gemm_default_no_bias test_softmax_axis_1 \
            test_maxpool_2d_default test_concat_1d_axis_0 \
            test_reshape_extended_dims test_transpose_default test_gather_0 \
            test_batchnorm_example test_resize_upsample_scales_nearest; do
  if [ -f "$data/$test/model.onnx" ]; then
    cp "$data/$test/model.onnx" "$out/corpus/$test.onnx"
  fi
done
cd "$out"
"$out/onnx_importer_fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -print_final_stats=1 "$out/corpus" 2>&1 | tail -n 25
