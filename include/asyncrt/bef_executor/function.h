// Function: something the executor can call with async arguments: a BEF
// function (a body of kernels), or a native C++ function (tfrt.native).
#ifndef ASYNCRT_BEF_EXECUTOR_FUNCTION_H_
#define ASYNCRT_BEF_EXECUTOR_FUNCTION_H_

#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/host_context/async_value.h"
#include "asyncrt/host_context/execution_context.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

class Function {
 public:
  virtual ~Function() = default;

  // Empty for region bodies.
  const std::string& name() const { return name_; }
  // Types as written in the program ("i32", "!tfrt.chain").
  absl::Span<const std::string> argument_types() const {
    return argument_types_;
  }
  absl::Span<const std::string> result_types() const { return result_types_; }
  size_t num_arguments() const { return argument_types_.size(); }
  size_t num_results() const { return result_types_.size(); }

  // Calls the function. `arguments` are borrowed (+0) and may be
  // unavailable; `results` (of size num_results()) receive owned (+1)
  // values, possibly unavailable, that become available as the function
  // finishes. Does not block: work that waits on unavailable values
  // continues on whichever thread publishes them. Thread-safe.
  virtual void Execute(const ExecutionContext& exec_ctx,
                       absl::Span<AsyncValue* const> arguments,
                       absl::Span<RCReference<AsyncValue>> results) const = 0;

 protected:
  Function(std::string name, std::vector<std::string> argument_types,
           std::vector<std::string> result_types)
      : name_(std::move(name)),
        argument_types_(std::move(argument_types)),
        result_types_(std::move(result_types)) {}

 private:
  std::string name_;
  std::vector<std::string> argument_types_;
  std::vector<std::string> result_types_;
};

// While one lives on a thread, the BEF functions that thread calls run
// their ready kernels on it and hand none to the work queue (wide graphs
// and other streams otherwise go there): what a device graph records must
// all be enqueued by the capturing thread. Work that waits for a value
// another thread publishes still continues on that thread. Nests.
class ScopedRunOnCallingThread {
 public:
  ScopedRunOnCallingThread();
  ~ScopedRunOnCallingThread();
  ScopedRunOnCallingThread(const ScopedRunOnCallingThread&) = delete;
  ScopedRunOnCallingThread& operator=(const ScopedRunOnCallingThread&) =
      delete;
  // Whether one lives on the calling thread.
  static bool Active();
};

}  // namespace asyncrt

#endif  // ASYNCRT_BEF_EXECUTOR_FUNCTION_H_
