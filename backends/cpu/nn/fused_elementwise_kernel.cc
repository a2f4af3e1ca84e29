// nn.fused_elementwise's kernels (fused_elementwise_kernel.h). Built with
// -O3 (backends/CMakeLists.txt) and no fast-math: the same IEEE operations
// as the nn ops, never contracted or reassociated.
#include "backends/cpu/nn/fused_elementwise_kernel.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <memory>
#include <vector>

#include "asyncrt/backends/fused_elementwise.h"
#include "backends/cpu/nn/vector_math.h"

// The vector types below are passed only between always-inline functions
// of one instruction set; no call crosses an ABI boundary with them.
#pragma GCC diagnostic ignored "-Wpsabi"

namespace asyncrt::nn::fused {
namespace {

// Sanitizer runtimes are not up yet when ifunc resolvers run (at
// relocation): no clones there.
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__)
#define ASYNCRT_FUSED_CLONES
#else
#define ASYNCRT_FUSED_CLONES \
  __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

float Sigmoid(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// out[i] = op(a[i], b[i]) for i < n: what each nn op computes on f32
// (elementwise_ops.cc), so that fusing changes no bit. `out` may be `a` or
// `b`. Cloned for AVX2 and AVX-512 (picked at load time by what the CPU
// has), the same IEEE operations (no FMA is enabled, so nothing is
// contracted).
ASYNCRT_FUSED_CLONES void RunOp(int64_t opcode, const float* a, const float* b,
                                float* out, int64_t n) {
  switch (opcode) {
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

// The operand's elements from `start`, for kernels whose slots hold
// `slot_stride` floats.
inline const float* Elements(const Operand& operand, const float* const* inputs,
                             int64_t start, const float* slots,
                             int64_t slot_stride) {
  if (operand.slot >= 0) return slots + operand.slot * slot_stride;
  return inputs[operand.input] + (operand.advances ? start : 0);
}

// Any CPU: each step over a block of kSlotFloats elements in L1, the
// accumulator a block of memory.
void RunBlocks(absl::Span<const Step> steps, const float* const* inputs,
               int64_t begin, int64_t end, float* slots, float* out) {
  alignas(64) float accumulators[2][kSlotFloats];
  for (int64_t start = begin; start < end; start += kSlotFloats) {
    const int64_t count = std::min(kSlotFloats, end - start);
    int current = 0;  // The accumulator holding the previous result.
    for (size_t k = 0; k < steps.size(); ++k) {
      const Step& step = steps[k];
      const float* operands[2];
      for (int i = 0; i < 2; ++i) {
        operands[i] =
            step.operands[i].IsAccumulator()
                ? accumulators[current]
                : Elements(step.operands[i], inputs, start, slots, kSlotFloats);
      }
      float* result =
          k + 1 == steps.size() ? out + start : accumulators[current ^ 1];
      RunOp(step.opcode, operands[0], operands[1], result, count);
      current ^= 1;
      if (step.keep >= 0) {
        std::memcpy(slots + step.keep * kSlotFloats, result,
                    count * sizeof(float));
      }
    }
  }
}

template <typename Vec>
[[gnu::always_inline]] inline Vec Load(const float* p) {
  Vec v;
  std::memcpy(&v, p, sizeof(v));
  return v;
}
// By value: a reference to an accumulator register would take its address
// and keep the accumulator in memory (GCC 12 did so for AVX2).
template <typename Vec>
[[gnu::always_inline]] inline void Store(float* p, Vec v) {
  std::memcpy(p, &v, sizeof(v));
}

// A step as the register machine runs it: one case per opcode and operand
// sources (so that each case is a run of vector instructions with no test
// inside), operand addresses at element 0 (`mask` keeps the element offset
// for full-size inputs and drops it for slots and splats), the slot to
// keep the result in or null.
struct ChunkStep {
  int32_t code;
  int32_t opcode;
  const float* a;
  const float* b;
  int64_t a_mask;
  int64_t b_mask;
  float* keep;
};

// The case of `opcode` with operand a (b) the accumulator or not.
constexpr int32_t CaseOf(int64_t opcode, bool a_accumulator,
                         bool b_accumulator) {
  return static_cast<int32_t>(opcode * 4 + a_accumulator * 2 + b_accumulator);
}

// The register machine over whole chunks of kRegisters vectors, then
// RunBlocks over what is left. Inlined into a function built for the
// vectors' instruction set (GCC vector extensions: a + b on Vec is one
// instruction there). Each case computes the scalar expression of RunOp
// lane by lane: x > y ? x : y is a compare and a blend, exactly
// std::max's choice including NaNs and signed zeros.
template <typename Vec, typename IntVec, int kRegisters>
[[gnu::always_inline]] inline void RunChunks(absl::Span<const Step> steps,
                                             const float* const* inputs,
                                             int64_t begin, int64_t end,
                                             float* slots, float* out) {
  constexpr int64_t kLanes = sizeof(Vec) / sizeof(float);
  constexpr int64_t kChunk = kLanes * kRegisters;
  static_assert(kChunk <= kSlotFloats);
  // Not zeroed first (a chain's steps fit on the stack).
  constexpr size_t kStackSteps = 64;
  ChunkStep stack_steps[kStackSteps];
  std::unique_ptr<ChunkStep[]> heap_steps;
  ChunkStep* prepared = stack_steps;
  if (steps.size() > kStackSteps) {
    heap_steps = std::make_unique_for_overwrite<ChunkStep[]>(steps.size());
    prepared = heap_steps.get();
  }
  absl::Span<const ChunkStep> chunk_steps(prepared, steps.size());
  for (size_t k = 0; k < steps.size(); ++k) {
    const Step& step = steps[k];
    ChunkStep& chunk_step = prepared[k];
    const Operand& a = step.operands[0];
    const Operand& b = step.operands[1];
    // A unary op's second operand is unused: its cases ignore it.
    const bool unary = FindFusedElementwiseOpcode(step.opcode)->arity == 1;
    chunk_step.opcode = static_cast<int32_t>(step.opcode);
    chunk_step.code =
        CaseOf(step.opcode, a.IsAccumulator(), !unary && b.IsAccumulator());
    auto address = [&](const Operand& operand, const float*& data,
                       int64_t& mask) {
      data = nullptr;
      mask = 0;
      if (operand.slot >= 0) {
        data = slots + operand.slot * kChunk;
      } else if (operand.input >= 0) {
        data = inputs[operand.input];
        mask = operand.advances ? ~int64_t{0} : 0;
      }
    };
    address(a, chunk_step.a, chunk_step.a_mask);
    address(b, chunk_step.b, chunk_step.b_mask);
    chunk_step.keep = step.keep >= 0 ? slots + step.keep * kChunk : nullptr;
  }
  int64_t start = begin;
  for (; start + kChunk <= end; start += kChunk) {
    Vec acc[kRegisters];
    for (const ChunkStep& step : chunk_steps) {
      const float* a = step.a + (start & step.a_mask);
      const float* b = step.b + (start & step.b_mask);
      switch (step.code) {
#define ASYNCRT_LOOP(X, Y, EXPR)         \
  for (int r = 0; r < kRegisters; ++r) { \
    const Vec x = X;                     \
    [[maybe_unused]] const Vec y = Y;    \
    acc[r] = EXPR;                       \
  }                                      \
  break;
#define ASYNCRT_A Load<Vec>(a + r * kLanes)
#define ASYNCRT_B Load<Vec>(b + r * kLanes)
#define ASYNCRT_BINARY(CODE, EXPR)        \
  case CaseOf(CODE, true, true):          \
    ASYNCRT_LOOP(acc[r], acc[r], EXPR)    \
  case CaseOf(CODE, true, false):         \
    ASYNCRT_LOOP(acc[r], ASYNCRT_B, EXPR) \
  case CaseOf(CODE, false, true):         \
    ASYNCRT_LOOP(ASYNCRT_A, acc[r], EXPR) \
  case CaseOf(CODE, false, false):        \
    ASYNCRT_LOOP(ASYNCRT_A, ASYNCRT_B, EXPR)
#define ASYNCRT_UNARY(CODE, EXPR)  \
  case CaseOf(CODE, true, false):  \
    ASYNCRT_LOOP(acc[r], x, EXPR)  \
  case CaseOf(CODE, false, false): \
    ASYNCRT_LOOP(ASYNCRT_A, x, EXPR)
        ASYNCRT_BINARY(0, x + y)
        ASYNCRT_BINARY(1, x - y)
        ASYNCRT_BINARY(2, x * y)
        ASYNCRT_BINARY(3, x / y)
        ASYNCRT_BINARY(4, x < y ? y : x)  // std::max(x, y).
        ASYNCRT_BINARY(5, y < x ? y : x)  // std::min(x, y).
        ASYNCRT_UNARY(10, x > Vec{} ? x : Vec{})
        ASYNCRT_UNARY(11, -x)
        ASYNCRT_UNARY(12, (Vec)((IntVec)x & 0x7fffffff))
#undef ASYNCRT_UNARY
#undef ASYNCRT_BINARY
#undef ASYNCRT_B
#undef ASYNCRT_A
#undef ASYNCRT_LOOP
        default: {
          // Transcendental ops and sqrt (unary): through RunOp, as the nn
          // ops compute them, over the chunk.
          alignas(64) float chunk[kChunk];
          if (step.code & 2) {
            for (int r = 0; r < kRegisters; ++r) {
              Store(chunk + r * kLanes, acc[r]);
            }
            a = chunk;
          }
          RunOp(step.opcode, a, nullptr, chunk, kChunk);
          for (int r = 0; r < kRegisters; ++r) {
            acc[r] = Load<Vec>(chunk + r * kLanes);
          }
        }
      }
      if (step.keep != nullptr) {
        for (int r = 0; r < kRegisters; ++r) {
          Store(step.keep + r * kLanes, acc[r]);
        }
      }
    }
    for (int r = 0; r < kRegisters; ++r) {
      Store(out + start + r * kLanes, acc[r]);
    }
  }
  if (start < end) RunBlocks(steps, inputs, start, end, slots, out);
}

using Avx512Floats = float __attribute__((vector_size(64)));
using Avx512Ints = int32_t __attribute__((vector_size(64)));
using Avx2Floats = float __attribute__((vector_size(32)));
using Avx2Ints = int32_t __attribute__((vector_size(32)));

// 16 of AVX-512's 32 registers hold the accumulator (256 floats: half the
// steps of 8 registers), 8 of AVX2's 16.
__attribute__((target("avx512f"))) void RunAvx512(absl::Span<const Step> steps,
                                                  const float* const* inputs,
                                                  int64_t begin, int64_t end,
                                                  float* slots, float* out) {
  RunChunks<Avx512Floats, Avx512Ints, 16>(steps, inputs, begin, end, slots,
                                          out);
}
__attribute__((target("avx2"))) void RunAvx2(absl::Span<const Step> steps,
                                             const float* const* inputs,
                                             int64_t begin, int64_t end,
                                             float* slots, float* out) {
  RunChunks<Avx2Floats, Avx2Ints, 8>(steps, inputs, begin, end, slots, out);
}

}  // namespace

Plan MakePlan(absl::Span<const Instruction> program,
              absl::Span<const bool> broadcast) {
  const int32_t num_inputs = static_cast<int32_t>(broadcast.size());
  const size_t num_ops = program.size();
  // For each op's result: the last op reading it, and whether an op other
  // than the next reads it (then it needs a slot).
  absl::InlinedVector<int32_t, 64> last_use(num_ops, -1);
  absl::InlinedVector<bool, 64> kept(num_ops, false);
  for (size_t k = 0; k < num_ops; ++k) {
    for (int32_t operand : program[k].operands) {
      if (operand < num_inputs) continue;
      const size_t producer = operand - num_inputs;
      last_use[producer] = static_cast<int32_t>(k);
      if (producer + 1 != k) kept[producer] = true;
    }
  }
  Plan plan;
  plan.steps.resize(num_ops);
  absl::InlinedVector<int32_t, 64> slot_of(num_ops, -1);
  absl::InlinedVector<int32_t, 8> free_slots;
  for (size_t k = 0; k < num_ops; ++k) {
    Step& step = plan.steps[k];
    step.opcode = program[k].opcode;
    for (int i = 0; i < 2; ++i) {
      const int32_t value = program[k].operands[i];
      Operand& operand = step.operands[i];
      if (value < 0) continue;  // Unused: reads as the accumulator.
      if (value < num_inputs) {
        operand.input = value;
        operand.advances = !broadcast[value];
      } else if (static_cast<size_t>(value - num_inputs) + 1 != k) {
        operand.slot = slot_of[value - num_inputs];
      }
    }
    // The step reads its operands before it stores its result, so a slot
    // freed here may take that result.
    for (int32_t value : program[k].operands) {
      if (value >= num_inputs &&
          last_use[value - num_inputs] == static_cast<int32_t>(k)) {
        const int32_t slot = slot_of[value - num_inputs];
        if (slot >= 0 && std::find(free_slots.begin(), free_slots.end(),
                                   slot) == free_slots.end()) {
          free_slots.push_back(slot);
        }
      }
    }
    if (kept[k]) {
      if (free_slots.empty()) {
        slot_of[k] = plan.num_slots++;
      } else {
        slot_of[k] = free_slots.back();
        free_slots.pop_back();
      }
      step.keep = slot_of[k];
    }
  }
  return plan;
}

absl::Span<const KernelVariant> SupportedKernels() {
  static const std::vector<KernelVariant>* const variants = [] {
    auto* supported = new std::vector<KernelVariant>{{"blocks", RunBlocks}};
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx2")) {
      supported->push_back({"avx2", RunAvx2});
    }
    if (__builtin_cpu_supports("avx512f")) {
      supported->push_back({"avx512", RunAvx512});
    }
    return supported;
  }();
  return *variants;
}

}  // namespace asyncrt::nn::fused
