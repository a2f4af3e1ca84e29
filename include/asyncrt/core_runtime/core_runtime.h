// CoreRuntime: op-by-op (eager) execution, and the same ops from graphs.
//
//   auto runtime = CoreRuntime::Create({.num_threads = 4});
//   OpHandler* cpu = (*runtime)->GetOpHandler("cpu");
//   TensorHandle a = (*runtime)->MakeDenseTensorHandle<float>({2}, {1, 2});
//   TensorHandle sum;
//   (*runtime)->Execute(exec_ctx, "tfrt_test.add", cpu, {a, a}, OpAttrsRef(),
//                       {&sum, 1}, nullptr);
//   const Tensor* t = (*runtime)->Await(sum);
//
// An op runs through an OpHandler (a device's, null, logging, composite), which
// turns its name into a CoreRuntimeOp: the registry entry with its shape
// function and the device's dispatch function. MakeOp() returns that
// prepared op so that a hot loop skips the name lookup.
//
// Ownership: the runtime owns its op handlers; it owns its HostContext when
// made by Create(), and borrows it when attached to one (GetOrCreate, used
// by the BEF kernels). Thread-safety: Execute, MakeOp, op handler
// registration and lookup are thread-safe; Execute never blocks (results
// fill in asynchronously); Await blocks the calling thread.
#ifndef ASYNCRT_CORE_RUNTIME_CORE_RUNTIME_H_
#define ASYNCRT_CORE_RUNTIME_CORE_RUNTIME_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "asyncrt/core_runtime/buffer_arena.h"
#include "asyncrt/core_runtime/op_attrs.h"
#include "asyncrt/core_runtime/op_registry.h"
#include "asyncrt/core_runtime/shape_memo.h"
#include "asyncrt/core_runtime/tensor_handle.h"
#include "asyncrt/host_context/chain.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/tensor/dense_host_tensor.h"

namespace asyncrt {

class CoreRuntime;
class Function;
class OpHandler;

// How an op call treats its argument handles. kBorrow (the default): the
// caller keeps them and their tensors are never modified. kConsume: the
// caller gives them up (it must not read them after the call), so an op may
// compute its result in the buffer of an argument nothing else references.
enum class ArgumentUse { kBorrow, kConsume };

// A prepared op: call it like Execute() without the name lookup. Cheap to
// copy; valid as long as the runtime that made it.
class CoreRuntimeOp {
 public:
  using Fn = std::function<void(
      const ExecutionContext& exec_ctx, absl::Span<TensorHandle> args,
      const OpAttrsRef& attrs, absl::Span<TensorHandle> results,
      AsyncValueRef<Chain>* chain)>;

  CoreRuntimeOp() = default;
  // An op from the registry, run on `device`.
  CoreRuntimeOp(const OpEntry* entry, const OpImplementation* implementation,
                Device* device)
      : entry_(entry), implementation_(implementation), device_(device) {}
  // Any other behaviour (logging, composite ops).
  explicit CoreRuntimeOp(Fn fn) : fn_(std::move(fn)) {}

  bool IsValid() const { return implementation_ || fn_; }

  // Issues the op. `args` are borrowed; `results` (as many as the op
  // produces) receive new handles, possibly of tensors not yet computed or
  // of an error. `chain` (may be null) receives a chain that completes
  // with the op's side effects. Errors, shape errors included, arrive in the
  // results and the chain. Never blocks.
  void operator()(const ExecutionContext& exec_ctx,
                  absl::Span<TensorHandle> args, const OpAttrsRef& attrs,
                  absl::Span<TensorHandle> results,
                  AsyncValueRef<Chain>* chain,
                  ArgumentUse use = ArgumentUse::kBorrow) const;
  // The same for a caller that keeps its handles where they are (the
  // corert.executeop kernel, whose handles live in its registers): `args`
  // are read, never taken. Bit i of `consumed_arguments` says the caller
  // gives handle i up as ArgumentUse::kConsume does for all: the op may
  // reuse its tensor's buffer, or its async value, if nothing else holds
  // them, so the caller must not read that handle's tensor afterwards
  // (it drops or overwrites the handle). `arena` (may be null; borrowed
  // for the call) is the calling function's planned memory: a registry op
  // with a slot (`_buffer_offset`, `_buffer_size`) computes its result there
  // (buffer_arena.h); other ops ignore it. `site_cache` (may be null) is
  // the program op site's (op_site_cache.h), given to the implementation
  // when it runs during the call (not when it runs later, once pending
  // arguments are computed).
  void operator()(const ExecutionContext& exec_ctx,
                  absl::Span<const TensorHandle* const> args,
                  uint64_t consumed_arguments, const OpAttrsRef& attrs,
                  absl::Span<TensorHandle> results, AsyncValueRef<Chain>* chain,
                  const BufferArena* arena = nullptr,
                  OpSiteCache* site_cache = nullptr) const;
  // The common case of a program's op site, on a path of its own: a
  // registry op with one result and a shape function, whose arguments (at
  // most four) are computed tensors on its device of types it takes as they
  // are. Runs it as the call above does, `result` receiving the handle, and
  // returns true; returns false having done nothing otherwise (the caller
  // takes the call above). `memo` is the site's: the shape function runs
  // only for argument metadata it has not seen, so `attrs` must be the
  // same at every call with one memo. `site_cache` (may be null; borrowed
  // for the call) is the site's cache for the op's implementation
  // (op_site_cache.h), under the same condition.
  bool RunConcrete(const ExecutionContext& exec_ctx,
                   absl::Span<const TensorHandle* const> args,
                   uint64_t consumed_arguments, const OpAttrsRef& attrs,
                   TensorHandle& result, ShapeMemo& memo,
                   const BufferArena* arena = nullptr,
                   OpSiteCache* site_cache = nullptr) const;
  // The same with the result's metadata already known (a caller that
  // remembers the shapes of a whole sequence of ops for its arguments'
  // shapes): the shape function does not run. `result_metadata` must be
  // what it would answer, and outlive the call.
  bool RunConcrete(const ExecutionContext& exec_ctx,
                   absl::Span<const TensorHandle* const> args,
                   uint64_t consumed_arguments, const OpAttrsRef& attrs,
                   const TensorMetadata& result_metadata, TensorHandle& result,
                   const BufferArena* arena = nullptr,
                   OpSiteCache* site_cache = nullptr) const;

 private:
  // RunConcrete's call of the op, its arguments checked.
  void InvokeConcrete(const ExecutionContext& exec_ctx,
                      AsyncValue* const* values, const Tensor* const* tensors,
                      absl::Span<const TensorHandle* const> args,
                      uint64_t consumed_arguments, const OpAttrsRef& attrs,
                      const TensorMetadata& result_metadata,
                      TensorHandle& result, const BufferArena* arena,
                      OpSiteCache* site_cache) const;

  const OpEntry* entry_ = nullptr;
  const OpImplementation* implementation_ = nullptr;
  Device* device_ = nullptr;  // Owned by the DeviceManager.
  Fn fn_;
};

// Turns op names into prepared ops. Subclasses: device handlers from the
// backends (backends/cpu: ops from the registry, falling back to another
// handler), the null handler (every op fails) and the logging handler
// (wraps another).
class OpHandler {
 public:
  OpHandler(std::string name, CoreRuntime* runtime, OpHandler* fallback)
      : name_(std::move(name)), runtime_(runtime), fallback_(fallback) {}
  virtual ~OpHandler() = default;

  // Thread-safe.
  virtual absl::StatusOr<CoreRuntimeOp> MakeOp(absl::string_view op_name) = 0;

  const std::string& name() const { return name_; }
  CoreRuntime* runtime() const { return runtime_; }
  OpHandler* fallback() const { return fallback_; }

  // For handlers that run the op registry's implementations for one device
  // type on one device (the CPU handler): lets CoreRuntime::Execute look an
  // op up and run it without building a CoreRuntimeOp. Ops the registry
  // lacks still go through MakeOp (and so the fallback).
  struct RegistryDevice {
    int device_type_id = -1;  // OpRegistry::DeviceTypeId.
    Device* device = nullptr;
  };
  const RegistryDevice& registry_device() const { return registry_device_; }

 protected:
  void set_registry_device(RegistryDevice registry_device) {
    registry_device_ = registry_device;
  }

 private:
  std::string name_;
  CoreRuntime* runtime_;
  OpHandler* fallback_;
  RegistryDevice registry_device_;
};

struct CoreRuntimeOptions {
  int num_threads = 0;  // 0: one per hardware thread.
  // Registered under "cpu" (a CPU handler falling back to the null one);
  // Create fails if the CPU backend is not linked.
  bool register_cpu_op_handler = true;
};

class CoreRuntime {
 public:
  // A runtime with its own HostContext (multi-threaded work queue, malloc
  // allocator). Errors are returned in result handles, not printed.
  static absl::StatusOr<std::unique_ptr<CoreRuntime>> Create(
      const CoreRuntimeOptions& options = {});
  // A runtime that borrows `host`.
  explicit CoreRuntime(HostContext* host);
  ~CoreRuntime();

  // The runtime attached to `host`, created on first use (BEF kernels).
  static CoreRuntime& GetOrCreate(HostContext* host);

  HostContext* GetHostContext() const { return host_; }

  // Op handlers, owned by the runtime. A device's handler comes from the
  // backend linked for its type (op_handler_factory.h; asyncrt::cpu_backend
  // for "cpu"): NotFound, naming the linked types, without one.
  absl::StatusOr<OpHandler*> CreateOpHandler(absl::string_view device_type,
                                             OpHandler* fallback);
  absl::StatusOr<OpHandler*> CreateCpuOpHandler(OpHandler* fallback);
  // The handler of one device (a plug-in's, a simulated one): runs the op
  // registry's implementations for `device`'s type on `device`, which must
  // outlive the runtime. Without `fallback`, an op with no implementation
  // there fails with NotFound naming the op and the device.
  OpHandler* CreateDeviceOpHandler(Device* device, OpHandler* fallback);
  OpHandler* CreateNullOpHandler();
  OpHandler* CreateLoggingOpHandler(OpHandler* wrapped, bool sync_log_results);
  OpHandler* AddOpHandler(std::unique_ptr<OpHandler> handler);
  // Names a handler for GetOpHandler (replacing an earlier one).
  void RegisterOpHandler(absl::string_view name, OpHandler* handler);
  OpHandler* GetOpHandler(absl::string_view name) const;

  absl::StatusOr<CoreRuntimeOp> MakeOp(absl::string_view op_name,
                                       OpHandler* handler);
  // A prepared op that calls the BEF function `fn` (tensor handles in and
  // out, with an optional leading chain). `fn` must outlive the op.
  CoreRuntimeOp MakeCompositeOp(const Function* fn);

  // MakeOp + call. An unknown op fails through `results` and `chain`.
  // With kConsume the caller gives up `args` (see ArgumentUse).
  void Execute(const ExecutionContext& exec_ctx, absl::string_view op_name,
               OpHandler* handler, absl::Span<TensorHandle> args,
               const OpAttrsRef& attrs, absl::Span<TensorHandle> results,
               AsyncValueRef<Chain>* chain,
               ArgumentUse use = ArgumentUse::kBorrow);

  // An execution context for eager calls (one request per call site is
  // fine; it is cheap).
  absl::StatusOr<ExecutionContext> CreateExecutionContext();

  // Blocks until the handle's tensor is available; nullptr on error (see
  // handle.GetErrorIfPresent()).
  const Tensor* Await(const TensorHandle& handle);

  // A handle of a new host tensor holding `values` (one value is splatted).
  template <typename T>
  absl::StatusOr<TensorHandle> MakeDenseTensorHandle(
      absl::Span<const int64_t> shape, absl::Span<const T> values);
  TensorHandle MakeTensorHandle(DenseHostTensor tensor);

 private:
  HostContext* host_;
  std::unique_ptr<HostContext> owned_host_;
  mutable std::mutex mutex_;
  std::vector<std::unique_ptr<OpHandler>> handlers_;             // Guarded.
  absl::flat_hash_map<std::string, OpHandler*> named_handlers_;  // Guarded.
};

template <typename T>
absl::StatusOr<TensorHandle> CoreRuntime::MakeDenseTensorHandle(
    absl::Span<const int64_t> shape, absl::Span<const T> values) {
  TensorMetadata metadata(GetDType<T>(), TensorShape(shape));
  int64_t n = metadata.shape.GetNumElements();
  if (values.size() != 1 && static_cast<int64_t>(values.size()) != n) {
    return absl::InvalidArgumentError("value count does not match the shape");
  }
  auto tensor = DenseHostTensor::CreateUninitialized(metadata, *host_->allocator());
  if (!tensor) return absl::ResourceExhaustedError("Cannot allocate tensor");
  absl::Span<T> elements = tensor->template elements<T>();
  for (int64_t i = 0; i < n; ++i) {
    elements[i] = values[values.size() == 1 ? 0 : i];
  }
  return MakeTensorHandle(std::move(*tensor));
}

}  // namespace asyncrt

#endif  // ASYNCRT_CORE_RUNTIME_CORE_RUNTIME_H_
