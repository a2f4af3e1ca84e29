#include "asyncrt/runtime/program_translator.h"

#include <mutex>
#include <string>

#include "absl/container/flat_hash_map.h"

namespace asyncrt {
namespace {

struct TranslatorTable {
  std::mutex mutex;
  absl::flat_hash_map<std::string, ProgramTranslator> translators;
};

// Leaked, constructed on first use: safe from static initializers.
TranslatorTable& Translators() {
  static auto* table = new TranslatorTable;
  return *table;
}

}  // namespace

void RegisterProgramTranslator(absl::string_view format,
                               ProgramTranslator translator) {
  TranslatorTable& table = Translators();
  std::lock_guard<std::mutex> lock(table.mutex);
  table.translators[format] = translator;
}

ProgramTranslator FindProgramTranslator(absl::string_view format) {
  TranslatorTable& table = Translators();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto it = table.translators.find(format);
  return it == table.translators.end() ? nullptr : it->second;
}

}  // namespace asyncrt
