// The kernel of nn.fused_elementwise (fused_elementwise_op.cc): a chain of
// f32 elementwise ops (asyncrt/backends/fused_elementwise.h) run as a small
// register machine. Each step's result stays in vector registers (the
// accumulator: 16 AVX-512 or 8 AVX2 registers, 256 or 64 floats) for the next
// step; only a result that a later step other than the next one reads is
// stored, in a slot of L1-resident scratch. So a chain of N ops reads its
// inputs once, writes its output once and costs N instructions per vector,
// with no load or store in between (3x faster than running each op over a
// block in L1 on a 50-op chain).
//
// Every step computes exactly what its nn op computes on f32 (the same IEEE
// operations; transcendental ops through the same functions as the nn ops),
// and an element's result never depends on where it sits, so each variant
// below gives the same bits as the separate ops.
//
// Thread-safety: pure functions over caller-owned memory. Blocking: never.
#ifndef ASYNCRT_BACKENDS_CPU_NN_FUSED_ELEMENTWISE_KERNEL_H_
#define ASYNCRT_BACKENDS_CPU_NN_FUSED_ELEMENTWISE_KERNEL_H_

#include <cstdint>

#include "absl/container/inlined_vector.h"
#include "absl/types/span.h"

namespace asyncrt::nn::fused {

// One op of the chain as the op's attributes give it: value indices are the
// inputs, then each op's result (fused_elementwise.h); -1 for no operand.
struct Instruction {
  int64_t opcode;
  int32_t operands[2];
};

// Where a step reads an operand: the accumulator (the previous step's
// result), a slot, or an input's elements.
struct Operand {
  // An input; with `advances`, indexed by element (a full-size input), else
  // the same kSlotFloats floats for every element (a broadcast input's
  // splat).
  int32_t input = -1;
  bool advances = false;
  int32_t slot = -1;
  bool IsAccumulator() const { return input < 0 && slot < 0; }
};

struct Step {
  int64_t opcode;
  Operand operands[2];  // The second unused by unary ops.
  // The slot the result is stored in as well, when a step after the next
  // reads it; -1 otherwise.
  int32_t keep = -1;
};

// Floats per slot, per thread running a kernel (the widest a kernel reads).
inline constexpr int64_t kSlotFloats = 512;

struct Plan {
  absl::InlinedVector<Step, 64> steps;
  int32_t num_slots = 0;
};

// The plan of a checked `program` (operands refer to earlier values only)
// over `broadcast.size()` inputs; `broadcast[i]`: input i is one element,
// given to the kernel as a splat of kSlotFloats copies. Slots are reused
// once the last step reading them has run. Depends on nothing else, so a
// program op site keeps it for its next calls.
Plan MakePlan(absl::Span<const Instruction> program,
              absl::Span<const bool> broadcast);

// Runs `steps` over elements [begin, end) of `inputs` (each input's
// elements, or its splat), writing out[begin, end); `slots`
// holds num_slots * kSlotFloats floats the call may overwrite. `out` may be
// a full-size input's buffer: element i is written after every step read
// element i.
using Kernel = void (*)(absl::Span<const Step> steps,
                        const float* const* inputs, int64_t begin, int64_t end,
                        float* slots, float* out);

struct KernelVariant {
  const char* isa;  // "blocks" (any CPU), "avx2", "avx512".
  Kernel run;
};
// The variants this CPU runs, narrowest first (tests compare them); the
// op uses the last.
absl::Span<const KernelVariant> SupportedKernels();

}  // namespace asyncrt::nn::fused

#endif  // ASYNCRT_BACKENDS_CPU_NN_FUSED_ELEMENTWISE_KERNEL_H_
