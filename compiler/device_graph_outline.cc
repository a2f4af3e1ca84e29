// -corert-outline-device-graphs: moves a function's work on one device (its
// corert.executeop on that device's op handler, and the constants copied
// there) into a function of its own, called with corert.captured_call, so
// that the runtime records it once as a device graph and replays it (see
// passes.h).
#include <string>

#include "asyncrt/compiler/passes.h"
#include "asyncrt/compiler/stream_analysis.h"
#include "asyncrt/dialects/corert/corert_dialect.h"
#include "asyncrt/dialects/tfrt/tfrt_dialect.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/IRMapping.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Pass/Pass.h"
#include "mlir/Pass/PassRegistry.h"

namespace asyncrt::compiler {
namespace {

constexpr llvm::StringLiteral kHostDevice = "CPU:0";

// The device name a setup op names: corert.get_op_handler's handler name,
// tfrt.get_device's device name; empty for other values.
llvm::StringRef SetupDevice(mlir::Value value, llvm::StringRef op_name,
                            llvm::StringRef attribute) {
  mlir::Operation* op = value.getDefiningOp();
  if (op == nullptr || op->getName().getStringRef() != op_name) return "";
  auto name = op->getAttrOfType<mlir::StringAttr>(attribute);
  return name ? name.getValue() : "";
}

// The device an op of the lowered form runs on, if it is device work the
// outlining takes: executeop on a device's handler, or a constant made on
// a device. Empty otherwise.
llvm::StringRef DeviceWork(mlir::Operation& op) {
  llvm::StringRef name = op.getName().getStringRef();
  llvm::StringRef device;
  if (name == "corert.executeop" && op.getNumOperands() > 0) {
    device = SetupDevice(op.getOperand(0), "corert.get_op_handler",
                         "op_handler_name");
  } else if ((name == "corert.const_dense_tensor_on" ||
              name == "corert.synthetic_dense_tensor_on") &&
             op.getNumOperands() == 1) {
    device = SetupDevice(op.getOperand(0), "tfrt.get_device", "device_name");
  }
  if (device == kHostDevice || device == "cpu" || !IsShortDeviceName(device)) {
    return "";
  }
  return device;
}

class OutlineDeviceGraphsPass
    : public mlir::PassWrapper<OutlineDeviceGraphsPass,
                               mlir::OperationPass<mlir::ModuleOp>> {
 public:
  MLIR_DEFINE_EXPLICIT_INTERNAL_INLINE_TYPE_ID(OutlineDeviceGraphsPass)

  llvm::StringRef getArgument() const final {
    return "corert-outline-device-graphs";
  }
  llvm::StringRef getDescription() const final {
    return "Move a function's work on one device into a function called "
           "with corert.captured_call (replayed as a device graph)";
  }
  void getDependentDialects(mlir::DialectRegistry& registry) const override {
    registry.insert<corert::CoreRTDialect, tfrt::TfrtDialect>();
  }

  void runOnOperation() override {
    llvm::SmallVector<mlir::func::FuncOp> functions(
        getOperation().getOps<mlir::func::FuncOp>());
    for (mlir::func::FuncOp function : functions) {
      if (function.isDeclaration() || !function.getBody().hasOneBlock()) {
        continue;
      }
      Outline(function);
    }
  }

 private:
  // Outlines `function`'s device work where it is all on one device and
  // can be run as one call: nothing outside it both reads its results and
  // feeds it, and its inputs are values copied to the device. Leaves the
  // function as it is otherwise.
  void Outline(mlir::func::FuncOp function) {
    mlir::MLIRContext* context = &getContext();
    mlir::Block& block = function.getBody().front();
    llvm::SetVector<mlir::Operation*> work;
    llvm::StringRef device;
    for (mlir::Operation& op : block) {
      llvm::StringRef on = DeviceWork(op);
      if (on.empty()) continue;
      if (!device.empty() && on != device) return;  // Several devices.
      device = on;
      work.insert(&op);
    }
    if (work.size() < 2) return;

    // Ops outside that depend on the work; none may feed it.
    llvm::DenseSet<mlir::Operation*> after;
    llvm::SetVector<mlir::Value> inputs;
    for (mlir::Operation& op : block) {
      const bool in_work = work.contains(&op);
      for (auto [index, operand] : llvm::enumerate(op.getOperands())) {
        mlir::Operation* definer = operand.getDefiningOp();
        const bool from_work = definer && work.contains(definer);
        const bool from_after = definer && after.contains(definer);
        if (!in_work) {
          if (from_work || from_after) after.insert(&op);
          continue;
        }
        if (from_after) return;  // Work -> outside -> work.
        if (from_work || index == 0) continue;  // Index 0: handler, device.
        // An input: a value copied to the device.
        if (definer == nullptr ||
            definer->getName().getStringRef() !=
                "corert.transfer_inferred_tensortype" ||
            definer->getNumOperands() != 2 ||
            SetupDevice(definer->getOperand(1), "tfrt.get_device",
                        "device_name") != device) {
          return;
        }
        inputs.insert(operand);
      }
    }
    llvm::SetVector<mlir::Value> outputs;
    for (mlir::Operation* op : work) {
      for (mlir::Value result : op->getResults()) {
        for (mlir::Operation* user : result.getUsers()) {
          if (!work.contains(user)) outputs.insert(result);
        }
      }
    }
    if (outputs.empty()) return;

    // The callee: its own chain, handler and device, then the work.
    mlir::ModuleOp module = getOperation();
    mlir::SymbolTable symbols(module);
    std::string base = (function.getName() + "_on_" + device).str();
    for (char& c : base) {
      if (c == ':') c = '_';
    }
    std::string name = base;
    for (int i = 1; symbols.lookup(name); ++i) {
      name = base + "_" + std::to_string(i);
    }
    mlir::Type handle_type = corert::TensorHandleType::get(context);
    llvm::SmallVector<mlir::Type> input_types(inputs.size(), handle_type);
    llvm::SmallVector<mlir::Type> output_types;
    for (mlir::Value output : outputs) output_types.push_back(output.getType());
    mlir::OpBuilder builder(context);
    builder.setInsertionPointAfter(function);
    auto callee = builder.create<mlir::func::FuncOp>(
        function.getLoc(), name,
        mlir::FunctionType::get(context, input_types, output_types));
    if (auto threshold = function->getAttr(kCostThresholdAttr)) {
      callee->setAttr(kCostThresholdAttr, threshold);
    }
    mlir::Block* body = callee.addEntryBlock();
    builder.setInsertionPointToStart(body);
    mlir::Location loc = function.getLoc();
    auto cost = builder.getI64IntegerAttr(1);
    mlir::OperationState chain_state(loc, "tfrt.new.chain");
    chain_state.addTypes(tfrt::ChainType::get(context));
    mlir::Value chain = builder.create(chain_state)->getResult(0);
    chain.getDefiningOp()->setAttr(kOpCostAttr, cost);
    mlir::Value device_value;
    mlir::IRMapping mapping;
    for (auto [input, argument] : llvm::zip(inputs, body->getArguments())) {
      mapping.map(input, argument);
    }
    for (mlir::Operation* op : work) {
      mlir::Value setup = op->getOperand(0);
      if (!mapping.contains(setup)) {
        mlir::Operation* made = builder.clone(*setup.getDefiningOp());
        made->setOperand(0, chain);
        made->setAttr(kOpCostAttr, cost);
        mapping.map(setup, made->getResult(0));
      }
      builder.clone(*op, mapping);
    }
    llvm::SmallVector<mlir::Value> returned;
    for (mlir::Value output : outputs) {
      returned.push_back(mapping.lookup(output));
    }
    mlir::OperationState return_state(loc, "tfrt.return");
    return_state.addOperands(returned);
    builder.create(return_state)->setAttr(kOpCostAttr, cost);

    // The caller: the call after everything the work does not feed, then
    // what reads the work's results (in their order).
    mlir::Operation* terminator = block.getTerminator();
    builder.setInsertionPoint(terminator);
    device_value = DeviceValue(function, device, builder);
    if (!device_value) return callee.erase();
    llvm::SmallVector<mlir::Value> operands{device_value};
    operands.append(inputs.begin(), inputs.end());
    mlir::OperationState call_state(loc, "corert.captured_call");
    call_state.addOperands(operands);
    call_state.addAttribute("callee",
                            mlir::FlatSymbolRefAttr::get(context, name));
    call_state.addTypes(output_types);
    mlir::Operation* call = builder.create(call_state);
    call->setAttr(kOpCostAttr, cost);
    llvm::SmallVector<mlir::Operation*> moved;
    for (mlir::Operation& op : block) {
      if (after.contains(&op) && &op != terminator) moved.push_back(&op);
    }
    for (mlir::Operation* op : moved) op->moveBefore(terminator);
    for (auto [index, output] : llvm::enumerate(outputs)) {
      mlir::Value value = output;
      value.replaceUsesWithIf(call->getResult(index), [&](mlir::OpOperand& use) {
        return !work.contains(use.getOwner());
      });
    }
    for (mlir::Operation* op : llvm::reverse(work)) op->erase();
    // Setup ops only the work used.
    for (mlir::Operation& op : llvm::make_early_inc_range(block)) {
      llvm::StringRef op_name = op.getName().getStringRef();
      if ((op_name == "corert.get_op_handler" || op_name == "tfrt.get_device") &&
          op.use_empty()) {
        op.erase();
      }
    }
  }

  // A tfrt.get_device of `device` in `function` (one the lowering made, or
  // a new one after its chain); null if the function has no chain.
  mlir::Value DeviceValue(mlir::func::FuncOp function, llvm::StringRef device,
                          mlir::OpBuilder& builder) {
    mlir::Value chain;
    for (mlir::Operation& op : function.getBody().front()) {
      llvm::StringRef name = op.getName().getStringRef();
      if (name == "tfrt.get_device") {
        auto attr = op.getAttrOfType<mlir::StringAttr>("device_name");
        if (attr && attr.getValue() == device) return op.getResult(0);
      }
      if (name == "tfrt.new.chain" && !chain) chain = op.getResult(0);
    }
    if (!chain) return nullptr;
    mlir::OpBuilder::InsertionGuard guard(builder);
    builder.setInsertionPointAfter(chain.getDefiningOp());
    mlir::OperationState state(chain.getLoc(), "tfrt.get_device");
    state.addOperands(chain);
    state.addAttribute("device_name", builder.getStringAttr(device));
    state.addTypes(mlir::OpaqueType::get(
        mlir::StringAttr::get(builder.getContext(), "tfrt"), "device"));
    mlir::Operation* made = builder.create(state);
    made->setAttr(kOpCostAttr, builder.getI64IntegerAttr(1));
    return made->getResult(0);
  }
};

}  // namespace

std::unique_ptr<mlir::Pass> CreateOutlineDeviceGraphsPass() {
  return std::make_unique<OutlineDeviceGraphsPass>();
}

void RegisterOutlineDeviceGraphsPass() {
  mlir::PassRegistration<OutlineDeviceGraphsPass>();
}

}  // namespace asyncrt::compiler
