#!/usr/bin/env bash
# Installs this build into a temporary prefix, builds examples/embedding
# against it as an out-of-tree project (find_package(AsyncRT)), and runs it
# on a program compiled by this build's asyncrt-translate. Then builds the
# example device plug-in against nothing but the installed C headers, and
# loads it.
#   embedding_test.sh SOURCE_DIR BUILD_DIR
set -euo pipefail
src=$1
build=$2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

cmake --install "$build" --prefix "$work/prefix" > "$work/install.log"
# Only runtime headers are installed: nothing that includes MLIR or LLVM.
if grep -rlE '#include "(mlir|llvm)/' "$work/prefix/include"; then
  echo "FAIL: installed headers include MLIR or LLVM" >&2
  exit 1
fi
test -f "$work/prefix/lib/cmake/AsyncRT/AsyncRTConfig.cmake"

launcher=()
if command -v ccache > /dev/null; then
  launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$src/examples/embedding" -B "$work/app" -G Ninja \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_PREFIX_PATH="$work/prefix" \
  "${launcher[@]}" > "$work/configure.log"
cmake --build "$work/app" > "$work/build.log" || {
  cat "$work/build.log" >&2
  exit 1
}

"$build/bin/asyncrt-translate" -mlir-to-bef "$src/examples/embedding/program.mlir" \
  -o "$work/program.bef"
output=$("$work/app/embedding_example" "$work/program.bef" main 6 7)
if [[ "$output" != "43" ]]; then
  echo "FAIL: expected 43, got '$output'" >&2
  exit 1
fi
# A missing function is a clean error.
if "$work/app/embedding_example" "$work/program.bef" nope 2> "$work/err"; then
  echo "FAIL: a missing function succeeded" >&2
  exit 1
fi
grep -q "no function named 'nope'" "$work/err"

# The device plug-in: plain C, built from the installed headers alone.
test -f "$work/prefix/include/asyncrt/c/device_plugin.h"
c_launcher=()
if command -v ccache > /dev/null; then
  c_launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
cmake -S "$src/examples/plugins/sim_accelerator" -B "$work/sim" -G Ninja \
  -DCMAKE_PREFIX_PATH="$work/prefix" -DCMAKE_C_FLAGS=-Werror \
  "${c_launcher[@]}" > "$work/sim-configure.log"
cmake --build "$work/sim" > "$work/sim-build.log" || {
  cat "$work/sim-build.log" >&2
  exit 1
}
devices=$("$build/bin/bef_executor" --list_devices \
  --plugins="$work/sim/libasyncrt_sim_accelerator.so")
if ! grep -q '^/device:SIM:0 type=sim ' <<< "$devices"; then
  echo "FAIL: the out-of-tree plug-in's device is not listed: $devices" >&2
  exit 1
fi
echo "PASS: installed AsyncRT embedded by an out-of-tree build; an out-of-tree C plug-in loads"
