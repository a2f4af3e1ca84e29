// nn.fused_elementwise on the CPU: a chain of f32 elementwise ops
// (asyncrt/backends/fused_elementwise.h) in one pass over the elements, the
// chain's intermediate values kept in vector registers
// (fused_elementwise_kernel.h), so the chain costs one op's dispatch and one
// pass over memory.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <memory>
#include <vector>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/backends/fused_elementwise.h"
#include "asyncrt/backends/nn_ops.h"
#include "asyncrt/core_runtime/op_site_cache.h"
#include "backends/cpu/nn/fused_elementwise_kernel.h"
#include "backends/cpu/nn/nn_util.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kFused = "nn.fused_elementwise";
// Elements per part of a parallel split (the kernels' slot size).
constexpr int64_t kBlock = fused::kSlotFloats;

using fused::Instruction;

// The chain in `attrs`, checked against `num_inputs`.
absl::StatusOr<absl::InlinedVector<Instruction, 64>> Decode(
    const OpAttrs& attrs, size_t num_inputs) {
  // In place (BEF and the compiler give i64 arrays): no copy per call.
  std::optional<absl::Span<const int64_t>> ops = attrs.GetArray<int64_t>("ops");
  std::optional<absl::Span<const int64_t>> operands =
      attrs.GetArray<int64_t>("operands");
  if (!ops || !operands || ops->empty() ||
      operands->size() != 2 * ops->size()) {
    return OpError(kFused, "needs `ops` (opcodes) and `operands` (two per op)");
  }
  absl::InlinedVector<Instruction, 64> program;
  program.reserve(ops->size());
  for (size_t k = 0; k < ops->size(); ++k) {
    std::optional<FusedElementwiseOpcode> op =
        FindFusedElementwiseOpcode((*ops)[k]);
    if (!op) {
      return OpError(kFused, absl::StrCat("unknown opcode ", (*ops)[k]));
    }
    Instruction instruction{op->opcode, {-1, -1}};
    const int64_t defined = static_cast<int64_t>(num_inputs + k);
    for (int i = 0; i < 2; ++i) {
      const int64_t operand = (*operands)[2 * k + i];
      const bool wanted = i < op->arity;
      if (wanted ? (operand < 0 || operand >= defined) : operand != -1) {
        return OpError(kFused,
                       absl::StrCat("op ", k, " (", std::string(op->op_name),
                                    ") has a bad operand ", operand));
      }
      instruction.operands[i] = static_cast<int32_t>(operand);
    }
    program.push_back(instruction);
  }
  return program;
}

absl::Status FusedMetadata(ArgumentMetadata args, const OpAttrs& attrs,
                           absl::Span<TensorMetadata> results) {
  if (args.empty() || results.size() != 1) {
    return OpError(kFused, "takes inputs and has 1 result");
  }
  if (absl::Status status = RequireF32(kFused, args); !status.ok()) {
    return status;
  }
  // Every input has the result's shape, or one element (broadcast).
  const TensorShape* shape = &args[0].shape;
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].shape.GetNumElements() != 1) shape = &args[i].shape;
  }
  for (size_t i = 0; i < args.size(); ++i) {
    if (args[i].shape != *shape && args[i].shape.GetNumElements() != 1) {
      return OpError(
          kFused,
          absl::StrCat("input ", i, " has shape ", args[i].shape.DebugString(),
                       ", not ", shape->DebugString(), " or one element"));
    }
  }
  absl::StatusOr<absl::InlinedVector<Instruction, 64>> program =
      Decode(attrs, args.size());
  if (!program.ok()) return program.status();
  results[0] = TensorMetadata(DType::kF32, *shape);
  return absl::OkStatus();
}

// What a program op site keeps (OpSiteCache): its plan, for the inputs'
// count and which of them are broadcast.
struct SitePlan {
  size_t num_inputs;
  uint64_t broadcast;  // Bit i: input i is one element.
  fused::Plan plan;
};
constexpr char kSitePlanTag = 0;

void FusedElementwise(OpInvocation& invocation) {
  const size_t num_inputs = invocation.arguments.size();
  const TensorMetadata& metadata = invocation.result_metadata[0];
  const int64_t n = metadata.shape.GetNumElements();
  // Inputs: their elements, or a splat of one repeated element.
  absl::InlinedVector<const float*, 4> inputs(num_inputs);
  absl::InlinedVector<bool, 4> broadcast(num_inputs);
  // Bit i (i < 64): input i is one element, or, in `reusable`, a full-size
  // input whose buffer may take the result (element i of the result is
  // written after every op has read element i of the inputs).
  uint64_t broadcast_bits = 0, reusable = 0;
  size_t num_broadcast = 0;
  for (size_t i = 0; i < num_inputs; ++i) {
    const auto& tensor =
        static_cast<const DenseHostTensor&>(invocation.argument(i));
    inputs[i] = tensor.elements<float>().data();
    broadcast[i] = tensor.NumElements() != n;
    num_broadcast += broadcast[i];
    if (i >= 64) continue;
    if (broadcast[i]) {
      broadcast_bits |= uint64_t{1} << i;
    } else {
      reusable |= uint64_t{1} << i;
    }
  }
  const SitePlan* site_plan =
      invocation.site_cache != nullptr
          ? invocation.site_cache->Find<SitePlan>(&kSitePlanTag)
          : nullptr;
  // (A cached plan has at most 64 inputs: more never match it.)
  if (site_plan != nullptr && (site_plan->num_inputs != num_inputs ||
                               site_plan->broadcast != broadcast_bits)) {
    site_plan = nullptr;
  }
  std::shared_ptr<const SitePlan> made;  // Ours, kept for this call.
  if (site_plan == nullptr) {
    absl::StatusOr<absl::InlinedVector<Instruction, 64>> program =
        Decode(invocation.attrs, num_inputs);
    if (!program.ok()) {
      return FailAll(invocation, kFused, program.status().message());
    }
    made = std::make_shared<const SitePlan>(SitePlan{
        num_inputs, broadcast_bits, fused::MakePlan(*program, broadcast)});
    // The first call keeps it for the site (another call may get there
    // first: this one still runs its own).
    if (invocation.site_cache != nullptr && num_inputs <= 64) {
      invocation.site_cache->Set<SitePlan>(&kSitePlanTag, made);
    }
    site_plan = made.get();
  }
  const fused::Plan& plan = site_plan->plan;

  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kFused, metadata, reusable);
  if (!result) return;
  float* out = static_cast<float*>(result->data());
  std::vector<std::array<float, fused::kSlotFloats>> splats;  // If needed.
  splats.reserve(num_broadcast);
  for (size_t i = 0; i < num_inputs; ++i) {
    if (broadcast[i]) {
      splats.emplace_back();
      splats.back().fill(inputs[i][0]);
      inputs[i] = splats.back().data();
    }
  }
  static const fused::Kernel kernel = fused::SupportedKernels().back().run;
  // Large tensors split over the team (ParallelRanges), each part with its
  // own slots: written before read, no need to zero them. A chain's few
  // slots fit on the stack (16 KiB); more come from the heap.
  auto run_blocks = [&](int64_t first_block, int64_t end_block) {
    constexpr int32_t kStackSlots = 8;
    alignas(64) float stack_slots[kStackSlots * fused::kSlotFloats];
    std::unique_ptr<float[]> heap_slots;
    float* slots = stack_slots;
    if (plan.num_slots > kStackSlots) {
      heap_slots = std::make_unique_for_overwrite<float[]>(
          static_cast<size_t>(plan.num_slots) * fused::kSlotFloats);
      slots = heap_slots.get();
    }
    kernel(plan.steps, inputs.data(), first_block * kBlock,
           std::min(end_block * kBlock, n), slots, out);
  };
  // 64 blocks (32K elements) a part at least.
  const int64_t num_blocks = (n + kBlock - 1) / kBlock;
  constexpr int64_t kGrainBlocks = 64;
  if (num_blocks < 2 * kGrainBlocks) {
    run_blocks(0, num_blocks);
  } else {
    ParallelRanges(num_blocks, kGrainBlocks, run_blocks);
  }
  invocation.results[0] = std::move(result);
}

}  // namespace

void RegisterFusedElementwiseOp(OpRegistry& registry) {
  registry.AddOp("nn.fused_elementwise", FusedMetadata);
  registry.AddDispatch("nn.fused_elementwise", "cpu", FusedElementwise);
}

}  // namespace asyncrt::nn
