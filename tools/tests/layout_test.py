#!/usr/bin/env python3
"""Checks the layout rules that keep the tree's architecture visible.

1. Runtime code never includes MLIR or LLVM: lib/, kernels/, testing/,
   backends/ and the runtime's public headers.
2. No production library registers a tfrt_test.* name: test kernels, ops
   and native functions live in testing/.
3. No source file (tests aside) is much over 1,000 lines: split it by
   responsibility (as lib/bef_executor is) instead.
Usage: layout_test.py SOURCE_DIR
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
RUNTIME_DIRS = ["lib", "kernels", "testing", "backends"] + [
    f"include/asyncrt/{d}" for d in (
        "support", "host_context", "device", "bef", "bef_executor", "tensor",
        "core_runtime", "kernels", "backends", "plugin", "runtime", "serving", "c")
]
PRODUCTION_DIRS = ["lib", "kernels", "backends"]
MLIR_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"](mlir|llvm)/', re.M)
TEST_NAME = re.compile(r'"tfrt_test\.')

failures = []


def sources(dirs):
    for d in dirs:
        for path in sorted((root / d).rglob("*")):
            if path.suffix in (".h", ".cc", ".cpp") and path.is_file():
                yield path


for path in sources(RUNTIME_DIRS):
    if MLIR_INCLUDE.search(path.read_text(encoding="utf-8")):
        failures.append(f"{path.relative_to(root)}: runtime code includes "
                        "MLIR or LLVM (move it next to the compiler)")
for path in sources(PRODUCTION_DIRS):
    if path.name.endswith("_test.cc"):
        continue
    if TEST_NAME.search(path.read_text(encoding="utf-8")):
        failures.append(f"{path.relative_to(root)}: a production library "
                        "names a tfrt_test.* kernel (move it to testing/)")

MAX_LINES = 1100
for path in sources(["lib", "kernels", "testing", "backends", "compiler",
                     "dialects", "tools"]):
    if path.name.endswith("_test.cc") or path.name.endswith("_test.cpp"):
        continue
    lines = path.read_text(encoding="utf-8").count("\n")
    if lines > MAX_LINES:
        failures.append(f"{path.relative_to(root)}: {lines} lines (split it "
                        f"by responsibility; the limit is {MAX_LINES})")

for failure in failures:
    print("FAIL:", failure)
if failures:
    sys.exit(1)
print("PASS: layout rules hold")
