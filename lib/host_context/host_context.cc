#include "asyncrt/host_context/host_context.h"

#include <cassert>

namespace asyncrt {

HostContext::HostContext(DiagnosticHandler diagnostic_handler,
                         std::unique_ptr<HostAllocator> allocator,
                         std::unique_ptr<ConcurrentWorkQueue> work_queue)
    : diagnostic_handler_(std::move(diagnostic_handler)),
      allocator_(std::move(allocator)),
      work_queue_(std::move(work_queue)) {
  assert(allocator_ && work_queue_);
  host_device_ =
      device_manager_.MaybeAddDevice(MakeRef<Device>(HostCpuAttributes()));
}

HostContext::~HostContext() {
  work_queue_->Quiesce();
  // Shared contexts may hold allocations and async values: destroy them
  // (newest first) while the allocator and queue still exist.
  while (!shared_contexts_.empty()) shared_contexts_.pop_back();
  // Devices drain their streams while the blocking pool that completes
  // their events still runs.
  device_manager_.ShutdownDevices();
  work_queue_->Quiesce();
  work_queue_.reset();
  allocator_.reset();
}

void HostContext::EmitError(const DecodedDiagnostic& diagnostic) const {
  if (diagnostic_handler_) diagnostic_handler_(diagnostic);
}

void HostContext::Await(absl::Span<const RCReference<AsyncValue>> values) {
  work_queue_->Await(values);
}

void HostContext::Quiesce() { work_queue_->Quiesce(); }

void* HostContext::GetOrCreateSharedContextImpl(
    TypeId type, SharedContextPtr (*factory)(HostContext*)) {
  std::lock_guard<std::mutex> lock(shared_contexts_mutex_);
  for (auto& [id, context] : shared_contexts_) {
    if (id == type) return context.get();
  }
  // The factory runs under the lock, so a shared context's constructor must
  // not ask for another shared context.
  shared_contexts_.emplace_back(type, factory(this));
  return shared_contexts_.back().second.get();
}

absl::StatusOr<std::unique_ptr<HostContext>> CreateHostContext(
    absl::string_view work_queue_spec, absl::string_view allocator_name) {
  auto work_queue = CreateWorkQueue(work_queue_spec);
  if (!work_queue.ok()) return work_queue.status();
  auto allocator = CreateHostAllocator(allocator_name);
  if (!allocator.ok()) return allocator.status();
  return std::make_unique<HostContext>(PrintingDiagnosticHandler(),
                                       *std::move(allocator),
                                       *std::move(work_queue));
}

}  // namespace asyncrt
