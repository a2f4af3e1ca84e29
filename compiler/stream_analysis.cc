// Stream analysis (the algorithm is outlined in stream_analysis.h).
//
// The tie-breaking rules below (strict comparisons, first candidate wins,
// the iteration order of every container) decide the stream ids, and those
// are compared with TFRT's output: change them only together with the tests.
#include "asyncrt/compiler/stream_analysis.h"

#include <algorithm>
#include <cassert>

#include "asyncrt/dialects/tfrt/tfrt_ops.h"
#include "llvm/ADT/DenseSet.h"
#include "llvm/ADT/STLExtras.h"
#include "mlir/IR/BuiltinAttributes.h"
#include "mlir/IR/BuiltinOps.h"

namespace asyncrt::compiler {
namespace {

// The function entry. Block arguments have no defining op, so they map to
// the root as well.
constexpr mlir::Operation* kRoot = nullptr;

// `parent` is the op whose region is analysed.
mlir::Attribute GetOption(mlir::Operation* parent, llvm::StringRef name) {
  if (parent == nullptr) return nullptr;
  if (llvm::isa<mlir::func::FuncOp>(parent)) {
    if (mlir::Attribute attr = parent->getAttr(name)) return attr;
  }
  auto module = parent->getParentOfType<mlir::ModuleOp>();
  return module ? module->getAttr(name) : nullptr;
}

// Builds the stream tree of one block. Scratch state only: the result is
// copied into Stream objects by StreamAnalysis::Analyze.
class StreamBuilder {
 public:
  StreamBuilder(mlir::Block* block, const StreamOptions& options)
      : block_(block), options_(options) {}

  void ScheduleForward();
  void BuildBackward();

  // Queries for StreamAnalysis::Analyze once both passes have run.
  // The final stream of `op` (kRoot: the root's).
  int ResolveStreamId(mlir::Operation* op);
  int64_t StreamCost(int id) const { return streams_[id].cost; }
  mlir::Operation* StreamParentOp(int id) const {
    return streams_[id].parent_op;
  }

 private:
  struct StreamInfo {
    int64_t cost = 0;
    // The op whose scheduled users head this stream (kRoot for the root or
    // while unknown).
    mlir::Operation* parent_op = kRoot;
    // >= 0 once merged into that stream (possibly merged further since).
    int merged_into = -1;
    // Streams linked to this one by an edge outside the schedule tree, by
    // id at the time they were recorded (resolve before use).
    llvm::SmallSetVector<int, 4> side_deps;
  };

  struct OpInfo {
    int stream_id = -1;
    int64_t cost = 0;
    // Users this op is guessed to trigger (the tree of pass 1), block order.
    llvm::SmallVector<mlir::Operation*, 4> scheduled_users;
    // Users of this op's results other than the scheduled ones, block order.
    llvm::SmallSetVector<mlir::Operation*, 2> side_uses;
  };

  int64_t OpCost(mlir::Operation* op) const;
  int NewStream();
  void AssignOpToStream(mlir::Operation* op, int stream_id);
  void BuildStreamForOp(mlir::Operation* op);
  void MergeInterDependentStreams(llvm::SmallVectorImpl<int>& child_ids);
  void MergeStreams(int from_id, int to_id);
  int LatestStreamId(int stream_id) const;

  mlir::Block* block_;  // nullptr for a function declaration
  const StreamOptions& options_;
  llvm::SmallVector<StreamInfo, 4> streams_;
  llvm::DenseMap<mlir::Operation*, OpInfo> ops_;
};

int64_t StreamBuilder::OpCost(mlir::Operation* op) const {
  if (op == kRoot) return 1;
  // Cheap by construction: they only forward values.
  if (llvm::isa<tfrt::ReturnOp, tfrt::MergeChainsOp>(op)) return 1;
  if (auto cost = op->getAttrOfType<mlir::IntegerAttr>(kOpCostAttr)) {
    // Costs must be positive (pass 1 relies on it); tfrt_test.test_cost
    // verifies that, unknown ops do not.
    return std::max<int64_t>(1, cost.getInt());
  }
  // Unknown cost: expensive enough to be worth a stream of its own, but not
  // so expensive that it outweighs ops with a known cost.
  return options_.cost_threshold;
}

void StreamBuilder::ScheduleForward() {
  // Cost of the most expensive path from the root to each op, inclusive.
  llvm::DenseMap<mlir::Operation*, int64_t> cost_from_root;
  ops_[kRoot].cost = OpCost(kRoot);
  cost_from_root[kRoot] = ops_[kRoot].cost;
  if (block_ == nullptr) return;

  for (mlir::Operation& op : *block_) {
    OpInfo& info = ops_[&op];
    info.cost = OpCost(&op);
    int64_t path_cost = info.cost;

    if (op.getNumOperands() == 0) {
      ops_[kRoot].scheduled_users.push_back(&op);
    } else {
      // The producer on the most expensive path is taken to be the last one
      // to finish, so the one that makes `op` ready. First one wins ties.
      mlir::Operation* parent = kRoot;
      int64_t parent_cost = 0;
      for (mlir::Value operand : op.getOperands()) {
        mlir::Operation* def = operand.getDefiningOp();
        // Values from outside the block behave like arguments.
        if (def != nullptr && def->getBlock() != block_) def = kRoot;
        // Every edge is remembered: streams linked by one are preferred
        // when merging. Unlike TFRT's code, chain edges count too: TFRT's
        // stream_analysis.mlir expects chain-linked tfrt_test.test_cost
        // streams to merge (@merge_inter_dependent_streams).
        ops_[def].side_uses.insert(&op);
        int64_t def_cost = cost_from_root.lookup(def);
        if (def_cost > parent_cost) {
          parent = def;
          parent_cost = def_cost;
        }
      }
      OpInfo& parent_info = ops_[parent];
      parent_info.side_uses.remove(&op);
      parent_info.scheduled_users.push_back(&op);
      path_cost += parent_cost;
    }
    cost_from_root[&op] = path_cost;
  }
}

int StreamBuilder::NewStream() {
  streams_.emplace_back();
  return static_cast<int>(streams_.size()) - 1;
}

int StreamBuilder::LatestStreamId(int stream_id) const {
  while (streams_[stream_id].merged_into >= 0) {
    stream_id = streams_[stream_id].merged_into;
  }
  return stream_id;
}

// Also points op's stream, and every stream on the way, at the final one.
int StreamBuilder::ResolveStreamId(mlir::Operation* op) {
  OpInfo& info = ops_[op];
  assert(info.stream_id >= 0);
  int final_id = LatestStreamId(info.stream_id);
  for (int id = info.stream_id; streams_[id].merged_into >= 0;) {
    int next = streams_[id].merged_into;
    streams_[id].merged_into = final_id;
    id = next;
  }
  info.stream_id = final_id;
  return final_id;
}

void StreamBuilder::AssignOpToStream(mlir::Operation* op, int stream_id) {
  OpInfo& info = ops_[op];
  StreamInfo& stream = streams_[stream_id];
  assert(stream.merged_into < 0);
  info.stream_id = stream_id;
  stream.cost += info.cost;
  // Users come later in the block, so they already have a stream.
  for (mlir::Operation* user : info.side_uses) {
    int user_stream = ResolveStreamId(user);
    if (user_stream != stream_id) {
      stream.side_deps.insert(user_stream);
      streams_[user_stream].side_deps.insert(stream_id);
    }
  }
}

void StreamBuilder::MergeStreams(int from_id, int to_id) {
  assert(from_id != to_id);
  StreamInfo& from = streams_[from_id];
  StreamInfo& to = streams_[to_id];
  assert(from.merged_into < 0 && to.merged_into < 0);
  for (int id : from.side_deps) {
    id = LatestStreamId(id);
    if (id != to_id) to.side_deps.insert(id);
  }
  to.side_deps.remove(from_id);
  to.cost += from.cost;
  from.merged_into = to_id;
}

void StreamBuilder::MergeInterDependentStreams(
    llvm::SmallVectorImpl<int>& child_ids) {
  llvm::SmallDenseSet<int, 4> candidates(child_ids.begin(), child_ids.end());
  llvm::SmallDenseSet<int, 4> merged_away;
  for (int child_id : child_ids) {
    if (merged_away.contains(child_id)) continue;
    StreamInfo& child = streams_[child_id];
    assert(child.merged_into < 0);

    // Cheap sibling streams linked to this child. A hash set, as
    // in TFRT: its iteration order below decides which of them are merged
    // before the child reaches the threshold.
    llvm::SmallDenseSet<int, 2> to_merge;
    for (int id : child.side_deps) {
      if (!candidates.contains(id)) continue;
      id = LatestStreamId(id);
      // The first test cannot hold (a stream never absorbs a sibling before
      // its own turn), but merging a stream into itself would loop forever.
      if (id == child_id || streams_[id].cost >= options_.cost_threshold) {
        continue;
      }
      to_merge.insert(id);
    }
    for (int id : to_merge) {
      MergeStreams(/*from_id=*/id, /*to_id=*/child_id);
      merged_away.insert(id);
      if (child.cost >= options_.cost_threshold) break;
    }
  }
  llvm::erase_if(child_ids, [&](int id) { return merged_away.contains(id); });
}

void StreamBuilder::BuildStreamForOp(mlir::Operation* op) {
  OpInfo& info = ops_[op];
  assert(info.stream_id < 0);
  if (info.scheduled_users.empty()) {
    AssignOpToStream(op, NewStream());
    return;
  }

  // Each scheduled user heads a stream of its own (it was the last op
  // assigned to it, and only `op` schedules it).
  llvm::SmallVector<int, 4> child_ids;
  for (mlir::Operation* user : info.scheduled_users) {
    int id = ops_[user].stream_id;
    assert(id >= 0 && streams_[id].merged_into < 0);
    // Provisional: stays unless the stream is picked to continue into `op`.
    streams_[id].parent_op = op;
    child_ids.push_back(id);
  }

  if (options_.merge_inter_dependent_streams && child_ids.size() > 1) {
    MergeInterDependentStreams(child_ids);
  }

  // Merge cheap child streams, in order, into groups that just reach the
  // threshold (so at most the last group stays cheap), and find the most
  // expensive child stream `op` may still join. The first one wins ties.
  int best_id = -1;
  int64_t best_cost = 0;
  auto consider = [&](int id) {
    int64_t cost = streams_[id].cost;
    bool below_upper = options_.upper_cost_threshold < 0 ||
                       cost < options_.upper_cost_threshold;
    if (below_upper && cost > best_cost) {
      best_cost = cost;
      best_id = id;
    }
  };
  llvm::SmallVector<int, 4> groups;
  for (int id : child_ids) {
    assert(streams_[id].merged_into < 0);
    if (streams_[id].cost >= options_.cost_threshold) {
      consider(id);
      continue;
    }
    if (groups.empty() ||
        streams_[groups.back()].cost >= options_.cost_threshold) {
      groups.push_back(id);
    } else {
      MergeStreams(id, groups.back());
    }
    consider(groups.back());
  }

  if (best_id < 0) {
    // Every child stream is at the upper threshold: start a new one.
    AssignOpToStream(op, NewStream());
    return;
  }
  // `op` now heads the chosen stream; its parent is found when `op`'s own
  // scheduling parent is processed.
  streams_[best_id].parent_op = kRoot;
  AssignOpToStream(op, best_id);
  // A cheap leftover group is not worth a stream of its own either.
  if (!groups.empty() &&
      streams_[groups.back()].cost < options_.cost_threshold &&
      groups.back() != best_id) {
    MergeStreams(groups.back(), best_id);
  }
}

void StreamBuilder::BuildBackward() {
  if (block_ != nullptr) {
    for (mlir::Operation& op : llvm::reverse(*block_)) BuildStreamForOp(&op);
  }
  BuildStreamForOp(kRoot);
}

}  // namespace

llvm::ArrayRef<const Stream*> Stream::GetChildStreams(
    mlir::Operation* op) const {
  auto it = child_streams_.find(op);
  if (it == child_streams_.end()) return {};
  return it->second.getArrayRef();
}

StreamOptions StreamAnalysis::GetOptionsForBlock(mlir::Block& block) {
  return GetOptionsFor(block.getParentOp());
}

StreamOptions StreamAnalysis::GetOptionsFor(mlir::Operation* parent) {
  StreamOptions options;
  if (auto attr = llvm::dyn_cast_or_null<mlir::IntegerAttr>(
          GetOption(parent, kCostThresholdAttr))) {
    options.cost_threshold = std::max<int64_t>(1, attr.getInt());
  }
  if (auto attr = llvm::dyn_cast_or_null<mlir::IntegerAttr>(
          GetOption(parent, kUpperCostThresholdAttr))) {
    options.upper_cost_threshold = attr.getInt();
  }
  if (auto attr = llvm::dyn_cast_or_null<mlir::BoolAttr>(
          GetOption(parent, kMergeInterDependentStreamsAttr))) {
    options.merge_inter_dependent_streams = attr.getValue();
  }
  return options;
}

StreamAnalysis::StreamAnalysis(mlir::func::FuncOp func)
    : options_(GetOptionsFor(func)) {
  mlir::Region& body = func.getBody();
  // A declaration has no ops: only the root stream.
  Analyze(body.empty() ? nullptr : &body.front());
}

StreamAnalysis::StreamAnalysis(mlir::Block& block)
    : options_(GetOptionsForBlock(block)) {
  Analyze(&block);
}

void StreamAnalysis::Analyze(mlir::Block* block) {
  StreamBuilder builder(block, options_);
  builder.ScheduleForward();
  builder.BuildBackward();

  // Nothing is merged after the root is placed, so its id is final.
  llvm::DenseMap<int, Stream*> by_id;
  int root_id = builder.ResolveStreamId(kRoot);
  streams_.push_back(std::make_unique<Stream>(
      root_id, builder.StreamCost(root_id), /*parent_id=*/-1, kRoot));
  by_id[root_id] = streams_.back().get();
  stream_map_[kRoot] = streams_.back().get();
  if (block == nullptr) return;

  // Block order creates each stream at its first op, after its parent's.
  for (mlir::Operation& op : *block) {
    int id = builder.ResolveStreamId(&op);
    Stream*& stream = by_id[id];
    if (stream == nullptr) {
      // The parent op comes earlier in the block (or is the root), so its
      // stream id is final.
      mlir::Operation* parent_op = builder.StreamParentOp(id);
      int parent_id = builder.ResolveStreamId(parent_op);
      streams_.push_back(std::make_unique<Stream>(id, builder.StreamCost(id),
                                                  parent_id, parent_op));
      stream = streams_.back().get();
    }
    stream->ops_.push_back(&op);
    stream_map_[&op] = stream;
    if (Stream* parent = by_id.lookup(stream->parent_id())) {
      parent->child_streams_[stream->parent_op()].insert(stream);
    }
  }
}

const Stream& StreamAnalysis::GetStream(mlir::Operation* op) const {
  const Stream* stream = stream_map_.lookup(op);
  assert(stream != nullptr && "op is not in the analysed block");
  return *stream;
}

}  // namespace asyncrt::compiler
