#include "asyncrt/lazy/lazy_tensor.h"

#include <cmath>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <thread>
#include <vector>

#include "absl/strings/str_cat.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/lazy/trace.h"
#include "asyncrt/runtime/runtime.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace asyncrt::lazy {
namespace {

using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

std::unique_ptr<Runtime> MakeRuntime(bool with_sim = false) {
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  options.device_plugins_from_environment = false;
#ifdef SIM_PLUGIN
  if (with_sim) options.device_plugins = {SIM_PLUGIN};
#endif
  absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
  EXPECT_TRUE(runtime.ok()) << runtime.status();
  return *std::move(runtime);
}

DenseHostTensor Floats(Runtime& runtime, std::vector<int64_t> shape,
                       std::vector<float> values) {
  std::optional<DenseHostTensor> tensor = DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF32, shape), *runtime.host().allocator());
  std::memcpy(tensor->data(), values.data(), values.size() * sizeof(float));
  return *std::move(tensor);
}

std::vector<float> Values(const DenseHostTensor& tensor) {
  auto elements = tensor.elements<float>();
  return std::vector<float>(elements.begin(), elements.end());
}

class LazyTensorTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = MakeRuntime();
    lazy_ = *LazyContext::Create(*runtime_);
  }
  void TearDown() override {
    lazy_.reset();
    runtime_->Quiesce();
  }

  LazyTensor FromHost(std::vector<int64_t> shape, std::vector<float> values) {
    return *lazy_->FromHost(Floats(*runtime_, shape, values));
  }

  // The same op run eagerly through the core runtime, for comparison.
  struct Arg {
    std::vector<int64_t> shape;
    std::vector<float> values;
  };
  std::vector<float> Eager(absl::string_view op, std::vector<Arg> args,
                           const OpAttrs& attrs = {}) {
    CoreRuntime& core = runtime_->core_runtime();
    std::vector<TensorHandle> handles;
    for (Arg& arg : args) {
      handles.push_back(
          core.MakeTensorHandle(Floats(*runtime_, arg.shape, arg.values)));
    }
    TensorHandle result;
    absl::StatusOr<ExecutionContext> ctx = runtime_->CreateExecutionContext();
    core.Execute(*ctx, op, core.GetOpHandler("cpu"), absl::MakeSpan(handles),
                 attrs.Freeze(), absl::MakeSpan(&result, 1), nullptr);
    const Tensor* tensor = core.Await(result);
    EXPECT_NE(tensor, nullptr);
    return Values(static_cast<const DenseHostTensor&>(*tensor));
  }

  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<LazyContext> lazy_;
};

TEST_F(LazyTensorTest, RecordsWithShapesAndRunsWhenRead) {
  LazyTensor x = FromHost({2, 2}, {1, -2, 3, -4});
  LazyTensor y = *lazy_->Call("nn.relu", {x});
  LazyTensor z = *lazy_->Call("nn.add", {y, x});
  EXPECT_EQ(z.dtype(), DType::kF32);
  EXPECT_EQ(z.shape(), TensorShape({2, 2}));
  EXPECT_EQ(z.device(), "CPU:0");
  EXPECT_TRUE(x.IsMaterialized());
  EXPECT_FALSE(z.IsMaterialized());
  EXPECT_EQ(lazy_->cache_stats().misses, 0);

  absl::StatusOr<DenseHostTensor> result = z.ToHost();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(*result), ElementsAreArray({2.f, -2.f, 6.f, -4.f}));
  EXPECT_TRUE(z.IsMaterialized());
  EXPECT_EQ(lazy_->cache_stats().misses, 1);
}

TEST_F(LazyTensorTest, ResultsEqualEagerBitwise) {
  std::vector<float> a = {0.1f, 0.7f, -1.3f, 2.5f, 3.25f, -0.01f};
  std::vector<float> b = {1.1f, -0.2f, 0.3f, 4.5f, -2.f, 9.f};
  LazyTensor x = FromHost({2, 3}, a);
  LazyTensor w = FromHost({3, 2}, b);
  LazyTensor s = *lazy_->Call("nn.sigmoid", {x});
  LazyTensor m = *lazy_->Call("nn.mul", {s, x});
  LazyTensor p = *lazy_->Call("nn.matmul", {m, w});
  std::vector<float> lazy_result = Values(*p.ToHost());

  std::vector<float> s_eager = Eager("nn.sigmoid", {{{2, 3}, a}});
  std::vector<float> m_eager =
      Eager("nn.mul", {{{2, 3}, s_eager}, {{2, 3}, a}});
  std::vector<float> p_eager =
      Eager("nn.matmul", {{{2, 3}, m_eager}, {{3, 2}, b}});
  ASSERT_EQ(lazy_result.size(), p_eager.size());
  for (size_t i = 0; i < p_eager.size(); ++i) {
    EXPECT_EQ(std::memcmp(&lazy_result[i], &p_eager[i], sizeof(float)), 0)
        << i << ": " << lazy_result[i] << " vs " << p_eager[i];
  }
}

TEST_F(LazyTensorTest, ErrorsAtTheCall) {
  LazyTensor a = FromHost({2, 3}, {1, 2, 3, 4, 5, 6});
  LazyTensor b = FromHost({4}, {1, 2, 3, 4});
  absl::StatusOr<LazyTensor> bad = lazy_->Call("nn.add", {a, b});
  ASSERT_FALSE(bad.ok());
  EXPECT_THAT(bad.status().message(), HasSubstr("nn.add"));

  absl::StatusOr<LazyTensor> unknown = lazy_->Call("nn.no_such_op", {a});
  EXPECT_EQ(unknown.status().code(), absl::StatusCode::kNotFound);

  absl::StatusOr<LazyTensor> invalid = lazy_->Call("nn.relu", {LazyTensor()});
  EXPECT_EQ(invalid.status().code(), absl::StatusCode::kInvalidArgument);

  auto other = *LazyContext::Create(*runtime_);
  LazyTensor foreign = *other->FromHost(Floats(*runtime_, {4}, {1, 2, 3, 4}));
  absl::StatusOr<LazyTensor> mixed = lazy_->Call("nn.add", {b, foreign});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(), HasSubstr("another LazyContext"));
  // Nothing was compiled for any of them.
  EXPECT_EQ(lazy_->cache_stats().misses, 0);
}

TEST_F(LazyTensorTest, BarrierInALoopKeepsOneCachedTrace) {
  LazyTensor x = FromHost({4}, {1, 2, 3, 4});
  // Not `h = x`: add(x, x) has one parameter, add(h, x) two, and a trace
  // is its structure.
  LazyTensor h = FromHost({4}, {0, 0, 0, 0});
  for (int step = 0; step < 10; ++step) {
    h = *lazy_->Call("nn.add", {h, x});
    h = *lazy_->Call("nn.relu", {h});
    ASSERT_TRUE(lazy_->Barrier().ok());
  }
  EXPECT_THAT(Values(*h.ToHost()), ElementsAreArray({10.f, 20.f, 30.f, 40.f}));
  LazyCacheStats stats = lazy_->cache_stats();
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.hits, 9);
  EXPECT_EQ(stats.entries, 1);
  EXPECT_GT(stats.compile_time, absl::ZeroDuration());
}

// A loop body's trace matches the previous one as it is recorded: it
// runs the same program with no key built, on each step's own values.
TEST_F(LazyTensorTest, RepeatedTracesRunWithoutAKey) {
  LazyTensor h = FromHost({2}, {0, 0});
  for (int step = 1; step <= 6; ++step) {
    LazyTensor x = FromHost({2}, {float(step), -float(step)});
    h = *lazy_->Call("nn.add", {h, x});
    h = *lazy_->Call("nn.relu", {h});
    ASSERT_TRUE(lazy_->Barrier().ok());
    const float sum = step * (step + 1) / 2.0f;
    EXPECT_THAT(Values(*h.ToHost()), ElementsAreArray({sum, 0.f})) << step;
  }
  LazyCacheStats stats = lazy_->cache_stats();
  EXPECT_EQ(stats.misses, 1);
  EXPECT_EQ(stats.hits, 5);
  EXPECT_EQ(stats.repeats, 5);
}

// A trace that stops matching its template partway (another op, another
// shape, one value where the template read two, other outputs) takes the
// full path and computes what it recorded; one that matches with other
// values bound to the template's parameters runs its program.
TEST_F(LazyTensorTest, TracesThatDifferFromTheLastRunTheFullPath) {
  LazyTensor x = FromHost({2}, {1, -2});
  LazyTensor y = FromHost({2}, {10, 20});
  LazyTensor z = FromHost({3}, {1, 2, 3});
  LazyTensor w = FromHost({3}, {-5, 5, -5});
  // The sum is a temporary: only the second op's result is an output.
  auto step = [&](const char* second_op, const LazyTensor& a,
                  const LazyTensor& b) {
    LazyTensor result =
        *lazy_->Call(second_op, {*lazy_->Call("nn.add", {a, b})});
    EXPECT_TRUE(lazy_->Barrier().ok());
    return Values(*result.ToHost());
  };
  EXPECT_THAT(step("nn.neg", x, y), ElementsAreArray({-11.f, -18.f}));
  EXPECT_THAT(step("nn.neg", y, x), ElementsAreArray({-11.f, -18.f}));
  EXPECT_THAT(step("nn.relu", x, y), ElementsAreArray({11.f, 18.f}));
  EXPECT_THAT(step("nn.relu", x, x), ElementsAreArray({2.f, 0.f}));
  EXPECT_THAT(step("nn.relu", z, z), ElementsAreArray({2.f, 4.f, 6.f}));
  EXPECT_THAT(step("nn.relu", z, w), ElementsAreArray({0.f, 7.f, 0.f}));
  EXPECT_THAT(step("nn.relu", w, z), ElementsAreArray({0.f, 7.f, 0.f}));
  // The same ops, but the sum is kept too: another output.
  LazyTensor sum = *lazy_->Call("nn.add", {z, w});
  LazyTensor relu = *lazy_->Call("nn.relu", {sum});
  ASSERT_TRUE(lazy_->Barrier().ok());
  EXPECT_THAT(Values(*sum.ToHost()), ElementsAreArray({-4.f, 7.f, -2.f}));
  EXPECT_THAT(Values(*relu.ToHost()), ElementsAreArray({0.f, 7.f, 0.f}));
  LazyCacheStats stats = lazy_->cache_stats();
  // Repeats: neg(y+x), relu(x+x) (the template's two parameters bound to
  // one value), relu(w+z).
  EXPECT_EQ(stats.repeats, 3);
  // Misses: neg, relu, the [3] shape, z+w after z+z (two values where the
  // template read one twice), two outputs.
  EXPECT_EQ(stats.misses, 5);
}

// A barrier runs the ops its own thread recorded; another thread's pending
// values are computed when read, or at their thread's barrier.
TEST_F(LazyTensorTest, ABarrierRunsItsOwnThreadsOps) {
  LazyTensor x = FromHost({2}, {1, -1});
  LazyTensor y = *lazy_->Call("nn.neg", {x});
  std::thread other([&] {
    LazyTensor z = *lazy_->Call("nn.relu", {x});
    ASSERT_TRUE(lazy_->Barrier().ok());
    EXPECT_TRUE(z.IsMaterialized());
    EXPECT_FALSE(y.IsMaterialized());  // The main thread's.
    EXPECT_THAT(Values(*y.ToHost()), ElementsAreArray({-1.f, 1.f}));
  });
  other.join();
  EXPECT_TRUE(y.IsMaterialized());  // Read by the other thread.
  LazyTensor w = *lazy_->Call("nn.abs", {y});
  ASSERT_TRUE(lazy_->Barrier().ok());
  EXPECT_TRUE(w.IsMaterialized());
  EXPECT_THAT(Values(*w.ToHost()), ElementsAreArray({1.f, 1.f}));
}

// Tensors keep what they need of their context: the context's last
// barrier computes what they hold.
TEST_F(LazyTensorTest, TensorsOutliveTheirContext) {
  LazyTensor x = FromHost({2}, {1, -1});
  LazyTensor y = *lazy_->Call("nn.neg", {x});
  LazyTensor z = *lazy_->Call("nn.relu", {y});
  lazy_.reset();
  EXPECT_TRUE(z.IsMaterialized());
  EXPECT_THAT(Values(*z.ToHost()), ElementsAreArray({0.f, 1.f}));
  EXPECT_THAT(Values(*y.ToHost()), ElementsAreArray({-1.f, 1.f}));
  EXPECT_THAT(Values(*x.ToHost()), ElementsAreArray({1.f, -1.f}));
}

TEST_F(LazyTensorTest, ShapeOrDtypeChangeCompilesANewEntry) {
  auto run = [&](LazyTensor x) {
    LazyTensor y = *lazy_->Call("nn.neg", {x});
    ASSERT_TRUE(y.ToHost().ok());
  };
  run(FromHost({2}, {1, 2}));
  run(FromHost({2}, {5, 6}));  // Same structure: a hit.
  run(FromHost({3}, {1, 2, 3}));
  std::optional<DenseHostTensor> f64 = DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF64, {2}), *runtime_->host().allocator());
  std::memset(f64->data(), 0, f64->DataSizeInBytes());
  run(*lazy_->FromHost(*std::move(f64)));
  LazyCacheStats stats = lazy_->cache_stats();
  EXPECT_EQ(stats.misses, 3);
  EXPECT_EQ(stats.hits, 1);
}

TEST_F(LazyTensorTest, AttributesArePartOfTheKey) {
  LazyTensor x = FromHost({2, 3}, {1, 2, 3, 4, 5, 6});
  auto transposed = [&](std::vector<int64_t> perm) {
    OpAttrs attrs;
    attrs.SetArray<int64_t>("perm", perm);
    return Values(*lazy_->Call("nn.transpose", {x}, attrs)->ToHost());
  };
  EXPECT_THAT(transposed({1, 0}),
              ElementsAreArray({1.f, 4.f, 2.f, 5.f, 3.f, 6.f}));
  EXPECT_THAT(transposed({0, 1}),
              ElementsAreArray({1.f, 2.f, 3.f, 4.f, 5.f, 6.f}));
  EXPECT_EQ(lazy_->cache_stats().misses, 2);
}

// A variadic op with another operand count is another trace, even where
// the operand refs alone could line up.
TEST_F(LazyTensorTest, OperandCountIsPartOfTheKey) {
  LazyTensor x = FromHost({2}, {1, 2});
  LazyTensor y = FromHost({2}, {3, 4});
  OpAttrs axis;
  axis.Set("axis", int64_t{0});
  auto concat = [&](std::vector<LazyTensor> args) {
    return Values(*lazy_->Call("nn.concat", args, axis)->ToHost());
  };
  EXPECT_THAT(concat({x, y}), ElementsAreArray({1.f, 2.f, 3.f, 4.f}));
  EXPECT_THAT(concat({x, y, x}),
              ElementsAreArray({1.f, 2.f, 3.f, 4.f, 1.f, 2.f}));
  EXPECT_THAT(concat({x, y}), ElementsAreArray({1.f, 2.f, 3.f, 4.f}));
  EXPECT_EQ(lazy_->cache_stats().misses, 2);
  EXPECT_EQ(lazy_->cache_stats().hits, 1);
}

TEST_F(LazyTensorTest, LeastRecentlyUsedTraceIsEvicted) {
  lazy_ = *LazyContext::Create(*runtime_, LazyOptions{.cache_capacity = 2});
  LazyTensor x = FromHost({2}, {1, -1});
  for (const char* op : {"nn.relu", "nn.neg", "nn.abs", "nn.relu"}) {
    ASSERT_TRUE(lazy_->Call(op, {x})->ToHost().ok());
  }
  LazyCacheStats stats = lazy_->cache_stats();
  EXPECT_EQ(stats.misses, 4);  // relu was evicted by abs.
  EXPECT_EQ(stats.evictions, 2);
  EXPECT_EQ(stats.entries, 2);
}

TEST_F(LazyTensorTest, ToHostRunsOnlyWhatItNeeds) {
  LazyTensor x = FromHost({2}, {1, -1});
  LazyTensor a = *lazy_->Call("nn.relu", {x});
  LazyTensor b = *lazy_->Call("nn.neg", {x});
  ASSERT_TRUE(a.ToHost().ok());
  EXPECT_TRUE(a.IsMaterialized());
  EXPECT_FALSE(b.IsMaterialized());
  ASSERT_TRUE(lazy_->Barrier().ok());
  EXPECT_TRUE(b.IsMaterialized());
  EXPECT_THAT(Values(*b.ToHost()), ElementsAreArray({-1.f, 1.f}));
}

TEST_F(LazyTensorTest, SizeLimitRunsTheTrace) {
  lazy_ = *LazyContext::Create(*runtime_, LazyOptions{.max_trace_ops = 4});
  LazyTensor x = FromHost({1}, {1});
  LazyTensor h = x;
  std::vector<LazyTensor> kept;
  for (int i = 0; i < 9; ++i) {
    h = *lazy_->Call("nn.add", {h, x});
    kept.push_back(h);
  }
  // Barriers ran after the 4th and the 8th op.
  EXPECT_TRUE(kept[3].IsMaterialized());
  EXPECT_TRUE(kept[7].IsMaterialized());
  EXPECT_FALSE(kept[8].IsMaterialized());
  EXPECT_EQ(lazy_->cache_stats().misses + lazy_->cache_stats().hits, 2);
  EXPECT_THAT(Values(*h.ToHost()), ElementsAreArray({10.f}));
}

TEST_F(LazyTensorTest, OpsOutsideTheDialectRunInsideTheProgram) {
  LazyTensor x = FromHost({3}, {1, -2, 3});
  // tfrt_test.add has a shape function but no nn dialect op.
  LazyTensor y = *lazy_->Call("tfrt_test.add", {x, x});
  LazyTensor z = *lazy_->Call("nn.relu", {y});
  EXPECT_THAT(Values(*z.ToHost()), ElementsAreArray({2.f, 0.f, 6.f}));
  EXPECT_EQ(lazy_->cache_stats().misses, 1);  // One program for both.
}

TEST_F(LazyTensorTest, ComputationErrorsArriveWhenRead) {
  LazyTensor data = FromHost({3}, {1, 2, 3});
  std::optional<DenseHostTensor> indices = DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kI64, {1}), *runtime_->host().allocator());
  indices->elements<int64_t>()[0] = 7;  // Out of range: known only at run time.
  LazyTensor index = *lazy_->FromHost(*std::move(indices));
  absl::StatusOr<LazyTensor> gathered = lazy_->Call("nn.gather", {data, index});
  ASSERT_TRUE(gathered.ok()) << gathered.status();
  LazyTensor after = *lazy_->Call("nn.relu", {*gathered});
  absl::StatusOr<DenseHostTensor> result = after.ToHost();
  ASSERT_FALSE(result.ok());
  EXPECT_THAT(result.status().message(), HasSubstr("7"));
}

TEST_F(LazyTensorTest, ReducedPrecision) {
  LazyTensor x = FromHost({3}, {1.0f, 1.00390625f, 3.14159f});
  LazyTensor r = *x.ToReducedPrecision();
  EXPECT_TRUE(r.IsReducedPrecision());
  EXPECT_EQ(r.dtype(), DType::kF32);
  EXPECT_FALSE(x.IsReducedPrecision());

  absl::StatusOr<LazyTensor> mixed = lazy_->Call("nn.add", {r, x});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(), HasSubstr("precision"));

  LazyTensor sum = *lazy_->Call("nn.add", {r, r});
  EXPECT_TRUE(sum.IsReducedPrecision());
  absl::StatusOr<DenseHostTensor> host = sum.ToHost();
  ASSERT_TRUE(host.ok()) << host.status();
  EXPECT_EQ(host->dtype(), DType::kF32);
  // bf16 keeps 8 bits of mantissa: 1.00390625 rounds to 1, pi to 3.140625.
  EXPECT_THAT(Values(*host), ElementsAreArray({2.f, 2.f, 6.28125f}));

  LazyTensor full = *sum.ToFullPrecision();
  EXPECT_FALSE(full.IsReducedPrecision());
  EXPECT_TRUE(lazy_->Call("nn.add", {full, x}).ok());

  std::optional<DenseHostTensor> ints = DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kI32, {1}), *runtime_->host().allocator());
  ints->elements<int32_t>()[0] = 1;
  LazyTensor i = *lazy_->FromHost(*std::move(ints));
  EXPECT_EQ(i.ToReducedPrecision().status().code(),
            absl::StatusCode::kInvalidArgument);

  absl::StatusOr<std::vector<LazyTensor>> all = ToReducedPrecision({x, full});
  ASSERT_TRUE(all.ok());
  EXPECT_TRUE((*all)[0].IsReducedPrecision() && (*all)[1].IsReducedPrecision());
  EXPECT_FALSE(ToReducedPrecision({x, i}).ok());
}

// A trace the compiler cannot take is replayed, not lost.
TEST_F(LazyTensorTest, TracesTheCompilerRefusesAreReplayed) {
  const TraceCompilerFn registered = GetTraceCompiler();
  RegisterTraceCompiler(
      [](const Trace&) -> absl::StatusOr<std::vector<uint8_t>> {
        return absl::InvalidArgumentError("this compiler takes nothing");
      });
  LazyTensor x = FromHost({2}, {1, -1});
  LazyTensor y = *lazy_->Call("nn.relu", {x});
  absl::StatusOr<DenseHostTensor> result = y.ToHost();
  RegisterTraceCompiler(registered);
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(*result), ElementsAreArray({1.f, 0.f}));
  EXPECT_EQ(lazy_->cache_stats().replayed, 1);
}

// Compilations and cache hits show in the Chrome trace.
TEST(LazyTraceEventsTest, CompilationsAndHitsAreTraced) {
  const std::string path =
      absl::StrCat(::testing::TempDir(), "/lazy_trace.json");
  RuntimeOptions options;
  options.work_queue = "s";
  options.device_plugins_from_environment = false;
  options.trace_file = path;
  auto runtime = *Runtime::Create(options);
  {
    auto lazy = *LazyContext::Create(*runtime);
    for (int i = 0; i < 2; ++i) {
      LazyTensor x = *lazy->FromHost(Floats(*runtime, {2}, {1, 2}));
      ASSERT_TRUE(lazy->Call("nn.neg", {x})->ToHost().ok());
    }
  }
  ASSERT_TRUE(runtime->FinishTrace().ok());
  std::ifstream file(path);
  std::string text((std::istreambuf_iterator<char>(file)),
                   std::istreambuf_iterator<char>());
  EXPECT_THAT(text, HasSubstr("LazyCompile#ops=1#"));
  EXPECT_THAT(text, HasSubstr("LazyCacheHit"));
}

// Threads recording into one context at once, each with its own loop and
// barriers; run under ThreadSanitizer by `make test`.
TEST_F(LazyTensorTest, ThreadsRecordConcurrently) {
  constexpr int kThreads = 4;
  std::vector<std::vector<float>> results(kThreads);
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&, t] {
      LazyTensor x =
          *lazy_->FromHost(Floats(*runtime_, {2}, {float(t), float(-t)}));
      LazyTensor h = x;
      for (int step = 0; step < 20; ++step) {
        h = *lazy_->Call("nn.add", {h, x});
        if (step % 5 == 4) {
          ASSERT_TRUE(lazy_->Barrier().ok());
        }
      }
      results[t] = Values(*h.ToHost());
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int t = 0; t < kThreads; ++t) {
    EXPECT_THAT(results[t], ElementsAreArray({21.f * t, -21.f * t})) << t;
  }
  // Traces repeat across threads: far fewer compilations than barriers.
  EXPECT_LE(lazy_->cache_stats().misses, 8);
}

// Threads race to compute the same pending values (each read runs the
// trace unless another thread's run got there first) while another thread
// records and barriers; every read sees the right values.
TEST_F(LazyTensorTest, ThreadsRaceToComputeSharedValues) {
  for (int round = 0; round < 20; ++round) {
    LazyTensor x = FromHost({64}, std::vector<float>(64, 1.0f));
    LazyTensor y = *lazy_->Call("nn.add", {x, x});
    LazyTensor z = *lazy_->Call("nn.mul", {y, y});
    std::vector<std::thread> threads;
    std::vector<float> seen(4);
    for (int t = 0; t < 4; ++t) {
      threads.emplace_back([&, t] {
        absl::StatusOr<DenseHostTensor> host = (t % 2 ? z : y).ToHost();
        seen[t] = host.ok() ? host->elements<float>()[63] : -1;
      });
    }
    threads.emplace_back([&] {
      LazyTensor w = *lazy_->Call("nn.neg", {z});
      EXPECT_TRUE(lazy_->Barrier().ok());
      EXPECT_TRUE(w.Await().ok());
    });
    for (std::thread& thread : threads) thread.join();
    EXPECT_EQ(seen[0], 2.0f);
    EXPECT_EQ(seen[1], 4.0f);
    EXPECT_EQ(seen[2], 2.0f);
    EXPECT_EQ(seen[3], 4.0f);
  }
}

#ifdef SIM_PLUGIN
class LazyDeviceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    runtime_ = MakeRuntime(/*with_sim=*/true);
    lazy_ = *LazyContext::Create(*runtime_);
  }
  void TearDown() override {
    lazy_.reset();
    runtime_->Quiesce();
  }
  std::unique_ptr<Runtime> runtime_;
  std::unique_ptr<LazyContext> lazy_;
};

TEST_F(LazyDeviceTest, TracesRunOnTheTensorsDevice) {
  LazyTensor x =
      *lazy_->FromHost(Floats(*runtime_, {2, 2}, {1, -2, 3, -4}), "SIM:0");
  EXPECT_EQ(x.device(), "SIM:0");
  LazyTensor y = *lazy_->Call("nn.relu", {x});
  LazyTensor z = *lazy_->Call("nn.add", {y, x});
  EXPECT_EQ(z.device(), "SIM:0");
  absl::StatusOr<DenseHostTensor> result = z.ToHost();
  ASSERT_TRUE(result.ok()) << result.status();
  EXPECT_THAT(Values(*result), ElementsAreArray({2.f, -2.f, 6.f, -4.f}));
}

TEST_F(LazyDeviceTest, DevicesNeverMix) {
  LazyTensor on_cpu = *lazy_->FromHost(Floats(*runtime_, {2}, {1, 2}));
  LazyTensor on_sim = *lazy_->FromHost(Floats(*runtime_, {2}, {3, 4}), "SIM:0");
  absl::StatusOr<LazyTensor> mixed = lazy_->Call("nn.add", {on_cpu, on_sim});
  ASSERT_FALSE(mixed.ok());
  EXPECT_THAT(mixed.status().message(), HasSubstr("CPU:0"));
  EXPECT_THAT(mixed.status().message(), HasSubstr("SIM:0"));

  LazyTensor moved = *lazy_->Call("nn.relu", {on_cpu})->CopyTo("SIM:0");
  EXPECT_EQ(moved.device(), "SIM:0");
  LazyTensor sum = *lazy_->Call("nn.add", {moved, on_sim});
  EXPECT_THAT(Values(*sum.ToHost()), ElementsAreArray({4.f, 6.f}));

  absl::StatusOr<std::vector<LazyTensor>> both =
      CopyTo({on_cpu, on_sim}, "CPU:0");
  ASSERT_TRUE(both.ok());
  EXPECT_EQ((*both)[0].device(), "CPU:0");
  EXPECT_EQ((*both)[1].device(), "CPU:0");
  EXPECT_EQ(on_cpu.CopyTo("NOPE:3").status().code(),
            absl::StatusCode::kNotFound);
  // An op the device lacks is an error when recorded.
  absl::StatusOr<LazyTensor> missing = lazy_->Call("nn.sigmoid", {on_sim});
  ASSERT_FALSE(missing.ok());
  EXPECT_THAT(missing.status().message(), HasSubstr("SIM:0"));
}
#endif  // SIM_PLUGIN

}  // namespace
}  // namespace asyncrt::lazy
