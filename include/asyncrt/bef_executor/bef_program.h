// BefProgram: a BEF file loaded for execution on a HostContext.
//
// Load() resolves every kernel name against the host's kernel registry and
// every native function against the native function registry, and builds
// for each function an immutable execution plan (the users of each
// register, the kernels ready at the start). A call then allocates one block
// for its registers and ready counts and runs the dataflow graph:
//
//   - a kernel runs once all its operands are available;
//   - ready kernels run inline on the calling thread, most recent first;
//   - an operand that is not yet available resumes the graph, through
//     AndThen, on the thread that publishes it;
//   - a kernel whose operand is an error does not run: its results are that
//     error; once the request is cancelled, kernels that have not run get
//     the Cancelled error instead.
//
// Thread-safety: immutable after Load; functions may be called concurrently.
// Ownership: refcounted. Every call in flight holds a reference, so
// dropping the last outside reference while calls still run (a kernel
// finishing after the results were published) is safe.
#ifndef ASYNCRT_BEF_EXECUTOR_BEF_PROGRAM_H_
#define ASYNCRT_BEF_EXECUTOR_BEF_PROGRAM_H_

#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "asyncrt/bef/bef_file.h"
#include "asyncrt/bef_executor/function.h"
#include "asyncrt/host_context/host_context.h"
#include "asyncrt/host_context/location.h"
#include "asyncrt/support/ref_count.h"

namespace asyncrt {

// How a program's functions run. kFast: the optimised executor (unboxed
// values, direct kernels, sole-user hand-off, stream schedule). kReference:
// every kernel on the general path (boxed values, one ready count per
// kernel, dataflow order): the readable statement of the semantics that the
// fast paths must match (docs/executor.md).
enum class ExecutorMode { kFast, kReference };

struct BefProgramOptions {
  ExecutorMode mode = ExecutorMode::kFast;
};

class BefProgram : public LocationHandler, public ReferenceCounted<BefProgram> {
 public:
  // Loads `file`. Unknown kernels and native functions are reported through
  // the host's diagnostic handler at their source locations and make Load
  // fail with NotFound. `host` must outlive the program.
  static absl::StatusOr<RCReference<BefProgram>> Load(
      std::unique_ptr<bef::BefFile> file, HostContext* host,
      const BefProgramOptions& options = {});

  const bef::BefFile& file() const { return *file_; }
  HostContext* host() const { return host_; }
  // Every function, in file order (region bodies included, unnamed).
  absl::Span<const Function* const> functions() const { return functions_; }
  // The named function, or nullptr.
  const Function* GetFunction(absl::string_view name) const;

  std::optional<DecodedLocation> DecodeLocation(Location loc) const override;

 private:
  friend class ReferenceCounted<BefProgram>;
  ~BefProgram() override;
  BefProgram(std::unique_ptr<bef::BefFile> file, HostContext* host)
      : file_(std::move(file)), host_(host) {}

  std::unique_ptr<bef::BefFile> file_;
  HostContext* host_;
  std::vector<std::unique_ptr<Function>> owned_functions_;
  std::vector<const Function*> functions_;
};

}  // namespace asyncrt

#endif  // ASYNCRT_BEF_EXECUTOR_BEF_PROGRAM_H_
