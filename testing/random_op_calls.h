// Random calls of a device's ops, for tests that every call either
// computes or fails with an error naming the op: never a crash, a hang or
// a leak, whatever the operands (ranks 0-4, empty dimensions, every dtype,
// too few or too many) and attributes (values out of range, unknown
// strings, arrays of any length). The calls learn from the errors: an op's
// arity ("takes 2 arguments") and its required attributes ("attribute
// `axes` ... is required"), so that later calls get past those checks to
// deeper ones; and a third of the calls of the ops whose operands must
// agree in several dimensions (convolution, pooling, batch normalization,
// products, attention, layer normalization) take operands so shaped.
//
// Test-only, header-only. Thread-safety: one caller per thread.
#ifndef ASYNCRT_TESTING_RANDOM_OP_CALLS_H_
#define ASYNCRT_TESTING_RANDOM_OP_CALLS_H_

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <map>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "gtest/gtest.h"

namespace asyncrt::testing {

// A run's size and seed: ASYNCRT_RANDOM_OPS_TRIALS (default 20000),
// ASYNCRT_RANDOM_OPS_SEED (default 1); ASYNCRT_RANDOM_OPS_SHOW_ERRORS=1
// prints every error.
struct RandomOpCallSettings {
  int64_t trials = 20000;
  uint64_t seed = 1;
  bool show_errors = false;

  static RandomOpCallSettings FromEnvironment() {
    auto read = [](const char* name, int64_t fallback) {
      const char* text = std::getenv(name);
      int64_t value = 0;
      return text != nullptr && absl::SimpleAtoi(text, &value) ? value
                                                               : fallback;
    };
    return {read("ASYNCRT_RANDOM_OPS_TRIALS", 20000),
            static_cast<uint64_t>(read("ASYNCRT_RANDOM_OPS_SEED", 1)),
            read("ASYNCRT_RANDOM_OPS_SHOW_ERRORS", 0) != 0};
  }
};

class RandomOpCalls {
 public:
  // Calls go to `handler` ("cpu", "cuda", ...) and their operands live on
  // `device`, made on `host` (in f32, cast there) and copied.
  RandomOpCalls(CoreRuntime& core, const ExecutionContext& exec_ctx,
                Device& device, Device& host, std::string handler,
                uint64_t seed)
      : core_(core),
        exec_ctx_(exec_ctx),
        device_(device),
        host_(host),
        handler_(std::move(handler)),
        rng_(seed) {}

  // `trials` calls of ops drawn from `ops`, each checked with gtest's
  // EXPECTs (computed on `device`, copied back to the host; or an error
  // naming the op). With `show_errors`, prints every error.
  void Run(const std::vector<std::string>& ops, int64_t trials,
           bool show_errors) {
    for (int64_t trial = 0; trial < trials; ++trial) {
      const std::string& op = ops[Pick(ops.size())];
      // Half the calls take operands alike (same dtype and shape), which
      // elementwise ops and most others need, the rest anything; two
      // thirds of the calls of ops with a shape of their own take operands
      // so shaped.
      const bool alike = Pick(2) == 0;
      const DType dtype = alike && Pick(3) != 0 ? DType::kF32 : RandomDType();
      const std::vector<int64_t> shape = RandomShape();
      OpAttrs attrs = RandomAttrs();
      std::vector<std::vector<int64_t>> shaped;
      const bool use_shaped = Pick(3) != 0 && Shaped(op, &shaped, &attrs);
      const DType shaped_dtype = Pick(4) == 0 ? DType::kF16 : DType::kF32;
      std::vector<TensorHandle> args;
      std::vector<std::string> described;
      const auto known = arity_.find(op);
      const int count = use_shaped ? static_cast<int>(shaped.size())
                        : known != arity_.end() && Pick(4) != 0
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
      SetRequiredAttrs(op, &attrs);
      SCOPED_TRACE(absl::StrCat("trial ", trial, ": ", op, "(",
                                absl::StrJoin(described, ", "), ")"));
      TensorHandle result = Run(op, handler_, std::move(args), attrs);
      core_.Await(result);
      if (const absl::Status* error = result.GetErrorIfPresent()) {
        ++outcomes_[op].second;
        const absl::string_view message = error->message();
        EXPECT_TRUE(absl::StrContains(message, op)) << *error;
        if (show_errors) std::printf("%s\n", std::string(message).c_str());
        LearnFrom(op, message);
        continue;
      }
      ++outcomes_[op].first;
      ++computed_;
      EXPECT_EQ(result.device(), &device_);
      // The result copies back to the host.
      TensorHandle back = result.TransferTo(exec_ctx_, host_);
      ASSERT_NE(core_.Await(back), nullptr) << back.DebugString();
    }
  }

  // Calls that computed.
  int64_t computed() const { return computed_; }
  // Per op, "op computed/called".
  std::string Summary() const {
    std::string summary;
    for (const auto& [op, counts] : outcomes_) {
      absl::StrAppend(&summary, op, " ", counts.first, "/",
                      counts.first + counts.second, " ");
    }
    return summary;
  }

 private:
  TensorHandle Run(absl::string_view op, absl::string_view handler,
                   std::vector<TensorHandle> args, const OpAttrs& attrs) {
    TensorHandle result;
    OpAttrs frozen = attrs;
    core_.Execute(exec_ctx_, op, core_.GetOpHandler(handler),
                  absl::MakeSpan(args), frozen.Freeze(),
                  absl::MakeSpan(&result, 1), nullptr);
    return result;
  }

  // What an error says `op` needs: an arity ("takes 2 arguments") or a
  // required attribute ("attribute `axes` (an integer array) is
  // required"), for later calls.
  void LearnFrom(const std::string& op, absl::string_view message) {
    if (const size_t at = message.find("attribute `");
        at != absl::string_view::npos &&
        absl::StrContains(message, "required")) {
      const size_t begin = at + 11, end = message.find('`', begin);
      if (end != absl::string_view::npos) {
        required_[op][std::string(message.substr(begin, end - begin))] =
            absl::StrContains(message, "array")   ? 'a'
            : absl::StrContains(message, "dtype") ? 'd'
                                                  : 'i';
      }
    }
    const size_t takes = message.find(" takes ");
    int wanted = 0;
    if (takes != absl::string_view::npos &&
        absl::SimpleAtoi(message.substr(takes + 7, 1), &wanted)) {
      arity_[op] = wanted;
    }
  }

  // The attributes `op`'s errors said it requires, with random values.
  void SetRequiredAttrs(const std::string& op, OpAttrs* attrs) {
    for (const auto& [name, kind] : required_[op]) {
      if (kind == 'a') {
        attrs->SetArray<int64_t>(
            name, name == "shape" ? RandomShape() : RandomInts());
      } else if (kind == 'd') {
        attrs->Set(name, RandomDType());
      } else {
        attrs->Set<int64_t>(name, static_cast<int64_t>(Pick(7)) - 3);
      }
    }
  }

  // A random tensor of `dtype` and `shape` on the device (made in f32 on
  // the host, cast there, copied).
  TensorHandle Operand(DType dtype, const std::vector<int64_t>& shape) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::uniform_real_distribution<float> value(-3.f, 6.f);
    std::vector<float> values(n);
    for (float& v : values) v = std::round(value(rng_) * 4) / 4;
    TensorHandle x = *core_.MakeDenseTensorHandle<float>(shape, values);
    if (dtype != DType::kF32) {
      OpAttrs to;
      to.Set("to", dtype);
      std::vector<TensorHandle> args;
      args.push_back(std::move(x));
      x = Run("nn.cast", "cpu", std::move(args), to);
    }
    return &device_ == &host_ ? std::move(x) : x.TransferTo(exec_ctx_, device_);
  }

  DType RandomDType() {
    static constexpr DType kDTypes[] = {DType::kF32,  DType::kF32, DType::kF16,
                                        DType::kBF16, DType::kI32, DType::kI64,
                                        DType::kI1,   DType::kUI8, DType::kI8};
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
  // read, each with a value that may or may not make sense, now and then
  // of another type than the op reads.
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
        {"result_layout", {"plain", "onednn", "tiled"}},
        {"mode",
         {"nearest", "linear", "cubic", "constant", "reflect", "edge",
          "bilinear", "DCR", "CRD", "sideways"}},
        {"equation",
         {"ij,jk->ik", "bij,bjk->bik", "ii->i", "i,i", "...ij->...ji", "ij->",
          "a,b,c,d->", "->"}},
        {"direction", {"LEFT", "RIGHT", "UP"}},
        {"reduction", {"none", "mean", "sum", "max"}}};
    OpAttrs attrs;
    for (int i = 0, n = Pick(5); i < n; ++i) {
      switch (Pick(6)) {
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
        case 4:
          attrs.Set("to", RandomDType());
          break;
        default: {
          // A name the ops read, with a value of another type (an axis as
          // a string, a shape as a float, a dtype as an integer).
          static const char* const kAny[] = {
              "axis",  "perm", "shape", "to",   "pads",
              "alpha", "mode", "group", "axes", "activation"};
          const char* name = kAny[Pick(std::size(kAny))];
          switch (Pick(4)) {
            case 0:
              attrs.SetString(name, "3");
              break;
            case 1:
              attrs.Set<float>(name, 2.5f);
              break;
            case 2:
              attrs.Set<bool>(name, true);
              break;
            default:
              attrs.SetArray<float>(name, {1.f, -1.f});
          }
        }
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
    // A window op's operand: an image (channels first or last) or, now and
    // then, a volume N x C x D x H x W.
    const bool volume = !nhwc && Pick(4) == 0;
    const size_t spatial = volume ? 3 : 2;
    const int64_t depth = 1 + Pick(4);
    auto image = [&](int64_t channels) {
      if (nhwc) attrs->SetString("data_format", "NHWC");
      if (volume) return std::vector<int64_t>{n, channels, depth, h, w};
      return nhwc ? std::vector<int64_t>{n, h, w, channels}
                  : std::vector<int64_t>{n, channels, h, w};
    };
    const int64_t k = 1 + Pick(3), stride = 1 + Pick(2), pad = Pick(2);
    auto each = [&](int64_t value, size_t count) {
      return std::vector<int64_t>(count, value);
    };
    // Per spatial dimension; the first one drawn apart (dilated, padded
    // differently at the end).
    auto first_apart = [&](int64_t first, int64_t rest, size_t count) {
      std::vector<int64_t> values(count, rest);
      values[0] = first;
      return values;
    };
    if (op == "nn.conv") {
      const int64_t group = 1 + Pick(2), out = group * (1 + Pick(3));
      shapes->push_back(image(group * c));
      std::vector<int64_t> weights = {out, c};
      weights.insert(weights.end(), spatial, k);
      if (nhwc) weights = {out, k, k, c};
      shapes->push_back(weights);
      if (Pick(2) == 0) shapes->push_back({out});
      attrs->Set<int64_t>("group", group);
      attrs->SetArray<int64_t>("kernel_shape", each(k, spatial));
      attrs->SetArray<int64_t>("strides", each(stride, spatial));
      attrs->SetArray<int64_t>("pads", each(pad, 2 * spatial));
      attrs->SetArray<int64_t>("dilations",
                               first_apart(1 + Pick(2), 1, spatial));
      static const char* const kActivations[] = {"none", "relu", "clip",
                                                 "sigmoid", "swish"};
      attrs->SetString("activation", kActivations[Pick(5)]);
      return true;
    }
    if (op == "nn.conv_transpose") {
      const int64_t group = 1 + Pick(2), per_group = 1 + Pick(3);
      shapes->push_back(image(group * c));
      std::vector<int64_t> weights = {group * c, per_group};
      weights.insert(weights.end(), spatial, k);
      shapes->push_back(weights);
      if (Pick(2) == 0) shapes->push_back({group * per_group});
      attrs->Set<int64_t>("group", group);
      attrs->SetArray<int64_t>("strides", each(stride, spatial));
      attrs->SetArray<int64_t>("pads", first_apart(pad, Pick(2), 2 * spatial));
      attrs->SetArray<int64_t>(
          "output_padding", each(static_cast<int64_t>(Pick(stride)), spatial));
      attrs->SetArray<int64_t>("dilations",
                               first_apart(1 + Pick(2), 1, spatial));
      return true;
    }
    if (op == "nn.max_pool" || op == "nn.average_pool") {
      shapes->push_back(image(c));
      attrs->SetArray<int64_t>("kernel_shape", each(k, spatial));
      attrs->SetArray<int64_t>("strides", each(stride, spatial));
      attrs->SetArray<int64_t>("pads", first_apart(pad, Pick(2), 2 * spatial));
      if (Pick(4) == 0) {
        attrs->SetArray<int64_t>("dilations", first_apart(2, 1, spatial));
      }
      attrs->Set<int64_t>("ceil_mode", Pick(2));
      attrs->Set<int64_t>("count_include_pad", Pick(2));
      return true;
    }
    if (op == "nn.resize") {
      shapes->push_back(image(c));
      static const char* const kModes[] = {"nearest", "linear", "cubic"};
      static const char* const kTransforms[] = {
          "half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
          "tf_half_pixel_for_nn"};
      static const char* const kRoundings[] = {
          "round_prefer_floor", "round_prefer_ceil", "floor", "ceil"};
      const char* mode = kModes[Pick(3)];
      attrs->SetString("mode", mode);
      attrs->SetString("coordinate_transformation_mode",
                       kTransforms[Pick(std::size(kTransforms))]);
      attrs->SetString("nearest_mode", kRoundings[Pick(4)]);
      if (std::string(mode) == "cubic" && Pick(2) == 0) {
        attrs->Set<int64_t>("exclude_outside", 1);
      }
      // The batch and channel axes kept (as models resize), the others by
      // a scale or to a size.
      const size_t rank = shapes->back().size();
      static const float kScales[] = {0.5f, 1.f, 1.5f, 2.f, 3.f};
      std::vector<float> scales(rank, 1.f);
      std::vector<int64_t> sizes = shapes->back();
      for (size_t i = 2; i < rank; ++i) {
        scales[i] = kScales[Pick(std::size(kScales))];
        sizes[i] = 1 + Pick(9);
      }
      if (Pick(2) == 0) {
        attrs->SetArray<float>("scales", scales);
      } else {
        attrs->SetArray<int64_t>("sizes", sizes);
      }
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

  CoreRuntime& core_;
  const ExecutionContext& exec_ctx_;
  Device& device_;
  Device& host_;
  const std::string handler_;
  std::mt19937_64 rng_;
  int64_t computed_ = 0;
  std::map<std::string, std::pair<int, int>> outcomes_;  // op: ok, failed.
  // What an op's errors said it takes ("takes 2 arguments"): later calls
  // mostly pass that many, so that they reach the later checks.
  std::map<std::string, int> arity_;
  // The attributes an op's errors said it requires, by kind ('a' array,
  // 'd' dtype, 'i' int): later calls set them.
  std::map<std::string, std::map<std::string, char>> required_;
};

}  // namespace asyncrt::testing

#endif  // ASYNCRT_TESTING_RANDOM_OP_CALLS_H_
