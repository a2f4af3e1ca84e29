// vector_math.h's functions on 16-float packets; built with AVX-512 F, DQ,
// VL and BW (backends/CMakeLists.txt), called only where the CPU has them.
#define Eigen EigenAvx512
#define ASYNCRT_VECTOR_MATH_VARIANT ApplyAvx512
#include "backends/cpu/nn/vector_math_impl.inc"
