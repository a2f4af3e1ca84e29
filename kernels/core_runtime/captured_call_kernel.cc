// corert.captured_call: calls a function whose work is all on one device,
// and on a device with graphs (CUDA graphs, through a plug-in's
// begin_capture) records it once and replays it after.
//
// Per function and signature (device, argument dtypes and shapes):
//   1. the first call runs as usual: one-time work (cuDNN's autotuning,
//      constants copied to the device) happens outside any recording;
//      calls that come before it finished run as usual too;
//   2. the second copies its arguments into inputs kept for the graph,
//      runs the function on them while the device records it (on this
//      thread: ScopedRunOnCallingThread), and keeps the results' tensors
//      as the graph's outputs; the recorded work runs once at the end;
//   3. every later call copies its arguments into those inputs, launches
//      the graph, and copies the outputs into new tensors (a caller may
//      keep a result while the next call's replay rewrites the outputs).
// A function the device cannot record (its results not all on the device
// when the recording ends, a host copy, a backend error) is called plainly
// from then on. A new signature is a new entry: shapes that change make a
// new graph; entries are bounded per function.
//
// Concurrency: one call at a time captures or replays an entry (its
// inputs and outputs are shared); a call that finds the entry busy is a
// plain call, so no caller waits.
#include <atomic>
#include <cstdint>
#include <list>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/functional/any_invocable.h"
#include "absl/strings/str_cat.h"
#include "asyncrt/bef_executor/function.h"
#include "asyncrt/bef_executor/kernel_frame.h"
#include "asyncrt/bef_executor/kernel_utils.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/device/dense_device_tensor.h"
#include "asyncrt/device/stream_device.h"
#include "asyncrt/host_context/async_dispatch.h"
#include "asyncrt/host_context/async_value_ref.h"
#include "kernels/core_runtime/captured_call_kernel.h"

namespace asyncrt {
namespace {

using Values = std::vector<RCReference<AsyncValue>>;

// Graphs kept per function: one per signature seen most recently.
constexpr size_t kMaxGraphsPerFunction = 8;
// Failed recordings after which an entry stops trying.
constexpr int kMaxCaptureFailures = 2;

struct GraphEntry {
  std::string signature;
  std::mutex mutex;  // Held by the call that captures or replays.
  // A plain call finished (its results' tensors ready): one-time work
  // (constants copied, autotuning) is done, so a recording that follows
  // runs every kernel on the capturing thread.
  std::atomic<bool> warmed_up{false};
  // Guarded by mutex:
  bool warming_up = false;
  int capture_failures = 0;
  bool uncapturable = false;
  std::unique_ptr<DeviceGraph> graph;
  std::vector<DenseDeviceTensor> inputs;   // The graph reads these...
  std::vector<DenseDeviceTensor> outputs;  // ...and writes these.
};

// The graphs of one function (shared by its call sites: one per BEF file's
// function attribute).
struct CapturedFunction {
  std::mutex mutex;
  std::list<std::shared_ptr<GraphEntry>> entries;  // Most recent first.

  std::shared_ptr<GraphEntry> Find(const std::string& signature) {
    std::lock_guard<std::mutex> lock(mutex);
    for (auto it = entries.begin(); it != entries.end(); ++it) {
      if ((*it)->signature == signature) {
        entries.splice(entries.begin(), entries, it);
        return entries.front();
      }
    }
    auto entry = std::make_shared<GraphEntry>();
    entry->signature = signature;
    entries.push_front(entry);
    if (entries.size() > kMaxGraphsPerFunction) entries.pop_back();
    return entry;
  }
};

Values CallPlainly(const Function& function, const ExecutionContext& exec_ctx,
                   absl::Span<AsyncValue* const> arguments) {
  Values results(function.num_results());
  function.Execute(exec_ctx, arguments, absl::MakeSpan(results));
  return results;
}

// The device tensor a handle's value holds, if it is one on `device`.
const DenseDeviceTensor* DeviceTensorOf(AsyncValue* value,
                                        const StreamDevice& device) {
  if (value == nullptr || !value->IsConcrete()) return nullptr;
  const TensorHandle* handle = value->GetIfPresent<TensorHandle>();
  if (handle == nullptr || handle->GetAsyncTensor() == nullptr) return nullptr;
  const auto* tensor =
      dynamic_cast<const DenseDeviceTensor*>(handle->GetAvailableTensor());
  if (tensor == nullptr || &tensor->device() != &device) return nullptr;
  return tensor;
}

RCReference<AsyncValue> HandleOf(StreamDevice& device,
                                 DenseDeviceTensor tensor) {
  TensorMetadata metadata = tensor.metadata();
  return MakeAvailableAsyncValueRef<TensorHandle>(
      &device, metadata,
      MakeAvailableAsyncValueRef<DenseDeviceTensor>(std::move(tensor)));
}

// A new tensor on the device with `source`'s contents (copied in stream
// order).
absl::StatusOr<DenseDeviceTensor> CopyOf(StreamDevice& device,
                                         const DenseDeviceTensor& source) {
  absl::StatusOr<DenseDeviceTensor> copy =
      DenseDeviceTensor::Allocate(device, source.metadata());
  if (!copy.ok()) return copy.status();
  if (absl::Status status =
          device.EnqueueCopy(CopyDirection::kDeviceToDevice, copy->data(),
                             source.data(), source.DataSizeInBytes());
      !status.ok()) {
    return status;
  }
  return copy;
}

// Copies `arguments` into the entry's inputs and launches its graph. Entry
// mutex held.
absl::Status Launch(StreamDevice& device, GraphEntry& entry,
                    absl::Span<const DenseDeviceTensor* const> args) {
  for (size_t i = 0; i < args.size(); ++i) {
    if (absl::Status status = device.EnqueueCopy(
            CopyDirection::kDeviceToDevice, entry.inputs[i].data(),
            args[i]->data(), args[i]->DataSizeInBytes());
        !status.ok()) {
      return status;
    }
  }
  return entry.graph->Launch();
}

// Copies of the entry's outputs, for the caller. Entry mutex held.
absl::StatusOr<Values> CopyOutputs(StreamDevice& device, GraphEntry& entry) {
  Values results;
  for (const DenseDeviceTensor& output : entry.outputs) {
    absl::StatusOr<DenseDeviceTensor> copy = CopyOf(device, output);
    if (!copy.ok()) return copy.status();
    results.push_back(HandleOf(device, *std::move(copy)));
  }
  return results;
}

// Records the function on the entry's inputs (copies of `args`) and keeps
// its outputs; the recorded work runs once. False if the device could not
// record it (the caller then calls plainly): nothing recorded ran.
absl::StatusOr<bool> Capture(StreamDevice& device, GraphEntry& entry,
                             const Function& function,
                             const ExecutionContext& exec_ctx,
                             absl::Span<const DenseDeviceTensor* const> args) {
  entry.inputs.clear();
  entry.outputs.clear();
  Values input_handles;
  for (const DenseDeviceTensor* arg : args) {
    absl::StatusOr<DenseDeviceTensor> input = CopyOf(device, *arg);
    if (!input.ok()) return input.status();
    input_handles.push_back(HandleOf(device, input->CopyRef()));
    entry.inputs.push_back(*std::move(input));
  }
  if (!device.BeginCapture().ok()) return false;
  Values results(function.num_results());
  {
    ScopedRunOnCallingThread on_this_thread;
    std::vector<AsyncValue*> raw;
    for (const auto& handle : input_handles) raw.push_back(handle.get());
    function.Execute(exec_ctx, raw, absl::MakeSpan(results));
  }
  absl::StatusOr<std::unique_ptr<DeviceGraph>> graph = device.EndCapture();
  if (!graph.ok()) return false;
  for (const auto& result : results) {
    const DenseDeviceTensor* output = DeviceTensorOf(result.get(), device);
    // A result that is not ready, or not on the device, was not (all)
    // recorded: the graph would not make it again.
    if (output == nullptr) return false;
    entry.outputs.push_back(output->CopyRef());
  }
  entry.graph = *std::move(graph);
  return true;
}

// Calls `done` once every value of `values` is available and so is the
// tensor of each that is a tensor handle (on any thread).
void WhenTensorsReady(const Values& values, absl::AnyInvocable<void()> done) {
  RunWhenReady(values, [values, done = std::move(done)]() mutable {
    Values tensors;
    for (const auto& value : values) {
      if (const TensorHandle* handle = value->GetIfPresent<TensorHandle>()) {
        if (handle->GetAsyncTensor() != nullptr) {
          tensors.push_back(handle->CopyTensorRef());
        }
      }
    }
    RunWhenReady(tensors, [tensors, done = std::move(done)]() mutable {
      std::move(done)();
    });
  });
}

// One call, once every argument's tensor is ready: plainly, recorded, or
// replayed. Errors come back as error values.
Values RunCall(const Function& function, const ExecutionContext& exec_ctx,
               RCReference<Device> device_ref,
               const std::vector<RCReference<AsyncValue>>& arguments,
               const std::shared_ptr<CapturedFunction>& state) {
  std::vector<AsyncValue*> raw;
  for (const auto& argument : arguments) raw.push_back(argument.get());
  auto call_plainly = [&] { return CallPlainly(function, exec_ctx, raw); };
  StreamDevice* device = AsStreamDevice(device_ref.get());
  if (device == nullptr || !device->SupportsGraphs() || state == nullptr) {
    return call_plainly();
  }
  // Every argument a device tensor on the device; else plainly.
  std::vector<const DenseDeviceTensor*> tensors;
  std::string signature = device->name();
  for (AsyncValue* argument : raw) {
    const DenseDeviceTensor* tensor = DeviceTensorOf(argument, *device);
    if (tensor == nullptr) return call_plainly();
    tensors.push_back(tensor);
    absl::StrAppend(&signature, ";", DTypeName(tensor->dtype()), "[");
    for (int64_t dim : tensor->shape().GetDimensions()) {
      absl::StrAppend(&signature, dim, ",");
    }
    signature += "]";
  }
  std::shared_ptr<GraphEntry> entry = state->Find(signature);
  std::unique_lock<std::mutex> lock(entry->mutex, std::try_to_lock);
  if (!lock.owns_lock() || entry->uncapturable) return call_plainly();
  if (!entry->warmed_up.load(std::memory_order_acquire)) {
    if (entry->warming_up) return call_plainly();
    entry->warming_up = true;
    lock.unlock();
    Values values = call_plainly();
    WhenTensorsReady(values, [entry] {
      entry->warmed_up.store(true, std::memory_order_release);
    });
    return values;
  }
  auto errors = [&](absl::Status status) {
    Values values;
    for (size_t i = 0; i < function.num_results(); ++i) {
      values.push_back(MakeErrorAsyncValueRef(absl::Status(
          status.code(),
          absl::StrCat("corert.captured_call: ", status.message()))));
    }
    return values;
  };
  if (entry->graph == nullptr) {
    // The capture's own run makes the outputs.
    absl::StatusOr<bool> captured =
        Capture(*device, *entry, function, exec_ctx, tensors);
    if (!captured.ok()) return errors(captured.status());
    if (!*captured) {
      entry->graph.reset();
      entry->inputs.clear();
      entry->outputs.clear();
      entry->uncapturable = ++entry->capture_failures >= kMaxCaptureFailures;
      return call_plainly();
    }
  } else if (absl::Status status = Launch(*device, *entry, tensors);
             !status.ok()) {
    return errors(status);
  }
  absl::StatusOr<Values> values = CopyOutputs(*device, *entry);
  if (!values.ok()) return errors(values.status());
  return *std::move(values);
}

void CapturedCall(RemainingArguments args, RemainingResults results,
                  const Function* function, AsyncKernelFrame* frame) {
  auto fail = [&](absl::Status status) {
    frame->ReportError(absl::Status(
        status.code(),
        absl::StrCat("corert.captured_call: ", status.message())));
  };
  if (function == nullptr || args.size() < 1) {
    return fail(absl::InvalidArgumentError(
        "expects a !tfrt.device operand and a callee"));
  }
  const RCReference<Device>* device_ref =
      args[0]->GetIfPresent<RCReference<Device>>();
  if (device_ref == nullptr || *device_ref == nullptr) {
    return fail(absl::InvalidArgumentError("operand 0 is not a !tfrt.device"));
  }
  if (function->num_arguments() != args.size() - 1 ||
      function->num_results() != results.size()) {
    return fail(absl::InvalidArgumentError(absl::StrCat(
        "@", function->name(), " takes ", function->num_arguments(),
        " arguments and returns ", function->num_results(), "; called with ",
        args.size() - 1, " and ", results.size())));
  }
  std::shared_ptr<CapturedFunction> state;
  if (const bef::Attribute* callee = frame->GetAttribute("callee")) {
    state = std::const_pointer_cast<CapturedFunction>(
        std::static_pointer_cast<const CapturedFunction>(
            frame->bef_file().GetOrDecode(*callee, [] {
              return std::make_shared<const CapturedFunction>();
            })));
  }
  std::vector<RCReference<AsyncValue>> arguments;
  // The tensors a device's copies are still making (a handle is ready
  // before its tensor): the call waits for them, as an op would.
  std::vector<RCReference<AsyncValue>> pending;
  for (size_t i = 1; i < args.size(); ++i) {
    arguments.push_back(FormRef(args[i]));
    if (const TensorHandle* handle = args[i]->GetIfPresent<TensorHandle>()) {
      AsyncValue* tensor = handle->GetAsyncTensor();
      if (tensor != nullptr && !tensor->IsAvailable()) {
        pending.push_back(FormRef(tensor));
      }
    }
  }
  const ExecutionContext& exec_ctx = frame->GetExecutionContext();
  if (pending.empty()) {
    Values values =
        RunCall(*function, exec_ctx, *device_ref, arguments, state);
    for (size_t i = 0; i < values.size(); ++i) {
      results.Set(i, std::move(values[i]));
    }
    return;
  }
  std::vector<RCReference<IndirectAsyncValue>> indirect;
  for (size_t i = 0; i < results.size(); ++i) {
    indirect.push_back(MakeIndirectAsyncValue());
    results.Set(i, indirect.back());
  }
  RunWhenReady(pending, [function, exec_ctx, device = *device_ref,
                         arguments = std::move(arguments), state,
                         indirect = std::move(indirect)]() mutable {
    Values values = RunCall(*function, exec_ctx, device, arguments, state);
    for (size_t i = 0; i < indirect.size(); ++i) {
      indirect[i]->ForwardTo(std::move(values[i]));
    }
  });
}

}  // namespace

void RegisterCapturedCallKernel(KernelRegistry& registry) {
  MustAddKernel(registry, "corert.captured_call",
                ASYNCRT_KERNEL(CapturedCall));
}

}  // namespace asyncrt
