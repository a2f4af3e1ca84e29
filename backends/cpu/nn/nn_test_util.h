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
      const Tensor32& arg = args[i];
      auto tensor = DenseHostTensor::CreateUninitialized(
          TensorMetadata(DType::kF32, arg.shape),
          *runtime_->host().allocator());
      if (!tensor) return absl::ResourceExhaustedError("out of memory");
      std::copy(arg.values.begin(), arg.values.end(),
                tensor->elements<float>().begin());
      if (read_only >> i & 1) tensor->buffer()->MarkReadOnly();
      handles.push_back(core_->MakeTensorHandle(*std::move(tensor)));
    }
    TensorHandle result;
    core_->Execute(*exec_ctx_, op, cpu_, absl::MakeSpan(handles),
                   attrs.Freeze(), absl::MakeSpan(&result, 1), nullptr);
    const Tensor* tensor = core_->Await(result);
    if (tensor == nullptr) return *result.GetErrorIfPresent();
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
