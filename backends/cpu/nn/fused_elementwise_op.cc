// nn.fused_elementwise on the CPU: a chain of f32 elementwise ops
// (asyncrt/backends/fused_elementwise.h) in one pass over the elements. Each
// block of kBlock elements stays in L1 while every op of the chain runs over
// it, so intermediate values never reach memory and the chain costs one op's
// dispatch. Built with -O3 (backends/CMakeLists.txt): each op's inner loop is
// vectorized.
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
#include "backends/cpu/nn/nn_util.h"
#include "backends/cpu/nn/vector_math.h"

namespace asyncrt::nn {
namespace {

constexpr absl::string_view kFused = "nn.fused_elementwise";
constexpr int64_t kBlock = 512;

// One decoded op of the chain.
struct Instruction {
  int64_t opcode;
  int32_t operands[2];  // Value indices: inputs, then op results.
};

// The chain in `attrs`, checked against `num_inputs`.
absl::StatusOr<std::vector<Instruction>> Decode(const OpAttrs& attrs,
                                                size_t num_inputs) {
  // In place (BEF and the compiler give i64 arrays): no copy per call.
  std::optional<absl::Span<const int64_t>> ops = attrs.GetArray<int64_t>("ops");
  std::optional<absl::Span<const int64_t>> operands =
      attrs.GetArray<int64_t>("operands");
  if (!ops || !operands || ops->empty() ||
      operands->size() != 2 * ops->size()) {
    return OpError(kFused, "needs `ops` (opcodes) and `operands` (two per op)");
  }
  std::vector<Instruction> program;
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
  absl::StatusOr<std::vector<Instruction>> program = Decode(attrs, args.size());
  if (!program.ok()) return program.status();
  results[0] = TensorMetadata(DType::kF32, *shape);
  return absl::OkStatus();
}

// Sanitizer runtimes are not up yet when ifunc resolvers run (at
// relocation): no clones there.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ASYNCRT_FUSED_CLONES
#else
#define ASYNCRT_FUSED_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// out[i] = f(a[i], b[i]) for i < n; what each nn op computes on f32
// (elementwise_ops.cc), so that fusing changes no bit. Cloned for AVX2
// and AVX-512 (picked at load time by what the CPU has): 8 or 16 floats
// per instruction, the same IEEE operations (no FMA is enabled, so nothing
// is contracted).
ASYNCRT_FUSED_CLONES void Run(const Instruction& instruction, const float* a,
                              const float* b, float* out, int64_t n) {
  switch (instruction.opcode) {
#define ASYNCRT_BINARY(CODE, EXPR)    \
  case CODE:                          \
    for (int64_t i = 0; i < n; ++i) { \
      const float x = a[i], y = b[i]; \
      out[i] = EXPR;                  \
    }                                 \
    return;
#define ASYNCRT_UNARY(CODE, EXPR)     \
  case CODE:                          \
    for (int64_t i = 0; i < n; ++i) { \
      const float x = a[i];           \
      out[i] = EXPR;                  \
    }                                 \
    return;
// The nn ops' own vectorized functions (vector_math.h), bit for bit.
#define ASYNCRT_VECTOR(CODE, FUNCTION)        \
  case CODE:                                  \
    ApplyVectorFunction(FUNCTION, a, out, n); \
    return;
    ASYNCRT_BINARY(0, x + y)
    ASYNCRT_BINARY(1, x - y)
    ASYNCRT_BINARY(2, x * y)
    ASYNCRT_BINARY(3, x / y)
    ASYNCRT_BINARY(4, std::max(x, y))
    ASYNCRT_BINARY(5, std::min(x, y))
    ASYNCRT_UNARY(10, x > 0 ? x : 0.0f)
    ASYNCRT_UNARY(11, -x)
    ASYNCRT_UNARY(12, std::fabs(x))
    ASYNCRT_UNARY(13, std::exp(x))
    ASYNCRT_UNARY(14, std::log(x))
    ASYNCRT_UNARY(15, std::sqrt(x))
    ASYNCRT_VECTOR(16, VectorFunction::kTanh)
    ASYNCRT_UNARY(17, Sigmoid(x))
    ASYNCRT_VECTOR(18, VectorFunction::kErf)
    ASYNCRT_VECTOR(19, VectorFunction::kGelu)
#undef ASYNCRT_VECTOR
#undef ASYNCRT_UNARY
#undef ASYNCRT_BINARY
  }
}

void FusedElementwise(OpInvocation& invocation) {
  const size_t num_inputs = invocation.arguments.size();
  absl::StatusOr<std::vector<Instruction>> program =
      Decode(invocation.attrs, num_inputs);
  if (!program.ok()) {
    return FailAll(invocation, kFused, program.status().message());
  }
  const TensorMetadata& metadata = invocation.result_metadata[0];
  const int64_t n = metadata.shape.GetNumElements();
  // Any full-size input's buffer may take the result: block b of the result
  // is written after every op has read block b of the inputs.
  uint64_t reusable = 0;
  for (size_t i = 0; i < num_inputs && i < 64; ++i) {
    if (invocation.argument(i).NumElements() == n) reusable |= uint64_t{1} << i;
  }
  AsyncValueRef<DenseHostTensor> result =
      AllocateResult(invocation, kFused, metadata, reusable);
  if (!result) return;
  float* out = static_cast<float*>(result->data());

  // Inputs: their elements, or a block of one repeated element.
  const size_t num_ops = program->size();
  absl::InlinedVector<const float*, 4> inputs(num_inputs);
  absl::InlinedVector<bool, 4> broadcast(num_inputs);
  size_t num_broadcast = 0;
  for (size_t i = 0; i < num_inputs; ++i) {
    num_broadcast += invocation.argument(i).NumElements() != n;
  }
  std::vector<std::array<float, kBlock>> splats;  // Allocated only if needed.
  splats.reserve(num_broadcast);
  for (size_t i = 0; i < num_inputs; ++i) {
    const auto& tensor =
        static_cast<const DenseHostTensor&>(invocation.argument(i));
    inputs[i] = tensor.elements<float>().data();
    broadcast[i] = tensor.NumElements() != n;
    if (broadcast[i]) {
      splats.emplace_back();
      splats.back().fill(inputs[i][0]);
      inputs[i] = splats.back().data();
    }
  }
  // Each op result gets a block-sized slot, freed after its last use, so a
  // chain needs two or three slots whatever its length.
  absl::InlinedVector<int32_t, 64> last_use(num_ops, -1);
  for (size_t k = 0; k < num_ops; ++k) {
    for (int32_t operand : (*program)[k].operands) {
      if (operand >= static_cast<int32_t>(num_inputs)) {
        last_use[operand - num_inputs] = static_cast<int32_t>(k);
      }
    }
  }
  absl::InlinedVector<int32_t, 64> slot_of(num_ops, -1);
  absl::InlinedVector<int32_t, 8> free_slots;
  int32_t num_slots = 0;
  for (size_t k = 0; k + 1 < num_ops; ++k) {
    // The op's slot is taken before its dying operands' slots are freed,
    // so an op never writes where it reads.
    if (free_slots.empty()) {
      slot_of[k] = num_slots++;
    } else {
      slot_of[k] = free_slots.back();
      free_slots.pop_back();
    }
    for (int32_t operand : (*program)[k].operands) {
      if (operand >= static_cast<int32_t>(num_inputs) &&
          last_use[operand - num_inputs] == static_cast<int32_t>(k)) {
        free_slots.push_back(slot_of[operand - num_inputs]);
      }
    }
  }
  // Blocks split over the team for large tensors (ParallelRanges), each
  // part with its own slots: written before read, no need to zero them. A
  // chain's few slots fit on the stack (16 KiB); more come from the heap.
  const int64_t num_blocks = (n + kBlock - 1) / kBlock;
  auto run_blocks = [&](int64_t first_block, int64_t end_block) {
    constexpr int32_t kStackSlots = 8;
    alignas(64) float stack_slots[kStackSlots * kBlock];
    std::unique_ptr<float[]> heap_slots;
    float* slots = stack_slots;
    if (num_slots > kStackSlots) {
      heap_slots = std::make_unique_for_overwrite<float[]>(
          static_cast<size_t>(num_slots) * kBlock);
      slots = heap_slots.get();
    }
    for (int64_t block = first_block; block < end_block; ++block) {
      const int64_t start = block * kBlock;
      const int64_t count = std::min(kBlock, n - start);
      auto value = [&](int32_t index) -> const float* {
        if (index < 0) return nullptr;
        if (index < static_cast<int32_t>(num_inputs)) {
          return broadcast[index] ? inputs[index] : inputs[index] + start;
        }
        return slots + slot_of[index - num_inputs] * kBlock;
      };
      for (size_t k = 0; k < num_ops; ++k) {
        const Instruction& instruction = (*program)[k];
        float* destination =
            k + 1 == num_ops ? out + start : slots + slot_of[k] * kBlock;
        Run(instruction, value(instruction.operands[0]),
            value(instruction.operands[1]), destination, count);
      }
    }
  };
  // 64 blocks (32K elements) a part at least.
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
