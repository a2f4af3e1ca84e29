#include "backends/cpu/nn/vector_math.h"

#include <algorithm>
#include <cmath>
#include <cstdint>

#include "Eigen/Core"
#include "unsupported/Eigen/SpecialFunctions"

namespace asyncrt::nn {
namespace {

// The widest packet this file is compiled for (SSE's 4 floats in a
// portable build: Eigen picks packets at compile time, so no per-CPU
// clones as for the fused kernel's loops).
using Packet = Eigen::internal::packet_traits<float>::type;
constexpr int64_t kLanes = sizeof(Packet) / sizeof(float);

template <VectorFunction kFunction>
Packet Compute(const Packet& x) {
  namespace ei = Eigen::internal;
  if constexpr (kFunction == VectorFunction::kTanh) {
    return ei::ptanh(x);
  } else if constexpr (kFunction == VectorFunction::kErf) {
    return ei::perf(x);
  } else {
    const Packet half = ei::pset1<Packet>(0.5f);
    const Packet one = ei::pset1<Packet>(1.0f);
    const Packet erf = ei::perf(ei::pmul(x, ei::pset1<Packet>(0.70710678f)));
    return ei::pmul(ei::pmul(half, x), ei::padd(one, erf));
  }
}

// GELU's left tail, where 1 + erf(x / sqrt(2)) cancels: the packet erf's
// few ulp (and its clamp to -1 below -4 sqrt(2)) would become a large
// relative error there, so those elements take libm's erf. Decided by
// value, so results stay independent of position.
constexpr float kGeluTail = -1.0f;

float ScalarGelu(float x) {
  return 0.5f * x * (1.0f + std::erf(x * 0.70710678f));
}

template <VectorFunction kFunction>
Packet ComputeChecked(const Packet& x) {
  namespace ei = Eigen::internal;
  Packet result = Compute<kFunction>(x);
  if constexpr (kFunction == VectorFunction::kGelu) {
    const Packet tail = ei::pcmp_lt(x, ei::pset1<Packet>(kGeluTail));
    if (ei::predux_any(tail)) {
      alignas(64) float in[kLanes], out[kLanes];
      ei::pstoreu(in, x);
      ei::pstoreu(out, result);
      for (int64_t lane = 0; lane < kLanes; ++lane) {
        if (in[lane] < kGeluTail) out[lane] = ScalarGelu(in[lane]);
      }
      result = ei::ploadu<Packet>(out);
    }
  }
  return result;
}

template <VectorFunction kFunction>
void Apply(const float* in, float* out, int64_t n) {
  namespace ei = Eigen::internal;
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    ei::pstoreu(out + i, ComputeChecked<kFunction>(ei::ploadu<Packet>(in + i)));
  }
  if (i < n) {
    // The tail in a padded packet (1 pads: finite under every function).
    alignas(64) float tail[kLanes];
    std::fill_n(tail, kLanes, 1.0f);
    std::copy(in + i, in + n, tail);
    ei::pstoreu(tail, ComputeChecked<kFunction>(ei::ploadu<Packet>(tail)));
    std::copy(tail, tail + (n - i), out + i);
  }
}

}  // namespace

void ApplyVectorFunction(VectorFunction function, const float* in, float* out,
                         int64_t n) {
  switch (function) {
    case VectorFunction::kTanh:
      return Apply<VectorFunction::kTanh>(in, out, n);
    case VectorFunction::kErf:
      return Apply<VectorFunction::kErf>(in, out, n);
    case VectorFunction::kGelu:
      return Apply<VectorFunction::kGelu>(in, out, n);
  }
}

}  // namespace asyncrt::nn
