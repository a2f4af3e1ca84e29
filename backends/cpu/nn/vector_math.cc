// The portable (SSE) build of vector_math.h's functions and the choice of
// the widest one this CPU runs.
#define Eigen EigenSse
#define ASYNCRT_VECTOR_MATH_VARIANT ApplySse
#include "backends/cpu/nn/vector_math_impl.inc"
#undef ASYNCRT_VECTOR_MATH_VARIANT
#undef Eigen

#include <vector>

namespace asyncrt::nn {
namespace internal {

void ApplyAvx2(VectorFunction function, const float* in, float* out, int64_t n);
void ApplyAvx512(VectorFunction function, const float* in, float* out,
                 int64_t n);

absl::Span<const VectorMathVariant> SupportedVectorMathVariants() {
  static const auto* const variants = [] {
    auto* supported = new std::vector<VectorMathVariant>{{"sse", ApplySse}};
    if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("fma")) {
      supported->push_back({"avx2", ApplyAvx2});
    }
    if (__builtin_cpu_supports("avx512f") &&
        __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512vl") &&
        __builtin_cpu_supports("avx512bw")) {
      supported->push_back({"avx512", ApplyAvx512});
    }
    return supported;
  }();
  return *variants;
}

}  // namespace internal

void ApplyVectorFunction(VectorFunction function, const float* in, float* out,
                         int64_t n) {
  static const internal::VectorFunctionImpl widest =
      internal::SupportedVectorMathVariants().back().apply;
  widest(function, in, out, n);
}

}  // namespace asyncrt::nn
