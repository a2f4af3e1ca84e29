// The optimizing trace compiler (asyncrt::lazy_compiler), for its tests:
// lazy contexts find it through the trace compiler registry
// (asyncrt/lazy/trace.h), where linking the library puts it.
//
// Thread-safety: both functions may run on several threads at once (each
// call has its own MLIR context). Blocking: they compile (milliseconds).
#ifndef ASYNCRT_COMPILER_LAZY_TRACE_COMPILER_H_
#define ASYNCRT_COMPILER_LAZY_TRACE_COMPILER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "asyncrt/lazy/trace.h"

namespace asyncrt::lazy {

// BEF for `trace` (kTraceFunction); InvalidArgument with the compiler's
// diagnostics on failure.
absl::StatusOr<std::vector<uint8_t>> CompileTrace(const Trace& trace);

// The module CompileTrace starts from, as text.
absl::StatusOr<std::string> PrintTrace(const Trace& trace);

}  // namespace asyncrt::lazy

#endif  // ASYNCRT_COMPILER_LAZY_TRACE_COMPILER_H_
