#!/usr/bin/env bash
# Builds the BEF reader fuzzer with clang (libFuzzer + ASan + UBSan) and runs
# it for FUZZ_SECONDS (default 20) from a generated seed. Exit status is
# libFuzzer's: non-zero on any crash or sanitizer report.
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
out=${1:-$root/build/fuzz}
seconds=${FUZZ_SECONDS:-20}
cxx=$(command -v clang++-14 || command -v clang++ || true)
if [ -z "$cxx" ]; then
  echo "SKIP: clang++ not found; the BEF fuzzer needs clang's libFuzzer"
  exit 0
fi
mkdir -p "$out/corpus"
flags=(-std=c++20 -O1 -g -I"$root/include" -I"$root")
libs=(-labsl_status -labsl_statusor -labsl_strings -labsl_str_format_internal
      -labsl_int128 -labsl_cord -labsl_cordz_info -labsl_cord_internal
      -labsl_cordz_functions -labsl_cordz_handle -labsl_raw_hash_set
      -labsl_hash -labsl_city -labsl_low_level_hash -labsl_throw_delegate
      -labsl_raw_logging_internal -labsl_strings_internal -labsl_base
      -labsl_spinlock_wait -labsl_synchronization -labsl_time
      -labsl_time_zone -labsl_stacktrace -labsl_symbolize
      -labsl_malloc_internal -labsl_debugging_internal
      -labsl_demangle_internal -labsl_exponential_biased
      -labsl_cordz_sample_token -labsl_graphcycles_internal
      -labsl_bad_optional_access -labsl_bad_variant_access -lpthread)
src=("$root/lib/bef/bef_file.cc" "$root/lib/bef/bef_writer.cc")
"$cxx" "${flags[@]}" "${src[@]}" "$root/tools/fuzz/bef_seed.cc" \
  "${libs[@]}" -o "$out/bef_seed"
"$out/bef_seed" "$out/corpus/seed.bef"
"$cxx" "${flags[@]}" -fsanitize=fuzzer,address,undefined \
  -fno-sanitize-recover=all "${src[@]}" "$root/tools/fuzz/bef_file_fuzzer.cc" \
  "${libs[@]}" -o "$out/bef_file_fuzzer"
"$out/bef_file_fuzzer" -max_total_time="$seconds" -print_final_stats=1 \
  "$out/corpus" 2>&1 | tail -n 15
