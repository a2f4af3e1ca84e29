#include "asyncrt/bef_converter/bef_to_mlir.h"

#include <string>
#include <vector>

#include "asyncrt/bef/bef_file.h"
#include "asyncrt/dialects/corert/corert_dialect.h"
#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/MapVector.h"
#include "mlir/AsmParser/AsmParser.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Parser/Parser.h"

namespace asyncrt {
namespace {

using bef::AttributeKind;

llvm::StringRef Ref(absl::string_view s) {
  return llvm::StringRef(s.data(), s.size());
}

class BefToMlir {
 public:
  BefToMlir(const bef::BefFile& file, mlir::MLIRContext* context)
      : file_(file), context_(context), builder_(context) {}

  mlir::OwningOpRef<mlir::ModuleOp> Run() {
    mlir::Location unknown = mlir::UnknownLoc::get(context_);
    mlir::OwningOpRef<mlir::ModuleOp> module = mlir::ModuleOp::create(unknown);
    module_ = *module;
    for (size_t t = 0; t < file_.num_types(); ++t) {
      mlir::Type type = mlir::parseType(Ref(file_.type_name(t)), context_);
      if (!type) {
        mlir::emitError(unknown)
            << "cannot parse BEF type '" << Ref(file_.type_name(t)) << "'";
        return nullptr;
      }
      types_.push_back(type);
    }
    builder_.setInsertionPointToEnd(module->getBody());
    for (const bef::Function& function : file_.functions()) {
      if (function.name.empty()) continue;  // A region, built in place.
      if (mlir::failed(BuildFunction(function))) return nullptr;
    }
    if (mlir::failed(mlir::verify(*module))) return nullptr;
    return module;
  }

 private:
  llvm::SmallVector<mlir::Type> Types(absl::Span<const uint32_t> indices) {
    llvm::SmallVector<mlir::Type> types;
    for (uint32_t index : indices) types.push_back(types_[index]);
    return types;
  }

  mlir::Location Loc(uint32_t index) {
    bef::Location location = file_.location(index);
    mlir::Location position =
        location.filename.empty() && location.line == 0
            ? mlir::Location(mlir::UnknownLoc::get(context_))
            : mlir::Location(mlir::FileLineColLoc::get(
                  context_, Ref(location.filename), location.line,
                  location.column));
    if (location.name.empty()) return position;
    return mlir::NameLoc::get(
        mlir::StringAttr::get(context_, Ref(location.name)), position);
  }

  mlir::LogicalResult BuildFunction(const bef::Function& function) {
    auto type = builder_.getFunctionType(Types(function.argument_types),
                                         Types(function.result_types));
    auto func = mlir::func::FuncOp::create(
        builder_, mlir::UnknownLoc::get(context_), Ref(function.name), type);
    if (function.kind == bef::FunctionKind::kNative) {
      func.setPrivate();
      func->setAttr("tfrt.native", builder_.getUnitAttr());
      return mlir::success();
    }
    if (function.kind == bef::FunctionKind::kSync) {
      func->setAttr("tfrt.sync", builder_.getUnitAttr());
    }
    mlir::Block* block = func.addEntryBlock();
    return BuildBody(function, block);
  }

  mlir::LogicalResult BuildBody(const bef::Function& function,
                                mlir::Block* block) {
    std::vector<mlir::Type> register_types = RegisterTypes(function);
    mlir::OpBuilder::InsertionGuard guard(builder_);
    builder_.setInsertionPointToEnd(block);
    std::vector<mlir::Value> values(function.num_registers);
    for (size_t i = 0; i < function.argument_registers.size(); ++i) {
      values[function.argument_registers[i]] = block->getArgument(i);
    }
    for (const bef::Kernel& kernel : function.kernels) {
      mlir::OperationState state(Loc(kernel.location),
                                 Ref(file_.kernel_name(kernel.kernel_name)));
      for (uint32_t reg : kernel.operands)
        state.operands.push_back(values[reg]);
      for (uint32_t reg : kernel.results) {
        state.types.push_back(register_types[reg]);
      }
      for (const bef::NamedAttribute& named : kernel.attributes) {
        mlir::Attribute attribute =
            DecodeAttribute(file_.attribute(named.attribute));
        if (!attribute) {
          return mlir::emitError(state.location)
                 << "cannot decode attribute '" << Ref(file_.string(named.name))
                 << "'";
        }
        state.addAttribute(Ref(file_.string(named.name)), attribute);
      }
      for (size_t r = 0; r < kernel.functions.size(); ++r) state.addRegion();
      mlir::Operation* op = builder_.create(state);
      for (size_t r = 0; r < kernel.functions.size(); ++r) {
        // An untrusted file may name one body as the region of two kernels
        // or of itself: each region body is built once, and nesting is
        // bounded, so neither loops nor overflows the stack.
        const uint32_t region_index = kernel.functions[r];
        const bef::Function& region_function = file_.functions()[region_index];
        if (!region_function.name.empty() ||
            !built_regions_.insert(region_index).second) {
          return mlir::emitError(op->getLoc())
                 << "BEF function " << region_index
                 << " is not a region body of its own";
        }
        if (region_depth_ >= kMaxRegionDepth) {
          return mlir::emitError(op->getLoc())
                 << "regions nest deeper than " << kMaxRegionDepth;
        }
        mlir::Region& region = op->getRegion(r);
        auto* region_block = new mlir::Block();
        region.push_back(region_block);
        for (mlir::Type type : Types(region_function.argument_types)) {
          region_block->addArgument(type, op->getLoc());
        }
        ++region_depth_;
        mlir::LogicalResult built = BuildBody(region_function, region_block);
        --region_depth_;
        if (mlir::failed(built)) return mlir::failure();
      }
      for (size_t i = 0; i < kernel.results.size(); ++i) {
        values[kernel.results[i]] = op->getResult(i);
      }
    }
    mlir::OperationState ret(mlir::UnknownLoc::get(context_), "tfrt.return");
    for (uint32_t reg : function.result_registers) {
      ret.operands.push_back(values[reg]);
    }
    builder_.create(ret);
    return mlir::success();
  }

  static bool IsModuleNamed(mlir::Operation* op, llvm::StringRef name) {
    auto module = mlir::dyn_cast<mlir::ModuleOp>(op);
    return module && module.getSymName() && *module.getSymName() == name;
  }

  // Parses a compiled module's text into the output module, once per root
  // symbol. False (after an error) if it does not parse as that module.
  bool AddCompiledModule(llvm::StringRef root, llvm::StringRef text) {
    if (compiled_modules_.contains(root)) return true;
    mlir::Block parsed;
    mlir::ParserConfig config(context_);
    // The text is untrusted: it must parse as exactly the module it names.
    if (mlir::failed(mlir::parseSourceString(text, &parsed, config)) ||
        parsed.getOperations().size() != 1 ||
        !IsModuleNamed(&parsed.front(), root)) {
      mlir::emitError(mlir::UnknownLoc::get(context_))
          << "compiled module @" << root << " does not parse as that module";
      return false;
    }
    // Compiled modules come first, in the order first referenced, as the
    // converter found them.
    mlir::Operation* module = &parsed.front();
    module->remove();
    auto& ops = module_.getBody()->getOperations();
    ops.insert(compiled_modules_.empty()
                   ? ops.begin()
                   : std::next(compiled_modules_.back().second->getIterator()),
               module);
    compiled_modules_.insert({root, module});
    return true;
  }

  // Each register's type: from the DebugInfo section, or, in a file written
  // without it, the function's signature for its arguments and results and
  // `none` for the rest (with a warning, once).
  std::vector<mlir::Type> RegisterTypes(const bef::Function& function) {
    std::vector<mlir::Type> types(function.num_registers);
    if (function.register_types.size() == function.num_registers) {
      for (uint32_t reg = 0; reg < function.num_registers; ++reg) {
        types[reg] = types_[function.register_types[reg]];
      }
      return types;
    }
    if (!warned_missing_types_) {
      warned_missing_types_ = true;
      mlir::emitWarning(mlir::UnknownLoc::get(context_))
          << "Missing AttributeTypes, AttributeNames or RegisterTypes "
             "sections.";
    }
    for (mlir::Type& type : types) type = builder_.getNoneType();
    for (size_t i = 0; i < function.argument_registers.size(); ++i) {
      types[function.argument_registers[i]] =
          types_[function.argument_types[i]];
    }
    for (size_t i = 0; i < function.result_registers.size(); ++i) {
      types[function.result_registers[i]] = types_[function.result_types[i]];
    }
    return types;
  }

  mlir::Type ScalarType(AttributeKind kind) {
    switch (kind) {
      case AttributeKind::kBool:
        return builder_.getI1Type();
      case AttributeKind::kI8:
        return builder_.getI8Type();
      case AttributeKind::kI16:
        return builder_.getI16Type();
      case AttributeKind::kI32:
        return builder_.getI32Type();
      case AttributeKind::kI64:
        return builder_.getI64Type();
      case AttributeKind::kUI8:
        return builder_.getIntegerType(8, /*isSigned=*/false);
      case AttributeKind::kUI16:
        return builder_.getIntegerType(16, /*isSigned=*/false);
      case AttributeKind::kUI32:
        return builder_.getIntegerType(32, /*isSigned=*/false);
      case AttributeKind::kUI64:
        return builder_.getIntegerType(64, /*isSigned=*/false);
      case AttributeKind::kF16:
        return builder_.getF16Type();
      case AttributeKind::kBF16:
        return builder_.getBF16Type();
      case AttributeKind::kF32:
        return builder_.getF32Type();
      case AttributeKind::kF64:
        return builder_.getF64Type();
      case AttributeKind::kComplex64:
        return mlir::ComplexType::get(builder_.getF32Type());
      case AttributeKind::kComplex128:
        return mlir::ComplexType::get(builder_.getF64Type());
      default:
        return nullptr;
    }
  }

  mlir::Attribute Scalar(AttributeKind kind, uint64_t bits) {
    mlir::Type type = ScalarType(kind);
    if (!type || bef::IsComplex(kind)) return nullptr;
    if (auto integer = mlir::dyn_cast<mlir::IntegerType>(type)) {
      if (integer.getWidth() == 1) return builder_.getBoolAttr(bits != 0);
      return builder_.getIntegerAttr(
          type, llvm::APInt(integer.getWidth(), bits, /*isSigned=*/false,
                            /*implicitTrunc=*/true));
    }
    auto float_type = mlir::cast<mlir::FloatType>(type);
    llvm::APInt raw(float_type.getWidth(), bits, /*isSigned=*/false,
                    /*implicitTrunc=*/true);
    return builder_.getFloatAttr(
        type, llvm::APFloat(float_type.getFloatSemantics(), raw));
  }

  mlir::Attribute DecodeAttribute(const bef::Attribute& attribute) {
    switch (attribute.kind) {
      case AttributeKind::kUnit:
        return builder_.getUnitAttr();
      case AttributeKind::kString:
        return builder_.getStringAttr(Ref(attribute.bytes));
      case AttributeKind::kType:
        return mlir::TypeAttr::get(types_[attribute.index]);
      case AttributeKind::kFunction:
        return mlir::FlatSymbolRefAttr::get(
            context_, Ref(file_.functions()[attribute.index].name));
      case AttributeKind::kArray: {
        llvm::SmallVector<mlir::Attribute> elements;
        uint32_t size = bef::ScalarSize(attribute.element_kind);
        for (uint32_t i = 0; i < attribute.count; ++i) {
          uint64_t bits = 0;
          std::memcpy(&bits, attribute.bytes.data() + i * size, size);
          elements.push_back(Scalar(attribute.element_kind, bits));
        }
        return builder_.getArrayAttr(elements);
      }
      case AttributeKind::kAggregate: {
        llvm::SmallVector<mlir::Attribute> elements;
        for (uint32_t element : attribute.elements) {
          mlir::Attribute decoded = DecodeAttribute(file_.attribute(element));
          if (!decoded) return nullptr;
          elements.push_back(decoded);
        }
        return builder_.getArrayAttr(elements);
      }
      case AttributeKind::kCompilationUnit: {
        llvm::StringRef root = Ref(file_.string(attribute.index));
        if (!AddCompiledModule(root, Ref(attribute.bytes))) return nullptr;
        llvm::SmallVector<mlir::FlatSymbolRefAttr> nested;
        for (uint32_t symbol : attribute.elements) {
          nested.push_back(mlir::FlatSymbolRefAttr::get(
              context_, Ref(file_.string(symbol))));
        }
        return mlir::SymbolRefAttr::get(context_, root, nested);
      }
      case AttributeKind::kShape:
        context_->getOrLoadDialect<corert::CoreRTDialect>();
        return corert::ShapeAttr::get(
            context_, attribute.bits != 0,
            llvm::ArrayRef<int64_t>(attribute.shape.data(),
                                    attribute.shape.size()));
      case AttributeKind::kDense: {
        auto type = mlir::RankedTensorType::get(
            llvm::ArrayRef<int64_t>(attribute.shape.data(),
                                    attribute.shape.size()),
            ScalarType(attribute.element_kind));
        if (attribute.element_kind == AttributeKind::kBool) {
          // MLIR packs i1 raw buffers as bits; BEF keeps a byte per element.
          llvm::SmallVector<bool> values;
          for (char byte : attribute.bytes) values.push_back(byte != 0);
          return mlir::DenseElementsAttr::get(type,
                                              llvm::ArrayRef<bool>(values));
        }
        return mlir::DenseElementsAttr::getFromRawBuffer(
            type, llvm::ArrayRef<char>(attribute.bytes.data(),
                                       attribute.bytes.size()));
      }
      default:
        return Scalar(attribute.kind, attribute.bits);
    }
  }

  const bef::BefFile& file_;
  mlir::MLIRContext* context_;
  mlir::OpBuilder builder_;
  std::vector<mlir::Type> types_;
  bool warned_missing_types_ = false;
  static constexpr int kMaxRegionDepth = 256;
  int region_depth_ = 0;
  llvm::DenseSet<uint32_t> built_regions_;
  mlir::ModuleOp module_;  // The output, while Run() builds it.
  // By root symbol, in the order inserted (first in the output module).
  llvm::MapVector<llvm::StringRef, mlir::Operation*> compiled_modules_;
};

}  // namespace

mlir::OwningOpRef<mlir::ModuleOp> ConvertBefToMlir(
    absl::Span<const uint8_t> bytes, mlir::MLIRContext* context) {
  auto file = bef::BefFile::Open(bytes);
  if (!file.ok()) {
    mlir::emitError(mlir::UnknownLoc::get(context))
        << std::string(file.status().message());
    return nullptr;
  }
  return BefToMlir(**file, context).Run();
}

}  // namespace asyncrt
