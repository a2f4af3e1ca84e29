#include "asyncrt/bef_converter/mlir_to_bef.h"

#include <complex>
#include <cstring>
#include <string>

#include "absl/strings/string_view.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/compiler/stream_analysis.h"
#include "asyncrt/dialects/corert/corert_dialect.h"
#include "asyncrt/dialects/tfrt/tfrt_ops.h"
#include "asyncrt/dialects/tfrt/tfrt_traits.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/Operation.h"
#include "mlir/IR/SymbolTable.h"

namespace asyncrt {
namespace {

using bef::AttributeKind;

// Abseil's string_view is its own type in this Abseil build.
absl::string_view View(llvm::StringRef s) {
  return absl::string_view(s.data(), s.size());
}

std::string TypeString(mlir::Type type) {
  std::string text;
  llvm::raw_string_ostream os(text);
  type.print(os);
  return text;
}

class Converter {
 public:
  explicit Converter(mlir::ModuleOp module) : module_(module) {}

  mlir::LogicalResult Run() {
    // Pass 1: declare every function in file order (region bodies before
    // the function enclosing them), so calls can refer forward.
    for (auto func : module_.getOps<mlir::func::FuncOp>()) {
      if (mlir::failed(DeclareFunction(func))) return mlir::failure();
    }
    // Pass 2: bodies.
    for (auto func : module_.getOps<mlir::func::FuncOp>()) {
      if (func.isExternal()) continue;
      if (mlir::failed(DefineBody(func.getBody(),
                                  functions_[func.getOperation()],
                                  /*captured=*/{}, IsSync(func)))) {
        return mlir::failure();
      }
    }
    return mlir::success();
  }

  bef::BefWriter& writer() { return writer_; }

 private:
  static bool IsSync(mlir::func::FuncOp func) {
    return func->hasAttr("tfrt.sync");
  }

  mlir::LogicalResult DeclareFunction(mlir::func::FuncOp func) {
    mlir::FunctionType type = func.getFunctionType();
    if (func.isExternal()) {
      if (!func->hasAttr("tfrt.native")) {
        return func.emitError("external functions are not allowed");
      }
      functions_[func.getOperation()] = writer_.DeclareFunction(
          View(func.getSymName()), bef::FunctionKind::kNative,
          Types(type.getInputs()), Types(type.getResults()));
      symbols_[func.getSymName()] = functions_[func.getOperation()];
      return mlir::success();
    }
    if (mlir::failed(DeclareRegionsIn(func.getBody()))) return mlir::failure();
    functions_[func.getOperation()] = writer_.DeclareFunction(
        View(func.getSymName()),
        IsSync(func) ? bef::FunctionKind::kSync : bef::FunctionKind::kBef,
        Types(type.getInputs()), Types(type.getResults()));
    symbols_[func.getSymName()] = functions_[func.getOperation()];
    return mlir::success();
  }

  // Declares the functions of every region nested in `region`, innermost
  // first.
  mlir::LogicalResult DeclareRegionsIn(mlir::Region& region) {
    for (mlir::Operation& op : region.getOps()) {
      for (mlir::Region& nested : op.getRegions()) {
        if (mlir::failed(DeclareRegionsIn(nested))) return mlir::failure();
        if (mlir::failed(CheckTerminated(nested, &op))) return mlir::failure();
        mlir::Operation* terminator = nested.front().getTerminator();
        std::vector<uint32_t> args = Types(nested.getArgumentTypes());
        for (mlir::Value operand : CapturedOperands(op, nested)) {
          args.push_back(writer_.AddType(TypeString(operand.getType())));
        }
        regions_[&nested] =
            writer_.DeclareFunction("", bef::FunctionKind::kBef, args,
                                    Types(terminator->getOperandTypes()));
      }
    }
    return mlir::success();
  }

  // The op operands a region receives as trailing function arguments.
  // Regions with block arguments (the tfrt dialect's, which are isolated
  // from above) receive exactly those; a region without any (an
  // unregistered op's) receives the op's data operands, which it may use
  // directly: those the op names through RegionOperandsOpInterface (its
  // leading condition, trip count or loop bounds are not data), else all.
  static llvm::SmallVector<mlir::Value> CapturedOperands(mlir::Operation& op,
                                                         mlir::Region& region) {
    if (region.empty() || region.front().getNumArguments() > 0) return {};
    if (auto with_control =
            mlir::dyn_cast<tfrt::RegionOperandsOpInterface>(&op)) {
      return llvm::SmallVector<mlir::Value>(with_control.getRegionOperands());
    }
    return llvm::SmallVector<mlir::Value>(op.getOperands());
  }

  mlir::LogicalResult CheckTerminated(mlir::Region& region,
                                      mlir::Operation* owner) {
    if (region.empty()) {
      return owner->emitError("all functions need to have a tfrt.return");
    }
    if (!region.hasOneBlock()) {
      return owner->emitError("BEF functions must have a single block");
    }
    mlir::Block& block = region.front();
    if (block.empty() || !mlir::isa<tfrt::ReturnOp>(block.back())) {
      mlir::Operation* at = block.empty() ? owner : &block.back();
      return at->emitError("all functions need to have a tfrt.return");
    }
    return mlir::success();
  }

  template <typename Range>
  std::vector<uint32_t> Types(Range types) {
    std::vector<uint32_t> indices;
    for (mlir::Type type : types) {
      indices.push_back(writer_.AddType(TypeString(type)));
    }
    return indices;
  }

  // Converts the single block of `region` into the body of `function`.
  // `captured` lists outer values the region receives as trailing
  // arguments.
  mlir::LogicalResult DefineBody(mlir::Region& region, uint32_t function,
                                 llvm::ArrayRef<mlir::Value> captured,
                                 bool is_sync) {
    mlir::Operation* owner = region.getParentOp();
    if (mlir::failed(CheckTerminated(region, owner))) return mlir::failure();
    mlir::Block& block = region.front();
    bef::FunctionBodySpec body;
    llvm::DenseMap<mlir::Value, uint32_t> registers;
    auto new_register = [&](mlir::Value value) {
      uint32_t reg = body.num_registers++;
      registers.try_emplace(value, reg);
      body.register_types.push_back(
          writer_.AddType(TypeString(value.getType())));
      return reg;
    };
    for (mlir::BlockArgument argument : block.getArguments()) {
      body.argument_registers.push_back(new_register(argument));
    }
    for (mlir::Value value : captured) {
      // A value passed twice maps to its first argument.
      body.argument_registers.push_back(new_register(value));
    }
    for (mlir::Operation& op : block.without_terminator()) {
      bef::KernelSpec kernel;
      kernel.kernel_name =
          writer_.AddKernelName(View(op.getName().getStringRef()));
      kernel.location = Location(op.getLoc());
      for (mlir::Value operand : op.getOperands()) {
        auto it = registers.find(operand);
        if (it == registers.end()) {
          return op.emitError(
              "operand is defined outside this region and is not an operand "
              "of the op that owns the region");
        }
        kernel.operands.push_back(it->second);
      }
      for (mlir::Value result : op.getResults()) {
        kernel.results.push_back(new_register(result));
      }
      for (mlir::NamedAttribute named : op.getAttrs()) {
        auto attribute =
            EncodeAttribute(&op, named.getName().getValue(), named.getValue());
        if (mlir::failed(attribute)) return mlir::failure();
        kernel.attributes.emplace_back(
            writer_.AddString(View(named.getName().getValue())), *attribute);
      }
      for (mlir::Region& nested : op.getRegions()) {
        uint32_t nested_function = regions_.lookup(&nested);
        llvm::SmallVector<mlir::Value> nested_captured =
            CapturedOperands(op, nested);
        if (mlir::failed(DefineBody(nested, nested_function, nested_captured,
                                    /*is_sync=*/false))) {
          return mlir::failure();
        }
        kernel.functions.push_back(nested_function);
      }
      body.kernels.push_back(std::move(kernel));
    }
    // As TFRT, every function and region body records its streams (the
    // executor schedules by them); a tfrt.sync function runs in program
    // order on one thread: no streams.
    if (!is_sync) {
      compiler::StreamAnalysis streams(block);
      body.kernel_streams.push_back(streams.GetRootStream().id());
      for (mlir::Operation& op : block.without_terminator()) {
        body.kernel_streams.push_back(streams.GetStream(&op).id());
      }
    }
    mlir::Operation* terminator = block.getTerminator();
    llvm::SmallDenseSet<mlir::Value> returned;
    for (auto [index, value] : llvm::enumerate(terminator->getOperands())) {
      auto it = registers.find(value);
      if (it == registers.end()) {
        return terminator->emitError(
            "returns a value defined outside its region");
      }
      if (is_sync) {
        if (mlir::isa<mlir::BlockArgument>(value)) {
          return terminator->emitError()
                 << "return value " << index
                 << " is an argument in a sync function";
        }
        if (!returned.insert(value).second) {
          return terminator->emitError() << "return value " << index
                                         << " is duplicated in a sync function";
        }
      }
      body.result_registers.push_back(it->second);
    }
    writer_.DefineFunction(function, std::move(body));
    return mlir::success();
  }

  // The first file position in `loc`: name locations wrap one, call sites
  // have the callee's then the caller's, fused locations list several.
  static mlir::FileLineColLoc FilePosition(mlir::Location loc) {
    if (auto file = mlir::dyn_cast<mlir::FileLineColLoc>(loc)) return file;
    if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc)) {
      return FilePosition(name.getChildLoc());
    }
    if (auto call = mlir::dyn_cast<mlir::CallSiteLoc>(loc)) {
      if (auto file = FilePosition(call.getCallee())) return file;
      return FilePosition(call.getCaller());
    }
    if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc)) {
      for (mlir::Location part : fused.getLocations()) {
        if (auto file = FilePosition(part)) return file;
      }
    }
    return {};
  }

  // The first name scope in `loc` (TFRT's debug info): a name location's
  // name, a call site's callee's, or a fused location's first named part.
  static llvm::StringRef NameScope(mlir::Location loc) {
    if (auto name = mlir::dyn_cast<mlir::NameLoc>(loc)) {
      return name.getName().getValue();
    }
    if (auto call = mlir::dyn_cast<mlir::CallSiteLoc>(loc)) {
      return NameScope(call.getCallee());
    }
    if (auto fused = mlir::dyn_cast<mlir::FusedLoc>(loc)) {
      for (mlir::Location part : fused.getLocations()) {
        llvm::StringRef name = NameScope(part);
        if (!name.empty()) return name;
      }
    }
    return {};
  }

  uint32_t Location(mlir::Location loc) {
    absl::string_view name = View(NameScope(loc));
    if (auto file = FilePosition(loc)) {
      return writer_.AddLocation(View(file.getFilename().getValue()),
                                 file.getLine(), file.getColumn(), name);
    }
    return writer_.AddLocation("", 0, 0, name);
  }

  mlir::FailureOr<uint32_t> EncodeAttribute(mlir::Operation* op,
                                            llvm::StringRef name,
                                            mlir::Attribute attribute) {
    auto cannot_encode = [&]() -> mlir::FailureOr<uint32_t> {
      op->emitError() << "BEF files cannot encode the '" << name
                      << "' attribute";
      return mlir::failure();
    };
    if (mlir::isa<mlir::UnitAttr>(attribute)) {
      return writer_.AddUnitAttribute();
    }
    if (auto b = mlir::dyn_cast<mlir::BoolAttr>(attribute)) {
      return writer_.AddBoolAttribute(b.getValue());
    }
    if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(attribute)) {
      auto kind = ScalarKind(i.getType());
      if (!kind) return cannot_encode();
      uint64_t bits = *kind == AttributeKind::kBool
                          ? (i.getValue().isZero() ? 0 : 1)
                          : i.getValue().getZExtValue();
      if (i.getType().isSignlessInteger() || i.getType().isSignedInteger() ||
          i.getType().isIndex()) {
        bits = static_cast<uint64_t>(i.getValue().getSExtValue());
      }
      return writer_.AddScalarAttribute(*kind, bits);
    }
    if (auto f = mlir::dyn_cast<mlir::FloatAttr>(attribute)) {
      auto kind = ScalarKind(f.getType());
      if (!kind) return cannot_encode();
      if (*kind == AttributeKind::kF32) {
        return writer_.AddF32Attribute(
            static_cast<float>(f.getValueAsDouble()));
      }
      if (*kind == AttributeKind::kF64) {
        return writer_.AddF64Attribute(f.getValueAsDouble());
      }
      return writer_.AddScalarAttribute(
          *kind, f.getValue().bitcastToAPInt().getZExtValue());
    }
    if (auto s = mlir::dyn_cast<mlir::StringAttr>(attribute)) {
      return writer_.AddStringAttribute(View(s.getValue()));
    }
    if (auto t = mlir::dyn_cast<mlir::TypeAttr>(attribute)) {
      mlir::Type type = t.getValue();
      // Scalars and dialect types (dtypes, !tfrt.chain) encode by name;
      // builtin aggregates such as tensor<1xf32> do not.
      if (!ElementKind(type) && type.getDialect().getNamespace() == "builtin") {
        return cannot_encode();
      }
      return writer_.AddTypeAttribute(TypeString(type));
    }
    if (auto symbol = mlir::dyn_cast<mlir::FlatSymbolRefAttr>(attribute)) {
      auto it = symbols_.find(symbol.getValue());
      if (it != symbols_.end()) return writer_.AddFunctionAttribute(it->second);
      if (CompiledModule(symbol.getValue())) {
        return EncodeCompilationUnit(symbol);
      }
      op->emitError() << "function @" << symbol.getValue() << " not defined";
      return mlir::failure();
    }
    if (auto symbol = mlir::dyn_cast<mlir::SymbolRefAttr>(attribute)) {
      // `@module::@function`: only into modules compiled elsewhere.
      if (!CompiledModule(symbol.getRootReference().getValue())) {
        return cannot_encode();
      }
      return EncodeCompilationUnit(symbol);
    }
    if (auto shape = mlir::dyn_cast<corert::ShapeAttr>(attribute)) {
      if (!shape.getRanked()) return writer_.AddShapeAttribute(std::nullopt);
      llvm::ArrayRef<int64_t> dims = shape.getDims();
      return writer_.AddShapeAttribute(
          absl::MakeConstSpan(dims.data(), dims.size()));
    }
    if (auto resource =
            mlir::dyn_cast<mlir::DenseResourceElementsAttr>(attribute)) {
      // Weights of imported models: the blob is already the row-major
      // little-endian elements (one byte per i1), as BEF stores them.
      auto kind = ElementKind(resource.getElementType());
      mlir::AsmResourceBlob* blob = resource.getRawHandle().getBlob();
      if (!kind || !blob || mlir::isa<mlir::ComplexType>(resource.getElementType())) {
        return cannot_encode();
      }
      llvm::ArrayRef<char> bytes = blob->getData();
      if (bytes.size() != bef::ScalarSize(*kind) *
                              static_cast<size_t>(resource.getNumElements())) {
        op->emitError() << "attribute '" << name
                        << "': its resource holds " << bytes.size()
                        << " bytes, not what its type needs";
        return mlir::failure();
      }
      std::vector<uint8_t> data(bytes.begin(), bytes.end());
      std::vector<int64_t> shape(resource.getType().getShape().begin(),
                                 resource.getType().getShape().end());
      return writer_.AddDenseAttribute(*kind, shape, data);
    }
    if (auto dense =
            mlir::dyn_cast<mlir::DenseIntOrFPElementsAttr>(attribute)) {
      mlir::Type element_type = dense.getElementType();
      auto kind = ElementKind(element_type);
      if (!kind) return cannot_encode();
      std::vector<uint8_t> data;
      const uint32_t size = bef::ScalarSize(*kind);
      data.reserve(size * dense.getNumElements());
      auto append = [&](const llvm::APInt& value, uint32_t bytes) {
        uint64_t bits = value.getZExtValue();
        for (uint32_t b = 0; b < bytes; ++b) data.push_back(bits >> (8 * b));
      };
      if (mlir::isa<mlir::ComplexType>(element_type)) {
        // (real, imaginary), each half the element's size.
        for (const std::complex<llvm::APFloat>& value :
             dense.getValues<std::complex<llvm::APFloat>>()) {
          append(value.real().bitcastToAPInt(), size / 2);
          append(value.imag().bitcastToAPInt(), size / 2);
        }
      } else if (mlir::isa<mlir::FloatType>(element_type)) {
        for (const llvm::APFloat& value : dense.getValues<llvm::APFloat>()) {
          append(value.bitcastToAPInt(), size);
        }
      } else {
        for (const llvm::APInt& value : dense.getValues<llvm::APInt>()) {
          append(value, size);
        }
      }
      std::vector<int64_t> shape(dense.getType().getShape().begin(),
                                 dense.getType().getShape().end());
      return writer_.AddDenseAttribute(*kind, shape, data);
    }
    if (auto array = mlir::dyn_cast<mlir::ArrayAttr>(attribute)) {
      // Homogeneous scalars pack into a typed array; anything else is an
      // aggregate of encoded elements.
      std::optional<AttributeKind> element_kind;
      bool homogeneous = !array.empty();
      for (mlir::Attribute element : array) {
        std::optional<AttributeKind> kind;
        if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(element)) {
          kind = ScalarKind(i.getType());
        } else if (auto f = mlir::dyn_cast<mlir::FloatAttr>(element)) {
          kind = ScalarKind(f.getType());
        }
        if (!kind || (element_kind && *element_kind != *kind)) {
          homogeneous = false;
          break;
        }
        element_kind = kind;
      }
      if (homogeneous) {
        std::vector<uint8_t> data;
        uint32_t size = bef::ScalarSize(*element_kind);
        for (mlir::Attribute element : array) {
          uint64_t bits;
          if (auto i = mlir::dyn_cast<mlir::IntegerAttr>(element)) {
            bits = i.getValue().getZExtValue();
          } else {
            auto f = mlir::cast<mlir::FloatAttr>(element);
            if (*element_kind == AttributeKind::kF32) {
              float v = static_cast<float>(f.getValueAsDouble());
              uint32_t b32;
              std::memcpy(&b32, &v, 4);
              bits = b32;
            } else {
              bits = f.getValue().bitcastToAPInt().getZExtValue();
            }
          }
          for (uint32_t b = 0; b < size; ++b) data.push_back(bits >> (8 * b));
        }
        return writer_.AddArrayAttribute(*element_kind, array.size(), data);
      }
      std::vector<uint32_t> elements;
      for (mlir::Attribute element : array) {
        auto encoded = EncodeAttribute(op, name, element);
        if (mlir::failed(encoded)) return mlir::failure();
        elements.push_back(*encoded);
      }
      return writer_.AddAggregateAttribute(elements);
    }
    return cannot_encode();
  }

  // The nested module named `name` marked `tfrt.compiled`, or null.
  mlir::ModuleOp CompiledModule(llvm::StringRef name) {
    auto module = mlir::dyn_cast_or_null<mlir::ModuleOp>(
        mlir::SymbolTable::lookupSymbolIn(module_, name));
    return module && module->hasAttr("tfrt.compiled") ? module : nullptr;
  }

  // The module travels as MLIR text, once per module (strings are shared).
  mlir::FailureOr<uint32_t> EncodeCompilationUnit(mlir::SymbolRefAttr symbol) {
    llvm::StringRef root = symbol.getRootReference().getValue();
    auto [it, inserted] = compiled_module_text_.try_emplace(root);
    if (inserted) {
      llvm::raw_string_ostream os(it->second);
      CompiledModule(root)->print(
          os, mlir::OpPrintingFlags().enableDebugInfo(false));
    }
    std::vector<std::string> nested;
    for (mlir::FlatSymbolRefAttr reference : symbol.getNestedReferences()) {
      nested.push_back(reference.getValue().str());
    }
    return writer_.AddCompilationUnitAttribute(View(root), nested, it->second);
  }

  // ScalarKind, or a complex kind (dense elements and type attributes).
  static std::optional<AttributeKind> ElementKind(mlir::Type type) {
    if (auto complex = mlir::dyn_cast<mlir::ComplexType>(type)) {
      mlir::Type part = complex.getElementType();
      if (part.isF32()) return AttributeKind::kComplex64;
      if (part.isF64()) return AttributeKind::kComplex128;
      return std::nullopt;
    }
    return ScalarKind(type);
  }

  static std::optional<AttributeKind> ScalarKind(mlir::Type type) {
    if (type.isInteger(1)) return AttributeKind::kBool;
    if (type.isIndex()) return AttributeKind::kI64;
    if (auto integer = mlir::dyn_cast<mlir::IntegerType>(type)) {
      bool is_unsigned = integer.isUnsigned();
      switch (integer.getWidth()) {
        case 8:
          return is_unsigned ? AttributeKind::kUI8 : AttributeKind::kI8;
        case 16:
          return is_unsigned ? AttributeKind::kUI16 : AttributeKind::kI16;
        case 32:
          return is_unsigned ? AttributeKind::kUI32 : AttributeKind::kI32;
        case 64:
          return is_unsigned ? AttributeKind::kUI64 : AttributeKind::kI64;
        default:
          return std::nullopt;
      }
    }
    if (type.isF16()) return AttributeKind::kF16;
    if (type.isBF16()) return AttributeKind::kBF16;
    if (type.isF32()) return AttributeKind::kF32;
    if (type.isF64()) return AttributeKind::kF64;
    return std::nullopt;
  }

  mlir::ModuleOp module_;
  bef::BefWriter writer_;
  llvm::DenseMap<mlir::Operation*, uint32_t> functions_;
  llvm::DenseMap<mlir::Region*, uint32_t> regions_;
  llvm::StringMap<uint32_t> symbols_;
  llvm::StringMap<std::string> compiled_module_text_;
};

}  // namespace

mlir::FailureOr<std::vector<uint8_t>> ConvertMlirToBef(
    mlir::ModuleOp module, bool disable_optional_sections) {
  Converter converter(module);
  if (mlir::failed(converter.Run())) return mlir::failure();
  auto bytes = converter.writer().Finish(!disable_optional_sections);
  if (!bytes.ok()) {
    module.emitError() << std::string(bytes.status().message());
    return mlir::failure();
  }
  return *std::move(bytes);
}

}  // namespace asyncrt
