// The fixture of the CUDA plug-in's op tests (cuda_plugin_test.cc,
// cuda_window_ops_test.cc): a runtime with CUDA:0 (CudaRuntimeTest), and
// helpers that run an op on the CPU and on the GPU on the same inputs and
// compare the results within a tolerance per dtype.
//
// Test-only, header-only.
#ifndef ASYNCRT_BACKENDS_GPU_CUDA_OP_TEST_H_
#define ASYNCRT_BACKENDS_GPU_CUDA_OP_TEST_H_

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/core_runtime/core_runtime.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/runtime/runtime.h"
#include "backends/gpu/cuda_runtime_test.h"
#include "gtest/gtest.h"

namespace asyncrt::testing {

template <typename... Handles>
std::vector<TensorHandle> Args(Handles&&... handles) {
  std::vector<TensorHandle> args;
  (args.push_back(std::forward<Handles>(handles)), ...);
  return args;
}

class CudaPluginTest : public CudaRuntimeTest {
 protected:
  Device& FindDevice(absl::string_view name) {
    absl::StatusOr<RCReference<Device>> device =
        runtime_->host().device_manager().FindDevice(name);
    EXPECT_TRUE(device.ok()) << device.status();
    return **device;
  }
  CoreRuntime& core() { return runtime_->core_runtime(); }
  Device& host() { return runtime_->host().host_device(); }
  // False against the fake CUDA runtime (cuda_plugin_test.host_only), whose
  // launches do nothing: there a test checks the host side alone.
  bool KernelsRun() const {
    return !absl::StrContains(gpu_->physical_description(), "host only");
  }

  TensorHandle Random(std::vector<int64_t> shape, float low = -2.f,
                      float high = 2.f) {
    int64_t n = 1;
    for (int64_t d : shape) n *= d;
    std::uniform_real_distribution<float> dist(low, high);
    std::vector<float> values(n);
    for (float& v : values) v = dist(rng_);
    return *core().MakeDenseTensorHandle<float>(shape, values);
  }

  TensorHandle Run(absl::string_view op, absl::string_view handler,
                   std::vector<const TensorHandle*> args,
                   const OpAttrs& attrs = OpAttrs(), int results = 1,
                   int result_index = 0) {
    std::vector<TensorHandle> copies;
    for (const TensorHandle* arg : args) copies.push_back(arg->CopyRef());
    std::vector<TensorHandle> out(results);
    OpAttrs frozen = attrs;
    core().Execute(*exec_ctx_, op, core().GetOpHandler(handler),
                   absl::MakeSpan(copies), frozen.Freeze(), absl::MakeSpan(out),
                   nullptr);
    return std::move(out[result_index]);
  }

  TensorHandle Cast(const TensorHandle& x, DType to) {
    OpAttrs attrs;
    attrs.Set("to", to);
    return Run("nn.cast", "cpu", {&x}, attrs);
  }

  // The handle's values as f32 on the host (cast there from f16/bf16).
  std::vector<float> HostFloats(const TensorHandle& handle) {
    TensorHandle on_host = handle.TransferTo(*exec_ctx_, host());
    const Tensor* tensor = core().Await(on_host);
    if (tensor == nullptr) {
      ADD_FAILURE() << on_host.DebugString();
      return {};
    }
    auto& dense = *static_cast<const DenseHostTensor*>(tensor);
    if (dense.dtype() != DType::kF32) {
      return HostFloats(Cast(on_host, DType::kF32));
    }
    auto elements = dense.elements<float>();
    return std::vector<float>(elements.begin(), elements.end());
  }

  std::string ErrorOf(const TensorHandle& handle) {
    core().Await(handle);
    const absl::Status* error = handle.GetErrorIfPresent();
    return error ? std::string(error->ToString()) : "<no error>";
  }

  // Runs `op` on the CPU and on CUDA:0 with `inputs` (f32 on the host, cast
  // to `dtype`), and checks the results agree within `tolerance` relative
  // to the largest magnitude.
  void ExpectSame(absl::string_view op, std::vector<TensorHandle> inputs,
                  const OpAttrs& attrs = OpAttrs(), DType dtype = DType::kF32,
                  float tolerance = 1e-5f, int results = 1,
                  int result_index = 0) {
    SCOPED_TRACE(absl::StrCat(op, " ", DTypeName(dtype)));
    // f16 and bf16: the CPU reference computes in f32 on the same rounded
    // inputs (the CPU computes those ops in f32 only).
    const bool half = dtype == DType::kF16 || dtype == DType::kBF16;
    std::vector<TensorHandle> host_args, gpu_args;
    for (TensorHandle& input : inputs) {
      TensorHandle typed =
          dtype == DType::kF32 ? input.CopyRef() : Cast(input, dtype);
      gpu_args.push_back(typed.TransferTo(*exec_ctx_, *gpu_));
      host_args.push_back(half ? Cast(typed, DType::kF32) : std::move(typed));
    }
    std::vector<const TensorHandle*> host_ptrs, gpu_ptrs;
    for (auto& h : host_args) host_ptrs.push_back(&h);
    for (auto& g : gpu_args) gpu_ptrs.push_back(&g);
    TensorHandle expected =
        Run(op, "cpu", host_ptrs, attrs, results, result_index);
    TensorHandle actual =
        Run(op, "cuda", gpu_ptrs, attrs, results, result_index);
    ExpectClose(expected, actual, tolerance);
  }

  // The transpose of a 4-D handle on the host by `perm`.
  TensorHandle Transposed(const TensorHandle& x, std::vector<int64_t> perm) {
    OpAttrs attrs;
    attrs.SetArray<int64_t>("perm", perm);
    return Run("nn.transpose", "cpu", {&x}, attrs);
  }

  // As ExpectSame, with the GPU computing `op` in NHWC (data_format): its
  // 4-D inputs transposed to N x H x W x C on the host (a convolution's
  // weights to M x kH x kW x C/group), its result back to NCHW.
  void ExpectSameChannelsLast(absl::string_view op,
                              std::vector<TensorHandle> inputs,
                              const OpAttrs& attrs, DType dtype,
                              float tolerance) {
    SCOPED_TRACE(absl::StrCat(op, " NHWC ", DTypeName(dtype)));
    const bool half = dtype == DType::kF16 || dtype == DType::kBF16;
    std::vector<TensorHandle> host_args, gpu_args;
    for (TensorHandle& input : inputs) {
      TensorHandle typed =
          dtype == DType::kF32 ? input.CopyRef() : Cast(input, dtype);
      const bool spatial = core().Await(typed)->shape().GetRank() == 4;
      gpu_args.push_back(
          (spatial ? Transposed(typed, {0, 2, 3, 1}) : typed.CopyRef())
              .TransferTo(*exec_ctx_, *gpu_));
      host_args.push_back(half ? Cast(typed, DType::kF32) : std::move(typed));
    }
    std::vector<const TensorHandle*> host_ptrs, gpu_ptrs;
    for (auto& h : host_args) host_ptrs.push_back(&h);
    for (auto& g : gpu_args) gpu_ptrs.push_back(&g);
    TensorHandle expected = Run(op, "cpu", host_ptrs, attrs);
    OpAttrs nhwc = attrs;
    nhwc.SetString("data_format", "NHWC");
    TensorHandle actual = Run(op, "cuda", gpu_ptrs, nhwc);
    ASSERT_EQ(ErrorOf(actual), "<no error>");
    TensorHandle on_host = actual.TransferTo(*exec_ctx_, host());
    ExpectClose(expected, Transposed(on_host, {0, 3, 1, 2}), tolerance,
                /*on_gpu=*/false);
  }

  // `actual` (on the GPU unless `on_gpu` is false) is `expected` within
  // `tolerance` relative to the largest magnitude.
  void ExpectClose(const TensorHandle& expected, const TensorHandle& actual,
                   float tolerance, bool on_gpu = true) {
    ASSERT_EQ(ErrorOf(actual), "<no error>");
    if (on_gpu) {
      EXPECT_EQ(actual.device(), gpu_);
    }
    std::vector<float> want = HostFloats(expected);
    std::vector<float> got = HostFloats(actual);
    ASSERT_EQ(want.size(), got.size());
    float scale = 1e-6f;
    for (float w : want) scale = std::max(scale, std::fabs(w));
    int reported = 0;
    for (size_t i = 0; i < want.size(); ++i) {
      const bool both_nan = std::isnan(want[i]) && std::isnan(got[i]);
      if (!both_nan && !(std::fabs(want[i] - got[i]) <= tolerance * scale)) {
        if (++reported <= 5) {
          ADD_FAILURE() << "element " << i << ": CPU " << want[i] << ", GPU "
                        << got[i];
        }
      }
    }
  }

  std::mt19937 rng_{42};
};

}  // namespace asyncrt::testing

#endif  // ASYNCRT_BACKENDS_GPU_CUDA_OP_TEST_H_
