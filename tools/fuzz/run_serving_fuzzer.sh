#!/usr/bin/env bash
# Builds the model server's request-parser fuzzer with clang (libFuzzer +
# ASan) against the libraries of a configured build tree and runs it for
# FUZZ_SECONDS (default 20), seeded with sample requests. Exit status is
# libFuzzer's: non-zero on any crash or sanitizer report.
#
#   tools/fuzz/run_serving_fuzzer.sh BUILD_DIR [OUT_DIR]
#
# Only the parsers (lib/serving/json_codec.cc, signature.cc) and the target
# are compiled by clang and instrumented; the rest links as BUILD_DIR built
# it, with the link line of serving_test less GoogleTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: run_serving_fuzzer.sh BUILD_DIR [OUT_DIR]}" && pwd)
out=${2:-$build/fuzz_serving}
seconds=${FUZZ_SECONDS:-20}
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ]; then
  echo "SKIP: clang++ not found; the serving fuzzer needs clang's libFuzzer"
  exit 0
fi
libs=$(sed -n '/^build bin\/serving_test[ :]/,/^$/p' "$build/build.ninja" |
       sed -n 's/^ *LINK_LIBRARIES = //p')
if [ -z "$libs" ]; then
  echo "SKIP: $build/build.ninja has no serving_test (no model server)"
  exit 0
fi
mkdir -p "$out/corpus" "$out/obj"
flags=(-I"$root/include" -I"$root" -std=c++20 -O1 -g -fsized-deallocation
       -Wno-ambiguous-reversed-operator
       -fsanitize=fuzzer-no-link,address)
objects=()
for src in lib/serving/json_codec.cc lib/serving/signature.cc \
           tools/fuzz/serving_json_fuzzer.cc; do
  object="$out/obj/$(basename "$src" .cc).o"
  "$cxx" "${flags[@]}" -c "$root/$src" -o "$object"
  objects+=("$object")
done
# The build's own copies of the parsers are left out of the link.
link=()
for item in $libs; do
  case "$item" in
    *libgtest*|*libgmock*|*libasyncrt_serving.a) ;;
    lib/*) link+=("$build/$item") ;;
    *) link+=("$item") ;;
  esac
done
"$cxx" -fsanitize=fuzzer,address "${objects[@]}" "${link[@]}" \
  -o "$out/serving_json_fuzzer"
# Seeds: the first byte picks the parser and the signature.
printf '\x00{"instances": [[1, 2, 3, 4]]}' > "$out/corpus/rows"
printf '\x01{"inputs": {"x": [[NaN, Infinity]]}}' > "$out/corpus/columns"
printf '\x02{"instances": [{"a": 1, "b": true}]}' > "$out/corpus/named"
printf '\x04{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}' \
  > "$out/corpus/kserve"
printf '\x08{"inputs": [{"name": "x", "dtype": "float32", "shape": [-1, 4]}]}' \
  > "$out/corpus/signature"
cd "$out"
"$out/serving_json_fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -print_final_stats=1 "$out/corpus" 2>&1 | tail -n 25
