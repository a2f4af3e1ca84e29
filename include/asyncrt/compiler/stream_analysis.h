// Stream analysis: splits the body of a function into streams, sequences of
// ops that are worth running one after the other on one thread.
//
// The result is a hint for the executor and the BEF converter (an op whose
// stream is the one of the op that triggered it can run inline), not a
// correctness property. The ids must match TFRT's, because TFRT programs and
// tests observe them (`-tfrt-print-stream`).
//
// Cost model (see docs/compiler.md): the function entry ("root") costs 1,
// tfrt.return and tfrt.merge.chains cost 1, an op with an integer
// `_tfrt_cost` attribute costs that, any other op costs the cost threshold.
//
// Algorithm, in three passes over the entry block:
//   1. Forward, in block (topological) order: each op is scheduled under the
//      producer of its operands that has the highest cost from the root (the
//      producer most likely to be the one that makes it ready). Ops without
//      operands hang off the root. This turns the DAG into a tree.
//   2. Backward, in reverse block order, then the root: an op without
//      scheduled users starts a stream. Otherwise the streams of its
//      scheduled users are its child streams: cheap ones (below the cost
//      threshold) are merged together until each is just above it, and the
//      op joins the most expensive child stream that is still below the
//      upper cost threshold (or a new stream if there is none); a cheap
//      leftover joins it too. With `merge_inter_dependent_streams`, cheap
//      child streams linked by an edge outside the tree (data or chain; TFRT
//      counts data only) are merged first.
//   3. Finalize, in block order: resolve merged streams and record each
//      stream's parent (the stream of the op that triggers it).
//
// Stream ids are the order in which pass 2 created the streams, so they are
// not renumbered: the root stream is usually not 0.
#ifndef ASYNCRT_COMPILER_STREAM_ANALYSIS_H_
#define ASYNCRT_COMPILER_STREAM_ANALYSIS_H_

#include <cstdint>
#include <memory>

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/SetVector.h"
#include "llvm/ADT/SmallVector.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/Block.h"
#include "mlir/IR/Operation.h"

namespace asyncrt::compiler {

// Where the options come from: the function's attribute, else the enclosing
// module's, else the default below.
inline constexpr char kCostThresholdAttr[] = "tfrt.cost_threshold";
inline constexpr char kUpperCostThresholdAttr[] = "tfrt.upper_cost_threshold";
inline constexpr char kMergeInterDependentStreamsAttr[] =
    "tfrt.merge_inter_dependent_streams";
// The cost of one op, on any op.
inline constexpr char kOpCostAttr[] = "_tfrt_cost";

struct StreamOptions {
  // Lower threshold: independent streams cheaper than this are merged until
  // they reach it. At least 1; the default 1 merges nothing independent.
  int64_t cost_threshold = 1;
  // Upper threshold: an op does not join a child stream that already costs
  // this much or more. Negative: no limit.
  int64_t upper_cost_threshold = -1;
  // Merge cheap child streams linked by an edge before the others.
  bool merge_inter_dependent_streams = false;
};

// A sequence of ops of one block that run one after the other. Owned by the
// StreamAnalysis that built it; immutable once built.
class Stream {
 public:
  Stream(int id, int64_t cost, int parent_id, mlir::Operation* parent_op)
      : id_(id), cost_(cost), parent_id_(parent_id), parent_op_(parent_op) {}

  // Non-negative, unique within the analysed block.
  int id() const { return id_; }
  // Sum of the costs of the ops in this stream (the root's included).
  int64_t cost() const { return cost_; }
  // Id of the stream that triggers this one; -1 for the root stream.
  int parent_id() const { return parent_id_; }
  // The op of the parent stream that triggers this one; nullptr when that is
  // the root (function entry) or for the root stream itself.
  mlir::Operation* parent_op() const { return parent_op_; }
  // The ops of this stream in block order (the root is not an op: never
  // listed).
  llvm::ArrayRef<mlir::Operation*> ops() const { return ops_; }
  // The streams that `op` (an op of this stream; nullptr for the root)
  // triggers, in block order of their first op.
  llvm::ArrayRef<const Stream*> GetChildStreams(mlir::Operation* op) const;

 private:
  friend class StreamAnalysis;

  int id_;
  int64_t cost_;
  int parent_id_;
  mlir::Operation* parent_op_;
  llvm::SmallVector<mlir::Operation*> ops_;
  llvm::DenseMap<mlir::Operation*, llvm::SmallSetVector<const Stream*, 4>>
      child_streams_;
};

// The stream tree of one block (a function's body). Built eagerly by the
// constructor; afterwards read-only, so concurrent queries are safe. Holds
// pointers to the ops: the IR must outlive the analysis and not change while
// it is used (an MLIR analysis is invalidated when a pass changes the IR).
class StreamAnalysis {
 public:
  // Analyses the function's entry block; a declaration has only the root.
  explicit StreamAnalysis(mlir::func::FuncOp func);
  // Analyses `block`; options come from its parent op (if a func.func) and
  // the enclosing module.
  explicit StreamAnalysis(mlir::Block& block);

  // The stream that contains `op`, an op of the analysed block; nullptr
  // stands for the root (function entry).
  const Stream& GetStream(mlir::Operation* op) const;
  const Stream& GetRootStream() const { return GetStream(nullptr); }
  size_t GetNumStreams() const { return streams_.size(); }
  const StreamOptions& options() const { return options_; }

  // The options for `block`, read from the attributes described above.
  static StreamOptions GetOptionsForBlock(mlir::Block& block);
  // The same for a region of `parent` (a func.func or any op in a module).
  static StreamOptions GetOptionsFor(mlir::Operation* parent);

 private:
  // Builds streams_ and stream_map_ (stream_analysis.cc).
  void Analyze(mlir::Block* block);

  StreamOptions options_;
  llvm::SmallVector<std::unique_ptr<Stream>, 4> streams_;
  llvm::DenseMap<mlir::Operation*, const Stream*> stream_map_;
};

}  // namespace asyncrt::compiler

#endif  // ASYNCRT_COMPILER_STREAM_ANALYSIS_H_
