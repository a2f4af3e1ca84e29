// asyncrt-compile: a model to BEF in one command.
//
//   asyncrt-compile model.onnx -o model.bef
//   asyncrt-compile model.mlir -o model.bef     (nn dialect, e.g. edited)
//   asyncrt-compile model.onnx -emit-mlir        (after the model pipeline)
//
// The same steps as asyncrt-translate -import-onnx | asyncrt-opt
// -asyncrt-model-pipeline | asyncrt-translate -mlir-to-bef, in one process
// and without printing the weights as text. Load the result with
// Runtime::LoadProgramFile or asyncrt-run: BEF files are mapped, so the
// weights are never copied.
#include <string>

#include "asyncrt/bef_converter/mlir_to_bef.h"
#include "asyncrt/compiler/onnx_importer.h"
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/register_dialects.h"
#include "llvm/Support/CommandLine.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/ToolOutputFile.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Support/FileUtilities.h"

namespace {

namespace cl = llvm::cl;

// Only these show in --help (not the options of the LLVM libraries).
cl::OptionCategory compile_options("asyncrt-compile options");

cl::opt<std::string> input_filename(cl::Positional, cl::Required,
                                    cl::desc("<model.onnx|model.mlir>"),
                                    cl::cat(compile_options));
cl::opt<std::string> output_filename("o", cl::desc("Output file"),
                                     cl::value_desc("filename"), cl::init("-"),
                                     cl::cat(compile_options));
cl::opt<int64_t> default_dimension(
    "onnx-default-dimension",
    cl::desc("The size of symbolic ONNX input dimensions (default 1)"),
    cl::init(1), cl::cat(compile_options));
cl::opt<bool> winograd(
    "winograd",
    cl::desc("Winograd kernels for 3x3 convolutions where oneDNN has them "
             "(default true; false: direct kernels only)"),
    cl::init(true), cl::cat(compile_options));
cl::opt<bool> plan_buffers(
    "plan-buffers",
    cl::desc("One arena per call for the intermediate tensors (default "
             "true; false: each is allocated when computed)"),
    cl::init(true), cl::cat(compile_options));
cl::opt<std::string> device(
    "device",
    cl::desc("The device the model's ops run on (SIM:0; default the host): "
             "inputs are copied there and results back, explicitly"),
    cl::init(""), cl::cat(compile_options));
cl::opt<std::string> precision(
    "precision",
    cl::desc("Compute in f16 or bf16 (the model keeps its f32 inputs and "
             "outputs); default: the model's own types"),
    cl::init(""), cl::cat(compile_options));
cl::opt<bool> synthetic_weights(
    "synthetic-weights",
    cl::desc("For benchmarks: constants of more than 1024 elements are "
             "replaced by deterministic pseudo-random values made when the "
             "program runs (the BEF holds no weights)"),
    cl::init(false), cl::cat(compile_options));
cl::opt<bool> device_graphs(
    "device-graphs",
    cl::desc("With --device: the model's device work is one device graph "
             "(corert.captured_call), recorded on the second call and "
             "replayed after where the device has graphs (CUDA)"),
    cl::init(true), cl::cat(compile_options));
cl::opt<bool> channels_last(
    "channels-last",
    cl::desc("With --device=CUDA:N: convolutions and pooling in NHWC, the "
             "layout cuDNN's tensor-core kernels read (default true; false: "
             "ONNX's NCHW)"),
    cl::init(true), cl::cat(compile_options));
cl::opt<bool> fuse_attention(
    "fuse-attention",
    cl::desc("With --device=CUDA:N: a transformer's attention (head "
             "transposes, matrix products, softmax) as one nn.attention "
             "(default true; false: the unfused ops)"),
    cl::init(true), cl::cat(compile_options));
cl::opt<bool> fuse_qkv(
    "fuse-qkv",
    cl::desc("With --fuse-attention: the attention's Q, K and V projections "
             "as one matrix product (default true; false: three)"),
    cl::init(true), cl::cat(compile_options));
cl::opt<bool> emit_mlir("emit-mlir",
                        cl::desc("Print the compiled module instead of BEF"),
                        cl::cat(compile_options));

int Compile() {
  std::string error;
  std::unique_ptr<llvm::MemoryBuffer> input =
      mlir::openInputFile(input_filename, &error);
  if (!input) {
    llvm::errs() << "asyncrt-compile: " << error << "\n";
    return 1;
  }
  mlir::DialectRegistry registry;
  asyncrt::RegisterAllDialects(registry);
  mlir::MLIRContext context(registry);
  context.printOpOnDiagnostic(false);
  llvm::SourceMgr source_mgr;
  mlir::SourceMgrDiagnosticHandler handler(source_mgr, &context);

  mlir::OwningOpRef<mlir::ModuleOp> module;
  if (llvm::StringRef(input_filename).ends_with(".mlir")) {
    source_mgr.AddNewSourceBuffer(std::move(input), llvm::SMLoc());
    module = mlir::parseSourceFile<mlir::ModuleOp>(source_mgr, &context);
  } else {
    asyncrt::OnnxImportOptions options;
    options.default_dimension = default_dimension;
    module = asyncrt::ImportOnnxModel(input->getBuffer(), input_filename,
                                      &context, options);
  }
  if (!module) return 1;
  mlir::PassManager pipeline(&context);
  asyncrt::compiler::ModelPipelineOptions pipeline_options;
  pipeline_options.winograd = winograd;
  pipeline_options.plan_buffers = plan_buffers;
  pipeline_options.device = device;
  pipeline_options.precision = precision;
  pipeline_options.synthetic_weights = synthetic_weights;
  pipeline_options.device_graphs = device_graphs;
  pipeline_options.channels_last = channels_last;
  pipeline_options.fuse_attention = fuse_attention;
  pipeline_options.fuse_qkv = fuse_qkv;
  asyncrt::compiler::AddModelPipeline(pipeline, pipeline_options);
  if (mlir::failed(pipeline.run(*module))) return 1;

  std::unique_ptr<llvm::ToolOutputFile> output =
      mlir::openOutputFile(output_filename, &error);
  if (!output) {
    llvm::errs() << "asyncrt-compile: " << error << "\n";
    return 1;
  }
  if (emit_mlir) {
    module->print(output->os());
  } else {
    mlir::FailureOr<std::vector<uint8_t>> bef =
        asyncrt::ConvertMlirToBef(*module);
    if (mlir::failed(bef)) return 1;
    output->os().write(reinterpret_cast<const char*>(bef->data()), bef->size());
  }
  output->keep();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  llvm::InitLLVM init(argc, argv);
  cl::HideUnrelatedOptions(compile_options);
  cl::ParseCommandLineOptions(argc, argv, "AsyncRT model compiler\n");
  return Compile();
}
