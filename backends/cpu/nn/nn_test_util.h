// Test-only: the eager fixtures the nn op tests share. A runtime with a CPU
// op handler, and Run() for ops on f32 tensors (EagerOpTest) or on tensors
// of any fixed-size dtype (AnyDTypeOpTest).
#ifndef ASYNCRT_BACKENDS_CPU_NN_NN_TEST_UTIL_H_
#define ASYNCRT_BACKENDS_CPU_NN_NN_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/tensor/conversion_registry.h"
#include "gtest/gtest.h"

namespace asyncrt::nn {

struct Tensor32 {
  std::vector<int64_t> shape;
  std::vector<float> values;
};

// `count` floats uniform in [-1, 1) from seed `seed`.
inline std::vector<float> RandomFloats(size_t count, unsigned seed) {
  std::mt19937 generator(seed);
  std::uniform_real_distribution<float> distribution(-1.0f, 1.0f);
  std::vector<float> values(count);
  for (float& value : values) value = distribution(generator);
  return values;
}

// Handles (move-only) as one argument list.
template <typename... Handles>
std::vector<TensorHandle> Args(Handles... handles) {
  std::vector<TensorHandle> args;
  (args.push_back(std::move(handles)), ...);
  return args;
}

class EagerOpTest : public ::testing::Test {
 protected:
  void SetUp() override {
    RuntimeOptions options;
    options.work_queue = "mstd:2";
    runtime_ = *Runtime::Create(options);
    core_ = &runtime_->core_runtime();
    cpu_ = core_->GetOpHandler("cpu");
    ASSERT_NE(cpu_, nullptr);
    exec_ctx_.emplace(*runtime_->CreateExecutionContext());
  }

  // Runs `op` eagerly on f32 tensors; the result, or the error as a status.
  // Arguments whose bit is set in `read_only` get read-only buffers, as a
  // model's constants (weights) have.
  absl::StatusOr<Tensor32> Run(const std::string& op,
                               const std::vector<Tensor32>& args,
                               const OpAttrs& attrs = OpAttrs(),
                               uint64_t read_only = 0) {
    std::vector<TensorHandle> handles;
    for (size_t i = 0; i < args.size(); ++i) {
      absl::StatusOr<TensorHandle> handle = Handle(args[i], read_only >> i & 1);
      if (!handle.ok()) return handle.status();
      handles.push_back(*std::move(handle));
    }
    return Read(Execute(op, std::move(handles), attrs));
  }

  // A handle of a dense f32 tensor holding `arg`.
  absl::StatusOr<TensorHandle> Handle(const Tensor32& arg,
                                      bool read_only = false) {
    auto tensor = DenseHostTensor::CreateUninitialized(
        TensorMetadata(DType::kF32, arg.shape), *runtime_->host().allocator());
    if (!tensor) return absl::ResourceExhaustedError("out of memory");
    std::copy(arg.values.begin(), arg.values.end(),
              tensor->elements<float>().begin());
    if (read_only) tensor->buffer()->MarkReadOnly();
    return core_->MakeTensorHandle(*std::move(tensor));
  }

  // Issues `op` on `args` (given up to the op, as a program's last use).
  TensorHandle Execute(const std::string& op, std::vector<TensorHandle> args,
                       const OpAttrs& attrs = OpAttrs()) {
    TensorHandle result;
    core_->Execute(*exec_ctx_, op, cpu_, absl::MakeSpan(args), attrs.Freeze(),
                   absl::MakeSpan(&result, 1), nullptr);
    return result;
  }

  // `x` itself through an identity 1x1 convolution whose result stays in
  // oneDNN's layout: channel-blocked (aBcd16b under AVX-512) with
  // `compute_layout` "blocked", else oneDNN's choice (nhwc, acdb).
  TensorHandle InOneDnnLayout(const Tensor32& x,
                              const std::string& compute_layout = "blocked") {
    const int64_t channels = x.shape[1];
    std::vector<float> identity(channels * channels, 0.0f);
    for (int64_t c = 0; c < channels; ++c) identity[c * channels + c] = 1.0f;
    OpAttrs attrs;
    attrs.SetString("result_layout", "onednn");
    if (!compute_layout.empty()) {
      attrs.SetString("compute_layout", compute_layout);
    }
    std::vector<TensorHandle> args;
    absl::StatusOr<TensorHandle> input = Handle(x);
    absl::StatusOr<TensorHandle> weights =
        Handle({{channels, channels, 1, 1}, identity}, /*read_only=*/true);
    EXPECT_TRUE(input.ok() && weights.ok());
    if (!input.ok() || !weights.ok()) return TensorHandle();
    args.push_back(*std::move(input));
    args.push_back(*std::move(weights));
    TensorHandle result = Execute("nn.conv", std::move(args), attrs);
    const Tensor* tensor = core_->Await(result);
    EXPECT_NE(tensor, nullptr);
    if (tensor != nullptr) {
      EXPECT_EQ(std::string(tensor->tensor_type().name()), "OneDnnHost");
    }
    return result;
  }

  // The f32 values of `handle` once computed (a tensor of another type is
  // converted to a dense one first), or its error.
  absl::StatusOr<Tensor32> Read(const TensorHandle& handle) {
    const Tensor* tensor = core_->Await(handle);
    if (tensor == nullptr) return *handle.GetErrorIfPresent();
    RCReference<AsyncValue> converted;
    if (tensor->tensor_type() != DenseHostTensorType()) {
      Device& host = runtime_->host().host_device();
      converted =
          ConvertTensor(*tensor, host, host, DenseHostTensorType(), *exec_ctx_);
      if (converted->IsError()) return converted->GetError();
      tensor = &converted->get<DenseHostTensor>();
    }
    const auto& dense = static_cast<const DenseHostTensor&>(*tensor);
    Tensor32 out;
    auto dims = dense.shape().GetDimensions();
    out.shape.assign(dims.begin(), dims.end());
    auto elements = dense.elements<float>();
    out.values.assign(elements.begin(), elements.end());
    return out;
  }

  std::unique_ptr<Runtime> runtime_;
  CoreRuntime* core_ = nullptr;
  OpHandler* cpu_ = nullptr;
  std::optional<ExecutionContext> exec_ctx_;
};

// A tensor of any fixed-size dtype, as bytes.
struct AnyTensor {
  DType dtype = DType::kInvalid;
  std::vector<int64_t> shape;
  std::vector<char> bytes;

  template <typename T>
  std::vector<T> values() const {
    EXPECT_EQ(dtype, GetDType<T>());
    std::vector<T> out(bytes.size() / sizeof(T));
    for (size_t i = 0; i < out.size(); ++i) {
      T value;
      std::memcpy(&value, bytes.data() + i * sizeof(T), sizeof(T));
      out[i] = value;
    }
    return out;
  }
};

template <typename T>
AnyTensor Make(std::vector<int64_t> shape, std::initializer_list<T> values) {
  AnyTensor tensor{GetDType<T>(), std::move(shape), {}};
  for (T value : values) {
    const char* p = reinterpret_cast<const char*>(&value);
    tensor.bytes.insert(tensor.bytes.end(), p, p + sizeof(T));
  }
  return tensor;
}
inline AnyTensor F32(std::vector<int64_t> shape,
                     std::initializer_list<float> values) {
  return Make<float>(std::move(shape), values);
}
inline AnyTensor I64(std::vector<int64_t> shape,
                     std::initializer_list<int64_t> values) {
  return Make<int64_t>(std::move(shape), values);
}
inline AnyTensor I32(std::vector<int64_t> shape,
                     std::initializer_list<int32_t> values) {
  return Make<int32_t>(std::move(shape), values);
}
inline AnyTensor Bool(std::vector<int64_t> shape,
                      std::initializer_list<bool> values) {
  return Make<bool>(std::move(shape), values);
}
// 0, 1, ..., n - 1 as f32 or i64.
inline AnyTensor IotaF32(std::vector<int64_t> shape) {
  AnyTensor t{DType::kF32, shape, {}};
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  for (int64_t i = 0; i < n; ++i) {
    float v = static_cast<float>(i);
    t.bytes.insert(t.bytes.end(), reinterpret_cast<char*>(&v),
                   reinterpret_cast<char*>(&v) + sizeof(v));
  }
  return t;
}

// EagerOpTest for ops on tensors of any fixed-size dtype, with any number
// of results.
class AnyDTypeOpTest : public EagerOpTest {
 protected:
  TensorHandle Handle(const AnyTensor& t) {
    auto tensor = DenseHostTensor::CreateUninitialized(
        TensorMetadata(t.dtype, t.shape),
        *core_->GetHostContext()->allocator());
    EXPECT_TRUE(tensor.has_value());
    EXPECT_EQ(tensor->DataSizeInBytes(), t.bytes.size());
    if (!t.bytes.empty()) {
      std::memcpy(tensor->data(), t.bytes.data(), t.bytes.size());
    }
    return core_->MakeTensorHandle(*std::move(tensor));
  }

  // Runs `op` eagerly with `num_results` results; the results, or the
  // first error as a status.
  absl::StatusOr<std::vector<AnyTensor>> RunN(
      const std::string& op, const std::vector<AnyTensor>& args,
      const OpAttrs& attrs, size_t num_results) {
    std::vector<TensorHandle> handles;
    for (const AnyTensor& arg : args) handles.push_back(Handle(arg));
    std::vector<TensorHandle> results(num_results);
    core_->Execute(*exec_ctx_, op, cpu_, absl::MakeSpan(handles),
                   attrs.Freeze(), absl::MakeSpan(results), nullptr);
    std::vector<AnyTensor> out;
    for (TensorHandle& result : results) {
      const Tensor* tensor = core_->Await(result);
      if (tensor == nullptr) return *result.GetErrorIfPresent();
      const auto& dense = static_cast<const DenseHostTensor&>(*tensor);
      // The handle's metadata (from the shape function) matches the tensor.
      EXPECT_EQ(result.GetAvailableMetadata(), dense.metadata());
      AnyTensor t{dense.dtype(),
                  std::vector<int64_t>(dense.shape().GetDimensions().begin(),
                                       dense.shape().GetDimensions().end()),
                  {}};
      const char* data = static_cast<const char*>(dense.data());
      t.bytes.assign(data, data + dense.DataSizeInBytes());
      out.push_back(std::move(t));
    }
    return out;
  }

  absl::StatusOr<AnyTensor> Run(const std::string& op,
                                const std::vector<AnyTensor>& args,
                                const OpAttrs& attrs = OpAttrs()) {
    auto results = RunN(op, args, attrs, 1);
    if (!results.ok()) return results.status();
    return (*results)[0];
  }

  // The error message of `op`, which must fail.
  std::string Error(const std::string& op, const std::vector<AnyTensor>& args,
                    const OpAttrs& attrs = OpAttrs(), size_t num_results = 1) {
    auto results = RunN(op, args, attrs, num_results);
    EXPECT_FALSE(results.ok()) << op << " succeeded";
    return results.ok() ? "" : std::string(results.status().message());
  }
};

inline OpAttrs Ints(const std::string& name,
                    std::initializer_list<int64_t> values) {
  OpAttrs attrs;
  attrs.SetArray<int64_t>(name, values);
  return attrs;
}
inline OpAttrs Int(const std::string& name, int64_t value) {
  OpAttrs attrs;
  attrs.Set(name, value);
  return attrs;
}

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_CPU_NN_NN_TEST_UTIL_H_
