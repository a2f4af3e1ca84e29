# lit configuration of the AsyncRT test suite (loaded by the generated
# build/test/lit.site.cfg.py, which sets the paths).
#
# RUN lines name the tools plainly: asyncrt-opt, asyncrt-translate and
# bef_executor come from build/bin; FileCheck, not and count from LLVM.
# Each of our tools that exists in build/bin is a lit feature
# (`REQUIRES: bef_executor`), and a test whose RUN lines call one of our
# tools that is not built is reported UNSUPPORTED rather than failed, so
# the suite stays meaningful while tools are still being written.
import os
import sys

# The test format lives in a module: lit pickles it for its worker processes.
# No .pyc in the source tree.
sys.dont_write_bytecode = True
sys.path.insert(0, os.path.dirname(__file__))
from asyncrt_lit import AsyncrtShTest  # noqa: E402

TOOLS = ["asyncrt-opt", "asyncrt-translate", "bef_executor"]

missing = []
for tool in TOOLS:
    path = os.path.join(config.asyncrt_tools_dir, tool)
    if os.path.isfile(path) and os.access(path, os.X_OK):
        config.available_features.add(tool)
    else:
        missing.append(tool)

# The nn.* op library is built only where oneDNN was found.
if config.asyncrt_have_onednn:
    config.available_features.add("nn_ops")

# The ONNX importer is built where libonnx-dev was found; its tests read
# models of ONNX's own test data (libonnx-testdata).
ONNX_DATA = "/usr/share/libonnx-testdata/data"
if config.asyncrt_have_onnx and os.path.isdir(ONNX_DATA):
    config.available_features.add("onnx")
config.substitutions.append(("%onnx_data", ONNX_DATA))

config.name = "AsyncRT"
config.test_format = AsyncrtShTest(missing)
config.suffixes = [".mlir"]
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py",
                   "asyncrt_lit.py"]
config.test_source_root = os.path.dirname(__file__)
# lit.X and lit.X.reference run at the same time under `ctest -j`: each
# executor gets its own output tree so that their %t files never collide.
config.test_exec_root = os.path.join(
    config.asyncrt_obj_root,
    "test" if os.environ.get("ASYNCRT_EXECUTOR", "") in ("", "fast")
    else "test-" + os.environ["ASYNCRT_EXECUTOR"])

config.environment["PATH"] = os.pathsep.join(
    [config.asyncrt_tools_dir, config.llvm_tools_dir,
     config.environment.get("PATH", os.environ.get("PATH", ""))])

# Where plug-in libraries (bef_executor --shared_libs) are built.
config.substitutions.append(
    ("%asyncrt_lib_dir", os.path.join(config.asyncrt_obj_root, "lib")))

# `ASYNCRT_EXECUTOR=reference` runs every bef_executor of the suite on the
# reference executor (ctest's lit.*.reference entries).
# Tests that check the fast executor's schedule (stream order, which ready
# kernel runs first, its trace scopes) say `UNSUPPORTED: reference-executor`:
# the reference executor defines results and errors, not the order of
# independent kernels.
if "ASYNCRT_EXECUTOR" in os.environ:
    config.environment["ASYNCRT_EXECUTOR"] = os.environ["ASYNCRT_EXECUTOR"]
    if os.environ["ASYNCRT_EXECUTOR"] == "reference":
        config.available_features.add("reference-executor")
