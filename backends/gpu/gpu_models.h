// Models compiled for the GPU (tools/gpu/prepare_models.sh), for the GPU
// tests and benchmarks: NAME_f16.bef (asyncrt-compile --device=CUDA:0
// --precision=f16; NAME_f16_synthetic.bef with --synthetic-weights) with
// NAME.input.bin (raw f32), NAME.input.shape (its dimensions, in text) and
// NAME.expected.bin (PyTorch's f32 output on that input), in the directory
// $ASYNCRT_GPU_MODEL_DIR.
//
// Header-only (tests and benchmarks only). Thread-compatible.
#ifndef ASYNCRT_BACKENDS_GPU_GPU_MODELS_H_
#define ASYNCRT_BACKENDS_GPU_GPU_MODELS_H_

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"

namespace asyncrt::testing {

struct GpuModel {
  std::string name;
  std::string bef_path;
  std::vector<int64_t> input_shape;
  std::vector<float> input;
  std::vector<float> expected;
};

inline std::vector<float> ReadFloats(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::vector<char> bytes((std::istreambuf_iterator<char>(file)),
                          std::istreambuf_iterator<char>());
  std::vector<float> values(bytes.size() / sizeof(float));
  std::memcpy(values.data(), bytes.data(), values.size() * sizeof(float));
  return values;
}

// The model NAME of $ASYNCRT_GPU_MODEL_DIR (`synthetic`: its synthetic-
// weights build; `variant`: a suffix of its BEF's name, "_no_graphs" for
// the build without device graphs); NotFound if the variable is unset or
// the files are missing.
inline absl::StatusOr<GpuModel> FindGpuModel(const std::string& name,
                                             bool synthetic = false,
                                             const std::string& variant = "") {
  const char* dir = std::getenv("ASYNCRT_GPU_MODEL_DIR");
  if (dir == nullptr) {
    return absl::NotFoundError(
        "ASYNCRT_GPU_MODEL_DIR is not set (tools/gpu/prepare_models.sh "
        "makes the models)");
  }
  GpuModel model;
  model.name = name;
  const std::string base = absl::StrCat(dir, "/", name);
  model.bef_path =
      base + (synthetic ? "_f16_synthetic" : "_f16") + variant + ".bef";
  if (!std::filesystem::exists(model.bef_path)) {
    return absl::NotFoundError(model.bef_path + " does not exist");
  }
  std::ifstream shape(base + ".input.shape");
  for (int64_t dim; shape >> dim;) model.input_shape.push_back(dim);
  model.input = ReadFloats(base + ".input.bin");
  model.expected = ReadFloats(base + ".expected.bin");
  if (model.input_shape.empty() || model.input.empty() ||
      model.expected.empty()) {
    return absl::NotFoundError(base +
                               ": the input or expected output is "
                               "missing");
  }
  return model;
}

// Calls `main` on `input` (an available TensorHandle value) and waits: the
// first result's f32 values on the host, or the error.
inline absl::StatusOr<std::vector<float>> RunModel(Runtime& runtime,
                                                   const BefProgram& program,
                                                   AsyncValue* input) {
  AsyncValue* arguments[] = {input};
  absl::StatusOr<std::vector<RCReference<AsyncValue>>> results =
      runtime.Call(program, "main", arguments);
  if (!results.ok()) return results.status();
  runtime.Await(*results);
  if ((*results)[0]->IsError()) return (*results)[0]->GetError();
  const TensorHandle& handle = (*results)[0]->get<TensorHandle>();
  const Tensor* tensor = runtime.core_runtime().Await(handle);
  if (tensor == nullptr) return *handle.GetErrorIfPresent();
  auto elements =
      static_cast<const DenseHostTensor*>(tensor)->elements<float>();
  return std::vector<float>(elements.begin(), elements.end());
}

}  // namespace asyncrt::testing

#endif  // ASYNCRT_BACKENDS_GPU_GPU_MODELS_H_
