// Test-only: the eager fixture the nn op tests share. A runtime with a CPU
// op handler, and Run() for ops on f32 tensors.
#ifndef ASYNCRT_BACKENDS_CPU_NN_NN_TEST_UTIL_H_
#define ASYNCRT_BACKENDS_CPU_NN_NN_TEST_UTIL_H_

#include <algorithm>
#include <cstdint>
#include <memory>
#include <optional>
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

  // The f32 values of `handle` once computed (a tensor of another type is
  // converted to a dense one first), or its error.
  absl::StatusOr<Tensor32> Read(const TensorHandle& handle) {
    const Tensor* tensor = core_->Await(handle);
    if (tensor == nullptr) return *handle.GetErrorIfPresent();
    RCReference<AsyncValue> converted;
    if (tensor->tensor_type() != DenseHostTensorType()) {
      Device& host = runtime_->host().host_device();
      converted = ConvertTensor(*tensor, host, host, DenseHostTensorType(),
                                *exec_ctx_);
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

}  // namespace asyncrt::nn

#endif  // ASYNCRT_BACKENDS_CPU_NN_NN_TEST_UTIL_H_
