// Models and helpers the serving tests share.
#ifndef ASYNCRT_LIB_SERVING_SERVING_TEST_UTIL_H_
#define ASYNCRT_LIB_SERVING_SERVING_TEST_UTIL_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "asyncrt/bef/bef_writer.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/kernel_registry.h"
#include "asyncrt/runtime/runtime.h"
#include "asyncrt/tensor/dense_host_tensor.h"
#include "asyncrt/tensor/string_host_tensor.h"

namespace asyncrt::serving::testing {

// absl::Notification's interface on std::mutex: Debian's Abseil is not
// built with ThreadSanitizer, which then cannot see absl::Mutex order
// memory (false reports in the sanitizer trees); it sees pthreads'.
class Notification {
 public:
  // Notifies under the lock: a waiter may destroy the notification as
  // soon as it returns.
  void Notify() {
    std::lock_guard<std::mutex> lock(mutex_);
    notified_ = true;
    changed_.notify_all();
  }
  bool HasBeenNotified() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return notified_;
  }
  void WaitForNotification() const {
    std::unique_lock<std::mutex> lock(mutex_);
    changed_.wait(lock, [this] { return notified_; });
  }
  bool WaitForNotificationWithTimeout(absl::Duration timeout) const {
    std::unique_lock<std::mutex> lock(mutex_);
    return changed_.wait_for(lock, absl::ToChronoNanoseconds(timeout),
                             [this] { return notified_; });
  }

 private:
  mutable std::mutex mutex_;
  mutable std::condition_variable changed_;
  bool notified_ = false;
};

// Test models as BEF built here (no MLIR: the serving tests run in the
// runtime-only sanitizer trees too). Their kernels, which
// RegisterTestModelKernels adds to a runtime's registry before it loads
// them:
//   serving_test.double(x) -> y          y = 2 x (a host f32 tensor)
//   serving_test.double_after(x, ch) -> y the same once `ch` is ready
//   serving_test.scalar(x) -> y          y = 2.0, a 0-d tensor, whatever x
//   serving_test.reverse(x) -> y         each string of x reversed
//   serving_test.gate, serving_test.mark (below)

// y = 2 x, `x` and `y` tensor handles on the host.
inline absl::StatusOr<TensorHandle> DoubleTensor(const TensorHandle& x,
                                                 HostContext& host) {
  AsyncValue* value = x.GetAsyncTensor();
  const DenseHostTensor* in =
      value == nullptr ? nullptr : value->GetIfPresent<DenseHostTensor>();
  if (in == nullptr || in->dtype() != DType::kF32) {
    return absl::InvalidArgumentError(
        "serving_test.double takes an f32 tensor on the host");
  }
  std::optional<DenseHostTensor> out =
      DenseHostTensor::CreateUninitialized(in->metadata(), *host.allocator());
  if (!out) return absl::ResourceExhaustedError("out of memory");
  absl::Span<const float> from = in->elements<float>();
  absl::Span<float> to = out->elements<float>();
  for (size_t i = 0; i < from.size(); ++i) to[i] = 2 * from[i];
  TensorMetadata metadata = out->metadata();
  return TensorHandle(&host.host_device(), metadata,
                      MakeAvailableAsyncValueRef<DenseHostTensor>(
                          std::move(*out)));
}

// Each string of `x` reversed (a string tensor on the host).
inline absl::StatusOr<TensorHandle> ReverseKernel(const TensorHandle& x,
                                                  AsyncKernelFrame* frame) {
  AsyncValue* value = x.GetAsyncTensor();
  const StringHostTensor* in =
      value == nullptr ? nullptr : value->GetIfPresent<StringHostTensor>();
  if (in == nullptr) {
    return absl::InvalidArgumentError(
        "serving_test.reverse takes a string tensor on the host");
  }
  std::vector<std::string> reversed(in->strings().begin(),
                                    in->strings().end());
  for (std::string& value : reversed) std::reverse(value.begin(), value.end());
  std::optional<StringHostTensor> out =
      StringHostTensor::CreateFromStrings(in->shape(), std::move(reversed));
  TensorMetadata metadata = out->metadata();
  return TensorHandle(&frame->GetHostContext()->host_device(), metadata,
                      MakeAvailableAsyncValueRef<StringHostTensor>(
                          std::move(*out)));
}

inline absl::StatusOr<TensorHandle> DoubleKernel(const TensorHandle& x,
                                                 AsyncKernelFrame* frame) {
  return DoubleTensor(x, *frame->GetHostContext());
}

inline absl::StatusOr<TensorHandle> DoubleAfterKernel(const TensorHandle& x,
                                                      Argument<Chain>,
                                                      AsyncKernelFrame* frame) {
  return DoubleTensor(x, *frame->GetHostContext());
}

inline absl::StatusOr<TensorHandle> ScalarKernel(const TensorHandle&,
                                                 AsyncKernelFrame* frame) {
  HostContext& host = *frame->GetHostContext();
  std::optional<DenseHostTensor> out = DenseHostTensor::CreateUninitialized(
      TensorMetadata(DType::kF32, TensorShape({})), *host.allocator());
  if (!out) return absl::ResourceExhaustedError("out of memory");
  out->elements<float>()[0] = 2.0f;
  TensorMetadata metadata = out->metadata();
  return TensorHandle(&host.host_device(), metadata,
                      MakeAvailableAsyncValueRef<DenseHostTensor>(
                          std::move(*out)));
}

// A gate for models that must wait while a test acts (a client hangs up,
// a deadline passes): serving_test.gate() -> chain waits until OpenGate,
// serving_test.mark(chain) -> chain counts the requests that went on (in
// `marks`). One gated request at a time.
inline std::mutex gate_mutex;
inline AsyncValueRef<Chain> gate;  // Guarded by gate_mutex.
// Notified (if set) when a request reaches the gate.
inline std::atomic<Notification*> gate_reached{nullptr};
inline std::atomic<int> marks{0};
// serving_test.gate, serving_test.mark, then serving_test.double_after.
inline const std::vector<std::string> kGatedChain = {"serving_test.gate",
                                                     "serving_test.mark"};

inline AsyncValueRef<Chain> GateKernel() {
  std::lock_guard<std::mutex> lock(gate_mutex);
  gate = MakeUnconstructedAsyncValueRef<Chain>();
  if (Notification* reached = gate_reached.load()) reached->Notify();
  return gate;
}

inline Chain MarkKernel(Argument<Chain>) {
  marks.fetch_add(1);
  return Chain();
}

inline void OpenGate() {
  std::lock_guard<std::mutex> lock(gate_mutex);
  if (gate) gate.emplace();
  gate.reset();
}

inline void RegisterTestModelKernels(KernelRegistry& registry) {
  (void)registry.AddKernel("serving_test.gate", ASYNCRT_KERNEL(GateKernel));
  (void)registry.AddKernel("serving_test.mark", ASYNCRT_KERNEL(MarkKernel));
  (void)registry.AddKernel("serving_test.double", ASYNCRT_KERNEL(DoubleKernel));
  (void)registry.AddKernel("serving_test.double_after",
                           ASYNCRT_KERNEL(DoubleAfterKernel));
  (void)registry.AddKernel("serving_test.scalar", ASYNCRT_KERNEL(ScalarKernel));
  (void)registry.AddKernel("serving_test.reverse",
                           ASYNCRT_KERNEL(ReverseKernel));
}

// A runtime for the serving tests: two workers, no plug-ins from the
// environment, the test models' kernels registered.
inline std::unique_ptr<Runtime> TestRuntime() {
  RuntimeOptions options;
  options.work_queue = "mstd:2";
  options.device_plugins_from_environment = false;
  std::unique_ptr<Runtime> runtime = *Runtime::Create(options);
  RegisterTestModelKernels(runtime->host().registry());
  return runtime;
}

// main(x: tensorhandle) -> tensorhandle, computed by `kernel`
// (serving_test.double or .scalar). With `chain` (kernel names), those run
// first, one after another (the first takes nothing, each next the chain
// of the one before, each returns a chain), and the result comes from
// serving_test.double_after(x, the last chain).
inline std::vector<uint8_t> TestModelBef(
    const std::string& kernel, const std::vector<std::string>& chain = {}) {
  bef::BefWriter writer;
  const uint32_t handle = writer.AddType("!corert.tensorhandle");
  const uint32_t main = writer.DeclareFunction(
      "main", bef::FunctionKind::kBef, {handle}, {handle});
  bef::FunctionBodySpec body;
  const uint32_t x = body.num_registers++;
  body.argument_registers.push_back(x);
  uint32_t line = 0;
  auto add = [&](const std::string& name, std::vector<uint32_t> operands) {
    bef::KernelSpec spec;
    spec.kernel_name = writer.AddKernelName(name);
    spec.location = writer.AddLocation("test_model.mlir", ++line, 1);
    spec.operands = std::move(operands);
    spec.results.push_back(body.num_registers++);
    body.kernels.push_back(spec);
    return spec.results[0];
  };
  uint32_t y;
  if (chain.empty()) {
    y = add(kernel, {x});
  } else {
    uint32_t previous = add(chain[0], {});
    for (size_t i = 1; i < chain.size(); ++i) previous = add(chain[i], {previous});
    y = add("serving_test.double_after", {x, previous});
  }
  body.result_registers.push_back(y);
  writer.DefineFunction(main, std::move(body));
  return *writer.Finish();
}

// Writes BEF `model` (and `signature`, if not empty) as version `version`
// of the model whose base path is `base`.
inline void WriteBefVersion(const std::filesystem::path& base, int version,
                            const std::vector<uint8_t>& model,
                            const std::string& signature = "") {
  const std::filesystem::path dir = base / std::to_string(version);
  std::filesystem::create_directories(dir);
  std::ofstream(dir / "model.bef", std::ios::binary)
      .write(reinterpret_cast<const char*>(model.data()), model.size());
  if (!signature.empty()) std::ofstream(dir / "signature.json") << signature;
}

}  // namespace asyncrt::serving::testing

#endif  // ASYNCRT_LIB_SERVING_SERVING_TEST_UTIL_H_
