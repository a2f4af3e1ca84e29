#!/bin/bash
# The model test: exports ResNet-50, MobileNetV2, the BERT encoder and the
# smaller architectures of export_models.py (SqueezeNet, EfficientNet-B0,
# MobileNetV3-small, RegNetY-400MF, a small Swin Transformer, an LSTM
# tagger, a GRU classifier, a video ResNet-18 and a 3-D U-Net) with PyTorch
# (cached in MODELS_DIR, see export_models.py), then runs each through
# AsyncRT against PyTorch's outputs.
#
#   run_model_test.sh ONNX_BACKEND_TEST MODELS_DIR
#
# Exits 77 (ctest: skipped, with the reason printed) when Debian's torch is
# not installed.
set -euo pipefail
runner=$1
models_dir=$2
here=$(dirname "$0")
if ! /usr/bin/python3 -c "import torch, torchvision, onnx" 2>/dev/null; then
  echo "SKIPPED: needs python3-torch python3-torchvision python3-onnx"
  exit 77
fi
/usr/bin/python3 "$here/export_models.py" --out "$models_dir"
exec "$runner" --models="$models_dir"
