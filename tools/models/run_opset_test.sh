#!/bin/bash
# The opset test: writes the tests of the operators that ONNX opsets 18 to
# 22 changed or added (make_opset_tests.py, numpy references) into
# TESTS_DIR, then runs them through AsyncRT; a test that does not import
# fails.
#
#   run_opset_test.sh ONNX_BACKEND_TEST TESTS_DIR
#
# Exits 77 (ctest: skipped, with the reason printed) when Debian's onnx or
# numpy is not installed.
set -euo pipefail
runner=$1
tests_dir=$2
here=$(dirname "$0")
if ! /usr/bin/python3 -c "import numpy, onnx" 2>/dev/null; then
  echo "SKIPPED: needs python3-onnx python3-numpy"
  exit 77
fi
/usr/bin/python3 "$here/make_opset_tests.py" --out "$tests_dir"
exec "$runner" --models="$tests_dir" --fail-on-skip
