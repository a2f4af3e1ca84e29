// The optimizing trace compiler (asyncrt/lazy/trace.h): a lazy trace to
// MLIR in the nn dialect, then the model pipeline (fusions, layouts, the
// buffer plan) and BEF. Ops the nn dialect has become nn ops; others
// nn.runtime_op. Linking asyncrt::lazy_compiler registers it.
#include "compiler/lazy/trace_compiler.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef_converter/mlir_to_bef.h"
#include "asyncrt/compiler/passes.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "asyncrt/dialects/register_dialects.h"
#include "asyncrt/support/static_registration.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"

namespace asyncrt::lazy {
namespace {

constexpr char kHostDevice[] = "CPU:0";

// An MLIR context for one compilation, collecting its diagnostics.
class Compilation {
 public:
  Compilation()
      : context_(Registry(), mlir::MLIRContext::Threading::DISABLED),
        handler_(&context_, [this](mlir::Diagnostic& diagnostic) {
          llvm::raw_string_ostream os(diagnostics_);
          if (!diagnostics_.empty()) os << "\n";
          os << diagnostic;
          return mlir::success();
        }) {
    context_.loadAllAvailableDialects();
  }

  mlir::MLIRContext* context() { return &context_; }

  absl::Status Error(absl::string_view what) const {
    return absl::InvalidArgumentError(
        diagnostics_.empty() ? std::string(what)
                             : absl::StrCat(what, ": ", diagnostics_));
  }

 private:
  static mlir::DialectRegistry Registry() {
    mlir::DialectRegistry registry;
    RegisterAllDialects(registry);
    return registry;
  }

  mlir::MLIRContext context_;
  std::string diagnostics_;
  mlir::ScopedDiagnosticHandler handler_;
};

mlir::RankedTensorType TypeOf(const TensorMetadata& metadata,
                              mlir::MLIRContext* context) {
  mlir::Type element = nn::MlirTypeOf(metadata.dtype, context);
  if (!element) return nullptr;
  absl::Span<const int64_t> dims = metadata.shape.GetDimensions();
  return mlir::RankedTensorType::get(
      llvm::ArrayRef<int64_t>(dims.data(), dims.size()), element);
}

// func @trace(parameters) -> outputs in the nn dialect.
absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> BuildModule(
    const Trace& trace, Compilation& compilation) {
  mlir::MLIRContext* context = compilation.context();
  mlir::OpBuilder builder(context);
  mlir::Location loc = mlir::NameLoc::get(builder.getStringAttr("lazy"));
  mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(loc);

  auto type_error = [](const TensorMetadata& metadata) {
    return absl::InvalidArgumentError(
        absl::StrCat("a traced value of dtype ", DTypeName(metadata.dtype),
                     " has no compile-time type"));
  };
  llvm::SmallVector<mlir::Type> parameter_types;
  for (const TensorMetadata& parameter : trace.parameters) {
    mlir::Type type = TypeOf(parameter, context);
    if (!type) return type_error(parameter);
    parameter_types.push_back(type);
  }
  llvm::SmallVector<mlir::Type> output_types;
  for (const TraceRef& output : trace.outputs) {
    const TensorMetadata& metadata =
        output.op == TraceRef::kParameter
            ? trace.parameters[output.index]
            : trace.ops[output.op].results[output.index];
    output_types.push_back(TypeOf(metadata, context));
  }

  builder.setInsertionPointToEnd(module->getBody());
  auto function = builder.create<mlir::func::FuncOp>(
      loc, kTraceFunction,
      builder.getFunctionType(parameter_types, output_types));
  if (trace.device != kHostDevice) {
    function->setAttr(compiler::kValuesOnAttribute,
                      builder.getStringAttr(trace.device));
  }
  mlir::Block* body = function.addEntryBlock();
  builder.setInsertionPointToEnd(body);

  std::vector<llvm::SmallVector<mlir::Value>> results;
  results.reserve(trace.ops.size());
  auto value_of = [&](const TraceRef& ref) -> mlir::Value {
    return ref.op == TraceRef::kParameter ? body->getArgument(ref.index)
                                          : results[ref.op][ref.index];
  };
  for (size_t i = 0; i < trace.ops.size(); ++i) {
    const TraceOp& op = trace.ops[i];
    mlir::Location op_loc = mlir::NameLoc::get(
        builder.getStringAttr(absl::StrCat("lazy op ", i, " ", op.op_name)));
    std::string error;
    mlir::FailureOr<llvm::SmallVector<mlir::NamedAttribute>> attributes =
        nn::MlirAttrsOf(*op.attrs, context, error);
    if (mlir::failed(attributes)) {
      return absl::InvalidArgumentError(absl::StrCat(op.op_name, ": ", error));
    }
    // The nn dialect's own op where it has one; any other registry op as
    // it is.
    const bool modeled =
        mlir::OperationName(op.op_name, context).isRegistered();
    mlir::OperationState state(op_loc, modeled ? op.op_name : "nn.runtime_op");
    if (!modeled) {
      state.addAttribute("op_name", builder.getStringAttr(op.op_name));
    }
    state.addAttributes(*attributes);
    if (trace.device != kHostDevice) {
      state.addAttribute(compiler::kDeviceAttribute,
                         builder.getStringAttr(trace.device));
    }
    for (const TraceRef& operand : op.operands) {
      state.addOperands(value_of(operand));
    }
    for (const TensorMetadata& result : op.results) {
      mlir::Type type = TypeOf(result, context);
      if (!type) return type_error(result);
      state.addTypes(type);
    }
    mlir::Operation* created = builder.create(state);
    results.emplace_back(created->getResults());
  }
  llvm::SmallVector<mlir::Value> outputs;
  for (const TraceRef& output : trace.outputs)
    outputs.push_back(value_of(output));
  builder.create<mlir::func::ReturnOp>(loc, outputs);
  if (mlir::failed(mlir::verify(*module))) {
    return compilation.Error("the traced program does not verify");
  }
  return module;
}

}  // namespace

absl::StatusOr<std::vector<uint8_t>> CompileTrace(const Trace& trace) {
  Compilation compilation;
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module =
      BuildModule(trace, compilation);
  if (!module.ok()) return module.status();
  mlir::PassManager pipeline(compilation.context());
  compiler::ModelPipelineOptions options;
  if (trace.device != kHostDevice) {
    options.device = trace.device;
    // Graph capture outlines work fed by copies to the device; a trace's
    // values are there already.
    options.device_graphs = false;
  }
  compiler::AddModelPipeline(pipeline, options);
  if (mlir::failed(pipeline.run(**module))) {
    return compilation.Error("cannot compile the trace");
  }
  mlir::FailureOr<std::vector<uint8_t>> bef = ConvertMlirToBef(**module);
  if (mlir::failed(bef)) {
    return compilation.Error("cannot convert the trace to BEF");
  }
  return *std::move(bef);
}

absl::StatusOr<std::string> PrintTrace(const Trace& trace) {
  Compilation compilation;
  absl::StatusOr<mlir::OwningOpRef<mlir::ModuleOp>> module =
      BuildModule(trace, compilation);
  if (!module.ok()) return module.status();
  std::string text;
  llvm::raw_string_ostream os(text);
  (*module)->print(os);
  return text;
}

ASYNCRT_STATIC_REGISTRATION(RegisterTraceCompiler(CompileTrace));

}  // namespace asyncrt::lazy
