// RequestContext and ExecutionContext: the per-request state that kernels
// see.
//
// A RequestContext is created for each top-level invocation (one function
// run by bef_executor, one inference request). It carries the request id,
// the ResourceContext, typed context data set up before execution, and the
// cancellation state. An ExecutionContext pairs it with the Location of the
// kernel being run, so errors can be reported at their source.
#ifndef ASYNCRT_HOST_CONTEXT_EXECUTION_CONTEXT_H_
#define ASYNCRT_HOST_CONTEXT_EXECUTION_CONTEXT_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/location.h"
#include "asyncrt/support/ref_count.h"
#include "asyncrt/support/type_id.h"

namespace asyncrt {

class HostContext;
class ResourceContext;

// Thread-safe. Context data is fixed when the request is built; only the
// cancellation state changes during execution.
class RequestContext : public ReferenceCounted<RequestContext> {
 public:
  ~RequestContext();

  HostContext* host() const { return host_; }
  ResourceContext* resource_context() const { return resource_context_; }
  int64_t id() const { return id_; }

  // Cancels the request: installs one error value with status Cancelled
  // ("Cancelled") that the executor hands to every kernel that has not run
  // yet. Later calls do nothing. Thread-safe; never blocks.
  void Cancel();
  bool IsCancelled() const { return GetCancelAsyncValue() != nullptr; }
  // The cancellation error value (+0, owned by the request), or nullptr if
  // the request is not cancelled.
  AsyncValue* GetCancelAsyncValue() const {
    return cancel_value_.load(std::memory_order_acquire);
  }

  // Typed data attached when the request was built; nullptr if absent.
  template <typename T>
  T* GetDataIfExists() const {
    for (const auto& entry : data_) {
      if (entry->type == TypeId::Get<T>()) {
        return &static_cast<DataHolder<T>*>(entry.get())->value;
      }
    }
    return nullptr;
  }

 private:
  friend class RequestContextBuilder;
  struct DataHolderBase {
    explicit DataHolderBase(TypeId type) : type(type) {}
    virtual ~DataHolderBase() = default;
    const TypeId type;
  };
  template <typename T>
  struct DataHolder final : DataHolderBase {
    template <typename... Args>
    explicit DataHolder(Args&&... args)
        : DataHolderBase(TypeId::Get<T>()),
          value(std::forward<Args>(args)...) {}
    T value;
  };

  RequestContext(HostContext* host, ResourceContext* resource_context,
                 int64_t id, std::vector<std::unique_ptr<DataHolderBase>> data)
      : host_(host),
        resource_context_(resource_context),
        id_(id),
        data_(std::move(data)) {}

  HostContext* const host_;
  ResourceContext* const resource_context_;
  const int64_t id_;
  const std::vector<std::unique_ptr<DataHolderBase>> data_;
  // +1 once set.
  std::atomic<AsyncValue*> cancel_value_{nullptr};
};

// Builds a RequestContext. Not thread-safe; use from one thread.
class RequestContextBuilder {
 public:
  // `host` and `resource_context` (may be null) are borrowed and must
  // outlive the request.
  RequestContextBuilder(HostContext* host, ResourceContext* resource_context,
                        int64_t id = 0)
      : host_(host), resource_context_(resource_context), id_(id) {}

  // Attaches a T constructed from `args`; replaces an earlier T.
  template <typename T, typename... Args>
  T& EmplaceData(Args&&... args) {
    for (auto& entry : data_) {
      if (entry->type == TypeId::Get<T>()) {
        entry = std::make_unique<RequestContext::DataHolder<T>>(
            std::forward<Args>(args)...);
        return static_cast<RequestContext::DataHolder<T>*>(entry.get())->value;
      }
    }
    data_.push_back(std::make_unique<RequestContext::DataHolder<T>>(
        std::forward<Args>(args)...));
    return static_cast<RequestContext::DataHolder<T>*>(data_.back().get())
        ->value;
  }

  // InvalidArgument if no HostContext was given.
  absl::StatusOr<RCReference<RequestContext>> Build() &&;

 private:
  HostContext* host_;
  ResourceContext* resource_context_;
  int64_t id_;
  std::vector<std::unique_ptr<RequestContext::DataHolderBase>> data_;
};

// What a kernel runs in: its request and its own source location.
//
// Copies own a reference to the request (one atomic increment). The
// executor builds one per kernel with Borrow(), which takes no reference:
// such a context must not outlive the one it borrows from, but any copy a
// kernel makes of it is owning again.
class ExecutionContext {
 public:
  explicit ExecutionContext(RCReference<RequestContext> request,
                            Location location = {})
      : request_(request.release()), location_(location) {}
  ExecutionContext(const ExecutionContext& other)
      : request_(other.request_), location_(other.location_) {
    request_->AddRef();
  }
  // The moved-from context still names the request, without owning it.
  ExecutionContext(ExecutionContext&& other) noexcept
      : request_(other.request_),
        location_(other.location_),
        owns_request_(std::exchange(other.owns_request_, false)) {}
  ExecutionContext& operator=(ExecutionContext&& other) noexcept {
    if (this != &other) {
      Release();
      request_ = other.request_;
      location_ = other.location_;
      owns_request_ = std::exchange(other.owns_request_, false);
    }
    return *this;
  }
  ExecutionContext& operator=(const ExecutionContext& other) {
    if (this != &other) {
      other.request_->AddRef();
      Release();
      request_ = other.request_;
      location_ = other.location_;
      owns_request_ = true;
    }
    return *this;
  }
  ~ExecutionContext() { Release(); }

  // A non-owning context with `location`, valid while `base` lives.
  static ExecutionContext Borrow(const ExecutionContext& base,
                                 Location location) {
    return ExecutionContext(base.request_, location, BorrowTag{});
  }

  RequestContext* request_context() const { return request_; }
  HostContext* host() const { return request_->host(); }
  ResourceContext* resource_context() const {
    return request_->resource_context();
  }
  Location location() const { return location_; }
  void set_location(Location location) { location_ = location; }
  bool IsCancelled() const { return request_->IsCancelled(); }

 private:
  struct BorrowTag {};
  ExecutionContext(RequestContext* request, Location location, BorrowTag)
      : request_(request), location_(location), owns_request_(false) {}
  void Release() {
    if (owns_request_) request_->DropRef();
  }

  RequestContext* request_;  // +1 if owns_request_.
  Location location_;
  bool owns_request_ = true;
};

// Reports `status` through the host's diagnostic handler at the execution
// context's location and returns an error value holding it (+1). Use where
// an error is created, not where it is propagated, so each error is
// reported once.
RCReference<AsyncValue> EmitErrorAsync(const ExecutionContext& exec_ctx,
                                       absl::Status status);

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_EXECUTION_CONTEXT_H_
