// ResourceContext: named, typed resources that live as long as a model or a
// session (weights, caches, the results of tfrt.once).
//
// Thread-safe. Resources are destroyed with the context, in reverse order of
// creation, so a resource may use those created before it.
#ifndef ASYNCRT_HOST_CONTEXT_RESOURCE_CONTEXT_H_
#define ASYNCRT_HOST_CONTEXT_RESOURCE_CONTEXT_H_

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "asyncrt/support/type_id.h"

namespace asyncrt {

class ResourceContext {
 public:
  ResourceContext() = default;
  ResourceContext(const ResourceContext&) = delete;
  ResourceContext& operator=(const ResourceContext&) = delete;
  ~ResourceContext();

  // Creates a T named `name`. AlreadyExists if the name is taken. The
  // context owns the resource; the pointer stays valid until it is
  // destroyed.
  template <typename T, typename... Args>
  absl::StatusOr<T*> CreateResource(absl::string_view name, Args&&... args) {
    auto resource = std::make_unique<Holder<T>>(std::forward<Args>(args)...);
    T* raw = &resource->value;
    std::lock_guard<std::mutex> lock(mutex_);
    auto [it, inserted] = by_name_.try_emplace(name, resource.get());
    if (!inserted) {
      return absl::AlreadyExistsError(
          absl::StrCat("resource '", name, "' already exists"));
    }
    in_creation_order_.push_back(std::move(resource));
    return raw;
  }

  // The resource named `name`: NotFound if absent, FailedPrecondition if it
  // is not a T.
  template <typename T>
  absl::StatusOr<T*> GetResource(absl::string_view name) const {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_name_.find(name);
    if (it == by_name_.end()) {
      return absl::NotFoundError(
          absl::StrCat("resource '", name, "' not found"));
    }
    if (!(it->second->type == TypeId::Get<T>())) {
      return absl::FailedPreconditionError(absl::StrCat(
          "resource '", name, "' has a different type than requested"));
    }
    return &static_cast<Holder<T>*>(it->second)->value;
  }

  // The resource named `name`, created with `args` if absent. Concurrent
  // callers get the same object.
  template <typename T, typename... Args>
  absl::StatusOr<T*> GetOrCreateResource(absl::string_view name,
                                         Args&&... args) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = by_name_.find(name);
    if (it != by_name_.end()) {
      if (!(it->second->type == TypeId::Get<T>())) {
        return absl::FailedPreconditionError(absl::StrCat(
            "resource '", name, "' has a different type than requested"));
      }
      return &static_cast<Holder<T>*>(it->second)->value;
    }
    auto resource = std::make_unique<Holder<T>>(std::forward<Args>(args)...);
    T* raw = &resource->value;
    by_name_.try_emplace(name, resource.get());
    in_creation_order_.push_back(std::move(resource));
    return raw;
  }

 private:
  struct HolderBase {
    explicit HolderBase(TypeId type) : type(type) {}
    virtual ~HolderBase() = default;
    const TypeId type;
  };
  template <typename T>
  struct Holder final : HolderBase {
    template <typename... Args>
    explicit Holder(Args&&... args)
        : HolderBase(TypeId::Get<T>()), value(std::forward<Args>(args)...) {}
    T value;
  };

  mutable std::mutex mutex_;
  // Guarded by mutex_.
  absl::flat_hash_map<std::string, HolderBase*> by_name_;
  std::vector<std::unique_ptr<HolderBase>> in_creation_order_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_RESOURCE_CONTEXT_H_
