// Custom syntax, verifiers and canonicalizations of the tfrt ops.
#include "asyncrt/dialects/tfrt/tfrt_ops.h"

#include <string>

#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/PatternMatch.h"

namespace asyncrt::tfrt {

std::string TypeList(mlir::TypeRange types) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "(";
  llvm::interleaveComma(types, os);
  os << ")";
  return text;
}

namespace {

// Parses `attributes {...}`, which the region ops accept before their
// types (a trailing dictionary would be ambiguous with the region).
mlir::ParseResult ParseOptionalAttributes(mlir::OpAsmParser& parser,
                                          mlir::OperationState& result) {
  return parser.parseOptionalAttrDictWithKeyword(result.attributes);
}

}  // namespace

//===----------------------------------------------------------------------===//
// Shared helpers
//===----------------------------------------------------------------------===//

mlir::ParseResult ParseRegionWithOperandNames(
    mlir::OpAsmParser& parser, mlir::Region& region,
    llvm::ArrayRef<mlir::OpAsmParser::UnresolvedOperand> operands,
    llvm::ArrayRef<mlir::Type> types) {
  // Hidden names of repeated operands; must outlive parseRegion.
  llvm::SmallVector<std::string, 2> hidden_names;
  hidden_names.reserve(operands.size());
  llvm::SmallVector<mlir::OpAsmParser::Argument, 4> arguments;
  llvm::DenseSet<std::pair<llvm::StringRef, unsigned>> seen;
  for (auto [operand, type] : llvm::zip_equal(operands, types)) {
    mlir::OpAsmParser::Argument& argument = arguments.emplace_back();
    argument.ssaName = operand;
    argument.type = type;
    if (!seen.insert({operand.name, operand.number}).second) {
      hidden_names.push_back("%__repeated_operand_" +
                             std::to_string(arguments.size() - 1));
      argument.ssaName.name = hidden_names.back();
      argument.ssaName.number = 0;
    }
  }
  return parser.parseRegion(region, arguments, /*enableNameShadowing=*/true);
}

void PrintRegionWithOperandNames(mlir::OpAsmPrinter& printer,
                                 mlir::Region& region, mlir::ValueRange names) {
  printer.shadowRegionArgs(region, names);
  printer.printRegion(region, /*printEntryBlockArgs=*/false);
}

mlir::LogicalResult VerifyRegionSignature(mlir::Operation* op,
                                          mlir::Region& region,
                                          llvm::StringRef region_name,
                                          mlir::TypeRange types) {
  mlir::Block& block = region.front();
  if (block.getArgumentTypes() != types) {
    return op->emitOpError() << region_name << " region takes "
                             << TypeList(block.getArgumentTypes())
                             << ", but the op passes " << TypeList(types);
  }
  if (block.empty() || !llvm::isa<ReturnOp>(block.back())) {
    return op->emitOpError()
           << "expects its " << region_name << " region to end in tfrt.return";
  }
  return mlir::success();
}

mlir::LogicalResult VerifyReturnedTypes(ReturnOp return_op,
                                        mlir::TypeRange expected,
                                        const llvm::Twine& enclosing) {
  mlir::TypeRange returned = return_op.getOperandTypes();
  if (returned == expected) return mlir::success();
  // TFRT's wording, then the two type lists.
  return return_op.emitOpError()
         << "operand types don't match " << enclosing << " result types: "
         << TypeList(returned) << " vs " << TypeList(expected);
}

namespace {

// A tfrt.return ending a function body, worded as TFRT (and func.return).
mlir::LogicalResult VerifyFunctionReturn(ReturnOp return_op,
                                         mlir::FunctionOpInterface function) {
  mlir::TypeRange returned = return_op.getOperandTypes();
  mlir::ArrayRef<mlir::Type> expected = function.getResultTypes();
  if (returned.size() != expected.size()) {
    return return_op.emitOpError()
           << "has " << returned.size()
           << " operands, but enclosing function returns " << expected.size()
           << " (@" << function.getName() << ")";
  }
  for (auto [index, pair] :
       llvm::enumerate(llvm::zip_equal(returned, expected))) {
    auto [got, want] = pair;
    if (got != want) {
      return return_op.emitOpError()
             << "type of return operand " << index << " (" << got
             << ") doesn't match function result type (" << want
             << ") in function @" << function.getName();
    }
  }
  return mlir::success();
}

}  // namespace

// custom<ParenTypes>: `(` [type (`,` type)*] `)`.
static mlir::ParseResult parseParenTypes(
    mlir::OpAsmParser& parser, llvm::SmallVectorImpl<mlir::Type>& types) {
  if (parser.parseLParen()) return mlir::failure();
  if (succeeded(parser.parseOptionalRParen())) return mlir::success();
  return mlir::failure(parser.parseTypeList(types) || parser.parseRParen());
}

static void printParenTypes(mlir::OpAsmPrinter& printer, mlir::Operation* op,
                            mlir::TypeRange types) {
  printer << TypeList(types);
}

// custom<CaseTypes>: `(` types `)` `->` `(` types `)`, where one operand
// more than listed types is TFRT's chained form: a leading chain operand and
// result that the lists leave out.
static mlir::ParseResult parseCaseTypes(
    mlir::OpAsmParser& parser,
    llvm::ArrayRef<mlir::OpAsmParser::UnresolvedOperand> operands,
    llvm::SmallVectorImpl<mlir::Type>& operand_types,
    llvm::SmallVectorImpl<mlir::Type>& result_types) {
  if (parseParenTypes(parser, operand_types) || parser.parseArrow() ||
      parseParenTypes(parser, result_types)) {
    return mlir::failure();
  }
  if (operands.size() == operand_types.size() + 1) {
    mlir::Type chain = ChainType::get(parser.getContext());
    operand_types.insert(operand_types.begin(), chain);
    result_types.insert(result_types.begin(), chain);
  }
  return mlir::success();
}

static void printCaseTypes(mlir::OpAsmPrinter& printer, mlir::Operation* op,
                           mlir::OperandRange, mlir::TypeRange operand_types,
                           mlir::TypeRange result_types) {
  // Printed in the chained form whenever it applies, as TFRT prints it.
  if (!operand_types.empty() && !result_types.empty() &&
      mlir::isa<ChainType>(operand_types.front()) &&
      mlir::isa<ChainType>(result_types.front())) {
    operand_types = operand_types.drop_front();
    result_types = result_types.drop_front();
  }
  printer << TypeList(operand_types) << " -> " << TypeList(result_types);
}

mlir::FunctionOpInterface LookupFunction(mlir::Operation* op,
                                         mlir::SymbolTableCollection& tables,
                                         mlir::FlatSymbolRefAttr symbol) {
  auto function =
      tables.lookupNearestSymbolFrom<mlir::FunctionOpInterface>(op, symbol);
  if (!function) {
    op->emitOpError() << "'" << symbol.getValue()
                      << "' does not reference a valid function";
  }
  return function;
}

mlir::LogicalResult VerifyFunctionType(mlir::Operation* op,
                                       mlir::FunctionOpInterface function,
                                       mlir::TypeRange inputs,
                                       mlir::TypeRange results) {
  if (function.getArgumentTypes() == inputs &&
      function.getResultTypes() == results) {
    return mlir::success();
  }
  return op->emitOpError() << "expects @" << function.getName()
                           << " to have type " << TypeList(inputs) << " -> "
                           << TypeList(results) << ", but it has type "
                           << TypeList(function.getArgumentTypes()) << " -> "
                           << TypeList(function.getResultTypes());
}

//===----------------------------------------------------------------------===//
// MergeChainsOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult MergeChainsOp::verify() {
  if (getInputs().empty()) return emitOpError("requires at least one input");
  return mlir::success();
}

mlir::OpFoldResult MergeChainsOp::fold(FoldAdaptor adaptor) {
  // A merge of one chain is that chain. As in TFRT, only when the chain has
  // other uses: a merge that is its input's only use stays.
  if (getInputs().size() == 1 &&
      llvm::isa<ChainType>(getInputs().front().getType()) &&
      !getInputs().front().hasOneUse()) {
    return getInputs().front();
  }
  return {};
}

namespace {

// Drops inputs that cannot delay the merge: repeats of an earlier input and
// chains from tfrt.new.chain (available from the start).
struct SimplifyMergeChains : public mlir::OpRewritePattern<MergeChainsOp> {
  using OpRewritePattern::OpRewritePattern;

  mlir::LogicalResult matchAndRewrite(
      MergeChainsOp op, mlir::PatternRewriter& rewriter) const override {
    llvm::SmallVector<mlir::Value, 4> kept;
    llvm::SmallDenseSet<mlir::Value, 4> seen;
    for (mlir::Value input : op.getInputs()) {
      if (!seen.insert(input).second) continue;
      if (input.getDefiningOp<NewChainOp>()) continue;
      kept.push_back(input);
    }
    if (kept.size() == op.getInputs().size()) return mlir::failure();
    if (kept.empty()) {
      rewriter.replaceOpWithNewOp<NewChainOp>(op, op.getType());
      return mlir::success();
    }
    rewriter.modifyOpInPlace(op, [&] { op->setOperands(kept); });
    return mlir::success();
  }
};

}  // namespace

void MergeChainsOp::getCanonicalizationPatterns(
    mlir::RewritePatternSet& patterns, mlir::MLIRContext* context) {
  patterns.add<SimplifyMergeChains>(context);
}

//===----------------------------------------------------------------------===//
// CallOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult CallOp::verifySymbolUses(
    mlir::SymbolTableCollection& tables) {
  mlir::FunctionOpInterface callee =
      LookupFunction(*this, tables, getCalleeAttr());
  if (!callee) return mlir::failure();
  return VerifyFunctionType(*this, callee, getOperands().getTypes(),
                            getResultTypes());
}

//===----------------------------------------------------------------------===//
// ReturnOp
//===----------------------------------------------------------------------===//

mlir::LogicalResult ReturnOp::verify() {
  mlir::Operation* parent = (*this)->getParentOp();
  if (auto function = llvm::dyn_cast<mlir::FunctionOpInterface>(parent)) {
    return VerifyFunctionReturn(*this, function);
  }
  if (llvm::isa<IfOp, RepeatI32Op>(parent)) {
    return VerifyReturnedTypes(*this, parent->getResultTypes(),
                               "'" + parent->getName().getStringRef() + "'");
  }
  if (llvm::isa<ParallelForI32Op>(parent)) {
    // A synchronous body returns nothing, an asynchronous one its chain.
    if (getNumOperands() == 0 ||
        (getNumOperands() == 1 &&
         llvm::isa<ChainType>(getOperand(0).getType()))) {
      return mlir::success();
    }
    return emitOpError() << "must return nothing or a single !tfrt.chain "
                            "from 'tfrt.parallel_for.i32', but returns "
                         << TypeList(getOperandTypes());
  }
  // Region ops of other dialects (tfrt_test.do.async, ...) check their own.
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// IfOp
//===----------------------------------------------------------------------===//

namespace {

// The else region the parser makes when the text leaves it out.
bool IsImplicitElse(IfOp op) {
  mlir::Block& block = op.getElseRegion().front();
  if (op.getNumResults() != 0 || !llvm::hasSingleElement(block)) return false;
  auto return_op = llvm::dyn_cast<ReturnOp>(block.front());
  return return_op && return_op.getNumOperands() == 0 &&
         return_op->getAttrs().empty();
}

}  // namespace

// tfrt.if %cond, %args... [attributes {...}] : (T...) -> (R...) {
//   ...
// } [else {
//   ...
// }]
mlir::ParseResult IfOp::parse(mlir::OpAsmParser& parser,
                              mlir::OperationState& result) {
  llvm::SMLoc op_loc = parser.getNameLoc();
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand, 4> operands;
  llvm::SMLoc operands_loc = parser.getCurrentLocation();
  if (parser.parseOperandList(operands)) return mlir::failure();
  if (operands.empty()) {
    return parser.emitError(operands_loc, "expected a condition operand");
  }
  mlir::FunctionType type;
  llvm::SMLoc type_loc;
  if (ParseOptionalAttributes(parser, result) ||
      (type_loc = parser.getCurrentLocation(), parser.parseColonType(type))) {
    return mlir::failure();
  }
  auto args = llvm::ArrayRef(operands).drop_front();
  if (parser.resolveOperand(operands.front(), parser.getBuilder().getI1Type(),
                            result.operands) ||
      parser.resolveOperands(args, type.getInputs(), type_loc,
                             result.operands)) {
    return mlir::failure();
  }
  result.addTypes(type.getResults());

  mlir::Region* then_region = result.addRegion();
  mlir::Region* else_region = result.addRegion();
  if (ParseRegionWithOperandNames(parser, *then_region, args,
                                  type.getInputs())) {
    return mlir::failure();
  }
  if (succeeded(parser.parseOptionalKeyword("else"))) {
    return ParseRegionWithOperandNames(parser, *else_region, args,
                                       type.getInputs());
  }
  // The kernel always needs both bodies; an omitted else does nothing.
  if (!type.getResults().empty()) {
    return parser.emitError(op_loc,
                            "expected 'else': a 'tfrt.if' with results needs "
                            "both regions");
  }
  mlir::OpBuilder builder(parser.getContext());
  mlir::Block* block = builder.createBlock(else_region);
  for (mlir::Type arg_type : type.getInputs()) {
    block->addArgument(arg_type, result.location);
  }
  ReturnOp::create(builder, result.location);
  return mlir::success();
}

void IfOp::print(mlir::OpAsmPrinter& printer) {
  printer << ' ' << getCond();
  if (!getArgs().empty()) {
    printer << ", ";
    printer.printOperands(getArgs());
  }
  printer.printOptionalAttrDictWithKeyword((*this)->getAttrs());
  printer << " : " << TypeList(getArgs().getTypes()) << " -> "
          << TypeList(getResultTypes()) << ' ';
  PrintRegionWithOperandNames(printer, getThenRegion(), getArgs());
  if (!IsImplicitElse(*this)) {
    printer << " else ";
    PrintRegionWithOperandNames(printer, getElseRegion(), getArgs());
  }
}

mlir::LogicalResult IfOp::verify() {
  mlir::TypeRange arg_types = getArgs().getTypes();
  if (failed(
          VerifyRegionSignature(*this, getThenRegion(), "then", arg_types)) ||
      failed(
          VerifyRegionSignature(*this, getElseRegion(), "else", arg_types))) {
    return mlir::failure();
  }
  return mlir::success();
}

//===----------------------------------------------------------------------===//
// RepeatI32Op
//===----------------------------------------------------------------------===//

// tfrt.repeat.i32 %n, %args... [attributes {...}] [: T...] { ... }
mlir::ParseResult RepeatI32Op::parse(mlir::OpAsmParser& parser,
                                     mlir::OperationState& result) {
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand, 4> operands;
  llvm::SMLoc operands_loc = parser.getCurrentLocation();
  if (parser.parseOperandList(operands)) return mlir::failure();
  if (operands.empty()) {
    return parser.emitError(operands_loc, "expected a trip count operand");
  }
  llvm::SmallVector<mlir::Type, 4> types;
  llvm::SMLoc types_loc;
  if (ParseOptionalAttributes(parser, result)) return mlir::failure();
  types_loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalColon()) && parser.parseTypeList(types)) {
    return mlir::failure();
  }
  auto args = llvm::ArrayRef(operands).drop_front();
  if (parser.resolveOperand(operands.front(), parser.getBuilder().getI32Type(),
                            result.operands) ||
      parser.resolveOperands(args, types, types_loc, result.operands)) {
    return mlir::failure();
  }
  result.addTypes(types);
  return ParseRegionWithOperandNames(parser, *result.addRegion(), args, types);
}

// Prints `, %a, %b attributes {...} : T1, T2` (nothing for no data
// operands), the shared tail of the loop ops' syntax.
static void PrintDataOperands(mlir::OpAsmPrinter& printer, mlir::Operation* op,
                              mlir::OperandRange args) {
  if (!args.empty()) {
    printer << ", ";
    printer.printOperands(args);
  }
  printer.printOptionalAttrDictWithKeyword(op->getAttrs());
  if (!args.empty()) {
    printer << " : ";
    llvm::interleaveComma(args.getTypes(), printer);
  }
}

void RepeatI32Op::print(mlir::OpAsmPrinter& printer) {
  printer << ' ' << getTripCount();
  PrintDataOperands(printer, *this, getArgs());
  printer << ' ';
  PrintRegionWithOperandNames(printer, getBody(), getArgs());
}

mlir::LogicalResult RepeatI32Op::verify() {
  if (getArgs().getTypes() != getResultTypes()) {
    return emitOpError() << "loop-carried operands "
                         << TypeList(getArgs().getTypes()) << " and results "
                         << TypeList(getResultTypes())
                         << " must have the same types";
  }
  return VerifyRegionSignature(*this, getBody(), "body", getArgs().getTypes());
}

//===----------------------------------------------------------------------===//
// ParallelForI32Op
//===----------------------------------------------------------------------===//

// tfrt.parallel_for.i32 %start to %end fixed %block_size[, %args...]
//     [attributes {...}] [: T...] { ... }
mlir::ParseResult ParallelForI32Op::parse(mlir::OpAsmParser& parser,
                                          mlir::OperationState& result) {
  mlir::OpAsmParser::UnresolvedOperand start, end, block_size;
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand, 4> args;
  if (parser.parseOperand(start) || parser.parseKeyword("to") ||
      parser.parseOperand(end) || parser.parseKeyword("fixed") ||
      parser.parseOperand(block_size)) {
    return mlir::failure();
  }
  if (succeeded(parser.parseOptionalComma()) && parser.parseOperandList(args)) {
    return mlir::failure();
  }
  if (ParseOptionalAttributes(parser, result)) return mlir::failure();
  llvm::SmallVector<mlir::Type, 4> types;
  llvm::SMLoc types_loc = parser.getCurrentLocation();
  if (succeeded(parser.parseOptionalColon()) && parser.parseTypeList(types)) {
    return mlir::failure();
  }
  mlir::Type i32 = parser.getBuilder().getI32Type();
  if (parser.resolveOperand(start, i32, result.operands) ||
      parser.resolveOperand(end, i32, result.operands) ||
      parser.resolveOperand(block_size, i32, result.operands) ||
      parser.resolveOperands(args, types, types_loc, result.operands)) {
    return mlir::failure();
  }
  result.addTypes(ChainType::get(parser.getContext()));

  // The body sees the block bounds under the names of %start and %end.
  llvm::SmallVector<mlir::OpAsmParser::UnresolvedOperand, 6> body_names = {
      start, end};
  body_names.append(args.begin(), args.end());
  llvm::SmallVector<mlir::Type, 6> body_types = {i32, i32};
  body_types.append(types.begin(), types.end());
  return ParseRegionWithOperandNames(parser, *result.addRegion(), body_names,
                                     body_types);
}

void ParallelForI32Op::print(mlir::OpAsmPrinter& printer) {
  printer << ' ' << getStart() << " to " << getEnd() << " fixed "
          << getBlockSize();
  PrintDataOperands(printer, *this, getArgs());
  printer << ' ';
  llvm::SmallVector<mlir::Value, 6> names = {getStart(), getEnd()};
  names.append(getArgs().begin(), getArgs().end());
  PrintRegionWithOperandNames(printer, getBody(), names);
}

mlir::LogicalResult ParallelForI32Op::verify() {
  mlir::Type i32 = mlir::IntegerType::get(getContext(), 32);
  llvm::SmallVector<mlir::Type, 6> body_types = {i32, i32};
  llvm::append_range(body_types, getArgs().getTypes());
  return VerifyRegionSignature(*this, getBody(), "body", body_types);
}

//===----------------------------------------------------------------------===//
// Ops calling named functions
//===----------------------------------------------------------------------===//

mlir::LogicalResult ParallelCallI32Op::verifySymbolUses(
    mlir::SymbolTableCollection& tables) {
  mlir::FunctionOpInterface callee =
      LookupFunction(*this, tables, getCalleeAttr());
  if (!callee) return mlir::failure();
  mlir::Type i32 = mlir::IntegerType::get(getContext(), 32);
  llvm::SmallVector<mlir::Type, 6> inputs = {i32, i32};
  llvm::append_range(inputs, getArgs().getTypes());
  // Synchronous bodies return nothing, asynchronous ones a chain.
  mlir::Type chain = getDone().getType();
  if (callee.getResultTypes().empty()) {
    return VerifyFunctionType(*this, callee, inputs, {});
  }
  return VerifyFunctionType(*this, callee, inputs, llvm::ArrayRef(chain));
}

mlir::LogicalResult CondOp::verifySymbolUses(
    mlir::SymbolTableCollection& tables) {
  for (mlir::FlatSymbolRefAttr symbol : {getATrueFnAttr(), getBFalseFnAttr()}) {
    mlir::FunctionOpInterface branch = LookupFunction(*this, tables, symbol);
    if (!branch ||
        failed(VerifyFunctionType(*this, branch, getFnOperands().getTypes(),
                                  getResultTypes()))) {
      return mlir::failure();
    }
  }
  return mlir::success();
}

mlir::LogicalResult CaseOp::verifySymbolUses(
    mlir::SymbolTableCollection& tables) {
  if (getBranches().empty()) {
    return emitOpError("requires at least one branch");
  }
  for (mlir::FlatSymbolRefAttr symbol :
       getBranches().getAsRange<mlir::FlatSymbolRefAttr>()) {
    mlir::FunctionOpInterface branch = LookupFunction(*this, tables, symbol);
    if (!branch ||
        failed(VerifyFunctionType(*this, branch, getBranchOperands().getTypes(),
                                  getResultTypes()))) {
      return mlir::failure();
    }
  }
  return mlir::success();
}

mlir::LogicalResult WhileOp::verify() {
  if (getArgs().getTypes() != getResultTypes()) {
    return emitOpError() << "operands " << TypeList(getArgs().getTypes())
                         << " and results " << TypeList(getResultTypes())
                         << " must have the same types";
  }
  return mlir::success();
}

mlir::LogicalResult WhileOp::verifySymbolUses(
    mlir::SymbolTableCollection& tables) {
  mlir::FunctionOpInterface body =
      LookupFunction(*this, tables, getBodyFnAttr());
  if (!body) return mlir::failure();
  // The body returns the next loop values, then whether to go on.
  llvm::SmallVector<mlir::Type, 4> results(getResultTypes());
  results.push_back(mlir::IntegerType::get(getContext(), 1));
  return VerifyFunctionType(*this, body, getArgs().getTypes(), results);
}

mlir::LogicalResult OnceOp::verifySymbolUses(
    mlir::SymbolTableCollection& tables) {
  mlir::FunctionOpInterface function =
      LookupFunction(*this, tables, getFunctionAttr());
  if (!function) return mlir::failure();
  return VerifyFunctionType(*this, function, getArgs().getTypes(),
                            getResultTypes());
}

//===----------------------------------------------------------------------===//
// RegionOperandsOpInterface: the leading condition, trip count or loop
// bounds are not the regions' data.
//===----------------------------------------------------------------------===//

mlir::OperandRange IfOp::getRegionOperands() { return getArgs(); }

mlir::OperandRange RepeatI32Op::getRegionOperands() { return getArgs(); }

mlir::OperandRange ParallelForI32Op::getRegionOperands() { return getArgs(); }

}  // namespace asyncrt::tfrt

// Generated by mlir-tblgen; order matters, so not sorted.
// clang-format off
#define GET_OP_CLASSES
#include "asyncrt/dialects/tfrt/tfrt_ops.cc.inc"
// clang-format on
