// -nn-to-corert: lowers model-level nn ops to corert.executeop, the form
// that BEF runs (see passes.h).
#include <optional>
#include <string>
#include <utility>

#include "asyncrt/bef_converter/mlir_to_bef.h"
#include "asyncrt/compiler/passes.h"
#include "asyncrt/compiler/stream_analysis.h"
#include "asyncrt/dialects/corert/corert_dialect.h"
#include "asyncrt/dialects/nn/nn_dialect.h"
#include "asyncrt/dialects/tfrt/tfrt_dialect.h"
#include "asyncrt/tensor/dtype.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

constexpr llvm::StringLiteral kHostDevice = "CPU:0";
// Constants this large become synthetic weights (synthetic-weights).
constexpr int64_t kSyntheticMinElements = 1024;

// A model's function runs as one stream (TFRT's stream analysis: every op
// costs 1, far below the function's threshold, so nothing is worth a
// stream of its own). Its parallelism is inside each op (oneDNN's team in
// latency mode) and across requests (throughput mode); a second stream
// would only hand kernels to another thread, and a request's ops to
// several: measured in docs/serving.md.
constexpr int64_t kOneStreamCostThreshold = int64_t{1} << 40;

class NnToCoreRtPass
    : public mlir::PassWrapper<NnToCoreRtPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(NnToCoreRtPass)

  NnToCoreRtPass() = default;
  NnToCoreRtPass(const NnToCoreRtPass& other) : PassWrapper(other) {}
  explicit NnToCoreRtPass(bool synthetic_weights) {
    synthetic_weights_ = synthetic_weights;
  }

  llvm::StringRef getArgument() const final { return "nn-to-corert"; }
  llvm::StringRef getDescription() const final {
    return "Lower nn ops on tensors to corert.executeop on tensor handles";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<corert::CoreRTDialect, tfrt::TfrtDialect>();
  }

  void runOnOperation() override {
    for (auto function : getOperation().getOps<mlir::func::FuncOp>()) {
      if (function.isDeclaration()) continue;
      if (mlir::failed(Lower(function))) return signalPassFailure();
    }
  }

 private:
  static bool IsTensor(mlir::Type type) {
    return mlir::isa<mlir::TensorType>(type);
  }

  mlir::LogicalResult Lower(mlir::func::FuncOp function) {
    mlir::MLIRContext* context = &getContext();
    if (!function.getBody().hasOneBlock()) {
      return function.emitError("nn-to-corert: expects one block");
    }
    mlir::Type handle_type = corert::TensorHandleType::get(context);
    mlir::Block& block = function.getBody().front();
    mlir::OpBuilder builder(context);
    builder.setInsertionPointToStart(&block);
    mlir::Location loc = function.getLoc();

    // The CPU op handler, once per function (the devices issue brings
    // placement).
    mlir::OperationState chain_state(loc, "tfrt.new.chain");
    chain_state.addTypes(tfrt::ChainType::get(context));
    mlir::Value chain = builder.create(chain_state)->getResult(0);
    mlir::OperationState handler_state(loc, "corert.get_op_handler");
    handler_state.addOperands(chain);
    handler_state.addAttribute("op_handler_name", builder.getStringAttr("cpu"));
    handler_state.addTypes(corert::OpHandlerType::get(context));
    mlir::Value cpu = builder.create(handler_state)->getResult(0);
    // A function with a buffer plan runs its ops through a handler that
    // makes the call's arena.
    if (auto arena_size =
            function->getAttrOfType<mlir::IntegerAttr>("nn.arena_size")) {
      mlir::OperationState arena_state(loc, "corert.arena_op_handler");
      arena_state.addOperands(cpu);
      arena_state.addAttribute("size", arena_size);
      arena_state.addTypes(corert::OpHandlerType::get(context));
      cpu = builder.create(arena_state)->getResult(0);
      function->removeAttr("nn.arena_size");
    }

    for (mlir::BlockArgument argument : block.getArguments()) {
      if (IsTensor(argument.getType())) argument.setType(handle_type);
    }
    // Where the caller's tensors live (the function's kValuesOnAttribute;
    // the host if none): its arguments are there and its results go there.
    llvm::StringRef values_on = kHostDevice;
    if (mlir::Attribute attribute = function->getAttr(kValuesOnAttribute)) {
      auto name = mlir::dyn_cast<mlir::StringAttr>(attribute);
      if (!name || !IsShortDeviceName(name.getValue())) {
        return function.emitError()
               << "nn-to-corert: " << kValuesOnAttribute
               << " must be a device name like SIM:0";
      }
      values_on = name.getValue();
      function->removeAttr(kValuesOnAttribute);
    }

    // Placement. Handlers and devices other than the CPU's are made on
    // first use, among the function's first ops; values live on the host
    // unless an op on a device made them.
    mlir::Operation* setup_end = cpu.getDefiningOp();
    llvm::StringMap<mlir::Value> handlers;
    llvm::StringMap<mlir::Value> devices;
    // Device names, kept for the references in value_device.
    llvm::StringMap<char> names;
    auto Intern = [&](llvm::StringRef name) {
      return names.try_emplace(name).first->first();
    };
    llvm::DenseMap<mlir::Value, llvm::StringRef> value_device;
    // By value and interned device name.
    llvm::DenseMap<std::pair<mlir::Value, const char*>, mlir::Value>
        transfers;
    auto add_setup = [&](mlir::OperationState& state) {
      mlir::OpBuilder::InsertionGuard guard(builder);
      builder.setInsertionPointAfter(setup_end);
      setup_end = builder.create(state);
      return setup_end->getResult(0);
    };
    auto handler_on = [&](llvm::StringRef device) -> mlir::Value {
      if (device == kHostDevice) return cpu;
      mlir::Value& handler = handlers[device];
      if (!handler) {
        mlir::OperationState state(loc, "corert.get_op_handler");
        state.addOperands(chain);
        state.addAttribute("op_handler_name", builder.getStringAttr(device));
        state.addTypes(corert::OpHandlerType::get(context));
        handler = add_setup(state);
      }
      return handler;
    };
    auto device_value = [&](llvm::StringRef device) -> mlir::Value {
      mlir::Value& value = devices[device];
      if (!value) {
        mlir::OperationState state(loc, "tfrt.get_device");
        state.addOperands(chain);
        state.addAttribute("device_name", builder.getStringAttr(device));
        state.addTypes(mlir::OpaqueType::get(
            mlir::StringAttr::get(context, "tfrt"), "device"));
        value = add_setup(state);
      }
      return value;
    };
    // Lowered constants, by value: on another device a constant becomes
    // corert.const_dense_tensor_on, copied there once, not per call.
    llvm::DenseMap<mlir::Value, mlir::Attribute> constants;
    // Synthetic weights (benchmarks): corert.synthetic_dense_tensor_on's
    // attributes, by value.
    llvm::DenseMap<mlir::Value, mlir::DictionaryAttr> synthetic;
    auto synthetic_on = [&](mlir::DictionaryAttr attributes,
                            mlir::Value device, mlir::Location loc) {
      mlir::OperationState state(loc, "corert.synthetic_dense_tensor_on");
      state.addOperands(device);
      state.addAttributes(attributes.getValue());
      state.addTypes(handle_type);
      return builder.create(state)->getResult(0);
    };
    auto where = [&](mlir::Value value) -> llvm::StringRef {
      auto it = value_device.find(value);
      return it == value_device.end() ? llvm::StringRef(kHostDevice)
                                      : it->second;
    };
    // `value` on `device`: itself, or its explicit copy there (one per
    // value and device, made before `user`, its first use there).
    auto on_device = [&](mlir::Value value, llvm::StringRef device,
                         mlir::Operation* user) -> mlir::Value {
      if (value.getType() != handle_type || where(value) == device) {
        return value;
      }
      mlir::Value& copy = transfers[{value, Intern(device).data()}];
      if (!copy) {
        mlir::OpBuilder::InsertionGuard guard(builder);
        builder.setInsertionPoint(user);
        auto constant = constants.find(value);
        auto weights = synthetic.find(value);
        if (weights != synthetic.end()) {
          copy = synthetic_on(weights->second, device_value(device),
                              user->getLoc());
        } else if (constant != constants.end()) {
          mlir::OperationState state(user->getLoc(),
                                     "corert.const_dense_tensor_on");
          state.addOperands(device_value(device));
          state.addAttribute("value", constant->second);
          state.addTypes(handle_type);
          copy = builder.create(state)->getResult(0);
        } else {
          mlir::OperationState state(user->getLoc(),
                                     "corert.transfer_inferred_tensortype");
          state.addOperands({value, device_value(device)});
          state.addTypes(handle_type);
          copy = builder.create(state)->getResult(0);
        }
        value_device[copy] = Intern(device);
      }
      return copy;
    };

    if (values_on != kHostDevice) {
      for (mlir::BlockArgument argument : block.getArguments()) {
        if (argument.getType() == handle_type) {
          value_device[argument] = Intern(values_on);
        }
      }
    }

    for (mlir::Operation& op : llvm::make_early_inc_range(block)) {
      builder.setInsertionPoint(&op);
      if (auto constant = mlir::dyn_cast<nn::ConstantOp>(op)) {
        auto type = mlir::cast<mlir::RankedTensorType>(constant.getType());
        std::optional<DType> dtype = nn::DTypeOf(type.getElementType());
        if (synthetic_weights_ && type.hasStaticShape() &&
            type.getNumElements() > kSyntheticMinElements && dtype) {
          mlir::DictionaryAttr attributes = builder.getDictionaryAttr({
              builder.getNamedAttr("shape",
                                   builder.getI64ArrayAttr(type.getShape())),
              builder.getNamedAttr("dtype",
                                   builder.getStringAttr(std::string(DTypeName(*dtype)))),
              builder.getNamedAttr(
                  "seed", builder.getI64IntegerAttr(synthetic.size() + 1)),
          });
          mlir::Value lowered =
              synthetic_on(attributes, device_value(kHostDevice), op.getLoc());
          synthetic[lowered] = attributes;
          op.getResult(0).replaceAllUsesWith(lowered);
          op.erase();
          continue;
        }
        mlir::OperationState state(op.getLoc(), "corert.const_dense_tensor");
        state.addAttribute("value", constant.getValue());
        state.addTypes(handle_type);
        mlir::Operation* lowered = builder.create(state);
        constants[lowered->getResult(0)] = constant.getValue();
        op.getResult(0).replaceAllUsesWith(lowered->getResult(0));
        op.erase();
        continue;
      }
      if (auto ret = mlir::dyn_cast<mlir::func::ReturnOp>(op)) {
        // Results reach the caller where its arguments live.
        llvm::SmallVector<mlir::Value> operands;
        for (mlir::Value operand : ret.getOperands()) {
          operands.push_back(on_device(operand, values_on, &op));
        }
        mlir::OperationState state(op.getLoc(), "tfrt.return");
        state.addOperands(operands);
        builder.create(state);
        op.erase();
        continue;
      }
      if (op.getDialect() == nullptr ||
          op.getDialect()->getNamespace() != "nn") {
        continue;
      }
      llvm::StringRef device = kHostDevice;
      if (mlir::Attribute attribute = op.getAttr(kDeviceAttribute)) {
        auto name = mlir::dyn_cast<mlir::StringAttr>(attribute);
        if (!name || !IsShortDeviceName(name.getValue())) {
          return op.emitError() << "nn-to-corert: " << kDeviceAttribute
                                << " must be a device name like SIM:0";
        }
        device = name.getValue();
      }
      // Attributes as corert.executeop's ["key", value] pairs; the
      // placement is the handler's, not the op's. nn.runtime_op names
      // its runtime op.
      auto runtime_op = mlir::dyn_cast<nn::RuntimeOp>(op);
      llvm::StringRef op_name = runtime_op ? runtime_op.getOpName()
                                           : op.getName().getStringRef();
      llvm::SmallVector<mlir::Attribute> pairs;
      for (mlir::NamedAttribute attribute : op.getAttrs()) {
        if (attribute.getName() == kDeviceAttribute) continue;
        if (runtime_op &&
            attribute.getName() == runtime_op.getOpNameAttrName()) {
          continue;
        }
        pairs.push_back(
            builder.getArrayAttr({attribute.getName(), attribute.getValue()}));
      }
      mlir::Value handler = handler_on(device);
      llvm::SmallVector<mlir::Value> operands;
      for (mlir::Value operand : op.getOperands()) {
        operands.push_back(on_device(operand, device, &op));
      }
      mlir::OperationState state(op.getLoc(), "corert.executeop");
      state.addOperands(handler);
      state.addOperands(operands);
      state.addAttribute("op_attrs", builder.getArrayAttr(pairs));
      state.addAttribute("op_func_attrs", builder.getArrayAttr({}));
      state.addAttribute("op_name", builder.getStringAttr(op_name));
      state.addTypes(
          llvm::SmallVector<mlir::Type>(op.getNumResults(), handle_type));
      mlir::Operation* lowered = builder.create(state);
      if (device != kHostDevice) {
        for (mlir::Value result : lowered->getResults()) {
          value_device[result] = Intern(device);
        }
      }
      op.replaceAllUsesWith(lowered->getResults());
      op.erase();
    }

    // Constants used only on other devices.
    for (auto& [value, attribute] : constants) {
      if (value.use_empty()) value.getDefiningOp()->erase();
    }
    for (auto& [value, attributes] : synthetic) {
      if (value.use_empty()) value.getDefiningOp()->erase();
    }

    function->setAttr(kCostThresholdAttr,
                      builder.getI64IntegerAttr(kOneStreamCostThreshold));
    for (mlir::Operation& op : block) {
      op.setAttr(kOpCostAttr, builder.getI64IntegerAttr(1));
    }

    llvm::SmallVector<mlir::Type> results;
    for (mlir::Type type : function.getResultTypes()) {
      results.push_back(IsTensor(type) ? handle_type : type);
    }
    function.setFunctionType(
        mlir::FunctionType::get(context, block.getArgumentTypes(), results));
    return mlir::success();
  }

  Option<bool> synthetic_weights_{
      *this, "synthetic-weights",
      llvm::cl::desc("For benchmarks: large constants become deterministic "
                     "pseudo-random values made at run time"),
      llvm::cl::init(false)};
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateNnToCoreRtPass(bool synthetic_weights) {
  return std::make_unique<NnToCoreRtPass>(synthetic_weights);
}

void RegisterNnToCoreRtPass() { mlir::PassRegistration<NnToCoreRtPass>(); }

void AddModelPipeline(mlir::OpPassManager& pipeline,
                      const ModelPipelineOptions& options) {
  pipeline.addPass(CreateNnFusionPass());
  if (!options.precision.empty()) {
    pipeline.addPass(CreateNnConvertPrecisionPass(options.precision));
  }
  if (!options.device.empty() && options.device != kHostDevice) {
    pipeline.addPass(CreateNnAssignDevicePass(options.device));
    const bool cuda = llvm::StringRef(options.device).starts_with("CUDA");
    if (options.fuse_attention && cuda) {
      pipeline.addNestedPass<mlir::func::FuncOp>(CreateNnFuseAttentionPass());
      if (options.fuse_qkv) {
        pipeline.addNestedPass<mlir::func::FuncOp>(CreateNnFuseQkvPass());
      }
    }
    if (options.channels_last && cuda) {
      pipeline.addNestedPass<mlir::func::FuncOp>(
          CreateNnChannelsLastPass(options.device));
    }
  } else if (options.precision.empty()) {
    // oneDNN's layouts and the buffer plan are for f32 on the host; the
    // host computes f16 and bf16 in f32 on plain tensors.
    if (options.fuse_elementwise) {
      pipeline.addPass(CreateNnFuseElementwisePass());
    }
    pipeline.addPass(CreateNnAssignLayoutsPass(options.winograd));
    if (options.plan_buffers) pipeline.addPass(CreateNnPlanBuffersPass());
  }
  pipeline.addPass(CreateNnToCoreRtPass(options.synthetic_weights));
  if (options.device_graphs && !options.device.empty() &&
      options.device != kHostDevice) {
    pipeline.addPass(CreateOutlineDeviceGraphsPass());
  }
  pipeline.addPass(CreateFuseOpSequencesPass());
}

mlir::FailureOr<std::vector<uint8_t>> CompileModelToBef(mlir::ModuleOp module) {
  mlir::PassManager pipeline(module.getContext());
  AddModelPipeline(pipeline);
  if (mlir::failed(pipeline.run(module))) return mlir::failure();
  return ConvertMlirToBef(module);
}

void RegisterModelPipeline() {
  mlir::PassPipelineRegistration<>(
      "asyncrt-model-pipeline",
      "Compile a model in the nn dialect to the corert form BEF runs",
      [](mlir::OpPassManager& pipeline) { AddModelPipeline(pipeline); });
}

}  // namespace asyncrt::compiler
