// asyncrt-compile and asyncrt-run: an ONNX model to a BEF file, loaded
// mapped and run on ONNX TensorProto inputs. (onnx_backend_test checks the
// values of every test against ONNX's expected outputs.)
// REQUIRES: onnx
// RUN: asyncrt-compile %onnx_data/pytorch-converted/test_Conv2d/model.onnx -o %t.bef
// RUN: asyncrt-run %t.bef --input=%onnx_data/pytorch-converted/test_Conv2d/test_data_set_0/input_0.pb | FileCheck %s --check-prefix=PRINT
// RUN: asyncrt-run %onnx_data/pytorch-converted/test_Conv2d/model.onnx --input=%onnx_data/pytorch-converted/test_Conv2d/test_data_set_0/input_0.pb | FileCheck %s --check-prefix=PRINT
// RUN: rm -rf %t.out && asyncrt-run %t.bef --input=%onnx_data/pytorch-converted/test_Conv2d/test_data_set_0/input_0.pb --output_dir=%t.out && test -s %t.out/output_0.pb
// RUN: asyncrt-run %t.bef --input=%onnx_data/pytorch-converted/test_Conv2d/test_data_set_0/input_0.pb --benchmark --iterations=3 --json | FileCheck %s --check-prefix=BENCH
// RUN: asyncrt-run %t.bef --input=%onnx_data/pytorch-converted/test_Conv2d/test_data_set_0/input_0.pb --trace_file=%t.trace.json > /dev/null && FileCheck %s --check-prefix=TRACE < %t.trace.json
// RUN: not asyncrt-run %t.bef 2>&1 | FileCheck %s --check-prefix=NO-INPUT
// RUN: not asyncrt-run %t.bef --input=%t.bef 2>&1 | FileCheck %s --check-prefix=BAD-INPUT
// RUN: asyncrt-compile %onnx_data/node/test_relu/model.onnx -emit-mlir | FileCheck %s --check-prefix=MLIR
// asyncrt-run links the runtime only: an .onnx or .mlir model is compiled by
// asyncrt-compile, whose diagnostics it passes on.
// RUN: sh -c 'ldd "$(command -v asyncrt-run)"' | FileCheck %s --check-prefix=LINKS
// RUN: not asyncrt-run %S/../../tools/asyncrt-run/CMakeLists.txt 2>&1 | FileCheck %s --check-prefix=NOT-A-MODEL
// RUN: not asyncrt-run 2>&1 | FileCheck %s --check-prefix=NO-MODEL
// RUN: not asyncrt-run %t.bef --iterations=many 2>&1 | FileCheck %s --check-prefix=BAD-OPTION
// RUN: not asyncrt-run %t.bef --frobnicate 2>&1 | FileCheck %s --check-prefix=UNKNOWN-OPTION
// Denormals kept or flushed give this model's printed values alike.
// RUN: asyncrt-run %t.bef --input=%onnx_data/pytorch-converted/test_Conv2d/test_data_set_0/input_0.pb --denormals=keep | FileCheck %s --check-prefix=PRINT
// RUN: not asyncrt-run %t.bef --denormals=sometimes 2>&1 | FileCheck %s --check-prefix=BAD-DENORMALS
// --help lists the tools' own options, not those of the LLVM libraries.
// RUN: asyncrt-run --help | FileCheck %s --check-prefix=HELP
// RUN: asyncrt-compile --help | FileCheck %s --check-prefix=HELP
// HELP-NOT: aarch64
// HELP: options:
// HELP-NOT: aarch64

// PRINT: output 0: DenseHostTensor dtype = f32, shape = [2, 4, 5, 4], values = [-3.713104e-01, -1.209029e+00
// BENCH: {"load_ms": {{.*}}, "first_call_ms": {{.*}}, "p50_ms": {{.*}}, "p90_ms": {{.*}}, "p99_ms": {{.*}}, "calls_per_s": {{.*}}, "peak_rss_bytes": {{[0-9]+}}}
// A profile of the model: the call, and each op with its inputs' shapes.
// TRACE: "name":"main","ph":"b"
// TRACE: "name":"RunDispatchFunction: nn.conv#op_name=nn.conv{{.*}},Inputs=(f32 [2, 3, 7, 5];{{.*}}),Results=(f32 [2, 4, 5, 4]){{.*}}"ph":"X"
// NO-INPUT: asyncrt-run: 'main' takes 1 inputs; 0 given with --input
// BAD-INPUT: asyncrt-run: {{.*}}.bef: not a serialized ONNX TensorProto
// MLIR: corert.executeop({{.*}}) "nn.relu"
// LINKS: linux-vdso
// LINKS-NOT: libLLVM
// LINKS-NOT: libMLIR
// NOT-A-MODEL: error:
// NOT-A-MODEL: asyncrt-run: cannot compile '{{.*}}CMakeLists.txt' ({{.*}}asyncrt-compile failed)
// NO-MODEL: asyncrt-run: no model given
// BAD-OPTION: asyncrt-run: --iterations takes an integer, not 'many'
// UNKNOWN-OPTION: asyncrt-run: unknown option '--frobnicate' (see --help)
// BAD-DENORMALS: asyncrt-run: --denormals must be flush or keep
