#include "asyncrt/host_context/resource_context.h"

namespace asyncrt {

ResourceContext::~ResourceContext() {
  // Reverse creation order: later resources may depend on earlier ones.
  while (!in_creation_order_.empty()) in_creation_order_.pop_back();
}

}  // namespace asyncrt
