// The instruction set of nn.fused_elementwise: f32 elementwise ops that
// -nn-fuse-elementwise (compiler) chains into one op and the CPU runs in one
// pass over the elements (backends/cpu/nn/fused_elementwise_op.cc).
//
// An op's `ops` attribute lists opcodes; `operands` lists two indices per op
// (the second -1 for a unary op): index i < number of inputs is input i,
// inputs + k is the result of op k (an earlier one). The op's result is its
// last op's. Each opcode computes exactly what the nn op of the same name
// computes on f32, so fusing never changes a bit of the result.
//
// Opcodes are stored in compiled programs: never renumber them, only add.
// Header-only, no dependencies; thread-safe (constants).
#ifndef ASYNCRT_BACKENDS_FUSED_ELEMENTWISE_H_
#define ASYNCRT_BACKENDS_FUSED_ELEMENTWISE_H_

#include <array>
#include <cstdint>
#include <iterator>
#include <optional>
#include <string_view>

namespace asyncrt::nn {

struct FusedElementwiseOpcode {
  std::string_view op_name;  // The nn op it computes.
  int64_t opcode;
  int arity;  // 1 or 2.
};

inline constexpr FusedElementwiseOpcode kFusedElementwiseOps[] = {
    {"nn.add", 0, 2},   {"nn.sub", 1, 2},      {"nn.mul", 2, 2},
    {"nn.div", 3, 2},   {"nn.max", 4, 2},      {"nn.min", 5, 2},
    {"nn.relu", 10, 1}, {"nn.neg", 11, 1},     {"nn.abs", 12, 1},
    {"nn.exp", 13, 1},  {"nn.log", 14, 1},     {"nn.sqrt", 15, 1},
    {"nn.tanh", 16, 1}, {"nn.sigmoid", 17, 1}, {"nn.erf", 18, 1},
    {"nn.gelu", 19, 1},
};

// The entry of an op the fused op computes, or nullopt.
constexpr std::optional<FusedElementwiseOpcode> FindFusedElementwiseOp(
    std::string_view op_name) {
  for (const FusedElementwiseOpcode& op : kFusedElementwiseOps) {
    if (op.op_name == op_name) return op;
  }
  return std::nullopt;
}

// The entry of `opcode`, or nullopt. One table read (the runtime decodes
// every op of a chain on each call).
constexpr std::optional<FusedElementwiseOpcode> FindFusedElementwiseOpcode(
    int64_t opcode) {
  constexpr int64_t kMaxOpcode = 32;
  constexpr std::array<int, kMaxOpcode> kIndexOf = [] {
    std::array<int, kMaxOpcode> index{};
    index.fill(-1);
    for (size_t i = 0; i < std::size(kFusedElementwiseOps); ++i) {
      index[kFusedElementwiseOps[i].opcode] = static_cast<int>(i);
    }
    return index;
  }();
  if (opcode < 0 || opcode >= kMaxOpcode || kIndexOf[opcode] < 0) {
    return std::nullopt;
  }
  return kFusedElementwiseOps[kIndexOf[opcode]];
}

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_FUSED_ELEMENTWISE_H_
