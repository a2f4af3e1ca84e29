// onnx_backend_test: runs ONNX's backend test suite (Debian's
// libonnx-testdata) through AsyncRT: each test's model is imported, compiled
// to BEF, run on its inputs and compared with its expected outputs, with
// ONNX's default tolerances (rtol 1e-3, atol 1e-7).
//
//   onnx_backend_test --data=/usr/share/libonnx-testdata/data
//       --report=onnx_backend_report.txt
//
// A test whose model does not import (an op, attribute or dtype AsyncRT does
// not support) is skipped, and the report gives the importer's reason; a
// test that imports must compile, run and match, or it fails, unless it is
// one of the few known differences (KnownDifferences, with reasons). Graph
// inputs that an op needs at compile time (Reshape's shape, ...) are bound to
// the test's values when the model does not import otherwise. Exit status 1 if
// any test failed.
//
//   onnx_backend_test --models=DIR
//
// runs the models that tools/models/export_models.py wrote to DIR instead,
// against PyTorch's outputs with a model tolerance (see Tolerance), or the
// tests tools/models/make_opset_tests.py wrote; with --fail-on-skip a test
// that does not import fails.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/compiler/onnx_importer.h"
#include "asyncrt/compiler/onnx_tensors.h"
#include "asyncrt/compiler/passes.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/dialects/register_dialects.h"
#include "asyncrt/runtime/runtime.h"
#include "llvm/Support/raw_ostream.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/MLIRContext.h"
#include "onnx/onnx_pb.h"

namespace asyncrt {
namespace {

namespace fs = std::filesystem;

std::string ReadFile(const fs::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

// The files `prefix_0.pb`, `prefix_1.pb`, ... of a data set, in order.
std::vector<std::string> ReadIndexed(const fs::path& dir,
                                     const std::string& prefix) {
  std::vector<std::string> files;
  for (int i = 0;; ++i) {
    fs::path path = dir / absl::StrCat(prefix, "_", i, ".pb");
    if (!fs::exists(path)) break;
    files.push_back(ReadFile(path));
  }
  return files;
}

// Tests whose expected outputs AsyncRT deliberately does not reproduce,
// reported as KNOWN and not failed.
const std::map<std::string, std::string>& KnownDifferences() {
  static const auto* known = new std::map<std::string, std::string>{
      {"node/test_cast_FLOAT_to_BFLOAT16",
       "ONNX 1.12's data truncates to bfloat16; AsyncRT rounds to nearest "
       "even, as ONNX does from 1.14"},
      {"node/test_castlike_FLOAT_to_BFLOAT16",
       "ONNX 1.12's data truncates to bfloat16; AsyncRT rounds to nearest "
       "even, as ONNX does from 1.14"},
      {"node/test_castlike_FLOAT_to_BFLOAT16_expanded",
       "ONNX 1.12's data truncates to bfloat16; AsyncRT rounds to nearest "
       "even, as ONNX does from 1.14"},
  };
  return *known;
}

struct Outcome {
  enum Kind { kPass, kSkip, kFail } kind;
  std::string reason;
};

// Element i of a host tensor as a double.
double ElementAsDouble(const DenseHostTensor& tensor, int64_t i) {
  return DispatchByDType(tensor.dtype(), [&](auto tag) -> double {
    using T = typename decltype(tag)::type;
    if constexpr (std::is_arithmetic_v<T>) {
      return static_cast<double>(static_cast<const T*>(tensor.data())[i]);
    } else if constexpr (std::is_same_v<T, Half> ||
                         std::is_same_v<T, BFloat16>) {
      return static_cast<const T*>(tensor.data())[i].ToFloat();
    } else {
      return std::nan("");
    }
  });
}

// How close outputs must be. ONNX's node tests: rtol 1e-3, atol 1e-7.
// Whole models against PyTorch: rtol 1e-4 and atol 1e-4 of the largest
// expected magnitude, since accumulation order differs between libraries
// and elements near zero carry the absolute error of the large ones.
struct Tolerance {
  double rtol = 1e-3;
  double atol = 1e-7;
  bool atol_relative_to_max = false;
};

// Empty if `actual` matches `expected` within `tolerance`; sets
// `max_error` to the largest |actual - expected| over max |expected|.
std::string Compare(const DenseHostTensor& expected,
                    const DenseHostTensor& actual, const Tolerance& tolerance,
                    double& max_error) {
  if (expected.dtype() != actual.dtype()) {
    return absl::StrCat("dtype ", DTypeName(actual.dtype()), ", expected ",
                        DTypeName(expected.dtype()));
  }
  if (expected.shape() != actual.shape()) {
    return absl::StrCat("shape ", actual.shape().DebugString(), ", expected ",
                        expected.shape().DebugString());
  }
  const bool is_float =
      expected.dtype() == DType::kF32 || expected.dtype() == DType::kF64 ||
      expected.dtype() == DType::kF16 || expected.dtype() == DType::kBF16;
  double max_expected = 0, max_difference = 0;
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    const double e = ElementAsDouble(expected, i);
    if (std::isfinite(e)) max_expected = std::max(max_expected, std::abs(e));
  }
  const double atol = tolerance.atol_relative_to_max
                          ? tolerance.atol * max_expected
                          : tolerance.atol;
  for (int64_t i = 0; i < expected.NumElements(); ++i) {
    const double e = ElementAsDouble(expected, i);
    const double a = ElementAsDouble(actual, i);
    if (std::isnan(e) && std::isnan(a)) continue;
    if (e == a) continue;
    max_difference = std::max(max_difference, std::abs(a - e));
    if (is_float && std::abs(a - e) <= atol + tolerance.rtol * std::abs(e)) {
      continue;
    }
    return absl::StrCat("element ", i, " is ", a, ", expected ", e);
  }
  max_error = max_expected > 0 ? max_difference / max_expected : 0;
  return "";
}

class BackendRunner {
 public:
  BackendRunner(Runtime& runtime, Tolerance tolerance)
      : runtime_(runtime), tolerance_(tolerance) {
    RegisterAllDialects(registry_);
  }

  // The largest output error of the last Run, relative to the output's
  // largest magnitude.
  double max_error() const { return max_error_; }

  Outcome Run(const fs::path& dir) {
    max_error_ = 0;
    const std::string model_bytes = ReadFile(dir / "model.onnx");
    std::vector<fs::path> data_sets;
    for (const auto& entry : fs::directory_iterator(dir)) {
      if (entry.is_directory() &&
          absl::StartsWith(entry.path().filename().string(), "test_data_set")) {
        data_sets.push_back(entry.path());
      }
    }
    std::sort(data_sets.begin(), data_sets.end());
    if (data_sets.empty()) return {Outcome::kSkip, "no test data"};

    std::vector<std::string> inputs = ReadIndexed(data_sets[0], "input");
    bf16_inputs_ = Bf16Inputs(model_bytes);
    OnnxImportOptions options;
    std::string diagnostics;
    auto bef = Compile(model_bytes, dir.string(), options, diagnostics);
    std::vector<bool> bound(inputs.size(), false);
    if (!bef && absl::StrContains(diagnostics, "constant at compile time")) {
      // Bind the integer, scalar and short float inputs (shapes, axes,
      // bounds, Resize's scales).
      std::vector<std::string> names = GraphInputNames(model_bytes);
      for (size_t i = 0; i < inputs.size() && i < names.size(); ++i) {
        onnx::TensorProto proto;
        if (proto.ParseFromString(inputs[i]) &&
            (proto.data_type() == onnx::TensorProto::INT64 ||
             proto.data_type() == onnx::TensorProto::INT32 ||
             proto.dims_size() == 0 ||
             (proto.dims_size() == 1 && proto.dims(0) <= 8 &&
              proto.data_type() == onnx::TensorProto::FLOAT))) {
          options.constant_inputs[names[i]] = inputs[i];
          bound[i] = true;
        }
      }
      diagnostics.clear();
      bef = Compile(model_bytes, dir.string(), options, diagnostics);
    }
    if (!bef) {
      if (diagnostics.empty()) diagnostics = "does not import";
      // A model that imports but does not compile is our failure.
      return {compile_failed_ ? Outcome::kFail : Outcome::kSkip, diagnostics};
    }
    auto program = runtime_.LoadBef(*std::move(bef));
    if (!program.ok()) {
      return {Outcome::kFail, std::string(program.status().message())};
    }
    for (const fs::path& data_set : data_sets) {
      std::string failure = RunDataSet(**program, data_set, bound);
      if (!failure.empty()) {
        return {Outcome::kFail,
                absl::StrCat(data_set.filename().string(), ": ", failure)};
      }
    }
    return {Outcome::kPass, ""};
  }

 private:
  // Which graph inputs (not initializers) are bfloat16.
  static std::vector<bool> Bf16Inputs(const std::string& bytes) {
    onnx::ModelProto model;
    std::vector<bool> bf16;
    if (!model.ParseFromString(bytes)) return bf16;
    for (const auto& input : model.graph().input()) {
      bool initializer = false;
      for (const auto& init : model.graph().initializer()) {
        initializer |= init.name() == input.name();
      }
      if (initializer) continue;
      bf16.push_back(input.type().tensor_type().elem_type() ==
                     onnx::TensorProto::BFLOAT16);
    }
    return bf16;
  }

  static std::vector<std::string> GraphInputNames(const std::string& bytes) {
    onnx::ModelProto model;
    std::vector<std::string> names;
    if (!model.ParseFromString(bytes)) return names;
    std::vector<std::string> initializers;
    for (const auto& initializer : model.graph().initializer()) {
      initializers.push_back(initializer.name());
    }
    for (const auto& input : model.graph().input()) {
      if (std::find(initializers.begin(), initializers.end(), input.name()) ==
          initializers.end()) {
        names.push_back(input.name());
      }
    }
    return names;
  }

  std::optional<std::vector<uint8_t>> Compile(const std::string& bytes,
                                              const std::string& name,
                                              const OnnxImportOptions& options,
                                              std::string& diagnostics) {
    compile_failed_ = false;
    mlir::MLIRContext context(registry_,
                              mlir::MLIRContext::Threading::DISABLED);
    mlir::ScopedDiagnosticHandler handler(&context,
                                          [&](mlir::Diagnostic& diagnostic) {
                                            if (diagnostics.empty())
                                              diagnostics = diagnostic.str();
                                            return mlir::success();
                                          });
    mlir::OwningOpRef<mlir::ModuleOp> module =
        ImportOnnxModel(bytes, name, &context, options);
    if (!module) return std::nullopt;
    compile_failed_ = true;
    mlir::FailureOr<std::vector<uint8_t>> bef =
        compiler::CompileModelToBef(*module);
    if (mlir::failed(bef)) return std::nullopt;
    compile_failed_ = false;
    return *std::move(bef);
  }

  std::string RunDataSet(const BefProgram& program, const fs::path& data_set,
                         const std::vector<bool>& bound) {
    CoreRuntime& core = runtime_.core_runtime();
    HostAllocator& allocator = *runtime_.host().allocator();
    std::vector<std::string> inputs = ReadIndexed(data_set, "input");
    std::vector<std::string> outputs = ReadIndexed(data_set, "output");
    std::vector<AsyncValueRef<TensorHandle>> arguments;
    std::vector<AsyncValue*> argument_values;
    for (size_t i = 0; i < inputs.size(); ++i) {
      if (i < bound.size() && bound[i]) continue;
      auto tensor = ParseOnnxTensor(inputs[i], allocator);
      if (!tensor.ok()) {
        return absl::StrCat("input ", i, ": ", tensor.status().message());
      }
      if (tensor->dtype() == DType::kUI16 && i < bf16_inputs_.size() &&
          bf16_inputs_[i]) {
        // ONNX 1.12's test data stores bfloat16 tensors as uint16.
        *tensor = DenseHostTensor(TensorMetadata(DType::kBF16, tensor->shape()),
                                  tensor->buffer().CopyRef());
      }
      arguments.push_back(MakeAvailableAsyncValueRef<TensorHandle>(
          core.MakeTensorHandle(*std::move(tensor))));
      argument_values.push_back(arguments.back().GetAsyncValue());
    }
    auto results = runtime_.Call(program, "main", argument_values);
    if (!results.ok()) return std::string(results.status().message());
    runtime_.Await(*results);
    if (results->size() != outputs.size()) {
      return absl::StrCat(results->size(), " results, expected ",
                          outputs.size());
    }
    for (size_t i = 0; i < outputs.size(); ++i) {
      AsyncValue* result = (*results)[i].get();
      if (result->IsError()) {
        return absl::StrCat("output ", i, ": ", result->GetError().message());
      }
      const Tensor* tensor = core.Await(result->get<TensorHandle>());
      if (tensor == nullptr) {
        return absl::StrCat(
            "output ", i, ": ",
            result->get<TensorHandle>().GetErrorIfPresent()->message());
      }
      if (tensor->tensor_type() != DenseHostTensorType()) {
        return absl::StrCat("output ", i, " is not a dense host tensor");
      }
      auto expected = ParseOnnxTensor(outputs[i], allocator);
      if (!expected.ok()) {
        return absl::StrCat("expected output ", i, ": ",
                            expected.status().message());
      }
      if (expected->dtype() == DType::kUI16 &&
          tensor->dtype() == DType::kBF16) {
        *expected =
            DenseHostTensor(TensorMetadata(DType::kBF16, expected->shape()),
                            expected->buffer().CopyRef());
      }
      double max_error = 0;
      std::string mismatch =
          Compare(*expected, static_cast<const DenseHostTensor&>(*tensor),
                  tolerance_, max_error);
      max_error_ = std::max(max_error_, max_error);
      if (!mismatch.empty()) return absl::StrCat("output ", i, ": ", mismatch);
    }
    return "";
  }

  Runtime& runtime_;
  mlir::DialectRegistry registry_;
  std::vector<bool> bf16_inputs_;
  Tolerance tolerance_;
  double max_error_ = 0;
  bool compile_failed_ = false;
};

int Main(int argc, char** argv) {
  std::string data = "/usr/share/libonnx-testdata/data";
  std::string report_path;
  std::string filter;
  std::string models;
  bool fail_on_skip = false;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (absl::StartsWith(arg, "--data=")) data = arg.substr(7);
    if (absl::StartsWith(arg, "--report=")) report_path = arg.substr(9);
    if (absl::StartsWith(arg, "--filter=")) filter = arg.substr(9);
    if (absl::StartsWith(arg, "--models=")) models = arg.substr(9);
    if (arg == "--fail-on-skip") fail_on_skip = true;
  }
  if (models.empty() && !fs::is_directory(data)) {
    std::fprintf(stderr,
                 "onnx_backend_test: no test data at %s (apt install "
                 "libonnx-testdata)\n",
                 data.c_str());
    return 1;
  }
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  options.diagnostic_handler = [](const DecodedDiagnostic&) {};
  auto runtime = Runtime::Create(options);
  if (!runtime.ok()) {
    std::fprintf(stderr, "%s\n",
                 std::string(runtime.status().message()).c_str());
    return 1;
  }
  Tolerance tolerance;
  std::vector<std::pair<std::string, fs::path>> suites;
  if (!models.empty()) {
    // Exported models (tools/models/export_models.py) against PyTorch.
    tolerance = {/*rtol=*/1e-4, /*atol=*/1e-4, /*atol_relative_to_max=*/true};
    suites.emplace_back("models", models);
  } else {
    for (const char* suite :
         {"node", "pytorch-converted", "pytorch-operator", "simple"}) {
      suites.emplace_back(suite, fs::path(data) / suite);
    }
  }
  BackendRunner runner(**runtime, tolerance);
  std::string report;
  std::map<std::string, std::array<int, 3>> counts;  // pass, skip, fail
  int failures = 0;
  int known_count = 0;
  for (const auto& [suite, suite_dir] : suites) {
    if (!fs::is_directory(suite_dir)) continue;
    std::vector<fs::path> tests;
    for (const auto& entry : fs::directory_iterator(suite_dir)) {
      if (fs::exists(entry.path() / "model.onnx"))
        tests.push_back(entry.path());
    }
    std::sort(tests.begin(), tests.end());
    for (const fs::path& test : tests) {
      std::string name = absl::StrCat(suite, "/", test.filename().string());
      if (!filter.empty() && !absl::StrContains(name, filter)) continue;
      Outcome outcome = runner.Run(test);
      if (fail_on_skip && outcome.kind == Outcome::kSkip) {
        outcome.kind = Outcome::kFail;  // Every test must import.
      }
      if (auto known = KnownDifferences().find(name);
          outcome.kind == Outcome::kFail && known != KnownDifferences().end()) {
        absl::StrAppend(&report, "KNOWN ", name, ": ", known->second, " (",
                        outcome.reason, ")\n");
        ++known_count;
        continue;
      }
      static const char* kKinds[] = {"PASS", "SKIP", "FAIL"};
      std::string line = absl::StrCat(kKinds[outcome.kind], " ", name);
      if (outcome.kind == Outcome::kPass && !models.empty()) {
        absl::StrAppend(&line, ": max error ", runner.max_error(),
                        " of the largest output magnitude");
        std::printf("%s\n", line.c_str());
      }
      if (!outcome.reason.empty()) {
        std::string reason = outcome.reason;
        std::replace(reason.begin(), reason.end(), '\n', ' ');
        absl::StrAppend(&line, ": ", reason);
      }
      absl::StrAppend(&report, line, "\n");
      ++counts[suite][outcome.kind];
      if (outcome.kind == Outcome::kFail) {
        ++failures;
        std::printf("%s\n", line.c_str());
      }
    }
  }
  for (const auto& [suite, count] : counts) {
    std::printf("%s: %d passed, %d skipped, %d failed\n", suite.c_str(),
                count[0], count[1], count[2]);
  }
  std::printf("%d known differences (see the report)\n", known_count);
  if (!report_path.empty()) {
    std::ofstream(report_path) << report;
    std::printf("report: %s\n", report_path.c_str());
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace asyncrt

int main(int argc, char** argv) { return asyncrt::Main(argc, argv); }
