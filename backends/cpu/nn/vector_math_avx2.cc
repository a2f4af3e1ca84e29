// vector_math.h's functions on 8-float packets; built with -mavx2 -mfma
// (backends/CMakeLists.txt), called only where the CPU has both.
#define Eigen EigenAvx2
#define ASYNCRT_VECTOR_MATH_VARIANT ApplyAvx2
#include "backends/cpu/nn/vector_math_impl.inc"
