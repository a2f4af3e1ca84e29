// Every op the CUDA plug-in runs, called thousands of times with random
// operands (ranks 0-4, empty dimensions, every dtype, too few or too many)
// and random attributes (values out of range, unknown strings, arrays of
// any length): each call must either compute or fail with an error that
// names the op, never crash or hang, and every byte of device memory must
// come back. Most calls are refused (by the shared shape functions or by
// the plug-in); enough are valid to reach the kernels' own checks.
//
// Built where CUDA is; ctest runs it against the fake CUDA runtime
// (fake_cuda/: the host side's checks, launches doing nothing), so it runs
// on machines without a GPU (20,000 calls in half a second). The calls
// learn from the errors: an op's arity ("takes 2 arguments") and its
// required attributes ("attribute `axes` ... is required"), so that later
// calls get past those checks to deeper ones. ASYNCRT_RANDOM_OPS_TRIALS
// (default 20000) and ASYNCRT_RANDOM_OPS_SEED (default 1) change the run;
// ASYNCRT_RANDOM_OPS_SHOW_ERRORS=1 prints every error.
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/runtime/runtime.h"
#include "gtest/gtest.h"
#include "testing/device_test_util.h"

namespace asyncrt {
namespace {

int64_t EnvInt(const char* name, int64_t fallback) {
  const char* text = std::getenv(name);
  int64_t value = 0;
  return text != nullptr && absl::SimpleAtoi(text, &value) ? value : fallback;
}

std::string PluginPath() {
  const char* path = std::getenv("ASYNCRT_CUDA_PLUGIN");
  return path != nullptr ? path : CUDA_PLUGIN;
}

class RandomOpsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const OpEntry* relu = OpRegistry::Global().Find("nn.relu");
    if (relu == nullptr || relu->metadata_fn == nullptr) {
      GTEST_SKIP() << "the nn.* op library (oneDNN) is not linked";
    }
    RuntimeOptions options;
    options.work_queue = "mstd:2";
    options.device_plugins = {PluginPath()};
    options.device_plugins_from_environment = false;
    absl::StatusOr<std::unique_ptr<Runtime>> runtime = Runtime::Create(options);
    if (!runtime.ok() &&
        absl::StrContains(runtime.status().message(), "no CUDA GPU")) {
      GTEST_SKIP() << "no GPU here (the CUDA plug-in says: "
                   << runtime.status().message() << ")";
    }
    ASSERT_TRUE(runtime.ok()) << runtime.status();
    runtime_ = *std::move(runtime);
    exec_ctx_.emplace(*runtime_->CreateExecutionContext());
    gpu_ = runtime_->host().device_manager().GetDevice("CUDA:0").get();
    ASSERT_NE(gpu_, nullptr);
  }

  void TearDown() override {
    if (!runtime_) return;
    exec_ctx_.reset();
    runtime_->Quiesce();
    auto* device = AsStreamDevice(gpu_);
    testing::DrainDevice(runtime_->host(), *device);
    EXPECT_EQ(device->allocator().GetStats().live_bytes, 0);
  }

  CoreRuntime& core() { return runtime_->core_runtime(); }

  TensorHandle Run(absl::string_view op, absl::string_view handler,
                   std::vector<TensorHandle> args, const OpAttrs& attrs) {
    TensorHandle result;
    OpAttrs frozen = attrs;
    core().Execute(*exec_ctx_, op, core().GetOpHandler(handler),
                   absl::MakeSpan(args), frozen.Freeze(),
                   absl::MakeSpan(&result, 1), nullptr);
    return result;
  }

  // A random tensor of `dtype` and `shape` on CUDA:0 (made in f32 on the
  // host, cast there, copied).
  TensorHandle Operand(DType dtype, const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::uniform_real_distribution<float> value(-3.f, 6.f);
    std::vector<float> values(n);
    for (float& v : values) v = std::round(value(rng_) * 4) / 4;
    TensorHandle x = *core().MakeDenseTensorHandle<float>(shape, values);
    if (dtype != DType::kF32) {
      OpAttrs to;
      to.Set("to", dtype);
      std::vector<TensorHandle> args;
      args.push_back(std::move(x));
      x = Run("nn.cast", "cpu", std::move(args), to);
    }
    return x.TransferTo(*exec_ctx_, *gpu_);
  }

  DType RandomDType() {
    static constexpr DType kDTypes[] = {DType::kF32,  DType::kF32, DType::kF16,
                                        DType::kBF16, DType::kI32, DType::kI64,
                                        DType::kI1};
    return kDTypes[Pick(std::size(kDTypes))];
  }

  std::vector<int64_t> RandomShape() {
    static constexpr int64_t kDims[] = {1, 2, 3, 4, 8, 1, 2, 0};
    std::vector<int64_t> shape(Pick(5));
    for (int64_t& d : shape) d = kDims[Pick(std::size(kDims) - (Pick(8) != 0))];
    return shape;
  }

  std::vector<int64_t> RandomInts() {
    std::vector<int64_t> values(Pick(6));
    for (int64_t& v : values) v = static_cast<int64_t>(Pick(10)) - 3;
    return values;
  }

  // Up to four attributes from the ones the ops and their shape functions
  // read, each with a value that may or may not make sense.
  OpAttrs RandomAttrs() {
    static const char* const kInts[] = {"axis",
                                        "group",
                                        "keepdims",
                                        "ceil_mode",
                                        "transA",
                                        "transB",
                                        "is_causal",
                                        "count_include_pad",
                                        "q_num_heads",
                                        "kv_num_heads",
                                        "noop_with_empty_axes"};
    static const char* const kArrays[] = {
        "axes",   "perm", "pads",  "kernel_shape", "strides",   "dilations",
        "starts", "ends", "steps", "shape",        "qkv_widths"};
    static const char* const kFloats[] = {"alpha", "beta", "epsilon",
                                          "scale", "min",  "max"};
    static const std::pair<const char*, std::vector<const char*>> kStrings[] = {
        {"data_format", {"NCHW", "NHWC", "NCW"}},
        {"activation", {"relu", "gelu", "sigmoid", "none", "cube"}},
        {"auto_pad", {"NOTSET", "SAME_UPPER", "VALID", "ELSEWHERE"}},
        {"result_layout", {"plain", "onednn", "tiled"}}};
    OpAttrs attrs;
    for (int i = 0, n = Pick(5); i < n; ++i) {
      switch (Pick(5)) {
        case 0:
          attrs.Set<int64_t>(kInts[Pick(std::size(kInts))],
                             static_cast<int64_t>(Pick(9)) - 4);
          break;
        case 1:
          attrs.SetArray<int64_t>(kArrays[Pick(std::size(kArrays))],
                                  RandomInts());
          break;
        case 2:
          attrs.Set<float>(kFloats[Pick(std::size(kFloats))],
                           std::uniform_real_distribution<float>(-2, 2)(rng_));
          break;
        case 3: {
          const auto& [name, values] = kStrings[Pick(std::size(kStrings))];
          attrs.SetString(name, values[Pick(values.size())]);
          break;
        }
        default:
          attrs.Set("to", RandomDType());
      }
    }
    return attrs;
  }

  // Operands and attributes shaped as `op` takes them (small random
  // sizes, now and then an empty one, optional operands and options
  // drawn), for the ops whose operands must agree in several dimensions;
  // false for the others.
  bool Shaped(const std::string& op, std::vector<std::vector<int64_t>>* shapes,
              OpAttrs* attrs) {
    auto size = [&] {
      return static_cast<int64_t>(Pick(16) == 0 ? 0 : 1 + Pick(4));
    };
    const int64_t n = size(), c = 1 + Pick(4), h = 2 + Pick(5), w = 2 + Pick(5);
    const bool nhwc = Pick(4) == 0;
    if (nhwc) attrs->SetString("data_format", "NHWC");
    auto image = [&](int64_t channels) {
      return nhwc ? std::vector<int64_t>{n, h, w, channels}
                  : std::vector<int64_t>{n, channels, h, w};
    };
    const int64_t k = 1 + Pick(3), stride = 1 + Pick(2), pad = Pick(2);
    if (op == "nn.conv") {
      const int64_t group = 1 + Pick(2), out = group * (1 + Pick(3));
      shapes->push_back(image(group * c));
      shapes->push_back(nhwc ? std::vector<int64_t>{out, k, k, c}
                             : std::vector<int64_t>{out, c, k, k});
      if (Pick(2) == 0) shapes->push_back({out});
      attrs->Set<int64_t>("group", group);
      attrs->SetArray<int64_t>("kernel_shape", {k, k});
      attrs->SetArray<int64_t>("strides", {stride, stride});
      attrs->SetArray<int64_t>("pads", {pad, pad, pad, pad});
      attrs->SetArray<int64_t>("dilations", {1 + Pick(2), 1});
      static const char* const kActivations[] = {"none", "relu", "clip",
                                                 "sigmoid", "swish"};
      attrs->SetString("activation", kActivations[Pick(5)]);
      return true;
    }
    if (op == "nn.max_pool" || op == "nn.average_pool") {
      shapes->push_back(image(c));
      attrs->SetArray<int64_t>("kernel_shape", {k, k});
      attrs->SetArray<int64_t>("strides", {stride, stride});
      attrs->SetArray<int64_t>("pads", {pad, pad, pad, pad});
      attrs->Set<int64_t>("ceil_mode", Pick(2));
      attrs->Set<int64_t>("count_include_pad", Pick(2));
      return true;
    }
    if (op == "nn.batch_normalization") {
      shapes->push_back(image(c));
      for (int i = 0; i < 4; ++i) shapes->push_back({c});
      attrs->Set<float>("epsilon", 1e-5f);
      return true;
    }
    const int64_t m = size(), inner = size(), cols = 1 + Pick(5);
    if (op == "nn.matmul") {
      shapes->push_back(Pick(2) ? std::vector<int64_t>{m, inner}
                                : std::vector<int64_t>{c, m, inner});
      shapes->push_back({inner, cols});
      if (Pick(3) == 0) shapes->push_back({cols});
      if (Pick(2) == 0)
        attrs->SetString("activation", Pick(2) ? "relu" : "gelu");
      return true;
    }
    if (op == "nn.gemm") {
      const bool ta = Pick(2), tb = Pick(2);
      shapes->push_back(ta ? std::vector<int64_t>{inner, m}
                           : std::vector<int64_t>{m, inner});
      shapes->push_back(tb ? std::vector<int64_t>{cols, inner}
                           : std::vector<int64_t>{inner, cols});
      if (Pick(2) == 0) {
        shapes->push_back(Pick(2) ? std::vector<int64_t>{cols}
                                  : std::vector<int64_t>{m, cols});
      }
      attrs->Set<int64_t>("transA", ta);
      attrs->Set<int64_t>("transB", tb);
      return true;
    }
    if (op == "nn.attention") {
      const int64_t kv_heads = 1 + Pick(2), heads = kv_heads * (1 + Pick(2));
      const int64_t head = 2 * (1 + Pick(4)), keys = size();
      attrs->Set<int64_t>("q_num_heads", heads);
      attrs->Set<int64_t>("kv_num_heads", kv_heads);
      if (Pick(4) == 0) {
        shapes->push_back({n, m, (heads + 2 * kv_heads) * head});
        attrs->SetArray<int64_t>(
            "qkv_widths", {heads * head, kv_heads * head, kv_heads * head});
        return true;
      }
      shapes->push_back({n, m, heads * head});
      shapes->push_back({n, keys, kv_heads * head});
      shapes->push_back({n, keys, kv_heads * head});
      if (Pick(3) == 0) attrs->Set<int64_t>("is_causal", 1);
      return true;
    }
    if (op == "nn.layer_normalization") {
      shapes->push_back({m, c, cols});
      shapes->push_back({cols});
      if (Pick(2) == 0) shapes->push_back({cols});
      attrs->Set<int64_t>("axis", -1);
      return true;
    }
    return false;
  }

  size_t Pick(size_t n) {
    return std::uniform_int_distribution<size_t>(0, n - 1)(rng_);
  }

  std::mt19937_64 rng_{
      static_cast<uint64_t>(EnvInt("ASYNCRT_RANDOM_OPS_SEED", 1))};
  std::unique_ptr<Runtime> runtime_;
  std::optional<ExecutionContext> exec_ctx_;
  Device* gpu_ = nullptr;
};

TEST_F(RandomOpsTest, EveryCallComputesOrFailsNamingTheOp) {
  const std::vector<std::string> ops = OpRegistry::Global().OpNamesFor("cuda");
  ASSERT_GT(ops.size(), 30u) << absl::StrJoin(ops, ", ");
  const int64_t trials = EnvInt("ASYNCRT_RANDOM_OPS_TRIALS", 20000);
  const bool show_errors = EnvInt("ASYNCRT_RANDOM_OPS_SHOW_ERRORS", 0) != 0;
  std::map<std::string, std::pair<int, int>> outcomes;  // op: ok, failed.
  // What an op's errors said it takes ("takes 2 arguments"): later calls
  // mostly pass that many, so that they reach the later checks.
  std::map<std::string, int> arity;
  // The attributes an op's errors said it requires ("attribute `axes` (an
  // integer array) is required"), by kind ('a' array, 'd' dtype, 'i' int):
  // later calls set them.
  std::map<std::string, std::map<std::string, char>> required;
  int computed = 0;
  for (int64_t trial = 0; trial < trials; ++trial) {
    const std::string& op = ops[Pick(ops.size())];
    // Half the calls take operands alike (same dtype and shape), which
    // elementwise ops and most others need; the rest anything.
    // Some calls of ops with a shape of their own take operands so shaped.
    const bool alike = Pick(2) == 0;
    const DType dtype = alike && Pick(3) != 0 ? DType::kF32 : RandomDType();
    const std::vector<int64_t> shape = RandomShape();
    OpAttrs attrs = RandomAttrs();
    std::vector<std::vector<int64_t>> shaped;
    const bool use_shaped = Pick(3) != 0 && Shaped(op, &shaped, &attrs);
    const DType shaped_dtype = Pick(4) == 0 ? DType::kF16 : DType::kF32;
    std::vector<TensorHandle> args;
    std::vector<std::string> described;
    const auto known = arity.find(op);
    const int count = use_shaped ? static_cast<int>(shaped.size())
                      : known != arity.end() && Pick(4) != 0
                          ? known->second
                          : 1 + static_cast<int>(Pick(alike ? 3 : 5));
    for (int i = 0; i < count; ++i) {
      const DType arg_dtype = use_shaped ? shaped_dtype
                              : alike    ? dtype
                                         : RandomDType();
      const std::vector<int64_t> arg_shape = use_shaped ? shaped[i]
                                             : alike    ? shape
                                                        : RandomShape();
      described.push_back(absl::StrCat(DTypeName(arg_dtype), "[",
                                       absl::StrJoin(arg_shape, "x"), "]"));
      args.push_back(Operand(arg_dtype, arg_shape));
    }
    for (const auto& [name, kind] : required[op]) {
      if (kind == 'a') {
        std::vector<int64_t> values =
            name == "shape" ? RandomShape() : RandomInts();
        attrs.SetArray<int64_t>(name, values);
      } else if (kind == 'd') {
        attrs.Set(name, RandomDType());
      } else {
        attrs.Set<int64_t>(name, static_cast<int64_t>(Pick(7)) - 3);
      }
    }
    SCOPED_TRACE(absl::StrCat("trial ", trial, ": ", op, "(",
                              absl::StrJoin(described, ", "), ")"));
    TensorHandle result = Run(op, "cuda", std::move(args), attrs);
    core().Await(result);
    if (const absl::Status* error = result.GetErrorIfPresent()) {
      ++outcomes[op].second;
      const absl::string_view message = error->message();
      EXPECT_TRUE(absl::StrContains(message, op)) << *error;
      if (show_errors) std::printf("%s\n", std::string(message).c_str());
      if (const size_t at = message.find("attribute `");
          at != absl::string_view::npos &&
          absl::StrContains(message, "required")) {
        const size_t begin = at + 11, end = message.find('`', begin);
        if (end != absl::string_view::npos) {
          required[op][std::string(message.substr(begin, end - begin))] =
              absl::StrContains(message, "array")   ? 'a'
              : absl::StrContains(message, "dtype") ? 'd'
                                                    : 'i';
        }
      }
      const size_t takes = message.find(" takes ");
      int wanted = 0;
      if (takes != absl::string_view::npos &&
          absl::SimpleAtoi(message.substr(takes + 7, 1), &wanted)) {
        arity[op] = wanted;
      }
      continue;
    }
    ++outcomes[op].first;
    ++computed;
    EXPECT_EQ(result.device(), gpu_);
    // The result copies back to the host.
    TensorHandle back =
        result.TransferTo(*exec_ctx_, runtime_->host().host_device());
    ASSERT_NE(core().Await(back), nullptr) << back.DebugString();
  }
  std::string summary;
  for (const auto& [op, counts] : outcomes) {
    absl::StrAppend(&summary, op, " ", counts.first, "/",
                    counts.first + counts.second, " ");
  }
  std::printf("computed %d of %lld calls; per op (computed/called): %s\n",
              computed, static_cast<long long>(trials), summary.c_str());
  // Enough calls pass the checks to exercise the kernels' own.
  EXPECT_GT(computed, trials / 10);
}

}  // namespace
}  // namespace asyncrt
