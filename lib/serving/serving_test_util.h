// Models and helpers the serving tests share.
#ifndef ASYNCRT_LIB_SERVING_SERVING_TEST_UTIL_H_
#define ASYNCRT_LIB_SERVING_SERVING_TEST_UTIL_H_

#include <filesystem>
#include <fstream>
#include <string>

namespace asyncrt::serving::testing {

// y = 2 x, as a program of the corert dialect (the test binaries link the
// MLIR translator, so the repository loads it as model.mlir).
inline constexpr char kDoubleModel[] = R"(
func.func @main(%x: !corert.tensorhandle) -> !corert.tensorhandle {
  %ch = tfrt.new.chain
  %cpu = corert.get_op_handler %ch "cpu"
  %k = corert.const_dense_tensor dense<2.0> : tensor<f32>
  %y = corert.executeop(%cpu) "nn.mul"(%x, %k) : 1
  tfrt.return %y : !corert.tensorhandle
}
)";

// The same as asyncrt-compile makes it from the model level: one stream
// (every op costs 1, far below the threshold), so that a call runs wholly
// on the thread it starts on.
inline constexpr char kOneStreamDoubleModel[] = R"(
func.func @main(%x: !corert.tensorhandle) -> !corert.tensorhandle
    attributes {tfrt.cost_threshold = 1099511627776 : i64} {
  %ch = tfrt.new.chain {_tfrt_cost = 1 : i64}
  %cpu = corert.get_op_handler %ch "cpu" {_tfrt_cost = 1 : i64}
  %k = corert.const_dense_tensor dense<2.0> : tensor<f32> {_tfrt_cost = 1 : i64}
  %y = corert.executeop(%cpu) "nn.mul"(%x, %k) : 1 attributes {_tfrt_cost = 1 : i64}
  tfrt.return %y : !corert.tensorhandle
}
)";

// Writes `model` (and `signature`, if not empty) as version `version` of
// the model whose base path is `base`.
inline void WriteVersion(const std::filesystem::path& base, int version,
                         const std::string& model,
                         const std::string& signature = "") {
  const std::filesystem::path dir = base / std::to_string(version);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "model.mlir") << model;
  if (!signature.empty()) std::ofstream(dir / "signature.json") << signature;
}

}  // namespace asyncrt::serving::testing

#endif  // ASYNCRT_LIB_SERVING_SERVING_TEST_UTIL_H_
