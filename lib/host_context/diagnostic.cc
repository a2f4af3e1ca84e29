#include "asyncrt/host_context/diagnostic.h"

#include <cstdio>

#include "absl/strings/str_cat.h"

namespace asyncrt {

std::string DecodedDiagnostic::ToString() const {
  std::string message(status.message());
  if (!location) return absl::StrCat("error: ", message);
  return absl::StrCat(location->filename, ":", location->line, ":",
                      location->column, ": error: ", message);
}

DiagnosticHandler PrintingDiagnosticHandler() {
  return [](const DecodedDiagnostic& diagnostic) {
    std::string text = diagnostic.ToString();
    std::fprintf(stderr, "%s\n", text.c_str());
  };
}

}  // namespace asyncrt
