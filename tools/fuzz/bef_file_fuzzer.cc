// libFuzzer target for the BEF reader: any byte string must either open as
// a valid file (every index in range) or fail cleanly. Built with clang
// (-fsanitize=fuzzer,address,undefined) by tools/fuzz/run_bef_fuzzer.sh.
#include <cstddef>
#include <cstdint>
#include <cstdlib>

#include "asyncrt/bef/bef_file.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto file = asyncrt::bef::BefFile::Open(absl::MakeConstSpan(data, size));
  if (!file.ok()) return 0;
  // Touch everything the executor would, so out-of-range indices that
  // validation missed become sanitizer reports.
  for (const asyncrt::bef::Function& function : (*file)->functions()) {
    for (uint32_t type : function.argument_types)
      (void)(*file)->type_name(type);
    for (const asyncrt::bef::Kernel& kernel : function.kernels) {
      (void)(*file)->kernel_name(kernel.kernel_name);
      (void)(*file)->location(kernel.location);
      for (uint32_t reg : kernel.operands) {
        if (reg >= function.num_registers) std::abort();
      }
      for (const auto& named : kernel.attributes) {
        (void)(*file)->string(named.name);
        const auto& attribute = (*file)->attribute(named.attribute);
        for (uint32_t element : attribute.elements) {
          (void)(*file)->attribute(element);
        }
      }
    }
  }
  return 0;
}
