#!/usr/bin/env bash
# Builds one of the model server's request-parser fuzzers with clang
# (libFuzzer + ASan) against the libraries of a configured build tree and
# runs it for FUZZ_SECONDS (default 20), seeded with sample requests. Exit
# status is libFuzzer's: non-zero on any crash or sanitizer report.
#
#   FUZZ_TARGET=json|proto tools/fuzz/run_serving_fuzzer.sh BUILD_DIR [OUT_DIR]
#
# json (the default): the REST APIs' JSON (lib/serving/json_codec.cc,
# signature.cc, serving_tensor.cc), linked like serving_test. proto: the gRPC APIs' tensor
# codec (lib/serving/tensor_proto_codec.cc) on messages protobuf parsed,
# linked like grpc_server_test. Only those sources and the target are
# compiled by clang and instrumented; the rest links as BUILD_DIR built it,
# less GoogleTest.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
build=$(cd "${1:?usage: run_serving_fuzzer.sh BUILD_DIR [OUT_DIR]}" && pwd)
target=${FUZZ_TARGET:-json}
out=${2:-$build/fuzz_serving_$target}
seconds=${FUZZ_SECONDS:-20}
case "$target" in
  json)
    test_binary=serving_test
    sources=(lib/serving/json_codec.cc lib/serving/signature.cc
             lib/serving/serving_tensor.cc tools/fuzz/serving_json_fuzzer.cc)
    # The build's own copies of the parsers are left out of the link.
    drop='*libasyncrt_serving.a' ;;
  proto)
    test_binary=grpc_server_test
    sources=(lib/serving/tensor_proto_codec.cc tools/fuzz/serving_proto_fuzzer.cc)
    # The archive's codec is not pulled in: the instrumented one defines it.
    drop='' ;;
  *) echo "FUZZ_TARGET must be json or proto" >&2; exit 2 ;;
esac
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ]; then
  echo "SKIP: clang++ not found; the serving fuzzer needs clang's libFuzzer"
  exit 0
fi
libs=$(sed -n "/^build bin\/$test_binary[ :]/,/^\$/p" "$build/build.ninja" |
       sed -n 's/^ *LINK_LIBRARIES = //p')
if [ -z "$libs" ]; then
  echo "SKIP: $build/build.ninja has no $test_binary (no model server)"
  exit 0
fi
mkdir -p "$out/corpus" "$out/obj"
flags=(-I"$root/include" -I"$root" -I"$build/lib/serving/protos"
       -std=c++20 -O1 -g -fsized-deallocation
       -Wno-ambiguous-reversed-operator
       -fsanitize=fuzzer-no-link,address)
objects=()
for src in "${sources[@]}"; do
  object="$out/obj/$(basename "$src" .cc).o"
  "$cxx" "${flags[@]}" -c "$root/$src" -o "$object"
  objects+=("$object")
done
link=()
for item in $libs; do
  # shellcheck disable=SC2053  # $drop is a pattern.
  if [ -n "$drop" ] && [[ "$item" == $drop ]]; then continue; fi
  case "$item" in
    *libgtest*|*libgmock*) ;;
    lib/*) link+=("$build/$item") ;;
    *) link+=("$item") ;;
  esac
done
fuzzer="$out/serving_${target}_fuzzer"
"$cxx" -fsanitize=fuzzer,address "${objects[@]}" "${link[@]}" -o "$fuzzer"
if [ "$target" = proto ]; then
  # Seeds: the first byte picks the message and the input's spec. A
  # TensorProto: DT_FLOAT, shape [1, 4], tensor_content; the same with
  # float_val 1.5 (filling the shape); a ModelInferRequest with an FP32
  # input [1, 4] in fp32_contents, and one in raw_input_contents.
  f4='\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40'
  shape='\x12\x08\x12\x02\x08\x01\x12\x02\x08\x04'
  printf "\x00\x08\x01$shape\x22\x10$f4" > "$out/corpus/content"
  printf "\x00\x08\x01$shape\x2a\x04\x00\x00\xc0\x3f" > "$out/corpus/fill"
  input='\x0a\x01x\x12\x04FP32\x1a\x02\x01\x04'
  printf "\x06\x2a\x21$input\x2a\x12\x32\x10$f4" > "$out/corpus/infer"
  printf "\x06\x2a\x0d$input\x3a\x10$f4" > "$out/corpus/raw"
else
# Seeds: the first byte picks the parser and the signature.
printf '\x00{"instances": [[1, 2, 3, 4]]}' > "$out/corpus/rows"
printf '\x01{"inputs": {"x": [[NaN, Infinity]]}}' > "$out/corpus/columns"
printf '\x02{"instances": [{"a": 1, "b": true}]}' > "$out/corpus/named"
printf '\x04{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "data": [1, 2, 3, 4]}]}' \
  > "$out/corpus/kserve"
printf '\x08{"inputs": [{"name": "x", "dtype": "float32", "shape": [-1, 4]}]}' \
  > "$out/corpus/signature"
# KServe's binary-data extension: 0x88, the JSON's length (148, two bytes
# little-endian), the JSON, 16 bytes of input.
printf '\x88\x94\x00{"inputs": [{"name": "x", "shape": [1, 4], "datatype": "FP32", "parameters": {"binary_data_size": 16}}], "parameters": {"binary_data_output": true}}\x00\x00\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40' \
  > "$out/corpus/kserve_binary"
fi
cd "$out"
"$fuzzer" -max_total_time="$seconds" -rss_limit_mb=4096 \
  -print_final_stats=1 "$out/corpus" 2>&1 | tail -n 25
