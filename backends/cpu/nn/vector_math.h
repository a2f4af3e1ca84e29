// f32 transcendental functions over arrays, vectorized with Eigen's packet
// math (a rational approximation per function, within 4e-7 relative of the
// exact value) instead of a scalar libm call per element, which GCC does
// not vectorize without -ffast-math. Built for SSE, AVX2 and AVX-512; the
// widest the CPU runs is used. (exp, log and sigmoid stay scalar: glibc's
// expf and logf are as fast as Eigen's SSE packets.)
//
// On one machine, every element's result depends on its value only, not on
// where it sits: the last, partial packet is computed in a padded packet,
// never by a scalar fallback. So an nn op and the fused elementwise
// kernel, which both call these on blocks of different lengths and
// offsets, agree bit for bit. (Machines with different instruction sets
// may differ in the last bits.)
//
// Thread-safety: pure functions; no state. Blocking: never.
#ifndef ASYNCRT_BACKENDS_CPU_NN_VECTOR_MATH_H_
#define ASYNCRT_BACKENDS_CPU_NN_VECTOR_MATH_H_

#include <cstdint>

#include "absl/types/span.h"

namespace asyncrt::nn {

enum class VectorFunction {
  kTanh,
  kErf,
  kGelu,  // 0.5 x (1 + erf(x / sqrt(2))).
};

// out[i] = function(in[i]) for i < n. `out` may be `in`; otherwise the
// ranges must not overlap.
void ApplyVectorFunction(VectorFunction function, const float* in, float* out,
                         int64_t n);

namespace internal {

using VectorFunctionImpl = void (*)(VectorFunction function, const float* in,
                                    float* out, int64_t n);
struct VectorMathVariant {
  const char* isa;  // "sse", "avx2", "avx512".
  VectorFunctionImpl apply;
};
// The builds this CPU runs, narrowest first (for tests: each must meet the
// same contract); ApplyVectorFunction calls the last.
absl::Span<const VectorMathVariant> SupportedVectorMathVariants();

}  // namespace internal

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_CPU_NN_VECTOR_MATH_H_
