// The optimizing trace compiler: traces become nn-dialect programs (ops the
// dialect lacks as nn.runtime_op), fused by the model pipeline, with the
// replayed trace's results.
#include <cstring>
#include <string>
#include <vector>

#include "asyncrt/lazy/lazy_tensor.h"
#include "asyncrt/lazy/trace.h"
#include "asyncrt/runtime/runtime.h"
#include "compiler/lazy/trace_compiler.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::lazy {
namespace {

using ::testing::HasSubstr;

Trace AddThenRelu() {
  Trace trace;
  trace.device = "CPU:0";
  trace.parameters = {TensorMetadata(DType::kF32, {3})};
  trace.ops.push_back(
      TraceOp{"tfrt_test.add",
              OpAttrsRef(),
              {{TraceRef::kParameter, 0}, {TraceRef::kParameter, 0}},
              {TensorMetadata(DType::kF32, {3})}});
  trace.ops.push_back(TraceOp{
      "nn.relu", OpAttrsRef(), {{0, 0}}, {TensorMetadata(DType::kF32, {3})}});
  trace.outputs = {{1, 0}};
  return trace;
}

TEST(LazyCompilerTest, IsRegisteredWhenLinked) {
  EXPECT_EQ(GetTraceCompiler(), &CompileTrace);
}

TEST(LazyCompilerTest, OpsOutsideTheDialectAreRuntimeOps) {
  absl::StatusOr<std::string> text = PrintTrace(AddThenRelu());
  ASSERT_TRUE(text.ok()) << text.status();
  EXPECT_THAT(*text, HasSubstr("nn.runtime_op"));
  EXPECT_THAT(*text, HasSubstr("op_name = \"tfrt_test.add\""));
  EXPECT_THAT(*text, HasSubstr("nn.relu"));
  EXPECT_TRUE(CompileTrace(AddThenRelu()).ok());
}

TEST(LazyCompilerTest, ElementwiseChainsFuse) {
  Trace trace;
  trace.device = "CPU:0";
  TensorMetadata vector(DType::kF32, {16});
  trace.parameters = {vector, vector};
  trace.ops.push_back(
      TraceOp{"nn.mul",
              OpAttrsRef(),
              {{TraceRef::kParameter, 0}, {TraceRef::kParameter, 1}},
              {vector}});
  trace.ops.push_back(TraceOp{"nn.tanh", OpAttrsRef(), {{0, 0}}, {vector}});
  trace.outputs = {{1, 0}};
  absl::StatusOr<std::vector<uint8_t>> bef = CompileTrace(trace);
  ASSERT_TRUE(bef.ok()) << bef.status();
  std::string bytes(bef->begin(), bef->end());
  // (The ops' names stay in their locations: "lazy op 1 nn.tanh".)
  EXPECT_THAT(bytes, HasSubstr("nn.fused_elementwise"));
}

TEST(LazyCompilerTest, BadTracesAreErrors) {
  Trace trace = AddThenRelu();
  trace.ops[1].results = {TensorMetadata(DType::kF32, {4})};  // Wrong shape.
  absl::StatusOr<std::vector<uint8_t>> bef = CompileTrace(trace);
  ASSERT_FALSE(bef.ok());
  EXPECT_THAT(bef.status().message(), HasSubstr("does not verify"));
}

// The same loop compiled and replayed: bitwise the same values (fusing and
// planning change no arithmetic), one compilation each.
TEST(LazyCompilerTest, CompiledEqualsReplayed) {
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  auto runtime = *Runtime::Create(options);
  auto run = [&](bool compile) {
    auto lazy = *LazyContext::Create(*runtime, LazyOptions{.compile = compile});
    std::optional<DenseHostTensor> input = DenseHostTensor::CreateUninitialized(
        TensorMetadata(DType::kF32, {1000}), *runtime->host().allocator());
    for (int i = 0; i < 1000; ++i) {
      input->elements<float>()[i] = 0.01f * static_cast<float>(i - 500);
    }
    LazyTensor x = *lazy->FromHost(*std::move(input));
    LazyTensor h = *lazy->Call("nn.exp", {x});
    for (int step = 0; step < 3; ++step) {
      h = *lazy->Call("nn.mul", {h, x});
      h = *lazy->Call("nn.sigmoid", {h});
      h = *lazy->Call("nn.sub", {h, x});
      EXPECT_TRUE(lazy->Barrier().ok());
    }
    std::vector<float> values(1000);
    DenseHostTensor result = *h.ToHost();
    std::memcpy(values.data(), result.data(), 4000);
    EXPECT_EQ(lazy->cache_stats().misses, 2);  // exp(x) fused in once.
    return values;
  };
  std::vector<float> compiled = run(true);
  std::vector<float> replayed = run(false);
  EXPECT_EQ(std::memcmp(compiled.data(), replayed.data(), 4000), 0);
  runtime->Quiesce();
}

}  // namespace
}  // namespace asyncrt::lazy
