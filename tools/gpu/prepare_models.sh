#!/usr/bin/env bash
# Compiles the test models for the GPU (f16 on CUDA:0) and writes their
# reference input and output as raw f32, for the GPU tests and benchmarks
# (ASYNCRT_GPU_MODEL_DIR=OUT_DIR; see backends/gpu/gpu_models.h).
#
#   REAL_MODELS="mobilenetv2 bert_1layer squeezenet unet3d" \
#   SYNTHETIC_MODELS="resnet50 mobilenetv2 bert" \
#     tools/gpu/prepare_models.sh [BUILD_DIR] [OUT_DIR]
#
# REAL_MODELS become NAME_f16.bef with their weights (the tests compare
# their results with PyTorch's; a BERT also NAME_f16_separate_qkv.bef,
# compiled with --fuse-qkv=false); SYNTHETIC_MODELS become
# NAME_f16_synthetic.bef, compiled with --synthetic-weights (no weights in
# the file: the benchmarks' models, small enough to carry to a GPU
# machine), NAME_f16_synthetic_no_graphs.bef without device graphs and,
# for the convolutional models, NAME_f16_synthetic_nchw.bef with ONNX's
# NCHW layout (--channels-last=false), for BERT
# bert_f16_synthetic_unfused.bef without nn.attention
# (--fuse-attention=false) and bert_f16_synthetic_separate_qkv.bef with
# its Q, K and V projections as three products (--fuse-qkv=false).
# chain50 (50 alternating nn.neg and nn.abs on 1,024 values: the cost per
# op) is made both ways too. The ONNX models come from tools/models/export_models.py,
# cached in BUILD_DIR/models (exported there if missing).
set -euo pipefail
build=${1:-build}
out=${2:-$build/gpu_models}
read -r -a real <<< "${REAL_MODELS-mobilenetv2 bert_1layer squeezenet unet3d}"
read -r -a synthetic <<< "${SYNTHETIC_MODELS-resnet50 mobilenetv2 bert}"
mkdir -p "$out"

prepare() {  # NAME SUFFIX [asyncrt-compile flags...]
  local name=$1 suffix=$2
  shift 2
  local onnx="$build/models/$name/model.onnx"
  if [[ ! -f "$onnx" ]]; then
    /usr/bin/python3 "$(dirname "$0")/../models/export_models.py" \
      --out "$build/models" --models "$name"
  fi
  "$build/bin/asyncrt-compile" "$onnx" --device=CUDA:0 --precision=f16 "$@" \
    -o "$out/${name}_f16${suffix}.bef"
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
  echo "$out/${name}_f16${suffix}.bef: $(du -h "$out/${name}_f16${suffix}.bef" | cut -f1)"
}

for name in "${real[@]}"; do
  prepare "$name" ""
  # The transformer layer with its projections as three products too.
  if [[ $name == bert* ]]; then prepare "$name" _separate_qkv --fuse-qkv=false; fi
done
for name in "${synthetic[@]}"; do
  prepare "$name" _synthetic --synthetic-weights
  prepare "$name" _synthetic_no_graphs --synthetic-weights --device-graphs=false
done
# ONNX's NCHW kept (the convolutional models) and attention as the
# unfused ops (BERT), to measure against the defaults.
for name in "${synthetic[@]}"; do
  if [[ $name == bert ]]; then
    prepare "$name" _synthetic_unfused --synthetic-weights --fuse-attention=false
    prepare "$name" _synthetic_separate_qkv --synthetic-weights --fuse-qkv=false
  else
    prepare "$name" _synthetic_nchw --synthetic-weights --channels-last=false
  fi
done

# The chain of tiny ops.
chain="$out/chain50.mlir"
{
  echo 'func.func @main(%x: tensor<1024xf32>) -> tensor<1024xf32> {'
  previous=%x
  for i in $(seq 1 50); do
    op=$([[ $((i % 2)) == 1 ]] && echo neg || echo abs)
    echo "  %v$i = nn.$op $previous : (tensor<1024xf32>) -> tensor<1024xf32>"
    previous=%v$i
  done
  echo "  return $previous : tensor<1024xf32>"
  echo '}'
} > "$chain"
"$build/bin/asyncrt-compile" "$chain" --device=CUDA:0 --precision=f16 \
  -o "$out/chain50_f16_synthetic.bef"
"$build/bin/asyncrt-compile" "$chain" --device=CUDA:0 --precision=f16 \
  --device-graphs=false -o "$out/chain50_f16_synthetic_no_graphs.bef"
/usr/bin/python3 - "$out/chain50" <<'PY'
import sys
import numpy as np
x = np.linspace(-1, 1, 1024, dtype=np.float32)
x.tofile(sys.argv[1] + ".input.bin")
with open(sys.argv[1] + ".input.shape", "w") as f:
    f.write("1024\n")
np.abs(x).tofile(sys.argv[1] + ".expected.bin")
PY
rm "$chain"
