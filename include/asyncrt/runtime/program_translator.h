// Program translators: how a Runtime loads programs that are not BEF.
//
// The runtime library never includes MLIR. A translator library on the
// compiler side (asyncrt::mlir_translator: MLIR text to BEF through the
// dialects and the BEF converter) registers itself for a format when it is
// linked, and Runtime::LoadProgram uses it for anything that is not BEF.
#ifndef ASYNCRT_RUNTIME_PROGRAM_TRANSLATOR_H_
#define ASYNCRT_RUNTIME_PROGRAM_TRANSLATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace asyncrt {

// Turns `text` (named `buffer_name` in diagnostics) into BEF bytes. On
// failure the status message holds the translator's diagnostics, one per
// line, as the compiler prints them. Must be thread-safe.
using ProgramTranslator = absl::StatusOr<std::vector<uint8_t>> (*)(
    absl::string_view text, absl::string_view buffer_name);

// Makes `translator` handle programs of `format` ("mlir"), replacing an
// earlier one. Thread-safe; usually called from a static initializer.
void RegisterProgramTranslator(absl::string_view format,
                               ProgramTranslator translator);

// The translator for `format`, or nullptr. Thread-safe.
ProgramTranslator FindProgramTranslator(absl::string_view format);

}  // namespace asyncrt

#endif  // ASYNCRT_RUNTIME_PROGRAM_TRANSLATOR_H_
