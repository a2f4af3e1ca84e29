// HostContext: the root object of an AsyncRT runtime instance.
//
// Owns the work queue, the host allocator, the kernel registry, the device
// manager (with the host device "CPU:0"), shared contexts and the diagnostic
// handler. An application creates one per runtime; programs, requests and
// kernels borrow it.
//
// Thread-safety: every member function is thread-safe except registry()
// mutation, which happens before execution starts (see kernel_registry.h).
// Destruction quiesces the work queue first.
#ifndef ASYNCRT_HOST_CONTEXT_HOST_CONTEXT_H_
#define ASYNCRT_HOST_CONTEXT_HOST_CONTEXT_H_

#include <memory>
#include <mutex>
#include <vector>

#include "absl/types/span.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/concurrent_work_queue.h"
#include "asyncrt/host_context/device.h"
#include "asyncrt/host_context/diagnostic.h"
#include "asyncrt/host_context/host_allocator.h"
#include "asyncrt/host_context/kernel_registry.h"
#include "asyncrt/support/ref_count.h"
#include "asyncrt/support/type_id.h"

namespace asyncrt {

class HostContext {
 public:
  HostContext(DiagnosticHandler diagnostic_handler,
              std::unique_ptr<HostAllocator> allocator,
              std::unique_ptr<ConcurrentWorkQueue> work_queue);
  HostContext(const HostContext&) = delete;
  HostContext& operator=(const HostContext&) = delete;
  // Quiesces the work queue, then destroys shared contexts (in reverse
  // creation order), the queue and the allocator.
  ~HostContext();

  HostAllocator* allocator() const { return allocator_.get(); }
  ConcurrentWorkQueue& work_queue() const { return *work_queue_; }
  KernelRegistry& registry() { return registry_; }
  const KernelRegistry& registry() const { return registry_; }
  DeviceManager& device_manager() { return device_manager_; }
  // The host CPU device, "CPU:0" (+0, owned by the device manager).
  Device& host_device() const { return *host_device_; }

  // Sends `diagnostic` to the diagnostic handler on the calling thread.
  void EmitError(const DecodedDiagnostic& diagnostic) const;

  // Blocks until every value is available; see ConcurrentWorkQueue::Await.
  void Await(absl::Span<const RCReference<AsyncValue>> values);
  // Blocks until all queued work is done; see ConcurrentWorkQueue::Quiesce.
  void Quiesce();

  // The shared context of type T, created on first use as T(HostContext*).
  // One instance per type per HostContext; concurrent first calls create it
  // once. The reference stays valid for the HostContext's lifetime.
  template <typename T>
  T& GetOrCreateSharedContext() {
    return *static_cast<T*>(GetOrCreateSharedContextImpl(
        TypeId::Get<T>(), [](HostContext* host) -> SharedContextPtr {
          return SharedContextPtr(new T(host),
                                  [](void* p) { delete static_cast<T*>(p); });
        }));
  }

 private:
  using SharedContextPtr = std::unique_ptr<void, void (*)(void*)>;
  void* GetOrCreateSharedContextImpl(TypeId type,
                                     SharedContextPtr (*factory)(HostContext*));

  DiagnosticHandler diagnostic_handler_;
  std::unique_ptr<HostAllocator> allocator_;
  std::unique_ptr<ConcurrentWorkQueue> work_queue_;
  KernelRegistry registry_;
  DeviceManager device_manager_;
  RCReference<Device> host_device_;

  std::mutex shared_contexts_mutex_;
  // Guarded by shared_contexts_mutex_; in creation order.
  std::vector<std::pair<TypeId, SharedContextPtr>> shared_contexts_;
};

// A HostContext with the given work queue spec ("s", "mstd:N,M") and
// allocator name, printing diagnostics to stderr. InvalidArgument for
// unknown names.
absl::StatusOr<std::unique_ptr<HostContext>> CreateHostContext(
    absl::string_view work_queue_spec = "mstd",
    absl::string_view allocator_name = "malloc");

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_HOST_CONTEXT_H_
