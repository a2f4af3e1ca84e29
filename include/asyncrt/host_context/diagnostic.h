// Diagnostics: errors reported at the source location that caused them.
#ifndef ASYNCRT_HOST_CONTEXT_DIAGNOSTIC_H_
#define ASYNCRT_HOST_CONTEXT_DIAGNOSTIC_H_

#include <functional>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "asyncrt/host_context/location.h"

namespace asyncrt {

struct DecodedDiagnostic {
  DecodedDiagnostic() = default;
  explicit DecodedDiagnostic(absl::Status status) : status(std::move(status)) {}
  DecodedDiagnostic(std::optional<DecodedLocation> location,
                    absl::Status status)
      : location(std::move(location)), status(std::move(status)) {}

  // "file:line:col: error: message", or "error: message" without a location.
  std::string ToString() const;

  std::optional<DecodedLocation> location;
  absl::Status status;
};

// Receives diagnostics. Called from whichever thread reports the error, so
// it must be thread-safe.
using DiagnosticHandler = std::function<void(const DecodedDiagnostic&)>;

// A handler that prints ToString() to stderr.
DiagnosticHandler PrintingDiagnosticHandler();

}  // namespace asyncrt

#endif  // ASYNCRT_HOST_CONTEXT_DIAGNOSTIC_H_
