#include "asyncrt/runtime/program_translator.h"

#include "asyncrt/support/static_registration.h"

namespace asyncrt {

using TranslatorTable = internal::NameTable<ProgramTranslator>;

void RegisterProgramTranslator(absl::string_view format,
                               ProgramTranslator translator) {
  TranslatorTable::Get().Set(format, translator);
}

ProgramTranslator FindProgramTranslator(absl::string_view format) {
  return TranslatorTable::Get().Find(format);
}

}  // namespace asyncrt
