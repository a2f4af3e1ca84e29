#!/usr/bin/env bash
# Compiles the test models for the GPU (f16 on CUDA:0) and writes their
# reference input and output as raw f32, for the GPU tests and benchmarks
# (ASYNCRT_GPU_MODEL_DIR=OUT_DIR; see backends/gpu/gpu_models.h).
#
#   tools/gpu/prepare_models.sh [BUILD_DIR] [OUT_DIR] [MODELS...]
#
# The models come from tools/models/export_models.py, cached in
# BUILD_DIR/models (exported there if missing). Default models: resnet50
# mobilenetv2.
set -euo pipefail
build=${1:-build}
out=${2:-$build/gpu_models}
shift $(( $# > 2 ? 2 : $# ))
models=("${@:-resnet50 mobilenetv2}")
read -r -a models <<< "${models[*]}"
mkdir -p "$out"
for name in "${models[@]}"; do
  onnx="$build/models/$name/model.onnx"
  if [[ ! -f "$onnx" ]]; then
    /usr/bin/python3 "$(dirname "$0")/../models/export_models.py" \
      --out "$build/models" --models "$name"
  fi
  "$build/bin/asyncrt-compile" "$onnx" --device=CUDA:0 --precision=f16 \
    -o "$out/${name}_f16.bef"
  /usr/bin/python3 - "$build/models/$name/test_data_set_0" "$out/$name" <<'PY'
import sys
import numpy as np
import onnx
from onnx import numpy_helper
data, base = sys.argv[1], sys.argv[2]
def load(path):
    tensor = onnx.TensorProto()
    with open(path, "rb") as f:
        tensor.ParseFromString(f.read())
    return numpy_helper.to_array(tensor).astype(np.float32)
x = load(f"{data}/input_0.pb")
x.tofile(f"{base}.input.bin")
with open(f"{base}.input.shape", "w") as f:
    f.write(" ".join(str(d) for d in x.shape) + "\n")
load(f"{data}/output_0.pb").tofile(f"{base}.expected.bin")
PY
  echo "$out/${name}_f16.bef: $(du -h "$out/${name}_f16.bef" | cut -f1)"
done
